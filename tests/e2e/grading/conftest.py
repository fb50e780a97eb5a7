"""What the grading tests share: the three-student class of tests/fixtures/part_points.yaml
(points per part: soft (a) 2 (b) 4; heads (a) 1 (b) 1 (c) 3; keys (a) 2.5 (b)-(d) 1.5, (d)
written; plain 1.5 + 1.5), built once per module without PDFs; and the mark-all key of the
unit tests, defined beside them, seen here too."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FIXTURES
from tests.unit.grading.test_mark_all_grading import key  # noqa: F401 (a fixture)
from worksheetgen.cli import main


@pytest.fixture(scope="module")
def part_points_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """key.json of the three-student class (built without PDFs)."""
    tmp = tmp_path_factory.mktemp("class")
    roster = tmp / "roster.csv"
    roster.write_text("name,id\nAda,s1\nBo,s2\nCy,s3\n", encoding="utf-8")
    bank = FIXTURES / "part_points.yaml"
    args = ["build", "--bank", str(bank), "--seed", "1", "--roster", str(roster)]
    result = CliRunner().invoke(main, [*args, "--no-pdf", "--out", str(tmp / "o"), "-q"])
    assert result.exit_code == 0, result.output
    (path,) = (tmp / "o").glob("*/key.json")
    return path
