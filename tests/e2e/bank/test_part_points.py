"""Per-part points (issue 17, item 5): the bank's spelling, what the sheet and key print,
key.json's ``part_points``, grading with them, and the LMS exports' weights, parsed back.

The bank is tests/banks/part_points.yaml: softmax (a) 2 by letter, (b) 4 by answer name;
heads with a total of 5, (c) 3 and the other two sharing 2; identical-keys with a total of
7, a written part of 1.5; and a plain ``points: 3`` that keeps today's meaning.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import xml.etree.ElementTree as ET
import zipfile
from fractions import Fraction
from pathlib import Path

import pytest

from tests.oracles import softmax
from tests.unit.bank.test_part_points import BANK
from worksheetgen.cli import main
from worksheetgen.errors import KeyFileError
from worksheetgen.grading.key import parse_key
from worksheetgen.grading.responses import parse_responses
from worksheetgen.grading.score import grade

HEADER = "student,question,answer,entry,value\n"


QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The folder of `build --bank tests/banks/part_points.yaml --seed 1 --no-pdf`."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("build")
    args = ["build", "--bank", str(BANK), "--seed", "1", "--no-pdf", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (key,) = out.glob("*/key.json")
    return key.parent


@pytest.fixture(scope="module")
def key_data(folder: Path) -> dict:
    return json.loads((folder / "key.json").read_text(encoding="utf-8"))


def questions(key_data: dict) -> dict[str, dict]:
    return {q["id"]: q for q in key_data["sheets"][0]["questions"]}


def test_key_json_carries_each_answers_points_by_letter_name_and_shared_rest(key_data):
    qs = questions(key_data)
    assert qs["soft"]["part_points"] == {"scaled": 2, "A": 4}
    assert qs["heads"]["part_points"] == {"d_k": 1, "concat_width": 1, "W_O_shape": 3}
    assert qs["keys"]["part_points"] == {
        "scores": 2.5,
        "A": 1.5,
        "equal_pair": 1.5,
        "explain": 1.5,
    }
    assert [qs[q]["points"] for q in ("soft", "heads", "keys")] == [6, 5, 7]


def test_plain_points_write_no_part_points_and_print_none_per_part(folder, key_data):
    assert "part_points" not in questions(key_data)["plain"]
    md = (folder / "sheet.md").read_text(encoding="utf-8")
    plain = md[md.index("## Question 4.") :]
    assert "## Question 4. Scaled softmax table (3 points)" in plain
    assert "**(a)** Scale the scores" in plain  # no "(1.5 points)" after the letter


@pytest.mark.parametrize("doc", ["sheet.md", "key.md", "sheet.tex", "key.tex"])
def test_each_part_prints_its_points_on_the_sheet_and_the_key(folder, doc):
    text = (folder / doc).read_text(encoding="utf-8")
    if doc.endswith(".md"):
        parts = re.findall(r"\*\*\(([a-z])\)\*\* _\(([\d.]+) points?\)_", text)
    else:
        parts = re.findall(r"\\wspart\{([a-z])\}\{\\small\\itshape \(([\d.]+) points?\)\}", text)
    printed = [float(p) for _, p in parts]
    # soft 2, 4; heads 1, 1, 3; keys 2.5, 1.5, 1.5, 1.5; plain prints none
    assert printed == [2, 4, 1, 1, 3, 2.5, 1.5, 1.5, 1.5]


def test_totals_on_sheet_key_and_grade_agree(runner, folder, key_data, tmp_path):
    totals = set()
    for doc in ("sheet.md", "key.md"):
        text = (folder / doc).read_text(encoding="utf-8")
        header = re.search(r"· (\d+) points\n", text)
        assert header is not None
        heads = [
            float(x) for x in re.findall(r"^## Question \d+\. .* \(([\d.]+) points?\)$", text, re.M)
        ]
        assert sum(heads) == float(header.group(1))
        totals.add(float(header.group(1)))
    for doc in ("sheet.tex", "key.tex"):
        text = (folder / doc).read_text(encoding="utf-8")
        heads = [
            float(x)
            for x in re.findall(r"\\wsquestion\[\d+\]\{\d+\}\{[^}]*\}\{([\d.]+) points?\}", text)
        ]
        totals.add(sum(heads))
    # every question with part points: its parts add up to what its heading prints
    for q in questions(key_data).values():
        if "part_points" in q:
            assert sum(Fraction(str(v)) for v in q["part_points"].values()) == q["points"]
    sid = key_data["sheets"][0]["id"]
    d_k = questions(key_data)["heads"]["rounded"]["d_k"]
    responses = tmp_path / "responses.csv"
    responses.write_text(HEADER + f"{sid},heads,d_k,,{d_k}\n", encoding="utf-8")
    key = str(folder / "key.json")
    result = runner.invoke(
        main, ["grade", "--key", key, str(responses), "--out", str(tmp_path / "g")]
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "g" / "report.md").read_text(encoding="utf-8")
    assert re.search(r"^## .*: 1 / 21", report, re.M), report
    with open(tmp_path / "g" / "scores.csv", encoding="utf-8", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    totals.add(float(row["max"]))
    assert totals == {21.0}


def _cells(sid: str, qid: str, name: str, grid: list) -> str:
    lines = []
    if grid and isinstance(grid[0], list):
        for r, row in enumerate(grid, 1):
            for c, v in enumerate(row, 1):
                lines.append(f'{sid},{qid},{name},"{r},{c}",{v}')
    else:
        for c, v in enumerate(grid, 1):
            lines.append(f"{sid},{qid},{name},{c},{v}")
    return "\n".join(lines) + "\n"


def _graded(key_data: dict, text: str):
    key = parse_key(key_data, "key.json")
    (student,) = grade(key, parse_responses(text, key, "responses.csv")).students
    return {q.id: q for q in student.questions}


def test_grading_gives_each_part_its_own_points(key_data):
    sid = key_data["sheets"][0]["id"]
    soft = questions(key_data)["soft"]
    text = HEADER + _cells(sid, "soft", "A", soft["rounded"]["A"])  # (b) right, (a) blank
    q = _graded(key_data, text)["soft"]
    assert [(p.answer, p.earned, p.possible) for p in q.parts] == [
        ("scaled", 0, 2),
        ("A", 4, 4),
    ]
    heads = questions(key_data)["heads"]
    shape = "x".join(heads["rounded"]["W_O_shape"])
    q = _graded(key_data, HEADER + f"{sid},heads,W_O_shape,,{shape}\n")["heads"]
    assert q.earned == 3 and q.points == 5


def test_grading_carries_a_wrong_scaled_table_forward_with_the_parts_points(key_data):
    sid = key_data["sheets"][0]["id"]
    soft = questions(key_data)["soft"]
    wrong = [[2 * float(x) + 1 for x in row] for row in soft["rounded"]["scaled"]]
    a = [[f"{x:.2f}" for x in softmax(row)] for row in wrong]
    text = HEADER + _cells(sid, "soft", "scaled", wrong) + _cells(sid, "soft", "A", a)
    q = _graded(key_data, text)["soft"]
    scaled, a_part = q.parts
    assert scaled.earned == 0 and scaled.possible == 2
    assert a_part.status == "carried" and a_part.earned == 4


def test_a_written_part_keeps_its_points_to_grade_by_hand(key_data):
    sid = key_data["sheets"][0]["id"]
    q = _graded(key_data, HEADER + f"{sid},keys,explain,,they are the same key\n")["keys"]
    assert q.ungraded == Fraction(3, 2)
    assert q.points == 7


def test_a_plain_number_still_splits_equally(key_data):
    sid = key_data["sheets"][0]["id"]
    q = _graded(key_data, HEADER + f"{sid},keys,explain,,they are the same key\n")["plain"]
    assert [p.possible for p in q.parts] == [Fraction(3, 2), Fraction(3, 2)]


@pytest.mark.parametrize(
    ("part_points", "field", "says"),
    [
        ({"scaled": 2}, "part_points", "got none for 'A'"),
        ({"scaled": 2, "A": 4, "B": 0.5}, "part_points.B", "expected one of the parts' answers"),
        ({"scaled": 1, "A": 4}, "part_points", "adding up to the question's 6, got 5"),
        ({"scaled": -2, "A": 8}, "part_points.scaled", "expected a number above 0"),
        ({"scaled": "2", "A": 4}, "part_points.scaled", "expected a finite number"),
    ],
)
def test_the_reader_refuses_part_points_that_do_not_fit(key_data, part_points, field, says):
    data = json.loads(json.dumps(key_data))
    questions(data)["soft"]["part_points"] = part_points
    with pytest.raises(KeyFileError) as err:
        parse_key(data, "key.json")
    assert f"sheets[0].questions[0].{field}" in str(err.value)
    assert says in str(err.value)


BAD = [
    (
        "{a: 2, d: 1}",
        "points.d",
        "unknown part 'd'; expected a part letter or answer name: a (scaled), b (A), or total",
    ),
    ("{a: 2, scaeld: 4}", "points.scaeld", "unknown part 'scaeld' (did you mean \"scaled\"?)"),
    ("{a: -2, b: 4}", "points.a", "expected a number of points above 0, got -2"),
    ("{a: two, b: 4}", "points.a", "expected a number of points above 0, got 'two'"),
    ("{total: 5, a: 2, b: 4}", "points", "expected the parts to add up to the total 5, got 6"),
    ("{total: 7, a: 2, b: 4}", "points", "expected the parts to add up to the total 7, got 6"),
    (
        "{a: 2}",
        "points",
        "expected points for every part (or a total to share among the rest), got none for b (A)",
    ),
    ("{a: 2, scaled: 4}", "points.scaled", "expected each part once, got part 'scaled' twice"),
    ("{total: -1, a: 2}", "points.total", "expected a total of points above 0, got -1"),
]


@pytest.mark.parametrize(("points", "field", "says"), BAD)
def test_bad_points_are_one_line_with_file_line_and_field(
    runner, write_bank, tmp_path, points, field, says
):
    bank = write_bank(
        f"""
        questions:
          - id: soft
            family: softmax
            points: {points}
        """
    )
    out = tmp_path / "out"
    result = runner.invoke(
        main, ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(out)]
    )
    assert result.exit_code == 1
    head = f"worksheetgen: error: {bank}:4: questions[0].{field}: "
    assert result.stderr.startswith(head) and result.stderr.count("\n") == 1
    assert says in result.stderr
    assert not out.exists()


def test_a_rest_that_does_not_split_into_hundredths_is_refused(runner, write_bank, tmp_path):
    bank = write_bank(
        """
        questions:
          - id: heads
            family: heads
            points: {total: 2, c: 1}
        """,
        "thirds.yaml",
    )
    result = runner.invoke(
        main,
        ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(tmp_path / "p")],
    )
    assert result.exit_code == 0, result.output  # 1 over 2 parts: 0.5 each
    bank = write_bank(
        """
        questions:
          - id: heads
            family: heads
            points: {total: 2, a: 1, b: 0.5, c: 0.5}
          - id: keys
            family: identical-keys
            points: {total: 4, a: 3}
            params: {T: 3, d_k: 2}
        """,
        "bad.yaml",
    )
    result = runner.invoke(
        main,
        ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(tmp_path / "q")],
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"worksheetgen: error: {bank}:7: questions[1].points: expected the 1 points left to "
        "split over 3 parts in hundredths of a point, got 0.3333 each; give those parts "
        "their points\n"
    )


def test_part_points_on_a_multiple_choice_item_are_refused(runner, write_bank, tmp_path):
    bank = write_bank(
        """
        questions:
          - id: pick
            family: softmax
            format: choice
            points: {a: 2}
        """
    )
    result = runner.invoke(
        main,
        ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 1
    assert result.stderr == (
        f"worksheetgen: error: {bank}:5: questions[0].points: expected a number of points: "
        "a multiple-choice item has one part, got a mapping\n"
    )


def test_part_points_on_a_question_whose_parts_depend_on_the_draw_are_refused(
    runner, write_bank, tmp_path
):
    bank = write_bank(
        """
        questions:
          - id: lab
            family: lab3
            points: {a: 1, b: 1, c: 1, d: 1}
            params:
              causal: {choices: [true, false]}
        """
    )
    result = runner.invoke(
        main,
        ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 1
    assert "questions[0].points: expected a number of points: this question's parts depend on" in (
        result.stderr
    )
    assert result.stderr.count("\n") == 1


def _export(runner, folder: Path, to: str, tmp_path: Path) -> Path:
    out = tmp_path / to
    result = runner.invoke(
        main, ["export", "--to", to, "--key", str(folder / "key.json"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def _moodle(runner, folder, tmp_path) -> dict[str, ET.Element]:
    root = ET.parse(_export(runner, folder, "moodle", tmp_path)).getroot()
    out = {}
    for q in root.iter("question"):
        idnumber = q.findtext("idnumber")
        if idnumber:
            out[idnumber] = q
    return out


def test_moodle_cloze_gap_weights_follow_each_entrys_points(runner, folder, key_data, tmp_path):
    qs = _moodle(runner, folder, tmp_path)
    sid = key_data["sheets"][0]["id"]
    soft = qs[f"soft:{sid}"]
    text = soft.findtext("questiontext/text") or ""
    weights = [
        int(w) for w in re.findall(r"\{(\d+):(?:NUMERICAL|SHORTANSWER|MULTICHOICE_V):", text)
    ]
    # (a) 2 points over 4 entries, (b) 4 over 4: whole weights 1 and 2
    assert weights == [1] * 4 + [2] * 4
    assert float(soft.findtext("defaultgrade") or 0) == sum(weights)
    heads = qs[f"heads:{sid}"]
    text = heads.findtext("questiontext/text") or ""
    weights = [int(w) for w in re.findall(r"\{(\d+):NUMERICAL:", text)]
    assert weights == [2, 2, 3, 3]  # 1, 1, then 3 over the shape's two entries
    # the plain question keeps weight 1 per gap
    plain = qs[f"plain:{sid}"].findtext("questiontext/text") or ""
    assert set(re.findall(r"\{(\d+):NUMERICAL:", plain)) == {"1"}


def test_moodle_gives_a_written_part_its_own_points(runner, folder, key_data, tmp_path):
    qs = _moodle(runner, folder, tmp_path)
    sid = key_data["sheets"][0]["id"]
    essay = qs[f"keys:{sid}:written"]
    assert float(essay.findtext("defaultgrade") or 0) == 1.5
    assert "worth 1.5 of the question's 7 point(s)" in (essay.findtext("questiontext/text") or "")
    cloze = qs[f"keys:{sid}"].findtext("questiontext/text") or ""
    weights = [int(w) for w in re.findall(r"\{(\d+):(?:NUMERICAL|MULTICHOICE_V):", cloze)]
    # scores 2.5 over 9 entries, A 1.5 over 9, equal_pair 1.5 in one gap: 5, 3 and 27 (/18)
    assert weights == [5] * 9 + [3] * 9 + [27]


def test_gift_says_each_entrys_mark(runner, folder, tmp_path):
    text = _export(runner, folder, "gift", tmp_path).read_text(encoding="utf-8")
    # marks a person can type: the file's marks are the sheet's points times 9 (some entry
    # is worth a ninth of a point here), and the header says to set the maximum grade back
    (header,) = [ln for ln in text.splitlines() if ln.startswith("// Marks: ")]
    assert "the sheet's points times 9: some are fractions no decimal writes" in header
    (soft,) = [ln for ln in text.splitlines() if ln.startswith("// 1. soft")]
    assert "((a) 4.5 each of 4; (b) 9 each of 4)" in soft  # 0.5 and 1 point
    (heads,) = [ln for ln in text.splitlines() if ln.startswith("// 2. heads")]
    assert "((a) 9; (b) 9; (c) 13.5 each of 2)" in heads  # 1, 1 and 1.5


def test_canvas_points_and_shares_agree_with_the_sheet(runner, folder, key_data, tmp_path):
    with zipfile.ZipFile(_export(runner, folder, "qti", tmp_path)) as zf:
        (name,) = [
            n
            for n in zf.namelist()
            if n.endswith(".xml") and "/" in n and "meta" not in n and "imsmanifest" not in n
        ]
        root = ET.parse(io.BytesIO(zf.read(name))).getroot()
        meta = ET.parse(
            io.BytesIO(zf.read(name.rsplit("/", 1)[0] + "/assessment_meta.xml"))
        ).getroot()
    groups = {}
    for section in root.iter(f"{QTI}section"):
        per = section.find(
            f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_extension/{QTI}points_per_item"
        )
        if per is not None:
            groups[section.get("title")] = float(per.text or 0)
    assert sum(groups.values()) == 21
    assert groups["3. keys: Identical keys (written part)"] == 1.5
    assert groups["3. keys: Identical keys"] == 5.5
    items = {i.get("title"): i for i in root.iter(f"{QTI}item")}
    soft = next(i for t, i in items.items() if t.startswith("1. soft"))
    shares = [float(s.text or 0) for s in soft.iter(f"{QTI}setvar") if s.get("action") == "Add"]
    assert shares == [8.33] * 4 + [16.67] * 4  # 2/6 over 4 blanks, 4/6 over 4
    text = "".join(m.text or "" for m in soft.iter(f"{QTI}mattext"))
    assert "Canvas splits this question's 6 points equally among its 8 blanks" in text
    assert "(a) 2, (b) 4" in text
    assert math.isclose(
        float(meta.findtext("{*}points_possible") or meta.findtext("points_possible") or 0), 21
    )
