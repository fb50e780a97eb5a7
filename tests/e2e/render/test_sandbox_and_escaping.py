"""Nothing executed that should not be: the prompt sandbox, escaping, TeX's limits, safe YAML.

Covers issue 5 section 3. Prompts run in Jinja2's immutable sandbox with extra limits; every
user text is escaped for LaTeX and Markdown; bank math keeps only safe commands; TeX runs
without shell escape and cannot read or write outside its folder; YAML builds no objects.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from tests.unit.render.test_sandbox_and_escaping import pdf_text
from worksheetgen.cli import main


def test_sandbox_escape_in_a_bank_is_refused_at_load(runner, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bank.yaml").write_text(
        "questions:\n  - id: a\n    family: softmax\n    prompt: |\n      Scores:\n"
        "      {{ cycler.__init__.__globals__.os }}\n",
        encoding="utf-8",
    )
    result = runner.invoke(
        main, ["build", "--seed", "1", "--no-pdf", "--out", "out", "--bank", "bank.yaml"]
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "worksheetgen: error: bank.yaml:6: questions[0].prompt: prompt line "
        "2: template not allowed: expected an attribute without '_' in "
        "front, got '__globals__'\n"
    )
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "out").exists()


@needs_tex
def test_hostile_bank_text_prints_literally_in_the_pdf(runner, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bank.yaml").write_text(
        r"""
sheet:
  title: 'Quiz \input{/etc/passwd} 100% #1'
  course: '\write18{touch pwned} ^^5c {course}'
  instructions: "Read \\input{/etc/passwd} and \\catcode`\\^=7 ~ & _ for \\$5"
questions:
  - id: a
    family: heads
    title: '\immediate\write18{touch pwned2}'
    params: {d: 8, h: 2}
    prompt: 'Widths d = {{ d }}: \input{/etc/hosts} costs 5% of $d/h = {{ d }}/{{ h }}$.'
""".lstrip(),
        encoding="utf-8",
    )
    result = runner.invoke(main, ["build", "--seed", "1", "--out", "out", "--bank", "bank.yaml"])
    assert result.exit_code == 0, result.stderr
    (folder,) = (tmp_path / "out").iterdir()
    text = pdf_text((folder / "sheet.pdf").read_bytes(), tmp_path)
    flat = " ".join(text.split())
    assert "Quiz \\input{/etc/passwd} 100% #1" in flat
    assert "\\write18{touch pwned} ^^5c {course}" in flat
    assert "\\input{/etc/hosts} costs 5%" in flat
    # instructions are markup like a prompt: their text is shown, not run (and math that
    # is not on the safe list is refused at load, tests/unit/bank/test_bank_audit.py)
    assert "Read \\input{/etc/passwd} and" in flat and "for $5" in flat
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    root_line = Path("/etc/passwd").read_text().splitlines()[0]
    assert root_line not in text


TEMPLATE_ESCAPES = [
    ("((( cycler.__init__.__globals__ )))", "access to attribute '__init__'"),
    ("((( build.__class__.__mro__ )))", "access to attribute '__class__'"),
    ("((( sheets.append(1) )))", "access to attribute 'append'"),
    ("((( 1 / 0 )))", "ZeroDivisionError: division by zero"),
]


@pytest.mark.parametrize("body,words", TEMPLATE_ESCAPES, ids=[b for b, _ in TEMPLATE_ESCAPES])
def test_shared_templates_run_in_the_sandbox(body, words, runner, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tpl" / "latex").mkdir(parents=True)
    (tmp_path / "tpl" / "latex" / "sheet.tex.j2").write_text(
        '((* extends "base.tex.j2" *))\n((* block sheet_body *))\nHello\n'
        + body
        + "\n((* endblock *))\n",
        encoding="utf-8",
    )
    result = runner.invoke(
        main, ["build", "--seed", "1", "--no-pdf", "--out", "out", "--templates", "tpl"]
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "worksheetgen: error: tpl/latex/sheet.tex.j2:4: template error: "
    ), result.stderr
    assert words in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_copy_of_the_bundled_templates_builds_in_the_sandbox(runner, tmp_path) -> None:
    shutil.copytree(ROOT / "templates", tmp_path / "tpl")
    plain = runner.invoke(main, ["build", "--seed", "3", "--no-pdf", "--out", str(tmp_path / "a")])
    shared = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "3",
            "--no-pdf",
            "--out",
            str(tmp_path / "b"),
            "--templates",
            str(tmp_path / "tpl"),
        ],
    )
    assert plain.exit_code == shared.exit_code == 0, shared.stderr
    (a,) = (tmp_path / "a").iterdir()
    (b,) = (tmp_path / "b").iterdir()
    for name in ("sheet.tex", "key.tex", "sheet.md", "key.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_a_template_that_is_not_utf8_names_the_line_of_the_byte(runner, tmp_path) -> None:
    # issue 33: every reader of a user's file names the line of a byte that is not UTF-8
    (tmp_path / "mine" / "markdown").mkdir(parents=True)
    (tmp_path / "mine" / "markdown" / "sheet.md.j2").write_bytes(b"line one\nCaf\xe9\n")
    out = tmp_path / "out"
    res = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "-q", "--out", str(out)]
        + ["--bank", str(ROOT / "banks" / "quiz.yaml"), "--templates", str(tmp_path / "mine")],
    )
    assert res.exit_code == 1, res.output
    sheet = tmp_path / "mine" / "markdown" / "sheet.md.j2"
    assert res.output == f"worksheetgen: error: {sheet}:2: expected UTF-8 text, got the byte 0xE9\n"
    assert not out.exists() or not any(out.iterdir())
