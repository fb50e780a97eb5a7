"""The TA key of a class build (keys-grid.*): the answer grid, then one worked key per
version of each question, not one key per student (issue 26, section 3).

A behaviour across modules, not one module's tests (pipeline.build, render.worked, resources)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import GOLDEN
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.render.worked import MAX_SHOWN, WorkedKeys, WorkedPiece
from worksheetgen.resources import data_dir

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
needs_poppler = pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="no Poppler")

ROSTER = GOLDEN / "roster.csv"


def _piece(qid: str, text: str) -> WorkedPiece:
    return WorkedPiece(qid, qid.title(), f"tex {text}", f"md {text}")


def test_sheets_with_the_same_worked_key_share_a_version() -> None:
    keys = WorkedKeys()
    # "same": one version for all; "few": two versions over six sheets; "own": every sheet
    # its own numbers
    for n in range(6):
        keys.add(
            f"S{n}",
            f"C{n}",
            [_piece("same", "x"), _piece("few", str(n % 2)), _piece("own", str(n))],
        )
    by_id = {w.qid: w for w in keys.questions()}
    assert [by_id[q].mode for q in ("same", "few", "own")] == ["one", "each", "example"]
    assert [v.tex for v in by_id["few"].shown] == ["tex 0", "tex 1"]
    assert by_id["few"].shown[1].codes == "C1, C3, C5"
    assert [v.tex for v in by_id["own"].shown] == ["tex 0"]  # the first sheet's, as example
    assert (by_id["own"].count, by_id["own"].sheets) == (6, 6)
    assert by_id["own"].example.first == ("S0", "C0")
    labels = keys.labels()
    assert [s.get("few") for s in labels] == ["v1", "v2"] * 3
    assert all("same" not in s and "own" not in s for s in labels)


def test_a_versions_build_shows_each_version_up_to_the_limit() -> None:
    few, many = WorkedKeys(versions_build=True), WorkedKeys(versions_build=True)
    for n in range(4):
        few.add(f"Version {n}", f"C{n}", [_piece("q", str(n))])
    for n in range(MAX_SHOWN + 5):
        many.add(f"Version {n}", f"C{n}", [_piece("q", str(n))])
    (q,) = few.questions()
    assert (q.mode, len(q.shown)) == ("each", 4)
    (q,) = many.questions()
    assert (q.mode, len(q.shown)) == ("example", 1)
    # past the limit only the text of the first versions is kept, never the whole class's
    assert sum(1 for v in many._found["q"].versions.values() if v.tex) == MAX_SHOWN + 1


def test_the_ta_key_markdown_has_one_worked_key_per_version(tmp_path, write_bank) -> None:
    bank = write_bank(
        """\
        sheet: {id: ta, title: TA}
        questions:
          - id: fixed
            family: heads
            params: {d: {choices: [512]}, h: {choices: [8]}}
          - id: drawn
            family: softmax
        """
    )
    result = build(
        BuildOptions(seed=3, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=4)
    )
    md = (result.folder / "keys-grid.md").read_text("utf-8")
    key = json.loads((result.folder / "key.json").read_text("utf-8"))
    codes = [s["code"] for s in key["sheets"]]
    grid, worked = md.split("\n# Worked keys\n")
    # the fixed question: one worked key for every sheet; the drawn one: one per version
    assert len(re.findall(r"^## .* `fixed`", worked, re.M)) == 1
    headings = re.findall(r"^## .* `drawn` · (v\d+)$", worked, re.M)
    assert headings == ["v1", "v2", "v3", "v4"]
    for n, code in enumerate(codes, 1):
        assert f"Version v{n} of 4, for sheet {code}." in worked
        # the grid's row of the sheet names its version in the key column
        assert re.search(rf"\| `{code}` \| v{n} \|", grid)
    # each worked key is the sheet's key as it prints it (its worked solution included)
    keys_md = (result.folder / "keys.md").read_text("utf-8")
    assert worked.count("**Worked solution.**") == 5
    assert keys_md.count("**Worked solution.**") == 8


def _pages(pdf: Path) -> list[str]:
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    return text.split("\f")[:-1]


def _page_count(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    found = re.search(r"^Pages:\s+(\d+)$", info.stdout, re.M)
    assert found is not None
    return int(found.group(1))


def _ta_key(folder: Path) -> tuple[int, int, str]:
    """The TA key's grid pages, worked-key pages and text."""
    pdf = folder / "keys-grid.pdf"
    pages = _pages(pdf)
    assert len(pages) == _page_count(pdf)
    first = next(i for i, p in enumerate(pages) if re.search(r"^\s*Worked keys\s*$", p, re.M))
    return first, len(pages) - first, "\n".join(pages)


@needs_tex
@needs_poppler
@pytest.mark.slow
def test_a_classes_ta_key_is_the_grid_and_a_worked_key_per_version(tmp_path) -> None:
    """The bundled quiz for 30 students: the TA key holds every sheet's code, its worked
    keys take as many pages as for a class of 6 (only the grid grows with the class), and
    it is a small part of the full keys."""
    bank = str(data_dir("banks") / "quiz.yaml")
    small = tmp_path / "six.csv"
    small.write_text("".join(ROSTER.read_text("utf-8").splitlines(True)[:7]), "utf-8")
    folders = {}
    for name, roster in (("class", ROSTER), ("six", small)):
        result = build(
            BuildOptions(
                seed=42,
                banks=(bank,),
                out=str(tmp_path / name),
                roster=str(roster),
                paper="letter",
            )
        )
        folders[name] = result.folder
    grid, worked, text = _ta_key(folders["class"])
    _, worked_six, _ = _ta_key(folders["six"])
    key = json.loads((folders["class"] / "key.json").read_text("utf-8"))
    assert len(key["sheets"]) == 30
    missing = [s["code"] for s in key["sheets"] if s["code"] not in text]
    assert not missing, f"sheet codes missing from the TA key: {missing}"
    # one worked key per question (the pool picks each), whatever the class's size
    qids = {q["id"] for s in key["sheets"] for q in s["questions"]}
    worked_text = "\n".join(_pages(folders["class"] / "keys-grid.pdf")[grid:])
    assert all(re.search(rf"{re.escape(q)}\s*$", worked_text, re.M) for q in qids)
    assert worked <= worked_six + 1, (worked, worked_six)
    assert grid + worked <= _page_count(folders["class"] / "keys.pdf") // 5
    # the per-student keys are still there for those who want them
    assert (folders["class"] / "students" / "st01-key.pdf").is_file()


def test_a_long_name_is_shortened_in_a_worked_keys_heading() -> None:
    keys = WorkedKeys()
    keys.add("W" * 600, "C0", [_piece("q", "x")])
    (q,) = keys.questions()
    label, code = q.example.first
    assert code == "C0" and len(label) == 40 and label.endswith("\u2026")
