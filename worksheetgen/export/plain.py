"""Names an LMS lists untypeset (Moodle's categories, Canvas's quiz and group titles), as plain
text: see ``render.plaintext``."""

from __future__ import annotations

from worksheetgen.language import gettext
from worksheetgen.render.plaintext import plain_text

__all__ = ["category_name", "plain_text"]


def category_name(title: str, number: int, qid: str, q_title: str, written: bool) -> list[str]:
    """The Moodle category path of a slot, as plain text (Moodle lists categories untypeset):
    the sheet's title, then ``NN <id> - <title>`` (`` (written part)`` for its essays)."""
    leaf = f"{number:02d} {qid} - {plain_text(q_title)}"
    if written:
        leaf = gettext("{question} (written part)", question=leaf)
    return [plain_text(title), leaf]
