"""The fixtures the pipeline tests' unit and command-line halves share: defined beside the unit
tests, seen here too."""

from tests.unit.pipeline.test_nothing_lost import private_tmp  # noqa: F401
from tests.unit.pipeline.test_outputs import own_tmpdir  # noqa: F401
