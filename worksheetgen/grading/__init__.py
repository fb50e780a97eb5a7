"""Grading responses against key.json: scores, carried-forward credit, diagnoses.

``key`` (the key as grids, from keyjson's one reader) -> ``responses`` (our CSV: columns,
entries, values) -> ``score`` (partial and carried-forward credit from the key's ``carries``)
-> ``report`` (scores.csv and report.md); ``analysis`` (the class's numbers), ``charts``
(its pictures, matplotlib, loaded only when the report is written) and ``classreport`` (the
HTML and PDF class report and each student's feedback page); ``template`` writes the blank
CSV to fill in and ``csvcells`` keeps spreadsheet cells from running as formulas.

May import: keyjson, bank, families, attention, render, tex (cutting the feedback PDF per
student), exact, and the shared modules.
"""
