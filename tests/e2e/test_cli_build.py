"""The build command end to end, as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from worksheetgen.cli import main


@pytest.mark.parametrize("command", [[], ["scan"], ["check"]], ids=["main", "scan", "check"])
def test_help_does_not_import_numpy_or_sympy(command):
    code = (
        "import sys; from worksheetgen.cli import main\n"
        f"try:\n    main({[*command, '--help']!r})\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'sympy', 'PIL', 'pypdfium2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]")


@pytest.mark.parametrize("preset", [None, "3"])
def test_the_command_tunes_its_own_process_before_numpy_is_imported(preset):
    # OpenBLAS reads the variable once, when NumPy is first imported: it must be set by then;
    # a user's own setting wins. Garbage collections are made rarer in this process only.
    from worksheetgen.speed.process import GC_THRESHOLD

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    code = (
        "import gc, os, sys; from worksheetgen.cli import main\n"
        "import worksheetgen.cli as c\n"
        "seen = [gc.get_threshold()]\n"
        "c.main.commands['families'].callback = lambda **kw: seen.append(\n"
        "    (os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules,\n"
        "     gc.get_threshold()))\n"
        "try:\n    main(['families'])\nexcept SystemExit:\n    pass\n"
        "print(seen)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    import ast

    before, during = ast.literal_eval(out.stdout.strip())
    assert during == (preset or "1", False, GC_THRESHOLD) and before != GC_THRESHOLD


def test_the_installed_command_flushes_its_output_and_exits_with_its_code(runner):
    # run() ends the process without tearing down its heap: output must still arrive whole
    listed = subprocess.run(
        [sys.executable, "-m", "worksheetgen", "families"], capture_output=True, text=True
    )
    assert listed.returncode == 0 and listed.stderr == ""
    assert listed.stdout == runner.invoke(main, ["families"]).output
    wrong = subprocess.run(
        [sys.executable, "-m", "worksheetgen", "build", "--bogus"], capture_output=True, text=True
    )
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.startswith("worksheetgen: error: No such option '--bogus'")


@pytest.mark.parametrize(
    ("body", "code", "stderr"),
    [
        ("sys.exit('the text of an exit')", 1, "the text of an exit\n"),
        ("sys.exit(None)", 0, ""),
        ("sys.exit(3)", 3, ""),
    ],
)
def test_the_installed_command_exits_as_python_would(body, code, stderr):
    script = (
        "import sys, worksheetgen.cli.app as c\n"
        f"c.main = lambda: {body}\n"
        "c.run()\n"
        "print('not reached')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (code, "", stderr)


def test_a_bug_in_the_installed_command_keeps_its_traceback(monkeypatch):
    import worksheetgen.cli.app as cli

    def broken():
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "main", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.run()


@pytest.mark.parametrize("command", [[], ["build"], ["families"]])
def test_every_command_has_help(runner, command):
    result = runner.invoke(main, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_version_option_prints_the_version(runner):
    from worksheetgen import __version__

    result = runner.invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_build_without_pdf_writes_sheet_key_json_and_manifest(runner, tmp_path: Path):
    result = runner.invoke(main, ["build", "--seed", "42", "--no-pdf", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "self-attention-seed42"
    names = {p.name for p in folder.iterdir()}
    assert {"sheet.tex", "sheet.md", "key.tex", "key.md", "key.json", "manifest.json"} <= names
    assert str(folder) in result.output
    key = json.loads((folder / "key.json").read_text())
    assert key["seed"] == 42
    questions = key["sheets"][0]["questions"]
    assert {q["family"] for q in questions} >= {"softmax", "scaling", "causal", "heads", "lab3"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["seed"] == 42 and manifest["banks"][0]["sha256"]
    assert {"numpy", "sympy", "worksheetgen"} <= set(manifest)
    assert (
        manifest["draws"][0]["questions"]["lab3"]["Q"]
        == next(q for q in questions if q["id"] == "lab3")["given"]["Q"]
    )


def test_key_json_follows_the_contract(runner, tmp_path: Path):
    bank = ROOT / "banks" / "practice.yaml"
    runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(bank), "--no-pdf", "--out", str(tmp_path)],
        catch_exceptions=False,
    )
    (folder,) = tmp_path.iterdir()
    key = json.loads((folder / "key.json").read_text())
    q = key["sheets"][0]["questions"][0]
    assert q["given"] == {"S": [[2, 0], [0, 2]], "d_k": 2, "causal": False, "T": 2}
    assert q["decimals"] == 2 and q["family"] == "softmax" and q["points"] == 4
    assert q["exact"]["A"][0] == ["exp(sqrt(2))/(1 + exp(sqrt(2)))", "1/(1 + exp(sqrt(2)))"]
    assert q["rounded"]["A"] == [["0.80", "0.20"], ["0.20", "0.80"]]
    assert q["answer"]["A"][0][0] == pytest.approx(0.8044296825069569)
    causal = next(x for x in key["sheets"][0]["questions"] if x["id"] == "practice-causal")
    assert causal["answer"]["masked"][0][1] == "-inf"
    assert causal["given"] == {"scaled": [[1, 3], [0, 1]], "causal": True, "T": 2}


def test_title_and_decimals_options_change_the_output(runner, tmp_path: Path):
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "3",
            "--no-pdf",
            "--out",
            str(tmp_path),
            "--title",
            "Quiz 2 & more",
            "--decimals",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    tex = (folder / "sheet.tex").read_text()
    assert r"Quiz 2 \& more" in tex
    key = json.loads((folder / "key.json").read_text())
    a = next(q for q in key["sheets"][0]["questions"] if q["id"] == "softmax-table")
    assert all(len(x.split(".")[1]) == 3 for x in a["rounded"]["A"][0])
    assert key["title"] == "Quiz 2 & more"
    # the bundled instructions say how to round, for the decimals the key uses
    assert "Round every answer to three decimals (half up)." in tex
    assert "two decimals" not in tex + (folder / "sheet.md").read_text()


def test_a_question_rounded_differently_from_the_sheet_says_so_on_the_sheet(
    runner, write_bank, tmp_path: Path
):
    path = write_bank("""
sheet: {id: t, decimals: 2, instructions: "Round to {{ places }} ({{ decimals }})."}
questions:
  - id: two
    family: softmax
  - id: three
    family: softmax
    decimals: 3
  - id: counts
    family: heads
    decimals: 3
""")
    result = runner.invoke(
        main,
        ["build", "--seed", "3", "--no-pdf", "--out", str(tmp_path / "o"), "--bank", str(path)],
    )
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "o").iterdir()
    for name in ("sheet.md", "sheet.tex"):
        text = (folder / name).read_text()
        assert "Round to two decimals (2)." in text
        # only the softmax with 3 decimals; whole-number counts need no rounding
        assert text.count("In this question, round to three decimals.") == 1, name
        assert text.index("round to three decimals") > text.index(
            "Question 2" if name == "sheet.md" else "{2}"
        )


def test_instructions_naming_an_unknown_variable_fail_at_load(runner, write_bank, tmp_path):
    path = write_bank(
        'sheet: {id: t, instructions: "Round to {{ digits }}."}\n'
        "questions:\n  - id: a\n    family: softmax\n"
    )
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o"), "--bank", str(path)],
    )
    assert result.exit_code == 1
    assert "bank.yaml:1: sheet.instructions:" in result.stderr
    assert "'digits' is undefined; expected one of: decimals, places" in result.stderr
    assert not (tmp_path / "o").exists()


def test_bank_option_accepts_a_folder(runner, tmp_path: Path):
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "5",
            "--no-pdf",
            "--out",
            str(tmp_path / "o"),
            "--bank",
            str(ROOT / "tests" / "banks"),
        ],
    )
    assert result.exit_code == 0, result.output


def test_missing_tex_is_reported_before_any_work(tmp_path: Path):
    env = dict(os.environ, PATH=str(tmp_path))  # no pdflatex on this PATH
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "worksheetgen",
            "build",
            "--seed",
            "42",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode != 0
    assert "no TeX engine" in out.stderr and "--no-pdf" in out.stderr
    assert "apt-get install" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()


def test_bank_error_is_one_line_with_file_line_and_field(runner, write_bank, tmp_path: Path):
    bank = write_bank("""
        questions:
          - id: a
            family: softmax
          - id: b
            family: softmax
          - id: c
            family: softmax
            params:
              T: 12
        """)
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--bank", str(bank), "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1
    assert result.output.strip().endswith(
        "bank.yaml:9: questions[2].params.T: expected an integer from 2 to 4, got 12"
    )
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_python_dash_m_runs_the_cli():
    out = subprocess.run(
        [sys.executable, "-m", "worksheetgen", "--help"], capture_output=True, text=True, check=True
    )
    assert "build" in out.stdout


@needs_tex
def test_build_with_pdf_makes_sheet_and_key_pdfs(runner, tmp_path: Path):
    result = runner.invoke(main, ["build", "--seed", "42", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "self-attention-seed42"
    for name in ("sheet.pdf", "key.pdf"):
        data = (folder / name).read_bytes()
        assert data.startswith(b"%PDF")
    assert not list(tmp_path.glob(".*"))  # no temporary folders left behind


def test_a_key_at_zero_decimals_says_approximately_prints_its_margins_and_tells_weights_apart(
    runner, tmp_path: Path
):
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--no-pdf",
            "--out",
            str(tmp_path),
            "--bank",
            str(ROOT / "banks" / "practice.yaml"),
            "--decimals",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    md, tex = (folder / "key.md").read_text(), (folder / "key.tex").read_text()
    # softmax([sqrt 2, 0]) = [0.80, 0.20] prints as [1, 0]: rounded, not equal
    assert r"$$ A \approx \begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix} $$" in md
    assert r"A = \begin{bmatrix}" not in md + tex
    # A's margin (one unit) is printed, as grade and the exports accept it
    assert "_Accept each entry within ±1._" in md
    assert r"Accept each entry within $\pm1$." in tex
    # 0.88 -> 0.80 both print as 1: the explanation shows the digits that differ
    assert "Its weight goes from 0.9 to 0.8." in md
    # the worked steps too: the masked table of 1.41s printed as 1s is rounded
    assert r"\tilde S \approx \begin{bmatrix} 1 & -\infty \\ 0 & 1 \end{bmatrix}" in md


def test_a_table_that_prints_exactly_is_equal_to_its_printed_form(write_bank):
    from tests.solved import make_build, render_all
    from worksheetgen.bank.load import load_banks

    # scores / sqrt(4) are halves: 0.50 is the value, not an approximation of it
    path = write_bank(
        "questions:\n  - id: q\n    family: causal\n    params: {S: [[1, 0], [3, 2]], d_k: 4}\n"
    )
    md = render_all(make_build(load_banks([path]), 1))["key.md"]
    assert r"S/\sqrt{4} = \begin{bmatrix} 0.50 & 0.00 \\ 1.50 & 1.00 \end{bmatrix}" in md
    assert r"\tilde S = \begin{bmatrix} 0.50 & -\infty \\ 1.50 & 1.00 \end{bmatrix}" in md
    assert r"A \approx" in md  # e^0.5 is not a decimal


@needs_tex
@pytest.mark.parametrize(
    ("bank", "seed", "doc"),
    [
        ("default.yaml", "42", "sheet"),  # question 4: heading, prompt and givens at a page foot
        ("note.yaml", "42", "sheet"),  # the cost question: its parts (a)-(d) went overleaf
        ("note.yaml", "7", "key"),  # spot the bug: the worked solution to check, then (a) overleaf
    ],
)
def test_a_question_that_does_not_fit_at_a_page_foot_starts_on_the_next_page(
    runner, tmp_path, bank, seed, doc
):
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            seed,
            "--bank",
            str(ROOT / "banks" / bank),
            "--out",
            str(tmp_path),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    pages = subprocess.run(
        ["pdftotext", "-layout", str(folder / f"{doc}.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\f")
    n = 0
    while any(f"Question {n + 1}." in p for p in pages):
        n += 1
        at = next(i for i, p in enumerate(pages) if f"Question {n}." in p)
        if "(a)" in pages[at].split(f"Question {n}.", 1)[1]:
            continue  # its first part is there too
        # or the question broke right after its opening, where no later break fits: the
        # next page goes on with its first part under a heading that names the data's page
        named = f"Question {n}, continued; its data is on page {at + 1}:"
        assert named in pages[at + 1], n
        assert "(a)" in pages[at + 1].split(named, 1)[1], n
    assert n >= 5


def test_a_sheet_worth_one_point_says_point(runner, write_bank, tmp_path):
    path = write_bank("questions:\n  - id: a\n    family: heads\n    points: 1\n")
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path / "o"), "--bank", str(path)],
    )
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "o").iterdir()
    for name in ("sheet.tex", "sheet.md", "key.tex", "key.md"):
        text = (folder / name).read_text()
        assert "1 point" in text and "1 points" not in text, name


@needs_tex
def test_the_note_key_has_no_line_running_into_the_margin(runner, tmp_path):
    import subprocess

    # its model answer about masking with 0 has a long formula: 21pt into the margin before
    result = runner.invoke(
        main,
        [
            "build",
            "--bank",
            str(ROOT / "banks" / "note.yaml"),
            "--seed",
            "1",
            "--no-pdf",
            "--out",
            str(tmp_path),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "key.tex"],
        cwd=folder,
        capture_output=True,
        check=True,
        timeout=300,
    )
    log = (folder / "key.log").read_text("utf-8", "replace")
    assert "Overfull \\hbox" not in log


def test_cells_to_fill_in_widen_for_more_printed_digits(runner, tmp_path):
    widths = {}
    for decimals in ("2", "4"):
        out = tmp_path / decimals
        result = runner.invoke(
            main, ["build", "--seed", "42", "--no-pdf", "--out", str(out), "--decimals", decimals]
        )
        assert result.exit_code == 0, result.output
        (folder,) = out.iterdir()
        tex = (folder / "sheet.tex").read_text()
        widths[decimals] = set(
            re.findall(r"\\hbox to ([0-9.]+cm)\{\\hss\\vrule width0pt height4.5mm", tex)
        )
    assert widths["2"] == {"1.7cm", "1.45cm"}
    # "-4.2426" by hand needs more room; whole-number tables (the scores) keep theirs
    assert widths["4"] == {"1.45cm", "2.2cm", "1.95cm"}


def test_outputs_are_as_readable_as_any_new_file(runner, tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        result = runner.invoke(
            main,
            [
                "build",
                "--seed",
                "1",
                "--no-pdf",
                "--versions",
                "2",
                "--out",
                str(tmp_path / "o"),
                "--export",
                "moodle",
            ],
        )
        assert result.exit_code == 0, result.output
        (folder,) = (tmp_path / "o").iterdir()
        # mkdtemp made the build folder 0700: a TA on the same machine could not open it
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755
        assert stat.S_IMODE((folder / "moodle.xml").stat().st_mode) == 0o644
        tpl = tmp_path / "blank.csv"
        result = runner.invoke(
            main, ["grade", "--key", str(folder / "key.json"), "--template", str(tpl)]
        )
        assert result.exit_code == 0, result.output
        assert stat.S_IMODE(tpl.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_a_file_where_the_build_folder_goes_is_not_replaced(runner, tmp_path):
    (tmp_path / "self-attention-seed1").write_text("notes", encoding="utf-8")
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "--out: expected a build folder it may replace, got a regular file" in result.stderr
    assert (tmp_path / "self-attention-seed1").read_text(encoding="utf-8") == "notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["self-attention-seed1"]


@pytest.mark.parametrize("name", ["default.yaml", "note.yaml", "slips.yaml", "practice.yaml"])
def test_every_bundled_sheet_says_how_to_round_for_the_decimals_it_is_built_with(name):
    from worksheetgen.bank.load import load_banks, with_decimals

    info = load_banks([ROOT / "banks" / name]).info
    assert "two decimals" in info.instructions
    assert "four decimals" in with_decimals(info, 4).instructions
