"""What one sheet printed for a slot of the key: the deal an LMS must give a student whole.

A slot of the key is a question (one variant per sheet) or a pool (each sheet got ``pick`` of
its alternatives). The exports give each slot one question per deal and the quiz draws one
deal per student; the Moodle reader matches each attempt's slot to the deal it drew. Both
take the deals from here, so what is exported and what is read back are the same sets.

May import: the records of ``keyjson.records`` and the shared modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from worksheetgen.keyjson.records import KeyDoc, KeyQuestion, Variant


@dataclass(frozen=True)
class Deal:
    """What one sheet printed for a slot: its variants there, in the sheet's order."""

    sheet_id: str
    variants: tuple[Variant, ...]


def deals(doc: KeyDoc, q: KeyQuestion) -> list[Deal]:
    """The deals of slot ``q``, one per sheet in key order (a sheet without it has none): a
    question's or a pool of pick 1's variants one each, a pool of pick 2 or more's picks on
    each sheet together, in the sheet's order."""
    if q.pick == 1:
        return [Deal(v.sheet_id, (v,)) for v in q.variants]
    out = []
    for sheet in doc.sheets:
        got = tuple(v for v in sheet.variants if v.slot == q.qid)
        if got:
            out.append(Deal(sheet.id, got))
    return out
