"""Paper back to grades: the layout a scannable sheet is printed with (``layout``), where
TeX set its boxes (``positions``, scan.json), scanned pages as images (``images``), one page
identified, aligned and its boxes measured (``pages``), and ``worksheetgen scan`` itself
(``run``), stage by stage: the key and scan.json (``setup``), the pages known (``identify``),
each part's answer from its boxes (``boxes``), corrections (``settle``), the responses
``grade`` reads and the issues for a person written (``write``, ``issues``).

May import: grading, keyjson and the layers below them. ``layout`` and ``positions`` use
the standard library only (a build uses them); ``images`` and ``pages`` import NumPy,
Pillow and pypdfium2, loaded only when ``scan`` runs.
"""
