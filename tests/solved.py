"""Drawn and solved builds for tests that need a sheet's records without a build's folder.

``make_build`` draws every sheet as ``worksheetgen build`` would (``solve.item.build_sheet``,
each by its ``SheetIdentity``), but returns the solved ``Build`` in memory: no plan, no
sink, nothing rendered or written. It lived in ``worksheetgen.pipeline.sheet`` as a third
route beside the build's own, used only by tests (issue 35 §1).
"""

from __future__ import annotations

from collections.abc import Sequence

from worksheetgen.language import gettext
from worksheetgen.model import Bank, Build, SheetIdentity, Student
from worksheetgen.solve.item import build_sheet


def make_build(
    bank: Bank,
    seed: int,
    sheets: Sequence[tuple[str, str, Student | None]] | None = None,
    secret: bytes | None = None,
    paper: str = "a4",
) -> Build:
    """Draw and solve every sheet: (sheet id, label, student) for each, default one sheet;
    with the course secret, when there is one (``paper``: what the documents lay out on)."""

    wanted = sheets or [(bank.info.slug, gettext("Worksheet"), None)]
    return Build(
        info=bank.info,
        seed=seed,
        bank=bank,
        sheets=tuple(
            build_sheet(
                bank.questions,
                SheetIdentity(seed, sid, secret),
                label,
                student,
                layout=bank.layout,
                shuffle=bank.info.shuffle,
            )
            for sid, label, student in wanted
        ),
        secret=secret,
        paper=paper,
    )
