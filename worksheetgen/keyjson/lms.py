"""What an LMS export sets that the reader of the LMS's downloads must know too.

The Moodle XML export gives every question but an essay Moodle's "Penalty for each incorrect
try" (a fraction of the question's mark, written as Moodle stores it: 7 decimals); ``grade``
applies the same penalty to an adaptive quiz's "All tries" download unless told another.
Export and grading both take it from here (the import layers keep grading and export apart).

May import: nothing of worksheetgen.
"""

from __future__ import annotations

from fractions import Fraction

#: the penalty the Moodle export writes, as written (``<penalty>0.3333333</penalty>``)
MOODLE_PENALTY_TEXT = "0.3333333"
#: the same, exactly as Moodle computes with it (not 1/3: Moodle stores 7 decimals)
MOODLE_PENALTY = Fraction(MOODLE_PENALTY_TEXT)
