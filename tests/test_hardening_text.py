"""Issue 25 (hardened, round three), text, numbers and options: one rule for every number and
length (ASCII digits only), the project's words for every option, error lines that quote a
short escaped excerpt, per-part points above 0, long unbreakable lines in TeX, and output
folders that vanish or have names too long."""

from __future__ import annotations

from worksheetgen.cli import main
from worksheetgen.errors import BankError, UsageError
from worksheetgen.textrules import MAX_LINE_CHARS, MAX_RUN_CHARS, excerpt

BANK = """\
sheet:
  title: T
questions:
  - id: q1
    family: scaling
{extra}"""


# ---- an error line quotes a short, escaped excerpt -------------------------------------------


def test_a_million_character_value_is_quoted_by_a_short_excerpt() -> None:
    value = "a" * 1_000_000
    error = BankError(f"expected x, got {value!r} (see y)", file="b.yaml", line=3, field="space")
    line = str(error)
    assert len(line) <= MAX_RUN_CHARS + 100
    assert line.startswith("b.yaml:3: space: expected x, got 'aaa")
    assert line.endswith("aaa' (see y)") and "\u2026" in line


def test_a_long_text_with_spaces_is_cut_to_the_line_limit_keeping_its_start_and_end() -> None:
    line = str(UsageError("expected x, got " + "ab " * 500_000 + "END"))
    assert len(line) <= MAX_LINE_CHARS
    assert line.startswith("expected x, got ab ab") and line.endswith("ab END")


def test_the_excerpt_escapes_and_never_cuts_an_escape_in_two() -> None:
    text = excerpt("\x1b" * 10_000 + "\u202e" * 10_000, 101)
    assert "\x1b" not in text and "\u202e" not in text
    assert len(text) <= 101
    head, tail = text.split("\u2026")
    assert head == "\\x1b" * (len(head) // 4) and tail == "\\u202e" * (len(tail) // 6)


def test_short_plain_text_is_kept_as_written() -> None:
    assert excerpt("bank.yaml:3: space: expected x, got 'y'") == (
        "bank.yaml:3: space: expected x, got 'y'"
    )


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
