"""The folders the tests read, computed once here so that a test file's place in tests/ never
changes what it reads."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# the small banks written for the tests (the bundled banks are ROOT / "banks")
BANKS = TESTS / "banks"
# real LMS downloads, rosters and other files the tests read as a user's input
FIXTURES = TESTS / "fixtures"
MOODLE = FIXTURES / "moodle"
GOLDEN = TESTS / "golden"
