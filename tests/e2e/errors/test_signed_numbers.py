"""Integer options are ASCII digits only where no sign belongs (issue 33, section 6):
``--seed +5`` and ``--seed -0`` were accepted."""

from __future__ import annotations

import pytest

from worksheetgen.cli import main


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--seed", "+5"], "--seed: expected a non-negative integer, got '+5'"),
        (["--seed", "-0"], "--seed: expected a non-negative integer, got '-0'"),
        (["--seed", "+0"], "--seed: expected a non-negative integer, got '+0'"),
        (["--seed", "1", "--jobs", "+1"], "--jobs/-j: expected an integer from 0 to 64, got '+1'"),
        (["--seed", "1", "--decimals", "-0"], "--decimals: expected an integer from 0 to 6"),
    ],
)
def test_a_sign_is_refused_where_no_sign_belongs(runner, tmp_path, args, says):
    res = runner.invoke(main, ["build", *args, "--no-pdf", "--out", str(tmp_path)])
    assert res.exit_code == 2
    assert res.output.startswith(f"worksheetgen: error: {says}"), res.output
    assert res.output.count("\n") == 1
    assert not any(tmp_path.iterdir())


def _options(command):
    """Every option of ``command`` and of its subcommands, as (command path, option)."""
    import click

    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            for path, opt in _options(sub):
                yield (name, *path), opt
        return
    for param in command.params:
        yield (), param


def test_every_numeric_option_of_every_command_reads_numbers_by_the_one_rule():
    # grade --students took Click's own IntRange: '٣' (an Arabic-Indic three) was 3
    import click

    from worksheetgen import cliparams

    bare = [
        (" ".join(path), opt.name)
        for path, opt in _options(main)
        if isinstance(opt.type, click.types.IntParamType | click.types.FloatParamType)
        and not isinstance(opt.type, cliparams.IntRange | cliparams.Share)
    ]
    assert bare == []


def test_grade_template_students_refuses_digits_that_are_not_ascii(runner, tmp_path):
    from tests.paths import MOODLE

    out = tmp_path / "t.csv"
    res = runner.invoke(
        main,
        ["grade", "--template", "--students", "\u0663", str(out)]
        + ["--key", str(MOODLE / "default" / "key.json")],
    )
    assert res.exit_code == 2, res.output
    assert res.output.startswith("worksheetgen: error: --students: expected an integer")
    assert res.output.count("\n") == 1 and not out.exists()
