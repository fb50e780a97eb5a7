"""What a person has not marked is never a zero by default (issue 32 §3): a student with no
responses gets no total and no feedback page unless the instructor asks for zeros
(``--absent zero``); the class report leaves parts still to mark out of every number
instead of counting them 0 points.

The class is tests/banks/part_points.yaml for a roster of three (points per part: soft
(a) 2 (b) 4; heads (a) 1 (b) 1 (c) 3; keys (a) 2.5 (b)-(d) 1.5, (d) written; plain 1.5 + 1.5).

A behaviour across modules, not one module's tests (report.analysis).
"""

from __future__ import annotations

import csv
import io


def test_a_negative_number_in_the_class_reports_csvs_is_a_number_not_text():
    """A discrimination below 0 was written '-0.008 (the prefix that keeps a name from
    running as a formula), which a spreadsheet reads as text."""
    from worksheetgen.report.analysis import ClassStats, QuestionStats, csv_files

    q = QuestionStats("q-a", 1, "A", 30, 2.0, 1.0, 0.5, -0.008)
    stats = ClassStats(30, 50.0, (), (0,) * 10, (q,), (), (), ())
    rows = list(csv.DictReader(io.StringIO(csv_files(stats)["questions.csv"])))
    assert rows[0]["discrimination"] == "-0.008"
