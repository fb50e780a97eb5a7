"""The fixtures the bank tests' unit and command-line halves share: defined beside the unit
tests, seen here too."""

from tests.unit.bank.test_pools import exported  # noqa: F401
