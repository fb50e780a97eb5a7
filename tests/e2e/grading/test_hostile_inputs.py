"""Hostile and odd inputs on the reading side (issue 14): formula cells in every CSV written
from user data, devices and endless files, deep or broken key.json, extreme numbers in a
responses file, one verdict on a key for grade and export, unprintable ids, and report.md
escaping names as sheets.md does.

Each case must end in one line (``worksheetgen: error: file[:line]: field: expected ...``)
and exit 1, or grade as documented, never in a traceback.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT
from worksheetgen.cli import main
from worksheetgen.errors import GradeError, KeyFileError, RosterError
from worksheetgen.grading.csvcells import FORMULA_START, unprotect
from worksheetgen.inputs import MAX_JSON_DEPTH
from worksheetgen.textrules import unprintable

PRACTICE = str(ROOT / "banks" / "practice.yaml")


FORMULA_IDS = ["=1+1", "@SUM(1)", "+1", "-2+3", "'q"]


ODD_NAME = "$x$ <b>*a*</b> [l](u) _e_"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="module")
def one_key(tmp_path_factory) -> Path:
    """key.json of the practice bank, one sheet."""
    out = tmp_path_factory.mktemp("one")
    result = CliRunner().invoke(
        main, ["build", "--bank", PRACTICE, "--seed", "1", "--no-pdf", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    (key,) = out.glob("*/key.json")
    return key


@pytest.fixture(scope="module")
def roster_key(tmp_path_factory) -> Path:
    """key.json of a class whose roster ids a spreadsheet would run as formulas."""
    root = tmp_path_factory.mktemp("roster")
    roster = root / "roster.csv"
    with open(roster, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "id"])
        w.writerow([ODD_NAME, FORMULA_IDS[0]])
        w.writerows([f"Student {i}", sid] for i, sid in enumerate(FORMULA_IDS[1:]))
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--bank",
            PRACTICE,
            "--seed",
            "1",
            "--no-pdf",
            "--roster",
            str(roster),
            "--out",
            str(root / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    (key,) = (root / "out").glob("*/key.json")
    return key


def one_error_line(result, *parts: str) -> str:
    """The single error line of a failed command, which must contain every one of ``parts``."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("worksheetgen: error: "), result.output
    for p in parts:
        assert p in lines[0], (p, lines[0])
    return lines[0]


def test_template_cells_from_roster_ids_cannot_run_as_formulas_and_grade_back(
    runner, roster_key, tmp_path
):
    template = tmp_path / "responses.csv"
    result = runner.invoke(main, ["grade", "--key", str(roster_key), "--template", str(template)])
    assert result.exit_code == 0, result.output
    with open(template, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    for row in body:
        for cell in row:
            assert cell[:1] not in FORMULA_START, row
    assert {unprotect(r[0]) for r in body} == set(FORMULA_IDS)
    # fill in numbers a student types: negative ones and masked cells are values, not text
    col = {c: i for i, c in enumerate(header)}
    for row in body:
        if row[col["answer"]] == "scaled":
            row[col["value"]] = "-0.5"
        elif row[col["answer"]] == "masked":
            row[col["value"]] = "-inf"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *body])
    template.write_text(buf.getvalue(), encoding="utf-8")
    out = tmp_path / "graded"
    result = runner.invoke(
        main, ["grade", "--key", str(roster_key), str(template), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        scores = list(csv.reader(fh))
    for row in scores:
        for cell in row:
            assert cell[:1] not in FORMULA_START, row
    assert [unprotect(r[0]) for r in scores[1:]] == FORMULA_IDS
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "No responses from" not in report  # every protected id matched its sheet


def test_scores_header_protects_question_ids_taken_from_the_key(one_key, tmp_path):
    from worksheetgen.grading.key import parse_key
    from worksheetgen.grading.responses import parse_responses
    from worksheetgen.grading.score import grade
    from worksheetgen.report.grade import scores_csv

    data = json.loads(one_key.read_text(encoding="utf-8"))
    q = data["sheets"][0]["questions"][0]
    q["id"] = "=HYPERLINK(1)"
    key = parse_key(data, "key.json")
    sid = data["sheets"][0]["id"]
    name = q["parts"][0]["answer"]
    text = f'student,question,answer,entry,value\n{sid},\'=HYPERLINK(1),{name},"1,1",1\n'
    result = grade(key, parse_responses(text, key))
    header = next(csv.reader(io.StringIO(scores_csv(result))))
    assert "'=HYPERLINK(1)" in header and "=HYPERLINK(1)" not in header


@pytest.fixture
def fifo(tmp_path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _endless(kind: str, fifo: Path) -> str:
    return "/dev/zero" if kind == "device" else str(fifo)


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_roster_that_is_a_device_or_a_fifo_is_refused_before_reading(
    runner, kind, fifo, tmp_path
):
    path = _endless(kind, fifo)
    result = runner.invoke(
        main,
        [
            "build",
            "--bank",
            PRACTICE,
            "--seed",
            "1",
            "--no-pdf",
            "--roster",
            path,
            "--out",
            str(tmp_path / "o"),
        ],
    )
    what = "a character device" if kind == "device" else "a FIFO (named pipe)"
    one_error_line(result, f"{path}: roster: expected a CSV file, got {what}")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_key_that_is_a_device_or_a_fifo_is_refused_by_grade_and_every_export(
    runner, kind, fifo, one_key, tmp_path
):
    path = _endless(kind, fifo)
    what = "a character device" if kind == "device" else "a FIFO (named pipe)"
    resp = tmp_path / "r.csv"
    resp.write_text("student,question,answer,entry,value\n", encoding="utf-8")
    result = runner.invoke(main, ["grade", "--key", path, str(resp), "--out", str(tmp_path / "g")])
    one_error_line(result, f"{path}: expected a key.json file, got {what}")
    result = runner.invoke(main, ["grade", "--key", path, "--template", str(tmp_path / "t")])
    one_error_line(result, f"{path}: expected a key.json file, got {what}")
    for fmt in ("moodle", "gift", "qti"):
        result = runner.invoke(
            main, ["export", "--to", fmt, "--key", path, "--out", str(tmp_path / fmt)]
        )
        one_error_line(result, f"{path}: expected a key.json file, got {what}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["r.csv", "fifo"])


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_responses_file_that_is_a_device_or_a_fifo_is_refused(
    runner, kind, fifo, one_key, tmp_path
):
    path = _endless(kind, fifo)
    what = "a character device" if kind == "device" else "a FIFO (named pipe)"
    result = runner.invoke(
        main, ["grade", "--key", str(one_key), path, "--out", str(tmp_path / "g")]
    )
    one_error_line(result, f"{path}: expected a responses CSV file, got {what}")
    assert not (tmp_path / "g").exists()


def test_inputs_over_their_limit_are_refused_from_their_size(monkeypatch, one_key, tmp_path):
    from worksheetgen.bank import roster
    from worksheetgen.grading import key as grade_key
    from worksheetgen.grading import responses as grade_responses
    from worksheetgen.keyjson import read as keyread

    big = tmp_path / "big.csv"
    big.write_bytes(b"name,id\n" + b"x,y\n" * 100)
    monkeypatch.setattr(roster, "MAX_ROSTER_BYTES", 100)
    with pytest.raises(
        RosterError,
        match=r"roster: expected a CSV file of at most 100 bytes, "
        r"got 408$",
    ):
        roster.read_roster(big)
    monkeypatch.setattr(keyread, "MAX_KEY_BYTES", 1000)
    with pytest.raises(KeyFileError, match=r"expected a key.json file of at most 1000 bytes"):
        grade_key.load_key(one_key)
    monkeypatch.setattr(grade_responses, "MAX_RESPONSES_BYTES", 100)
    with pytest.raises(GradeError, match=r"expected a responses CSV file of at most 100 bytes"):
        grade_responses.read_responses(big, None)  # type: ignore[arg-type]


def _key_commands(key: Path, tmp_path: Path) -> list[list[str]]:
    resp = tmp_path / "r.csv"
    resp.write_text("student,question,answer,entry,value\n", encoding="utf-8")
    return [
        ["grade", "--key", str(key), str(resp), "--out", str(tmp_path / "g")],
        ["grade", "--key", str(key), "--template", str(tmp_path / "t.csv")],
        *(
            ["export", "--to", fmt, "--key", str(key), "--out", str(tmp_path / fmt)]
            for fmt in ("moodle", "gift", "qti")
        ),
    ]


def _refused_everywhere(runner, key: Path, tmp_path: Path, *parts: str) -> set[str]:
    lines = set()
    for args in _key_commands(key, tmp_path):
        lines.add(one_error_line(runner.invoke(main, args), *parts))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([key.name, "r.csv"])
    return lines


def test_a_key_nested_100000_levels_deep_is_one_line_for_grade_and_every_export(runner, tmp_path):
    key = tmp_path / "key.json"
    key.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    _refused_everywhere(
        runner, key, tmp_path, f"expected JSON nested at most {MAX_JSON_DEPTH} levels deep"
    )


def test_a_key_nested_deeply_inside_a_field_names_the_field(runner, one_key, tmp_path):
    data = json.loads(one_key.read_text(encoding="utf-8"))
    deep: list = []
    for _ in range(MAX_JSON_DEPTH + 10):
        deep = [deep]
    data["sheets"][0]["questions"][0]["given"]["deep"] = deep
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    _refused_everywhere(
        runner, key, tmp_path, "sheets[0].questions[0].given.deep", "expected JSON nested at most"
    )


@pytest.mark.parametrize("char", ["\x1b", "\x07", "\u202e", "\ufffe", "\x85"])
def test_a_control_or_format_character_in_key_json_is_refused_naming_its_field(
    runner, one_key, tmp_path, char
):
    data = json.loads(one_key.read_text(encoding="utf-8"))
    data["sheets"][0]["questions"][1]["prompt"] = f"a{char}b"
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    lines = _refused_everywhere(
        runner, key, tmp_path, "sheets[0].questions[1].prompt: expected printable text, got U+"
    )
    assert len(lines) == 1


@pytest.mark.parametrize("where", ["title", "sheet-label", "prompt", "key-name"])
def test_a_lone_surrogate_in_key_json_is_refused_naming_its_field(runner, one_key, tmp_path, where):
    data = json.loads(one_key.read_text(encoding="utf-8"))
    mark = "SURROGATE-HERE"
    if where == "title":
        data["title"] = mark
        field = "title"
    elif where == "sheet-label":
        data["sheets"][0]["label"] = mark
        field = "sheets[0].label"
    elif where == "prompt":
        data["sheets"][0]["questions"][1]["prompt"] = mark
        field = "sheets[0].questions[1].prompt"
    else:
        data["sheets"][0]["questions"][0]["given"][mark] = 1
        field = "sheets[0].questions[0].given"
    text = json.dumps(data, ensure_ascii=False).replace(mark, "a\\ud800b")
    key = tmp_path / "key.json"
    key.write_text(text, encoding="utf-8")
    lines = _refused_everywhere(
        runner, key, tmp_path, f"{field}: expected text, got a lone surrogate U+D800"
    )
    assert len({line.split(": ", 2)[2] for line in lines}) == 1


@pytest.mark.parametrize(
    "number, message",
    [
        ("NaN", "expected finite numbers, got NaN"),
        ("-Infinity", "expected finite numbers, got -Infinity"),
        ("1" * 5000, "expected numbers a float can hold, got an integer of 5000 digits"),
        ("1" * 400, "expected numbers a float can hold, got an integer of 400 digits"),
        ("1e999", "expected finite numbers, got 1e999 (too large for a float)"),
    ],
)
def test_numbers_json_allows_but_no_key_holds_are_one_line(
    runner, one_key, tmp_path, number, message
):
    text = one_key.read_text(encoding="utf-8").replace('"points": 4', f'"points": {number}', 1)
    assert number in text
    key = tmp_path / "key.json"
    key.write_text(text, encoding="utf-8")
    _refused_everywhere(runner, key, tmp_path, f"sheets[0].questions[0].points: {message}")


def test_a_key_an_object_holds_twice_is_one_line_naming_it(runner, one_key, tmp_path):
    # JSON lets the later one win silently: a key.json edited by hand graded by the wrong one
    # (issue 33 §3: every reader of a JSON file, key.json and scan.json alike)
    text = one_key.read_text(encoding="utf-8").replace('"points": 4', '"points": 4, "points": 9', 1)
    assert '"points": 9' in text
    key = tmp_path / "key.json"
    key.write_text(text, encoding="utf-8")
    _refused_everywhere(
        runner,
        key,
        tmp_path,
        "sheets[0].questions[0].points: expected each key of an object once, got it twice",
    )


def test_a_slip_value_no_float_holds_is_refused_in_the_file_and_ignored_in_memory(
    runner, one_key, tmp_path
):
    from worksheetgen.export import export_bytes
    from worksheetgen.grading.key import parse_key

    data = json.loads(one_key.read_text(encoding="utf-8"))
    q = next(q for q in data["sheets"][0]["questions"] if q["distractors"])
    d = q["distractors"][0]
    name = next(n for n in d["answer"] if q["kinds"].get(n) == "matrix")
    d["answer"][name][0][0] = 10**400
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    _refused_everywhere(
        runner, key, tmp_path, f".distractors[0].answer.{name}[0][0]: expected numbers a float"
    )
    # a key built in memory (not read from a file) has the slip's value ignored, as any slip
    # value of another form is: no OverflowError
    parse_key(data)
    assert export_bytes(data, "gift")


def test_a_key_json_with_a_byte_order_mark_is_read(runner, one_key, tmp_path):
    key = tmp_path / "key.json"
    key.write_bytes(b"\xef\xbb\xbf" + one_key.read_bytes())
    result = runner.invoke(main, ["export", "--to", "gift", "--key", str(key)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "entry, value, column, message",
    [
        (
            '"1,1"',
            "1" * 401 + "/" + "3" * 401,
            "value",
            "expected a number of at most 100 characters",
        ),
        ('"1,1"', "1" * 5000, "value", "expected a number of at most 100 characters, got 5000"),
        ('"1,1"', "1e999", "value", "expected a number a float can hold"),
        ('"1,1"', "-1e999", "value", "expected a number a float can hold"),
        ('"1,1"', "١٫٥", "value", "expected a number like 0.73"),
        ('"1,1"', "٣", "value", "expected a number like 0.73"),
        ('"1,1"', "2²", "value", "expected a number like 0.73"),
        ('"1,' + "1" * 5000 + '"', "1", "entry", "expected a cell"),
        ('"²,1"', "1", "entry", "expected a cell"),
        ('"١,١"', "1", "entry", "expected a cell"),
    ],
)
def test_extreme_or_odd_numbers_are_one_line_with_line_and_column(
    runner, one_key, tmp_path, entry, value, column, message
):
    data = json.loads(one_key.read_text(encoding="utf-8"))
    sid = data["sheets"][0]["id"]
    q = data["sheets"][0]["questions"][0]
    name = q["parts"][0]["answer"]
    assert q["kinds"][name] == "matrix"
    resp = tmp_path / "r.csv"
    resp.write_text(
        f'student,question,answer,entry,value\n{sid},{q["id"]},{name},"1,2",1\n'
        f"{sid},{q['id']},{name},{entry},{value}\n",
        encoding="utf-8",
    )
    result = runner.invoke(
        main, ["grade", "--key", str(one_key), str(resp), "--out", str(tmp_path / "g")]
    )
    one_error_line(result, f"r.csv:3: {column}: {message}")
    assert not (tmp_path / "g").exists()


def test_a_vector_position_in_other_digits_is_refused(one_key):
    from worksheetgen.grading.key import parse_key
    from worksheetgen.grading.responses import parse_responses

    data = json.loads(one_key.read_text(encoding="utf-8"))
    sheet = data["sheets"][0]
    q = next(q for q in sheet["questions"] if "vector" in q["kinds"].values())
    name = next(n for n, k in q["kinds"].items() if k == "vector")
    key = parse_key(data)
    for pos in ("²", "١", "1" * 5000):
        text = f"student,question,answer,entry,value\n{sheet['id']},{q['id']},{name},{pos},1\n"
        with pytest.raises(
            GradeError,
            match=r"responses.csv:2: entry: expected the entry "
            r"number",
        ):
            parse_responses(text, key)


def test_long_but_ordinary_numbers_still_grade(one_key):
    from worksheetgen.grading.key import parse_key
    from worksheetgen.grading.responses import parse_responses

    data = json.loads(one_key.read_text(encoding="utf-8"))
    sid = data["sheets"][0]["id"]
    q = data["sheets"][0]["questions"][0]
    name = q["parts"][0]["answer"]
    key = parse_key(data)
    text = (
        f'student,question,answer,entry,value\n{sid},{q["id"]},{name},"1,1",'
        f'{"1" * 40}/{"7" * 40}\n{sid},{q["id"]},{name},"1,2",-0.{"5" * 90}\n'
    )
    got = parse_responses(text, key).students[0].cells[q["id"]][name]
    assert got[(0, 0)].value == pytest.approx(1 / 7)
    assert got[(0, 1)].value == pytest.approx(-5 / 9)


def _mutations():
    def tol(q):
        name = next(n for n in q["kinds"] if n in q["tolerance"])
        return name

    return [
        (
            "negative-tolerance",
            lambda d: d["sheets"][0]["questions"][0]["tolerance"].update(
                {tol(d["sheets"][0]["questions"][0]): -0.01}
            ),
            "sheets[0].questions[0].tolerance",
            "expected a number >= 0",
        ),
        (
            "text-tolerance",
            lambda d: d["sheets"][0]["questions"][0]["tolerance"].update(
                {tol(d["sheets"][0]["questions"][0]): "wide"}
            ),
            "sheets[0].questions[0].tolerance",
            "expected a finite number, got 'wide'",
        ),
        (
            "huge-tolerance",
            lambda d: d["sheets"][0]["questions"][0]["tolerance"].update(
                {tol(d["sheets"][0]["questions"][0]): 10**400}
            ),
            "sheets[0].questions[0].tolerance",
            "expected numbers a float can hold, got an integer of 401 digits",
        ),
        (
            "other-format",
            lambda d: d.update(format="someone-else"),
            "format",
            "expected 'worksheetgen-key'",
        ),
        ("no-format", lambda d: d.pop("format"), "format", "got nothing"),
        (
            "other-version",
            lambda d: d.update(version=7),
            "version",
            "expected 2 (or 1, a key of an older build), got 7",
        ),
        (
            "text-version",
            lambda d: d.update(version="1"),
            "version",
            "expected 2 (or 1, a key of an older build), got '1'",
        ),
        (
            "huge-points",
            lambda d: d["sheets"][0]["questions"][0].update(points=1e30),
            "sheets[0].questions[0].points",
            "expected a number from 0 to 1000, got 1e+30",
        ),
        (
            "given-not-an-object",
            lambda d: d["sheets"][0]["questions"][0].update(given=[1, 2]),
            "sheets[0].questions[0].given",
            "expected an object, got a list of 2",
        ),
        (
            "given-d_k-text",
            lambda d: d["sheets"][0]["questions"][0]["given"].update(d_k="x"),
            "sheets[0].questions[0].given.d_k",
            "expected a finite number, got 'x'",
        ),
        (
            "given-d_k-negative",
            lambda d: d["sheets"][0]["questions"][0]["given"].update(d_k=-4),
            "sheets[0].questions[0].given.d_k",
            "expected a number above 0, got -4",
        ),
        (
            "given-V-text",
            lambda d: d["sheets"][0]["questions"][0]["given"].update(V=[[1, "a"]]),
            "sheets[0].questions[0].given.V[0][1]",
            "expected a finite number, got 'a'",
        ),
        (
            "given-causal-text",
            lambda d: d["sheets"][0]["questions"][0]["given"].update(causal="yes"),
            "sheets[0].questions[0].given.causal",
            "expected true or false, got 'yes'",
        ),
        (
            "float-version",
            lambda d: d.update(version=1.0),
            "version",
            "expected 2 (or 1, a key of an older build), got 1.0",
        ),
        (
            "sheet-id-newline",
            lambda d: d["sheets"][0].update(id="abc\n"),
            "sheets[0].id",
            "U+000A, a control character",
        ),
        (
            "question-id-newline",
            lambda d: d["sheets"][0]["questions"][0].update(id="q1\n"),
            "sheets[0].questions[0].id",
            "U+000A, a control character",
        ),
        (
            "question-id-space",
            lambda d: d["sheets"][0]["questions"][0].update(id="q1 "),
            "sheets[0].questions[0].id",
            "white space at its end",
        ),
        (
            "question-id-nonchar",
            lambda d: d["sheets"][0]["questions"][0].update(id="q\ufffe"),
            "sheets[0].questions[0].id",
            "got U+FFFE, a noncharacter",
        ),
        (
            "answer-name-newline",
            lambda d: d["sheets"][0]["questions"][0]["parts"][0].update(
                answer=d["sheets"][0]["questions"][0]["parts"][0]["answer"] + "\n"
            ),
            "sheets[0].questions[0].parts[0].answer",
            "U+000A",
        ),
        (
            "student-name-bidi",
            lambda d: d["sheets"][0].update(
                student={"name": "Ana\u202e", "id": d["sheets"][0]["id"]}
            ),
            "sheets[0].student.name",
            "got U+202E (RIGHT-TO-LEFT OVERRIDE), an invisible formatting character",
        ),
    ]


@pytest.mark.parametrize(
    "name, mutate, field, message", _mutations(), ids=[m[0] for m in _mutations()]
)
def test_grade_and_export_give_a_broken_key_the_same_verdict(
    runner, one_key, tmp_path, name, mutate, field, message
):
    data = json.loads(one_key.read_text(encoding="utf-8"))
    mutate(data)
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    lines = _refused_everywhere(runner, key, tmp_path, f": {field}", message)
    assert len(lines) == 1, lines  # word for word the same line from every command


@pytest.mark.parametrize("char", ["\ufffe", "\uffff", "\ufdd0", "\ufdef", "\u202e", "\x1b"])
@pytest.mark.parametrize("column", ["name", "id"])
def test_a_roster_with_unprintable_characters_is_refused(runner, tmp_path, char, column):
    roster = tmp_path / "roster.csv"
    row = ["Ada" + char, "s1"] if column == "name" else ["Ada", "s" + char]
    roster.write_text("name,id\n" + ",".join(row) + "\n", encoding="utf-8")
    result = runner.invoke(
        main,
        [
            "build",
            "--bank",
            PRACTICE,
            "--seed",
            "1",
            "--no-pdf",
            "--roster",
            str(roster),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    line = one_error_line(
        result, f"roster.csv:2: {column}: expected ", "printable characters", f"U+{ord(char):04X}"
    )
    assert char not in line
    assert unprintable(row[0] + row[1]) == char
    assert not (tmp_path / "o").exists()


def test_report_escapes_names_and_ids_as_the_sheets_do(runner, roster_key, tmp_path):
    from worksheetgen.render.markup import escape_md_inline

    sheet_id = FORMULA_IDS[0]
    data = json.loads(roster_key.read_text(encoding="utf-8"))
    q = data["sheets"][0]["questions"][0]
    name = q["parts"][0]["answer"]
    resp = tmp_path / "r.csv"
    resp.write_text(
        f'student,question,answer,entry,value\n\'{sheet_id},{q["id"]},{name},"1,1",$x$ <b>\n',
        encoding="utf-8",
    )
    result = runner.invoke(
        main, ["grade", "--key", str(roster_key), str(resp), "--out", str(tmp_path / "g")]
    )
    one_error_line(result, "value: expected a number")  # a number column: not text
    resp.write_text(
        f'student,question,answer,entry,value\n\'{sheet_id},{q["id"]},{name},"1,1",0.5\n',
        encoding="utf-8",
    )
    result = runner.invoke(
        main, ["grade", "--key", str(roster_key), str(resp), "--out", str(tmp_path / "g")]
    )
    assert result.exit_code == 0, result.output
    report = (tmp_path / "g" / "report.md").read_text(encoding="utf-8")
    sheets = (roster_key.parent / "sheets.md").read_text(encoding="utf-8")
    shown = escape_md_inline(ODD_NAME)
    assert shown in report and shown in sheets
    assert "$x$" not in report and "<b>" not in report and "*a*" not in report
    assert escape_md_inline("=1+1") in report


def test_report_code_spans_hold_any_backticks(one_key):
    from worksheetgen.report.grade import _code

    assert _code("q1") == "`q1`"
    assert _code("a`b") == "``a`b``"
    assert _code("`x") == "`` `x ``"
