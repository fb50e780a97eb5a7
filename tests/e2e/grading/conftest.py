"""The fixtures the grading tests' unit and command-line halves share: defined beside the unit
tests, seen here too."""

from tests.unit.grading.test_mark_all_grading import key  # noqa: F401
