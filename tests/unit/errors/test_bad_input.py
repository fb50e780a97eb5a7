"""Bad input gets one clear line (file, line, field, expected/got), a non-zero exit, no output.

Every case of issue 5 section 1 is a row of one table: the files it writes, the command-line
arguments, and the exact error line it must print. Each row runs through Click's CliRunner;
a sample also runs as a real subprocess, where a traceback would show.

A behaviour across modules, not one module's tests (families).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from worksheetgen.families import FAMILIES

Q = "questions:\n  - id: a\n    family: softmax\n"


@dataclass(frozen=True)
class Case:
    """One bad input: files to write, arguments to add, and the error line expected."""

    name: str
    files: dict[str, str | bytes]
    expected: str
    args: tuple[str, ...] = ("--bank", "bank.yaml")
    dirs: tuple[str, ...] = field(default=())
    exit_code: int = 1


def bank(text: str) -> dict[str, str | bytes]:
    return {"bank.yaml": text}


ROSTER_ARGS = ("--bank", "bank.yaml", "--roster", "roster.csv")


def roster(content: str | bytes) -> dict[str, str | bytes]:
    return {"bank.yaml": "questions:\n  - id: w\n    family: heads\n", "roster.csv": content}


CASES = [
    Case(
        "yaml-syntax-error",
        bank(Q + "    params: {T: 2\n"),
        "bank.yaml:5: YAML syntax error: expected ',' or '}', but got the end of the file",
    ),
    Case(
        "yaml-bad-indent",
        bank("questions:\n  - id: a\n   family: softmax\n"),
        "bank.yaml:3: YAML syntax error: expected the end of the block, but found a field "
        "indented differently (check the indentation)",
    ),
    Case(
        "empty-file",
        bank(""),
        "bank.yaml: expected a mapping with a 'questions' list, got an empty file",
    ),
    Case(
        "only-comments",
        bank("# nothing here\n"),
        "bank.yaml: expected a mapping with a 'questions' list, got an empty file",
    ),
    Case(
        "not-a-mapping-list",
        bank("- 1\n- 2\n"),
        "bank.yaml:1: expected a mapping with a 'questions' list, got a list of 2",
    ),
    Case(
        "not-a-mapping-text",
        bank("hello\n"),
        "bank.yaml:1: expected a mapping with a 'questions' list, got a text of 5 characters "
        "(is this a bank file?)",
    ),
    Case(
        "binary-file",
        {"bank.yaml": b"\x7fELF\x02\x01\x01\x00\x00\x00"},
        "bank.yaml: expected a UTF-8 YAML text file, got a binary file",
    ),
    Case(
        "not-utf8",
        {"bank.yaml": "questions: caf\u00e9\n".encode("latin-1")},
        "bank.yaml:1: expected UTF-8 text (save the file as UTF-8), got the byte 0xe9",
    ),
    Case(
        "control-character",
        bank("questions:\n  - id: a\n    fam\x1bily: softmax\n"),
        "bank.yaml:3: expected printable text, got U+001B, a control character",
    ),
    Case(
        "bank-does-not-exist",
        {},
        "missing.yaml: expected a YAML file or a folder of banks, got no such file or folder",
        args=("--bank", "missing.yaml"),
    ),
    Case(
        "folder-without-banks",
        {"empty/notes.txt": "x"},
        "empty: expected a folder with *.yaml banks, got none",
        args=("--bank", "empty"),
    ),
    Case(
        "same-bank-twice",
        bank(Q),
        "bank.yaml: expected each bank once, got it again (first as bank.yaml)",
        args=("--bank", "bank.yaml", "--bank", "bank.yaml"),
    ),
    Case(
        "no-questions-field",
        bank("sheet: {title: x}\n"),
        "bank.yaml:1: questions: expected a list of questions (required), got nothing",
    ),
    Case(
        "questions-empty",
        bank("questions: []\n"),
        "bank.yaml:1: questions: expected a non-empty list, got an empty list",
    ),
    Case(
        "unknown-top-field",
        bank("questoins: []\n"),
        'bank.yaml:1: questoins: unknown field (did you mean "questions"?); '
        "expected one of: sheet, questions",
    ),
    Case(
        "unknown-family",
        bank("questions:\n  - id: a\n    family: sofmax\n"),
        "bank.yaml:3: questions[0].family: unknown family 'sofmax' (did you mean "
        '"softmax"?); expected one of: ' + ", ".join(sorted(FAMILIES)),
    ),
    Case(
        "unknown-field",
        bank(Q + "    pionts: 2\n"),
        'bank.yaml:4: questions[0].pionts: unknown field (did you mean "points"?); '
        "expected one of: id, family, points, decimals, params, prompt, format, title, space, "
        "carry",
    ),
    Case(
        "unknown-parameter",
        bank(Q + "    params: {dk: 2}\n"),
        'bank.yaml:4: questions[0].params.dk: unknown parameter (did you mean "d_k"?) '
        "for family 'softmax'; expected one of: T, d_k, low, high, prescaled, S",
    ),
    Case(
        "unknown-sheet-field",
        bank("sheet: {titel: x}\n" + Q),
        'bank.yaml:1: sheet.titel: unknown field (did you mean "title"?); '
        "expected one of: id, title, course, instructions, decimals, kind, space, shuffle, carry",
    ),
    Case(
        "missing-id",
        bank("questions:\n  - family: softmax\n"),
        "bank.yaml:2: questions[0].id: expected a question id (required), got nothing",
    ),
    Case(
        "missing-family",
        bank("questions:\n  - id: a\n"),
        "bank.yaml:2: questions[0].family: expected a family name (required), got nothing",
    ),
    Case(
        "wrong-type-T",
        bank(Q + "    params: {T: two}\n"),
        "bank.yaml:4: questions[0].params.T: expected an integer from 2 to 4, got 'two'",
    ),
    Case(
        "wrong-type-points",
        bank(Q + "    points: [1]\n"),
        "bank.yaml:4: questions[0].points: expected a number of points above 0, got a list of 1",
    ),
    Case(
        "wrong-type-bool",
        bank("questions:\n  - id: a\n    family: causal\n    params: {causal: 'yes'}\n"),
        "bank.yaml:4: questions[0].params.causal: expected true or false, got 'yes'",
    ),
    Case(
        "wrong-type-question",
        bank("questions:\n  - softmax\n"),
        "bank.yaml:2: questions[0]: expected a mapping with id and family, got 'softmax'",
    ),
    Case(
        "range-backwards",
        bank(Q + "    params: {T: {min: 4, max: 2}}\n"),
        "bank.yaml:4: questions[0].params.T: expected min <= max, got min 4 > max 2",
    ),
    Case(
        "range-empty-choices",
        bank(Q + "    params: {T: {choices: []}}\n"),
        "bank.yaml:4: questions[0].params.T.choices: expected a non-empty list, got an empty list",
    ),
    Case(
        "range-low-above-high",
        bank(Q + "    params: {low: 5, high: 1}\n"),
        "bank.yaml:4: questions[0].params.high: expected high >= low (5), got 1",
    ),
    Case(
        "range-low-above-default-high",
        bank(Q + "    params: {low: 5}\n"),
        "bank.yaml:4: questions[0].params.low: expected low <= high (3), got 5",
    ),
    Case(
        "T-above-support",
        bank(Q + "    params: {T: 12}\n"),
        "bank.yaml:4: questions[0].params.T: expected an integer from 2 to 4, got 12",
    ),
    Case(
        "T-range-above-support",
        bank(Q + "    params: {T: {min: 2, max: 50}}\n"),
        "bank.yaml:4: questions[0].params.T.max: expected an integer from 2 to 4, got 50",
    ),
    Case(
        "T-below-support",
        bank(Q + "    params: {T: 1}\n"),
        "bank.yaml:4: questions[0].params.T: expected an integer from 2 to 4, got 1",
    ),
    Case(
        "h-not-dividing-d",
        bank("questions:\n  - id: a\n    family: heads\n    params: {d: 10, h: 4}\n"),
        "bank.yaml:4: questions[0].params.h: expected h to divide d = 10, got h = 4",
    ),
    Case(
        "h-never-dividing-d",
        bank(
            "questions:\n  - id: a\n    family: heads\n"
            "    params: {d: {choices: [9, 15]}, h: {choices: [2, 4]}}\n"
        ),
        "bank.yaml:4: questions[0].params.h: expected at least one choice of h that divides "
        "a choice of d, got none",
    ),
    Case(
        "d_k-zero",
        bank(Q + "    params: {d_k: 0}\n"),
        "bank.yaml:4: questions[0].params.d_k: expected an integer from 1 to 64, got 0",
    ),
    Case(
        "d_k-negative",
        bank(Q + "    params: {d_k: -4}\n"),
        "bank.yaml:4: questions[0].params.d_k: expected an integer from 1 to 64, got -4",
    ),
    Case(
        "d_k-zero-in-choices",
        bank(Q + "    params: {d_k: {choices: [2, 0]}}\n"),
        "bank.yaml:4: questions[0].params.d_k.choices[1]: expected an integer from 1 to 64, got 0",
    ),
    Case(
        "matrix-not-square",
        bank(Q + "    params:\n      S: [[1, 2], [3, 4], [5, 6]]\n"),
        "bank.yaml:5: questions[0].params.S: expected a square T x T table, got 3x2",
    ),
    Case(
        "matrix-ragged",
        bank(Q + "    params:\n      S: [[1, 2], [3]]\n"),
        "bank.yaml:5: questions[0].params.S[1]: expected a row of 2 numbers (like row 0), got 1",
    ),
    Case(
        "matrix-non-number",
        bank(Q + "    params:\n      S: [[1, x], [3, 4]]\n"),
        "bank.yaml:5: questions[0].params.S[0][1]: expected a number of at most 1000 in size, "
        "got 'x'",
    ),
    Case(
        "matrix-nan",
        bank(Q + "    params:\n      S: [[1, .nan], [3, 4]]\n"),
        "bank.yaml:5: questions[0].params.S[0][1]: expected a number of at most 1000 in size, "
        "got nan",
    ),
    Case(
        "matrix-not-whole-numbers",
        bank(
            "questions:\n  - id: a\n    family: projections\n"
            "    params:\n      W_Q: [[1, 0.5], [0, 1]]\n"
        ),
        "bank.yaml:5: questions[0].params.W_Q[0][1]: expected a whole number, got 0.5",
    ),
    Case(
        "matrix-too-big",
        bank(Q + "    params:\n      S: " + str([[1] * 9] * 9) + "\n"),
        "bank.yaml:5: questions[0].params.S: expected between 2 and 4 rows and columns, got 9x9",
    ),
    Case(
        "matrix-not-a-list",
        bank(Q + "    params:\n      S: 3\n"),
        "bank.yaml:5: questions[0].params.S: expected a matrix (a list of rows), got 3",
    ),
    Case(
        "lab3-shapes-disagree",
        bank(
            "questions:\n  - id: a\n    family: lab3\n    params:\n"
            "      Q: [[1, 0], [0, 1]]\n      K: [[1, 0, 1], [0, 1, 1]]\n      V: [[1], [2]]\n"
        ),
        "bank.yaml:6: questions[0].params.K: expected K with 2 columns like Q, got 3",
    ),
    Case(
        "duplicate-id-in-bank",
        bank(Q + "  - id: a\n    family: heads\n"),
        "bank.yaml:4: questions[1].id: expected a unique id, got 'a' again (first at bank.yaml:2)",
    ),
    Case(
        "duplicate-id-across-banks",
        {
            "bank.yaml": Q,
            "more.yaml": "questions:\n  - id: b\n    family: heads\n  - id: a\n    family: heads\n",
        },
        "more.yaml:4: questions[1].id: expected a unique id, got 'a' again (first at bank.yaml:2)",
        args=("--bank", "bank.yaml", "--bank", "more.yaml"),
    ),
    Case(
        "duplicate-key",
        bank(Q + "    points: 1\n    points: 2\n"),
        "bank.yaml:5: questions[0].points: expected each key once, got 'points' again",
    ),
    Case(
        "bad-id",
        bank("questions:\n  - id: 'a b/c'\n    family: heads\n"),
        "bank.yaml:2: questions[0].id: expected an id of letters, digits, '-', '_' or '.' "
        "(at most 64), got 'a b/c'",
    ),
    Case(
        "prompt-syntax-error",
        bank(Q + "    prompt: |\n      Scores for\n      {{ T tokens.\n"),
        "bank.yaml:6: questions[0].prompt: prompt line 2: template syntax error: "
        "expected token 'end of print statement', got 'tokens'",
    ),
    Case(
        "prompt-unclosed-block",
        bank(Q + '    prompt: "{% if causal %}masked"\n'),
        "bank.yaml:4: questions[0].prompt: prompt line 1: template syntax error: expected "
        "{% endif %} to close {% if %}, got the end of the prompt",
    ),
    Case(
        "prompt-undefined-variable",
        bank(Q + "    prompt: |\n      {{ T }} tokens,\n      width {{ dk }}.\n"),
        "bank.yaml:6: questions[0].prompt: prompt line 2: unknown variable 'dk' (did you mean "
        '"d_k"?); expected one of: S, T, causal, d_k',
    ),
    Case(
        "prompt-filter-not-allowed",
        bank(Q + '    prompt: "{{ T|center(100) }}"\n'),
        "bank.yaml:4: questions[0].prompt: prompt line 1: template not allowed: expected a "
        "filter from: abs, capitalize, count, d, default, first, float, int, join, last, "
        "length, list, lower, max, min, reverse, round, sort, string, sum, title, trim, "
        "unique, upper; got 'center'",
    ),
    Case(
        "prompt-runtime-error",
        bank(Q + '    prompt: "{{ T / 0 }}"\n'),
        "bank.yaml:4: questions[0].prompt: prompt line 1: template error: ZeroDivisionError: "
        "division by zero",
    ),
    Case(
        "prompt-unsafe-math",
        bank(Q + "    prompt: 'Read $\\input{/etc/passwd}$'\n"),
        "bank.yaml:4: questions[0].prompt: expected math with safe commands only, got \\input "
        "in $\\input{/etc/passwd}$",
    ),
    Case(
        "python-tag",
        bank("questions: !!python/object/apply:os.system ['echo hi']\n"),
        "bank.yaml:1: questions: expected plain YAML values (no tags), got the tag "
        "'!!python/object/apply:os.system'",
    ),
    Case(
        "too-many-questions",
        bank("questions:\n" + "".join(f"  - id: q{i}\n    family: heads\n" for i in range(201))),
        "bank.yaml:1: questions: expected at most 200 questions, got 201",
    ),
    Case(
        "too-many-questions-across-banks",
        {
            "bank.yaml": "questions:\n"
            + "".join(f"  - id: a{i}\n    family: heads\n" for i in range(120)),
            "more.yaml": "questions:\n"
            + "".join(f"  - id: b{i}\n    family: heads\n" for i in range(120)),
        },
        "more.yaml: expected at most 200 questions in one sheet (all banks together), got 240",
        args=("--bank", "bank.yaml", "--bank", "more.yaml"),
    ),
    Case(
        "huge-bank-file",
        bank("# " + "x" * 2_000_000 + "\n" + Q),
        "bank.yaml: expected a bank of at most 2000000 bytes, got 2000044",
    ),
    Case(
        "class-too-large",
        {
            "bank.yaml": "questions:\n"
            + "".join(f"  - id: c{i}\n    family: heads\n" for i in range(25)),
            "roster.csv": "name\n" + "".join(f"S{i}\n" for i in range(1601)),
        },
        "expected at most 40000 questions in one class build (sheets x questions), got "
        "1601 x 25 = 40025; split the roster or the bank",
        args=ROSTER_ARGS,
        exit_code=2,
    ),
    Case(
        "roster-without-name-column",
        roster("pupil,id\nAda,s1\n"),
        "roster.csv:1: header: expected a header row with a 'name' column (or first and last "
        "name columns), got 'pupil', 'id'",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-empty-name",
        roster("name,id\nAda,s1\n ,s2\n"),
        "roster.csv:3: name: expected a name, got nothing",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-duplicate-id",
        roster("name,id\nAda,s1\nBob,s2\nCy,s1\n"),
        "roster.csv:4: id: expected a unique id, got 's1' (also on line 2)",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-duplicate-name-without-ids",
        roster("name\nAda\nAda\n"),
        "roster.csv:3: name: expected a unique name or an id column, got 'Ada' again "
        "(also on line 2)",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-empty-file",
        roster(""),
        "roster.csv:1: header: expected a header row with a 'name' column, got an empty file",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-spreadsheet-file",
        roster(b"PK\x03\x04\x00\x00name"),
        "roster.csv:1: encoding: expected text, got a NUL byte (is this a spreadsheet file, "
        "not CSV?)",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-not-utf8",
        roster("name\nZo\u00eb\n".encode("latin-1")),
        "roster.csv:2: encoding: expected UTF-8 text (save the file as 'CSV UTF-8'), got byte 0xeb",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-over-the-limit",
        roster("name\n" + "".join(f"S{i}\n" for i in range(2001))),
        "roster.csv:2002: row: expected at most 2000 students, got more",
        args=ROSTER_ARGS,
    ),
    Case(
        "roster-missing",
        bank(Q),
        "roster.csv: roster: expected a CSV file, got no such file",
        args=ROSTER_ARGS,
    ),
    Case(
        "templates-folder-missing",
        bank(Q),
        "--templates: Directory 'tpl' does not exist.",
        args=("--bank", "bank.yaml", "--templates", "tpl"),
        exit_code=2,
    ),
    Case(
        "out-is-a-file",
        {"taken": "x"},
        "--out: expected a folder to write builds into, got the file taken",
        args=("--out", "taken"),
        exit_code=2,
    ),
    Case(
        "out-through-a-file",
        {"taken": "x"},
        "--out: expected a folder to write builds "
        "into, got taken/sub, a path through the file taken",
        args=("--out", "taken/sub"),
        exit_code=2,
    ),
    Case(
        "out-is-a-file-for-a-class",
        {"taken": "x"},
        "--out: expected a folder to write builds into, got the file taken",
        args=("--versions", "2", "--out", "taken"),
        exit_code=2,
    ),
    Case(
        "seed-negative",
        {},
        "--seed: expected a non-negative integer, got '-1'",
        args=("--seed", "-1"),
        exit_code=2,
    ),
    Case(
        "seed-not-a-number",
        {},
        "--seed: expected a non-negative integer, got 'abc'",
        args=("--seed", "abc"),
        exit_code=2,
    ),
    Case(
        "seed-fraction",
        {},
        "--seed: expected a non-negative integer, got '1.5'",
        args=("--seed", "1.5"),
        exit_code=2,
    ),
    Case(
        "seed-too-big",
        {},
        "--seed: expected a non-negative integer below 2**63, got '9223372036854775808'",
        args=("--seed", str(2**63)),
        exit_code=2,
    ),
]


def test_bad_input_table_covers_every_family_error_once_per_kind() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    # the cases the issue lists, by kind
    for kind in (
        "yaml-syntax",
        "empty-file",
        "not-a-mapping",
        "binary",
        "does-not-exist",
        "folder-without",
        "unknown-family",
        "unknown-field",
        "missing-",
        "wrong-type",
        "range-backwards",
        "range-empty",
        "T-above",
        "h-not-dividing",
        "d_k-zero",
        "d_k-negative",
        "matrix-not-square",
        "matrix-non-number",
        "duplicate-id-in",
        "duplicate-id-across",
        "prompt-syntax",
        "prompt-undefined",
        "seed-",
        "python-tag",
        "roster-without-name",
        "roster-empty-name",
        "roster-duplicate-id",
        "roster-over-the-limit",
        "too-many-questions",
        "huge-bank-file",
        "class-too-large",
    ):
        assert any(kind in n for n in names), kind
