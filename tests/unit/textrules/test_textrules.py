"""Issue 25 (hardened, round three), text, numbers and options: one rule for every number and
length (ASCII digits only), the project's words for every option, error lines that quote a
short escaped excerpt, per-part points above 0, long unbreakable lines in TeX, and output
folders that vanish or have names too long."""

from __future__ import annotations

import pytest

from worksheetgen.errors import BankError, UsageError
from worksheetgen.files import write_failure
from worksheetgen.pipeline.output import check_out
from worksheetgen.render.texlines import fold_long_lines
from worksheetgen.textrules import MAX_LINE_CHARS, MAX_RUN_CHARS, excerpt, integer


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


@pytest.mark.parametrize("text", ["٣", "１", "²", "1_0", "10**100", "", " ", "+", "1e3", "0x10"])
def test_the_number_rule_refuses_other_digits_and_other_spellings(text) -> None:
    assert integer(text) is None


@pytest.mark.parametrize(("text", "number"), [("0", 0), ("42", 42), (" 7 ", 7), ("-3", -3)])
def test_the_number_rule_reads_ascii_integers(text, number) -> None:
    assert integer(text) == number


def test_a_hundred_digit_integer_is_no_integer_of_the_rule_not_a_slow_conversion() -> None:
    assert integer("9" * 100_000) is None


def test_a_long_line_is_folded_where_tex_sets_the_same() -> None:
    line = "Compute " + "x\\allowbreak{}" * 5000 + " now."
    folded = fold_long_lines(line, 1000)
    pieces = folded.split("\n")
    assert len(pieces) > 1 and all(len(p) <= 1000 for p in pieces)
    assert all(
        p.endswith("%") and pieces[i + 1].startswith("\\") for i, p in enumerate(pieces[:-1])
    )
    assert "".join(p.removesuffix("%") for p in pieces) == line


def test_folding_keeps_escaped_backslashes_and_comments() -> None:
    line = "\\\\" * 600 + "\\textbf{a}" + "\\%" * 600
    folded = fold_long_lines(line, 1000)
    assert folded.split("\n")[0] == "\\\\" * 600 + "%"  # before \textbf, never inside \\
    comment = "a " * 10 + "%" + " b" * 1000
    folded = fold_long_lines(comment, 100)  # a comment's words stay in the comment
    assert folded.endswith("\n%" + " b" * 1000) or folded.endswith("a %" + " b" * 1000)
    assert folded.replace("\n", " ") == comment
    words = "word " * 1000
    assert all(len(p) <= 100 for p in fold_long_lines(words, 100).split("\n"))
    assert fold_long_lines(words, 100).replace("\n", " ") == words


def test_the_library_refuses_an_out_past_the_limits_too(tmp_path) -> None:
    with pytest.raises(UsageError, match="got a name of 300 bytes"):
        check_out(tmp_path / ("a" * 300))


def test_a_staging_folder_gone_at_the_swap_is_one_line(tmp_path) -> None:
    tmp, target = tmp_path / ".t.tmp-1-abcdefgh", tmp_path / "t"
    error = FileNotFoundError(2, "No such file or directory", str(tmp))
    found = write_failure(error, target, rename=(tmp, target))
    assert found is not None and "moved or removed while the build wrote" in str(found)
    tmp.mkdir()  # the folder is still there: a missing file inside it is a bug
    assert write_failure(error, target, rename=(tmp, target)) is None
