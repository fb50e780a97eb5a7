"""grade and Moodle's downloads of today's exports (issue 22, issue 26 §5): the real Moodle 4.5
downloads in tests/fixtures/moodle/real-2/ (its README says how each was made and what each
student typed; attempts.json what Moodle drew).

A behaviour across modules, not one module's tests (errors, export, grading.key, grading.moodle,
grading.responses, grading.spreadsheet, keyjson.read, pipeline.build, pipeline.options)."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import key_as_version_1
from tests.paths import MOODLE, ROOT
from worksheetgen.errors import GradeError
from worksheetgen.export import export_bytes
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.spreadsheet import read_rows
from worksheetgen.keyjson.read import load_key, read_key_data
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

REAL = MOODLE / "real-2"


REAL3 = REAL.parent / "real-3"


KEYS = {"pool": REAL / "pool", "pool-run2": REAL / "pool", "default": REAL / "default"}


DOWNLOADS = [
    ("pool", "responses-right.csv"),
    ("pool", "responses-right.xlsx"),
    ("pool", "responses-right.ods"),
    ("pool-run2", "responses-right.csv"),
    ("pool-run2", "responses-right.xlsx"),
    ("pool-run2", "responses-right.ods"),
    ("default", "responses-right.csv"),
]


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    if path.suffix in (".xlsx", ".ods"):
        return read_rows(path, str(path))
    return list(_records(path.read_bytes().decode("utf-8-sig"), str(path)))


def _parse(folder: str, name: str):
    doc = load_key(KEYS[folder] / "key.json")
    return parse_moodle_rows(_rows(REAL / folder / name), doc, grade_key(doc), name)


def _attempts(folder: str) -> list[dict]:
    data = json.loads((REAL / folder / "attempts.json").read_text("utf-8"))
    quizzes = data if isinstance(data, list) else [data]
    out = []
    for quiz in quizzes:
        every = quiz["attempts"]
        out += list(every.values()) if isinstance(every, dict) else every
    return out


def _drawn(attempt: dict) -> list[tuple[str, str]]:
    """(question id, version) per slot, from attempts.json's "2. q-softmax [B]"."""
    out = []
    for _, name in sorted(attempt["drawn"].items(), key=lambda kv: int(kv[0])):
        m = re.fullmatch(r"\d+\. (\S+) \[(\w+)\]", name)
        assert m, name
        out.append((m.group(1), m.group(2)))
    return out


@pytest.mark.parametrize(("folder", "name"), DOWNLOADS)
def test_a_real_download_of_todays_export_is_read_with_the_version_each_student_drew(folder, name):
    responses, graded_key = _parse(folder, name)
    dealt: dict[str, list[list[tuple[str, str]]]] = {}
    for a in _attempts(folder):
        drawn = _drawn(a)
        if a["state"] == "finished" and len({q for q, _ in drawn}) == len(drawn):
            dealt.setdefault(a["name"], []).append(sorted(drawn))
    # a sheet for every student with a finished attempt the pool's rule allows, of the
    # versions Moodle drew in one of them (the one that counts)
    assert sorted(s.name for s in graded_key.sheets) == sorted(dealt)
    for sheet in graded_key.sheets:
        assert sorted((q.id, q.version) for q in sheet.questions) in dealt[sheet.name]
    assert len(graded_key.sheets) >= 3


def test_a_right_answer_of_no_version_is_still_refused_with_its_line(tmp_path):
    text = (REAL / "pool-run2" / "responses-right.csv").read_bytes().decode("utf-8-sig")
    bad = text.replace("part 1: 0.67; part 2: 1;", "part 1: 0.68; part 2: 1;", 1)
    assert bad != text
    doc = load_key(KEYS["pool-run2"] / "key.json")
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(list(_records(bad, "r.csv")), doc, grade_key(doc), "r.csv")
    assert "Right answer 1: expected the right answer of a version" in str(info.value)


def _unescape_cloze(text: str) -> str:
    """As Moodle reads a cloze answer: only ``\\}`` and ``\\#`` are escapes; a TeX ``\\(`` or
    ``\\\\`` stays (question/type/multianswer/questiontype.php, Moodle 4.5)."""
    return text.replace("\\}", "}").replace("\\#", "#")


def _php_float(text: str) -> str:
    """A number as Moodle shows a stored float (PHP, 14 significant digits): 0.50 -> 0.5."""
    return f"{float(text):.14g}"


def _cloze_right(question_text: str) -> str:
    """Moodle's Right answer of a cloze question: ``part i: <its first full-mark answer>``."""
    gaps = re.findall(
        r"\{\d*:(NUMERICAL|NM|SHORTANSWER|SA|MULTICHOICE\w*|MC\w*):((?:\\.|[^}])*)\}", question_text
    )
    parts = []
    for kind, body in gaps:
        answers = re.split(r"(?<!\\)~", body)
        right = next(a for a in answers if a.startswith("=") or a.startswith("%100%"))
        right = re.sub(r"^(=|%100%)", "", right)
        right = re.split(r"(?<!\\)#", right)[0]
        if kind in ("NUMERICAL", "NM"):
            right = _php_float(right.split(":")[0])
        parts.append(html.unescape(_unescape_cloze(right)))
    return "; ".join(f"part {i}: {t}" for i, t in enumerate(parts, 1))


def moodle_right_answers(xml: bytes) -> set[str]:
    """Every Right answer text Moodle shows for the questions of a Moodle XML export."""
    out = {"-"}  # an essay's
    for q in ET.fromstring(xml).iter("question"):
        kind = q.get("type")
        if kind == "cloze":
            out.add(_cloze_right(q.findtext("questiontext/text") or ""))
        elif kind in ("multichoice", "numerical", "shortanswer"):
            right = next(a for a in q.iter("answer") if float(a.get("fraction", "0")) == 100)
            text = right.findtext("text") or ""
            if kind == "numerical":
                out.add(_php_float(text))
            else:  # Moodle's HTML to text: tags dropped, entities read
                out.add(html.unescape(re.sub(r"<[^>]+>", "", text)).strip())
    return out


def moodle_shown(xml: bytes) -> list[tuple[str, ...]]:
    """What Moodle shows of a Moodle XML export besides the right answers: each category's
    path and description, each question's type, name, text and mark."""
    out: list[tuple[str, ...]] = []
    for q in ET.fromstring(xml).iter("question"):
        if q.get("type") == "category":
            out.append(
                ("category", q.findtext("category/text") or "", q.findtext("info/text") or "")
            )
            continue
        out.append(
            (
                q.get("type") or "",
                q.findtext("name/text") or "",
                q.findtext("questiontext/text") or "",
                q.findtext("defaultgrade") or "",
            )
        )
    return out


def _fixture_right_answers(folder: Path | str, name: str) -> set[str]:
    rows = _rows(REAL / folder / name)
    header = [c.strip().casefold() for c in rows[0][1]]
    cols = [i for i, c in enumerate(header) if c.startswith("right answer")]
    return {r[i].strip() for _, r in rows[1:] for i in cols if any(r)}


def test_the_download_fixtures_show_what_todays_export_makes_moodle_show(tmp_path):
    """Fails when the Moodle export changes what Moodle shows as a right answer while the real
    downloads of today's exports were not renewed: the default bank's build (real-2/default)
    and the pooled quiz's (real-3) are made again from their bank and seed, and every Right
    answer in their downloads must be one the export of today makes Moodle show. (real-2's
    pool/ and pool-run2/ are downloads of an older export, which today's export refuses for
    that bank: its pool's alternatives are worth different points; they stay as fixtures of
    reading older downloads.)"""
    built = build(
        BuildOptions(seed=42, versions=3, out=str(tmp_path / "default"), pdf=False, exports=())
    )
    assert (
        key_as_version_1(json.loads((built.folder / "key.json").read_text("utf-8")))["sheets"]
        == json.loads((REAL / "default" / "key.json").read_text("utf-8"))["sheets"]
    ), "the default bank's key is otherwise now: renew tests/fixtures/moodle/real-2/default"
    quiz = build(
        BuildOptions(
            seed=42,
            versions=4,
            banks=(str(ROOT / "banks" / "quiz.yaml"),),
            out=str(tmp_path / "quiz"),
            pdf=False,
            exports=(),
        )
    )
    kept = json.loads((REAL3 / "key.json").read_text("utf-8"))
    fresh_key = json.loads((quiz.folder / "key.json").read_text("utf-8"))
    if kept["version"] == 1:  # a fixture taken before key.json version 2
        fresh_key = key_as_version_1(fresh_key)
    assert fresh_key["sheets"] == kept["sheets"], (
        "the quiz bank's key is otherwise now: renew tests/fixtures/moodle/real-3"
    )
    fresh = {
        REAL / "default": export_bytes(read_key_data(built.folder / "key.json"), "moodle"),
        REAL3: export_bytes(read_key_data(quiz.folder / "key.json"), "moodle"),
    }
    downloads = [(REAL / "default", "responses-right.csv")] + [
        (REAL3, f"responses-right.{ext}") for ext in ("csv", "xlsx", "ods")
    ]
    # real-3 was taken on today's export: what its quiz showed besides the right answers
    # (category names, question names and texts, marks) must be what today's makes
    assert moodle_shown(fresh[REAL3]) == moodle_shown((REAL3 / "moodle.xml").read_bytes()), (
        "real-3/moodle.xml is no longer what today's export makes Moodle show (category names, "
        "question texts): renew the downloads in real-3 (README.md there says how)"
    )
    for folder, name in downloads:
        shown = moodle_right_answers(fresh[folder])
        kept = _fixture_right_answers(folder, name)
        assert kept, (folder, name)
        stale = sorted(kept - shown)
        assert not stale, (
            f"{folder.name}/{name}: Moodle's Right answer {stale[0][:120]!r} is no longer what "
            f"the export makes Moodle show: renew the downloads in {folder} (README.md there "
            "says how they were made)"
        )


def test_the_right_answer_check_sees_a_changed_number_format():
    """The check above can fail: a right answer as the older exports had it (the exact value at
    14 digits) is not one today's export makes Moodle show, and today's shows printed values."""
    xml = export_bytes(read_key_data(REAL3 / "key.json"), "moodle")
    shown = moodle_right_answers(xml)
    assert shown and not any(re.search(r"[0-9]\.[0-9]{5,}", s) for s in shown)
    old = REAL.parent / "default"
    old_shown = _fixture_right_answers(old, "responses-resp-right.csv")
    assert any(re.search(r"[0-9]\.[0-9]{10,}", s) for s in old_shown)
    assert old_shown - moodle_right_answers(export_bytes(read_key_data(old / "key.json"), "moodle"))


CARRY_BANK = """sheet:
  title: Carry
{sheet}questions:
  - id: q1
    family: softmax
{q1}  - id: q2
    family: heads
"""


def _carry_key(tmp_path: Path, write_bank, sheet: str = "", q1: str = "", **options) -> dict:
    bank = write_bank(CARRY_BANK.format(sheet=sheet, q1=q1))
    out = tmp_path / "o"
    folder = build(BuildOptions(seed=5, banks=(str(bank),), out=str(out), pdf=False, **options))
    return json.loads((folder.folder / "key.json").read_text("utf-8"))


def _carry_of(key: dict) -> list[object]:
    return [q.get("carry") for q in key["sheets"][0]["questions"]]


def test_carry_is_set_in_the_bank_per_sheet_and_question_and_in_the_course(tmp_path, write_bank):
    assert _carry_of(_carry_key(tmp_path / "a", write_bank)) == [None, None]  # absent: on
    off = _carry_key(tmp_path / "b", write_bank, sheet="  carry: false\n")
    assert _carry_of(off) == [False, False]
    mixed = _carry_key(tmp_path / "c", write_bank, sheet="  carry: false\n", q1="    carry: true\n")
    assert _carry_of(mixed) == [None, False]
    # the course's carry applies where the bank says nothing; the bank's wins
    assert _carry_of(_carry_key(tmp_path / "d", write_bank, carry=False)) == [False, False]
    assert _carry_of(
        _carry_key(tmp_path / "e", write_bank, q1="    carry: true\n", carry=False)
    ) == [None, False]


def test_the_key_says_which_steps_carry_or_that_none_does(tmp_path, write_bank):
    bank = write_bank(CARRY_BANK.format(sheet="", q1="    carry: false\n"))
    folder = build(BuildOptions(seed=5, banks=(str(bank),), out=str(tmp_path), pdf=False)).folder
    key = (folder / "key.md").read_text("utf-8")
    sheet = (folder / "sheet.md").read_text("utf-8")
    q1, q2 = key.split("## Question 2")
    assert "*No credit carried forward: each part is marked against the key alone.*" in q1
    assert "*Carried forward: (b) from (a); (c) from (b).*" in q2  # heads: d_k, width, W_O
    assert "arried forward" not in sheet
