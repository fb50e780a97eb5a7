"""Grading responses against key.json: scores, carried-forward credit, diagnoses.

``key`` (the key as grids, from keyjson's one reader) -> ``responses`` (our CSV: columns,
entries, values; ``moodle`` and ``spreadsheet`` read Moodle's downloads) -> ``score``
(partial and carried-forward credit from the key's ``carries``): records that
``worksheetgen.report`` writes as scores.csv, report.md, the class report and the feedback
pages. ``template`` writes the blank CSV to fill in and ``csvcells`` keeps spreadsheet cells
from running as formulas.

May import: keyjson, bank, families, attention, render, tex, exact, and the shared modules;
never report (it stands above grading).
"""
