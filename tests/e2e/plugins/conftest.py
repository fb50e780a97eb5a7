"""The fixtures the plugins tests' unit and command-line halves share: defined beside the unit
tests, seen here too."""

from tests.unit.plugins.test_plugins import installed  # noqa: F401
