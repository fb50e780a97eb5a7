"""Issue 25 (hardened, round three), text, numbers and options: one rule for every number and
length (ASCII digits only), the project's words for every option, error lines that quote a
short escaped excerpt, per-part points above 0, long unbreakable lines in TeX, and output
folders that vanish or have names too long."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import needs_tex
from worksheetgen.cli import main
from worksheetgen.pipeline import sink
from worksheetgen.render.texlines import MAX_TEX_LINE_CHARS

BANK = """\
sheet:
  title: T
questions:
  - id: q1
    family: scaling
{extra}"""


def test_a_bank_with_a_million_character_space_is_one_short_line(tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK.format(extra="    space: " + "9" * 1_000_000 + "cm\n"), encoding="utf-8")
    result = runner.invoke(
        main, ["build", "--seed", "1", "--bank", str(bank), "--no-pdf", "--out", str(tmp_path)]
    )
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and len(lines[0]) < 500, lines
    assert lines[0].startswith(f"worksheetgen: error: {bank}:6: questions[0].space: expected")


@pytest.mark.parametrize("height", ["٣cm", "１cm", "²cm", "3²cm", "1_0cm", "1e1cm"])
def test_a_space_in_other_digits_is_a_bank_line_not_a_tex_failure(height, tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK.format(extra=f'    space: "{height}"\n'), encoding="utf-8")
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(bank), "--no-pdf", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 1
    assert result.output.startswith(f"worksheetgen: error: {bank}:6: questions[0].space: expected")
    assert result.output.count("\n") == 1 and not (tmp_path / "o").exists()


def test_a_space_in_ascii_digits_still_builds(tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK.format(extra='    space: "2.5cm"\n'), encoding="utf-8")
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(bank), "--no-pdf", "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 0, result.output


def test_a_configured_space_in_other_digits_is_refused(tmp_path, runner, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "worksheetgen.toml").write_text('space = "٣cm"\n', encoding="utf-8")
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", "o"])
    assert result.exit_code != 0
    assert "worksheetgen.toml" in result.output and "٣cm" in result.output
    assert result.output.count("\n") == 1 and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["build", "--seed", "²"],
            "--seed: expected a non-negative integer, got '²' (write the digits 0-9)",
        ),
        (
            ["build", "--seed", "٣"],
            "--seed: expected a non-negative integer, got '٣' (write the digits 0-9)",
        ),
        (
            ["build", "--seed", "1" * 100],
            "--seed: expected a non-negative integer below 2**63, got '1111",
        ),
        (
            ["build", "--seed", "1", "--jobs", "-1"],
            "--jobs/-j: expected an integer from 0 to 64, got '-1'",
        ),
        (
            ["build", "--seed", "1", "--jobs", "１"],
            "--jobs/-j: expected an integer from 0 to 64, got '１'",
        ),
        (
            ["build", "--seed", "1", "--decimals", "7"],
            "--decimals: expected an integer from 0 to 6, got '7'",
        ),
        (
            ["build", "--seed", "1", "--decimals", "٣"],
            "--decimals: expected an integer from 0 to 6, got '٣'",
        ),
        (
            ["build", "--seed", "1", "--versions", "0"],
            "--versions: expected an integer from 1 to 702, got '0'",
        ),
        (
            ["build", "--seed", "1", "--versions", "1_0"],
            "--versions: expected an integer from 1 to 702, got '1_0'",
        ),
        (
            ["build", "--seed", "1", "--versions", str(10**100)],
            "--versions: expected an integer from 1 to 702, got '1000",
        ),
        (["build", "--seed", "1", "--paper", "A4"], "--paper: expected a4 or letter, got 'A4'"),
        (
            ["build", "--seed", "1", "--engine", "xetex"],
            "--engine: expected one of auto, pdflatex, lualatex, got 'xetex'",
        ),
        (
            ["build", "--seed", "1", "--export", "pdf"],
            "--export: expected one of gift, moodle, qti, got 'pdf'",
        ),
        (["check", "--stress", "٣"], "--stress: expected an integer from 1 to 100000, got '٣'"),
        (["check", "--stress", "0"], "--stress: expected an integer from 1 to 100000, got '0'"),
        (["check", "--decimals", "-1"], "--decimals: expected an integer from 0 to 6, got '-1'"),
        (
            ["export", "--to", "csv", "--key", "k.json"],
            "--to: expected one of gift, moodle, qti, got 'csv'",
        ),
        (
            ["grade", "--key", "k", "--tries", "all", "r"],
            "--tries: expected last or first, got 'all'",
        ),
        (
            ["grade", "--key", "k", "--attempt", "", "r"],
            "--grading-method/--attempt: expected one of highest, average, first, last, got ''",
        ),
        (
            ["grade", "--key", "k", "--grading-method", "median", "r"],
            "--grading-method/--attempt: expected one of highest, average, first, last, "
            "got 'median'",
        ),
        (
            ["grade", "--key", "k", "--penalty", "٠.5", "r"],
            "--penalty: expected a decimal from 0 to 1, got '٠.5' (write the digits 0-9)",
        ),
    ],
)
def test_every_integer_and_choice_option_answers_in_the_projects_words(args, line, runner) -> None:
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert result.output.startswith("worksheetgen: error: " + line), result.output
    assert result.output.count("\n") == 1
    assert "is not" not in result.output and "range" not in result.output


@pytest.mark.parametrize("points", ["{total: 6, a: 6}", "{total: 6, scaled: 6}"])
def test_a_total_that_leaves_a_part_nothing_is_refused(
    points, write_bank, tmp_path, runner
) -> None:
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
    assert result.stderr == (
        f"worksheetgen: error: {bank}:4: questions[0].points: expected points above 0 for every "
        "part, got 0 left of the total 6 for b (A); give the named parts less or raise the total\n"
    )
    assert not out.exists()


def test_a_total_that_leaves_each_other_part_a_share_still_builds(write_bank, tmp_path, runner):
    bank = write_bank(
        """
        questions:
          - id: soft
            family: softmax
            points: {total: 6, a: 5}
        """
    )
    result = runner.invoke(
        main, ["build", "--bank", str(bank), "--seed", "1", "--no-pdf", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output


@needs_tex
def test_a_prompt_of_one_long_word_builds_and_prints_whole(tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    prompt = '"Compute {% for i in range(4900) %}xyzw{% endfor %} now."'
    bank.write_text(BANK.format(extra=f"    prompt: {prompt}\n"), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(main, ["build", "--seed", "1", "--bank", str(bank), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ("sheet", "key"):
        tex = (out / "t-seed1" / f"{name}.tex").read_text(encoding="utf-8")
        assert max(len(line.encode()) for line in tex.splitlines()) <= 4 * MAX_TEX_LINE_CHARS
        text = subprocess.run(
            ["pdftotext", str(out / "t-seed1" / f"{name}.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.replace("\n", "")
        assert "Compute xyzwxyzw" in text and "xyzwxyzw now." in text
        assert text.count("xyzw") >= 4850  # page breaks split a few


@needs_tex
@pytest.mark.parametrize("letter", ["y", "W"])
def test_a_title_and_course_of_thousands_of_letters_build(letter, tmp_path, runner) -> None:
    # the running head holds course and title on one line when they fit: a box wider than
    # TeX's largest dimension stopped TeX with "Dimension too large"
    word = letter * 3999
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        f"sheet:\n  title: T{word}\n  course: C{word}\n"
        "questions:\n  - id: q1\n    family: scaling\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = runner.invoke(main, ["build", "--seed", "1", "--bank", str(bank), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()
    text = subprocess.run(
        ["pdftotext", str(folder / "sheet.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout.replace("\n", "")
    assert f"T{letter * 50}" in text and f"C{letter * 50}" in text


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("a" * 256, "got a name of 256 bytes"),
        ("é" * 128, "got a name of 256 bytes"),
        ("/".join(["abcdefgh"] * 500), "got a path of 4,"),
    ],
)
@pytest.mark.parametrize("command", ["build", "export", "grade"])
def test_an_out_past_the_file_systems_limits_is_one_line(command, out, says, tmp_path, runner):
    args = {
        "build": ["build", "--seed", "1", "--no-pdf"],
        "export": ["export", "--to", "gift", "--key", str(tmp_path / "key.json")],
        "grade": ["grade", "--key", str(tmp_path / "key.json"), str(tmp_path / "r.csv")],
    }[command]
    result = runner.invoke(main, [*args, "--out", str(tmp_path / out)])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(
        "worksheetgen: error: --out: expected a path of at most 255 bytes a name and 4,095 in all, "
    )
    assert says in result.output and result.output.count("\n") == 1
    assert len(result.output) < 400
    assert list(tmp_path.iterdir()) == []


def test_a_folder_moved_away_while_a_class_is_written_is_one_line(tmp_path, runner, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    real = sink.FolderSink.start

    def moved_first(*args, **kwargs):
        out.rename(tmp_path / "moved")
        return real(*args, **kwargs)

    monkeypatch.setattr(sink.FolderSink, "start", moved_first)
    result = runner.invoke(
        main, ["build", "--seed", "1", "--versions", "2", "--no-pdf", "--out", str(out)]
    )
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"worksheetgen: error: {out}/self-attention-seed1-versions2: cannot write here: the "
        "folder was moved or removed while the build wrote into it; nothing was written\n"
    )
    assert not out.exists()
    assert list((tmp_path / "moved").iterdir()) == []  # its staging folder went with it


HOSTILE = {
    "empty": "",
    "huge": "9" * 20_000,
    "arabic-digits": "٣",
    "fullwidth-digits": "１٢",
    "superscript": "²",
    "control": "\x1b]0;owned\x07\x1b[2J",
    "bidi": "\u202e1\u202c",
    "negative": "-1",
    "overflow": str(10**100),
    "surrogate": "\udcff",
    "nul-free-newline": "1\n2",
}


OPTIONS = [
    ("build", "--seed", []),
    ("build", "--bank", ["--seed", "1", "--no-pdf"]),
    ("build", "--out", ["--seed", "1", "--no-pdf"]),
    ("build", "--decimals", ["--seed", "1", "--no-pdf"]),
    ("build", "--paper", ["--seed", "1", "--no-pdf"]),
    ("build", "--engine", ["--seed", "1", "--no-pdf"]),
    ("build", "--templates", ["--seed", "1", "--no-pdf"]),
    ("build", "--export", ["--seed", "1", "--no-pdf"]),
    ("build", "--roster", ["--seed", "1", "--no-pdf"]),
    ("build", "--versions", ["--seed", "1", "--no-pdf"]),
    ("build", "--jobs", ["--seed", "1", "--no-pdf", "--versions", "2"]),
    ("build", "--config", ["--seed", "1", "--no-pdf"]),
    ("check", "--bank", []),
    ("check", "--stress", []),
    ("check", "--decimals", ["--stress", "1"]),
    ("check", "--config", ["--stress", "1"]),
    ("check", "--paper", ["--stress", "1", "--sheets", "1"]),
    ("check", "--sheets", ["--stress", "1"]),
    ("check", "--seed", ["--stress", "1", "--sheets", "1"]),
    ("grade", "--key", ["r.csv"]),
    ("grade", "--out", ["--key", "k.json", "r.csv"]),
    ("grade", "--tries", ["--key", "k.json", "r.csv"]),
    ("grade", "--attempt", ["--key", "k.json", "r.csv"]),
    ("grade", "--grading-method", ["--key", "k.json", "r.csv"]),
    ("grade", "--penalty", ["--key", "k.json", "r.csv"]),
    ("grade", "--config", ["--key", "k.json", "r.csv"]),
    ("export", "--to", ["--key", "k.json"]),
    ("export", "--key", ["--to", "gift"]),
    ("export", "--out", ["--to", "gift", "--key", "k.json"]),
    ("export", "--config", ["--to", "gift", "--key", "k.json"]),
    ("config", "--config", []),
    ("init", "--course", ["course"]),
]


# text options a hostile value may pass (a title of digits is a title)
TEXT_OPTIONS = {"--course"}


# options naming a folder to write: any printable name is one
OUT_OPTIONS = {"--out"}


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
@pytest.mark.parametrize(("command", "option", "rest"), OPTIONS, ids=lambda x: str(x))
def test_a_hostile_value_for_any_option_is_one_line_and_no_traceback(
    command, option, rest, value, tmp_path, runner, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    result = runner.invoke(main, [command, *rest, option, value])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if result.exit_code == 0:
        names = 0 < len(value) < 200  # any name the OS takes (shown escaped)
        assert option in TEXT_OPTIONS or (option in OUT_OPTIONS and names), result.output
        return
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("worksheetgen: error: "), lines
    assert len(lines[0]) <= 1100
    assert "\x1b" not in lines[0] and "\u202e" not in lines[0] and "\udcff" not in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        [b"build", b"--seed", "²".encode()],
        [b"build", b"--seed", b"1", b"--jobs", b"-1", b"--no-pdf"],
        [b"build", b"--seed", b"1", b"--no-pdf", b"--bank", b"\xff\x1b[2J.yaml"],
        [b"check", b"--stress", "٣".encode()],
        [b"export", b"--to", b"gift", b"--key", b"k.json", b"--out", b"x" * 300],
    ],
    ids=["seed", "jobs", "bank-bytes", "stress", "out-long"],
)
def test_a_real_process_given_hostile_bytes_says_one_line(args, tmp_path) -> None:
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"worksheetgen", *args],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode in (1, 2)
    err = done.stderr.decode("utf-8")
    assert err.count("\n") == 1 and err.startswith("worksheetgen: error: "), err
    assert "Traceback" not in err and "\x1b" not in err
    assert done.stdout == b""
