"""No export carries a student's name, id or e-mail address (issue 34, section 1): a quiz
imported into an LMS is seen by every student of the course. A class built from a roster of
names and e-mails is exported to every format and each file searched for any part of them.

A behaviour across modules, not one module's tests (errors, export, export.privacy,
keyjson.read, pipeline.build, pipeline.options)."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from tests.paths import ROOT
from worksheetgen.errors import ExportError
from worksheetgen.export import export_bytes, exporter_names
from worksheetgen.export.privacy import sheet_names
from worksheetgen.keyjson.read import parse_key
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

STUDENTS = [
    ("Quorra Vantablack", "quorra.vantablack@uni-zentrix.example"),
    ("Thaddeus Wolfsbane-Okonkwo", "t.okonkwo@uni-zentrix.example"),
    ("Ysolde Marchetti", "ysolde.marchetti@uni-zentrix.example"),
]


def _pieces() -> set[str]:
    """Every part of the roster a reader could recognise: each name word, each e-mail whole,
    its local part, its pieces and its domain, the slugs a roster without ids makes."""
    out: set[str] = set()
    for name, mail in STUDENTS:
        out |= {w.casefold() for w in re.split(r"[\s-]+", name)}
        local, domain = mail.split("@")
        out |= {mail, local, domain, *local.split("."), domain.split(".")[0]}
        out.add("-".join(name.casefold().split()))
    return {p for p in out if len(p) > 2}


def _texts(data: bytes) -> str:
    """An export's text: a zip's members (Canvas) read one after another."""
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return "\n".join(zf.read(n).decode("utf-8") for n in zf.namelist())
    return data.decode("utf-8")


@pytest.mark.parametrize("with_ids", [True, False], ids=["ids-are-emails", "no-id-column"])
@pytest.mark.parametrize(
    "bank", ["default.yaml", "quiz.yaml"], ids=["default-bank", "quiz-bank-with-pools"]
)
def test_no_export_names_a_student(tmp_path, with_ids, bank):
    roster = tmp_path / "class.csv"
    rows = [f"{n},{m}" if with_ids else n for n, m in STUDENTS]
    roster.write_text(("name,id\n" if with_ids else "name\n") + "\n".join(rows) + "\n", "utf-8")
    banks = () if bank == "default.yaml" else (str(ROOT / "banks" / bank),)
    folder = build(
        BuildOptions(seed=42, banks=banks, roster=str(roster), out=str(tmp_path), pdf=False)
    ).folder
    data = json.loads((folder / "key.json").read_text("utf-8"))
    # the key itself names them (it is the teacher's), so the search can find them
    assert any(p in (folder / "key.json").read_text("utf-8").casefold() for p in _pieces())
    exported = 0
    for fmt in exporter_names():
        try:
            text = _texts(export_bytes(data, fmt)).casefold()
        except ExportError:  # the quiz bank's pick-2 pool: no GIFT (nor Canvas, points per pick)
            assert bank == "quiz.yaml" and fmt in ("gift", "qti")
            continue
        exported += 1
        found = sorted(p for p in _pieces() if p in text)
        assert not found, f"{fmt} export names a student: {found}"
    assert exported >= (3 if bank == "default.yaml" else 1)
    codes = sheet_names(parse_key(data, "key.json"))
    assert sorted(codes.values()) == sorted(s["code"] for s in data["sheets"])


def test_a_key_without_sheet_codes_names_student_sheets_by_their_place(tmp_path):
    roster = tmp_path / "class.csv"
    roster.write_text("name,id\n" + "\n".join(f"{n},{m}" for n, m in STUDENTS) + "\n", "utf-8")
    folder = build(BuildOptions(seed=1, roster=str(roster), out=str(tmp_path), pdf=False)).folder
    data = json.loads((folder / "key.json").read_text("utf-8"))
    for sheet in data["sheets"]:
        sheet["code"] = ""  # as a key from before sheet codes
    doc = parse_key(data, "key.json")
    assert list(sheet_names(doc).values()) == ["sheet 1", "sheet 2", "sheet 3"]
    text = export_bytes(data, "moodle").decode("utf-8")
    assert "[sheet 2]" in text and "uni-zentrix" not in text
