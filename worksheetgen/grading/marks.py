"""The marks around a sub- or superscript that no Unicode character writes (``W_Q``,
``W^{(i)}_Q``) in the feedback pages' text: the HTML sets it as ``<sub>``/``<sup>``, the PDF
smaller and lowered or raised (``textpdf``); where neither can, it reads ``W_Q``. Private-use
characters, stripped from what students typed and from names."""

SUB, SUP, END = "\ue000", "\ue001", "\ue002"
MARKS = frozenset((SUB, SUP, END))
#: a script's size, as a share of its line's
SCRIPT_SIZE = 0.7
