"""The marks around a sub- or superscript that no Unicode character writes (``W_Q``,
``W^{(i)}_Q``) in the feedback pages' and the class report's text: the HTML sets it as
``<sub>``/``<sup>``, the PDF smaller and lowered or raised (``textpdf``), the pictures as
mathtext (``charts``); where none can, it reads ``W_Q``. Private-use characters, stripped
from what students typed and from names."""

import re

SUB, SUP, END = "\ue000", "\ue001", "\ue002"
MARKS = frozenset((SUB, SUP, END))
#: a script's size, as a share of its line's
SCRIPT_SIZE = 0.7
#: one script: its mark (SUB or SUP) and its text
SCRIPT = re.compile(f"([{SUB}{SUP}])([^{END}]*){END}")


def balanced(text: str) -> str:
    """``text`` (perhaps cut inside a script) with every script closed."""
    open_ = 0
    for ch in text:
        open_ = 1 if ch in (SUB, SUP) else 0 if ch == END else open_
    return text + END * open_


def no_marks(text: str) -> str:
    """``text`` (a name, what a student typed) without the script marks."""
    return text.translate({ord(SUB): None, ord(SUP): None, ord(END): None})
