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
