"""What an instructor reads after grading: the grade command's files and the class report.

``grade`` (``grade_files``: the ``grade`` command's work: read the key and the responses,
grade them with ``worksheetgen.grading``, then write scores.csv and report.md; ``grade_rows``:
the same for responses given as records, scan's) ->
``classreport`` (the class report in HTML and PDF, each student's feedback page) over
``analysis`` (the numbers behind the pictures) and ``charts`` (the pictures); ``textpdf``
writes pages of text as a PDF; ``marks`` carries sub- and superscripts through plain text.
Scoring itself is grading's; nothing here decides a mark.

May import: grading (its records and readers), keyjson, bank, attention, render, tex
(cutting the feedback PDF per student), exact, and the shared modules; never scan or
pipeline (they stand above it).
"""
