"""Scanning a mark-all-that-apply question: every option's box is read, and several marks
are the answer (one set, "A;C"), not an issue; its grade is the per-option rule's.

A behaviour across modules, not one module's tests (errors, scan.settle)."""

from __future__ import annotations

import pytest


def test_a_correction_gives_a_mark_all_part_a_set_and_a_pick_one_part_one_option():
    from worksheetgen.errors import ScanError
    from worksheetgen.scan.settle import _check_value

    _check_value("A;c", False, ["A", "B", "C"], "corrections.csv", 2, multi=True)
    with pytest.raises(ScanError, match="expected one of the options A, B, C or blank, got 'Z'"):
        _check_value("A;Z", False, ["A", "B", "C"], "corrections.csv", 2, multi=True)
    with pytest.raises(ScanError, match="got 'A;C'"):
        _check_value("A;C", False, ["A", "B", "C"], "corrections.csv", 2)
