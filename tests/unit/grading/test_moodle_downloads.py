"""grade and Moodle's downloads of today's exports (issue 22, issue 26 §5): the real Moodle 4.5
downloads in tests/fixtures/moodle/real-2/ (its README says how each was made and what each
student typed; attempts.json what Moodle drew)."""

from __future__ import annotations

import csv
import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import key_as_version_1
from tests.paths import MOODLE, ROOT
from worksheetgen.cli import main
from worksheetgen.errors import GradeError
from worksheetgen.export import export_bytes
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle_rows
from worksheetgen.grading.responses import _records
from worksheetgen.grading.score import grade
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


# ---------------------------------------------------------------- 1. today's Right answer


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


def test_a_real_download_is_graded_from_the_cli_in_every_format(runner, tmp_path):
    for folder, name in DOWNLOADS:
        out = tmp_path / folder / name
        argv = ["grade", "--key", str(KEYS[folder] / "key.json"), str(REAL / folder / name)]
        result = runner.invoke(main, [*argv, "--out", str(out)])
        assert result.exit_code == 0, (folder, name, result.output)
        with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
            scores = {r["name"]: r for r in csv.DictReader(fh)}
        # Ada and Zoë typed every printed value: full marks wherever they were graded
        for who in ("Ada Lovelace", "Zoë Ñúñez-Łukasz"):
            if who in scores:
                assert scores[who]["total"] == scores[who]["max"], (folder, name, who)
        assert "Finn Olsen" not in scores  # in progress
    csvs = {
        f: (tmp_path / f / "responses-right.csv" / "scores.csv").read_text("utf-8")
        for f in ("pool", "pool-run2")
    }
    for folder in ("pool", "pool-run2"):  # the spreadsheets say what the CSV says
        for ext in ("xlsx", "ods"):
            assert (tmp_path / folder / f"responses-right.{ext}" / "scores.csv").read_text(
                "utf-8"
            ) == csvs[folder]


def test_an_older_downloads_exact_right_answer_is_still_read(runner, tmp_path):
    old = REAL.parent / "default"
    out = tmp_path / "old"
    argv = ["grade", "--key", str(old / "key.json"), str(old / "responses-resp-right.csv")]
    result = runner.invoke(main, [*argv, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "part 7: 0.62245933120185" in (old / "responses-resp-right.csv").read_text("utf-8")


def test_a_right_answer_of_no_version_is_still_refused_with_its_line(tmp_path):
    text = (REAL / "pool-run2" / "responses-right.csv").read_bytes().decode("utf-8-sig")
    bad = text.replace("part 1: 0.67; part 2: 1;", "part 1: 0.68; part 2: 1;", 1)
    assert bad != text
    doc = load_key(KEYS["pool-run2"] / "key.json")
    with pytest.raises(GradeError) as info:
        parse_moodle_rows(list(_records(bad, "r.csv")), doc, grade_key(doc), "r.csv")
    assert "Right answer 1: expected the right answer of a version" in str(info.value)


# -------------------------------------------- the fixtures follow the export they came from


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


# ---------------------------------------------------------------- 2. dealt against the pool


def test_attempts_dealt_against_the_pool_rule_are_listed_and_the_rest_graded(runner, tmp_path):
    out = tmp_path / "g"
    argv = ["grade", "--key", str(REAL / "pool" / "key.json")]
    result = runner.invoke(
        main, [*argv, str(REAL / "pool" / "responses-right.csv"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "3 attempt(s) not graded: the LMS dealt them against the bank's pool rule" in (
        result.output
    )
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        names = [r["name"] for r in csv.DictReader(fh)]
    # Ada and Zoë drew two versions of one question in their only attempt; Gia in her second
    assert names == ["Ben Carter", "Dan Ortiz, Jr.", "Eve Park", "Gia Rossi", "Hal Stone"]
    report = (out / "report.md").read_text("utf-8")
    line = next(ln for ln in report.splitlines() if ln.startswith("Not graded, dealt against"))
    assert (
        "ada.lovelace@example.com (Ada Lovelace): question q-cost twice in pool shapes "
        "(versions C and D, line 2)" in line
    )
    assert (
        "zoe.nunez@example.com (Zoë Ñúñez-Łukasz): question q-cross-mc twice in pool shapes "
        "(versions B and D, line 4)" in line
    )
    assert "gia.rossi@example.com (Gia Rossi), attempt 2 of 2: question q-cost twice" in line
    # Gia's first attempt (the pool's rule kept) is the one graded
    responses, graded_key = _parse("pool", "responses-right.csv")
    gia = next(s for s in graded_key.sheets if s.id.startswith("gia"))
    assert sorted((q.id, q.version) for q in gia.questions) == sorted(
        [("q-softmax", "D"), ("q-causal", "C"), ("q-cross-mc", "A"), ("q-multihead", "A")]
    )


# ---------------------------------------------------------------- 4. report of a download


def test_a_download_report_numbers_questions_by_quiz_slot_and_shows_a_choice_by_letter(
    runner, tmp_path
):
    out = tmp_path / "g"
    argv = ["grade", "--key", str(REAL / "pool" / "key.json")]
    result = runner.invoke(
        main, [*argv, str(REAL / "pool-run2" / "responses-right.csv"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text("utf-8")
    for block in report.split("\n## ")[2:]:
        numbers = re.findall(r"^### Question (\d+):", block, re.M)
        assert numbers == [str(n) for n in range(1, len(numbers) + 1)], block[:200]
    assert "&amp;" not in report and "bmatrix" not in report
    assert re.search(r"`output`: wrong \(0/2\)\..*Not credited: wrote [A-D], key [A-D]\.", report)


# ---------------------------------------------------------------- 5. report.md


def test_the_mean_counts_only_students_who_answered_and_headings_name_titles(runner, tmp_path):
    folder = build(BuildOptions(seed=3, versions=4, out=str(tmp_path / "b"), pdf=False)).folder
    template = tmp_path / "responses.csv"
    key = str(folder / "key.json")
    assert runner.invoke(main, ["grade", "--key", key, "--template", str(template)]).exit_code == 0
    rows = list(csv.DictReader(template.open(encoding="utf-8", newline="")))
    doc = json.loads((folder / "key.json").read_text("utf-8"))
    sheet_b = doc["sheets"][1]["id"]
    first = next(r for r in rows if r["student"] == sheet_b)
    first["value"] = "0"  # only sheet B answers: one entry of its first question
    with template.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "g"
    result = runner.invoke(main, ["grade", "--key", key, str(template), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text("utf-8")
    assert "Mean score of the 1 student with responses:" in report
    assert (
        "No responses from: " + ", ".join(s["id"] for s in doc["sheets"] if s["id"] != sheet_b)
        in report
    )
    q = doc["sheets"][1]["questions"][0]
    title = load_key(folder / "key.json").sheets[1].variants[0].title
    assert q["title"] == title and title != q["id"]  # the family's title, stated in the key
    assert f"### Question 1: {title} (`{q['id']}`" in report.replace("\\", "")


# ---------------------------------------------------------------- 3. error carried forward

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


def test_a_bad_carry_is_refused_with_its_line(runner, tmp_path, write_bank):
    bank = write_bank(CARRY_BANK.format(sheet="", q1="    carry: sometimes\n"))
    result = runner.invoke(main, ["build", "--seed", "1", "--bank", str(bank), "--no-pdf"])
    assert result.exit_code == 1
    assert result.output == (
        f"worksheetgen: error: {bank}:6: questions[0].carry: expected true or false, "
        "got 'sometimes'\n"
    )
    config = tmp_path / "worksheetgen.toml"
    config.write_text('carry = "no"\n', encoding="utf-8")
    result = runner.invoke(main, ["config", "--config", str(config)])
    assert result.exit_code == 1
    assert result.output.endswith(f"{config}:1: carry: expected true or false, got 'no'\n")


def _grade(runner, key: Path, download: Path, out: Path, *flags: str) -> dict[str, dict]:
    argv = ["grade", "--key", str(key), str(download), "--out", str(out), *flags]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        return {r["name"]: r for r in csv.DictReader(fh)}


def test_no_carry_gives_what_moodle_gave_and_the_report_shows_where_carry_differs(runner, tmp_path):
    key = REAL / "pool" / "key.json"
    download = REAL / "pool-run2" / "responses-right.csv"
    on = _grade(runner, key, download, tmp_path / "on")
    off = _grade(runner, key, download, tmp_path / "off", "--no-carry")
    # Ben's and Hal's slip in q-softmax: carried credit for (b) with carry, none without,
    # as Moodle (a mark of 0 for that slot)
    assert (on["Ben Carter"]["q-softmax"], off["Ben Carter"]["q-softmax"]) == ("4", "0")
    assert (on["Hal Stone"]["q-softmax"], off["Hal Stone"]["q-softmax"]) == ("4", "0")
    # every question that Moodle marked 0 or full is 0 or full without carry, and so on
    responses, graded_key = _parse("pool-run2", "responses-right.csv")
    result = grade(graded_key, responses, carry=False)
    by_name = {s.name: s for s in result.students}
    slot_max = {"1": 6, "2": 4, "3": 1, "4": 1}
    compared = 0
    for a in _attempts("pool-run2"):
        s = by_name.get(a["name"])
        if s is None or a["state"] != "finished":
            continue
        drawn = dict(zip(a["drawn"], _drawn(a), strict=True))
        if sorted(drawn.values()) != sorted((q.id, q.version) for q in s.questions):
            continue  # the attempt that did not count
        sheet = next(k for k in graded_key.sheets if k.name == a["name"])
        for slot, (qid, _) in drawn.items():
            q = next(q for q in s.questions if q.id == qid)
            if any(x.kind == "shape" for x in sheet.questions[q.number - 1].answers):
                continue  # a shape's points per dimension: the export's rule (#22 §3)
            mark = a["marks"][slot] or 0
            assert (mark == 0) == (q.earned == 0), (a["name"], qid)
            assert (abs(mark - slot_max[slot]) < 1e-6) == (q.earned == q.points), (a["name"], qid)
            compared += 1
    assert compared >= 20
    report = (tmp_path / "on" / "report.md").read_text("utf-8")
    assert "Carried credit changes the score of 2 students" in report
    # Ben's q-multihead shape part earns its share per right dimension (cb37931), so his totals
    # are 10.42 and 3.67 (they were 10.33 and 3.5 when a shape part was all or nothing)
    assert "S002 10.42 (without: 3.67), S008 13 (without: 9)" in report
    assert "Without carried credit (what an LMS gives): 3.67 / 14." in report
    assert "(`q-softmax`, version B), 4 / 6 (without carried credit: 0)" in report
    plain = (tmp_path / "off" / "report.md").read_text("utf-8")
    assert "Carried credit: off (grade --no-carry)" in plain and "Without carried" not in plain


def test_a_key_with_carry_off_is_graded_without_it_unless_grade_says_carry(runner, tmp_path):
    data = json.loads((REAL / "pool" / "key.json").read_text("utf-8"))
    for sheet in data["sheets"]:
        for q in sheet["questions"]:
            q["carry"] = False
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    download = REAL / "pool-run2" / "responses-right.csv"
    from_key = _grade(runner, key, download, tmp_path / "k")
    assert from_key["Ben Carter"]["total"] == "3.67"  # a shape part: per dimension
    assert "Carried credit changes" not in (tmp_path / "k" / "report.md").read_text("utf-8")
    forced = _grade(runner, key, download, tmp_path / "c", "--carry")
    assert forced["Ben Carter"]["total"] == "10.42"
    data["sheets"][0]["questions"][0]["carry"] = "no"
    key.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(
        main, ["grade", "--key", str(key), str(download), "--out", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert "sheets[0].questions[0].carry: expected true or false, got 'no'" in result.output


def test_the_key_says_which_steps_carry_or_that_none_does(tmp_path, write_bank):
    bank = write_bank(CARRY_BANK.format(sheet="", q1="    carry: false\n"))
    folder = build(BuildOptions(seed=5, banks=(str(bank),), out=str(tmp_path), pdf=False)).folder
    key = (folder / "key.md").read_text("utf-8")
    sheet = (folder / "sheet.md").read_text("utf-8")
    q1, q2 = key.split("## Question 2")
    assert "*No credit carried forward: each part is marked against the key alone.*" in q1
    assert "*Carried forward: (b) from (a); (c) from (b).*" in q2  # heads: d_k, width, W_O
    assert "arried forward" not in sheet
