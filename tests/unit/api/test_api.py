"""The Python API: the commands' work as calls that return records, print nothing, refuse
in the commands' words, and write what the command writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from worksheetgen import api
from worksheetgen.errors import UsageError, WorksheetgenError

ROOT = Path(__file__).resolve().parents[3]


QUIZ = ROOT / "banks" / "quiz.yaml"


def test_importing_the_api_loads_neither_numpy_nor_sympy() -> None:
    code = (
        "import sys, worksheetgen.api; "
        "print(sorted(m for m in ('numpy', 'sympy', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_course_configuration_is_read_and_a_keyword_wins_over_it(tmp_path, monkeypatch) -> None:
    (tmp_path / "worksheetgen.toml").write_text(
        'course = "Deep Learning 101"\ntitle = "From the configuration"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    built = api.build(3, pdf=False, title="From the call")
    assert built.build.info.course == "Deep Learning 101"
    assert built.build.info.title == "From the call"
    assert built.folder.resolve().parent == (tmp_path / "output").resolve()


def test_grade_export_and_template_return_what_they_wrote(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    built = api.build(5, banks=QUIZ, versions=2, pdf=False, out="out")
    key = built.folder / "key.json"
    moodle = api.export(key, "moodle", out=tmp_path / "quiz.xml")
    assert moodle == tmp_path / "quiz.xml" and moodle.read_bytes().startswith(b"<?xml")
    blank = api.responses_template(key, tmp_path / "responses.csv")
    lines = blank.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "student,question,answer,entry,value"
    blank.write_text(lines[0] + "\n" + lines[1] + "0.5\n", encoding="utf-8")
    graded = api.grade(key, blank, out=tmp_path / "graded")
    assert {p.name for p in graded.files} >= {"scores.csv", "report.md"}
    students = {s.student: s for s in graded.result.students}
    assert set(students) == {"A", "B"} and students["A"].responded
    assert not students["B"].responded


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (
            lambda: api.grade("k.json", "r.csv", tries="middle"),
            "tries: expected one of last, first",
        ),
        (lambda: api.grade("k", "r", grading_method="best"), "grading_method: expected one of"),
        (lambda: api.grade("k", "r", penalty="1.5"), "penalty: expected a decimal from 0 to 1"),
        (lambda: api.grade("k", "r", penalty="⅓"), "penalty: expected a decimal from 0 to 1"),
        (lambda: api.scan([], "k.json", jobs=-1), "jobs: expected a whole number from 0 to 64"),
        (lambda: api.scan([], "k.json", jobs=True), "jobs: expected a whole number"),
        (lambda: api.check(stress=0), "stress: expected a whole number from 1 to 100000"),
        (lambda: api.build(1, out=""), "out: expected a path"),
        (lambda: api.build(1, decimals=99), "decimals: expected a whole number from 0 to 6"),
        (lambda: api.build(1, decimals="2"), "decimals: expected a whole number"),  # type: ignore[arg-type]
        (lambda: api.build(1, jobs=-5), "jobs: expected a whole number from 0 to 64"),
        (lambda: api.build(1, versions=0), "versions: expected a whole number from 1 to 702"),
        (lambda: api.build(1, out="x" * 300), "out: expected a path of"),
        (lambda: api.build(1, banks=[3]), "banks: expected a path, got int"),  # type: ignore[list-item]
        (lambda: api.export("k.json", "moodle", out="-"), "got - (standard output"),
        # issue 33 §6: a hostile value of every kind of keyword, refused before any work
        (lambda: api.build(1, title=5), "title: expected text, got int"),  # type: ignore[arg-type]
        (lambda: api.build(1, course=["a"]), "course: expected text, got list"),  # type: ignore[arg-type]
        (lambda: api.build(1, out="a\x00b"), "out: expected a path, got one holding NUL"),
        (lambda: api.build(1, pdf="no"), "pdf: expected True or False, got 'no'"),  # type: ignore[arg-type]
        (lambda: api.build(1, shuffle="yes"), "shuffle: expected True or False, or None"),  # type: ignore[arg-type]
        (lambda: api.build(1, large_print=2), "large_print: expected True or False"),  # type: ignore[arg-type]
        (lambda: api.build(1, practice="yes"), "practice: expected True or False"),  # type: ignore[arg-type]
        (lambda: api.build(1, progress=5), "progress: expected a function or None"),  # type: ignore[arg-type]
        (lambda: api.check(decimals=9), "decimals: expected a whole number from 0 to 6"),
        (lambda: api.grade("k.json", "r.csv", carry="no"), "carry: expected True or False"),  # type: ignore[arg-type]
        (lambda: api.grade("k.json", "r.csv", lenient="x"), "lenient: expected True or False"),  # type: ignore[arg-type]
        (lambda: api.scan([], "k.json"), "pages: expected at least one scan"),
        # issue 36: the verification views and the scans on the feedback pages
        (
            lambda: api.scan(["p.png"], "k.json", verify_pages="some"),  # type: ignore[arg-type]
            "verify_pages: expected one of issues, all, none, got 'some'",
        ),
        (
            lambda: api.scan(["p.png"], "k.json", feedback_scans="yes"),  # type: ignore[arg-type]
            "feedback_scans: expected True or False, got 'yes'",
        ),
        (lambda: api.responses_template("k.json", "t.csv", marks="x"), "marks: expected True"),  # type: ignore[arg-type]
    ],
)
def test_a_wrong_keyword_is_refused_in_one_line(call, words, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        call()
    assert words in str(caught.value) and "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_a_failure_is_the_command_s_error_not_a_traceback(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "key.json"
    broken.write_text(json.dumps({"format": "worksheetgen-key"}), encoding="utf-8")
    with pytest.raises(WorksheetgenError) as caught:
        api.export(broken, "moodle")
    assert "key.json" in str(caught.value) and "\n" not in str(caught.value)


def test_the_notebook_example_runs(tmp_path, monkeypatch, capsys) -> None:
    """docs' notebook (examples/notebook/course.ipynb): every code cell, in order, in one
    namespace, as a kernel would run them; what it prints is what its text says."""
    notebook = json.loads((ROOT / "examples/notebook/course.ipynb").read_text("utf-8"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), "course.ipynb", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "True" in printed.splitlines()[1]  # the check passed
    assert "3 sheets into" in printed
    lines = printed.splitlines()
    assert re.fullmatch(r"A (\d+\.\d\d) of 35 answered", lines[5])  # its tables: 0.5 each
    assert float(lines[5].split()[1]) > 0  # an even spread is right in some cells
    assert lines[6:8] == ["B 0.00 of 35 nothing handed in", "C 0.00 of 35 nothing handed in"]
    assert "refused: " in printed and "no-such-file.csv" in printed
    assert (tmp_path / "graded" / "scores.csv").is_file()
