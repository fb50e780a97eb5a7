"""The course secret's loose ends: no LMS export shows the seed, and `check` reads the course
configuration (banks, decimals, secret) as `build` does.

A behaviour across modules, not one module's tests (pipeline.check)."""

from __future__ import annotations

from worksheetgen.pipeline.check import check_banks

SECRET = "a course secret for the exports"


BANK = "sheet: {id: s}\nquestions:\n  - id: lab\n    family: lab3\n"


def test_check_draws_with_the_configured_secret_as_build_does(write_bank):
    bank = str(write_bank(BANK))
    plain = check_banks([bank], 20)
    keyed = check_banks([bank], 20, secret=SECRET.encode())
    again = check_banks([bank], 20, secret=SECRET.encode())
    assert keyed.items[0].spread == again.items[0].spread
    assert plain.items[0].spread != keyed.items[0].spread
