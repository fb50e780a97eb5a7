"""One text rule for every output: a grade's names and every string a student typed (a
Moodle download's names, responses, emails; a responses file's ids and values; file names)
reach scores.csv, report.md, the class report and the feedback pages (HTML and PDF) as the
text rule shows them (``textrules.shown``): a control character, a bidi override or a NUL
as a visible escape (``\\x1b``, ``\\u202e``, ``\\x00``), never raw. A roster's names are
refused at the door instead; what worksheetgen itself wrote (key.json's texts) passes the
rule already and is unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from worksheetgen.grading.score import GradeResult
from worksheetgen.textrules import shown


def _visible(value: Any) -> Any:
    """``value`` with every text in it shown by the text rule; the same object when nothing
    changes (so a clean result is not copied)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, tuple | list):
        items = [_visible(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        pairs = [(_visible(k), _visible(v)) for k, v in value.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if not f.init:
                continue
            old = getattr(value, f.name)
            new = _visible(old)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


def visible(result: GradeResult) -> GradeResult:
    """``result`` with every name and typed string as the text rule shows it."""
    out: GradeResult = _visible(result)
    return out
