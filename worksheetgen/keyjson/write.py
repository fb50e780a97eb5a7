"""The machine-readable outputs: key.json (a contract other tools read) and manifest.json."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import platform
import re
import sys
from functools import lru_cache
from typing import IO, Any

from worksheetgen import __version__
from worksheetgen.language import DEFAULT as DEFAULT_LANGUAGE
from worksheetgen.model import Build, IntRange, Item, ParamValue, Pinned, Pool, Sheet, Student
from worksheetgen.solve.rng import secret_fingerprint

KEY_FORMAT = "worksheetgen-key"
#: 2: every question states its title and its carried-forward steps, so a key is read without
#: the families (version 1 wrote null for a family's title; keyjson.legacy reads those keys)
KEY_VERSION = 2


def _item_json(item: Item) -> dict[str, Any]:
    sol = item.solution
    q: dict[str, Any] = {
        "id": item.spec.id,
        "number": item.number,
        "family": item.spec.family,
        "title": item.title,  # as the sheet prints it
        "points": item.spec.points,
        "decimals": item.spec.decimals,
        "format": item.spec.format,
        "prompt": item.prompt,
        "given": item.given,
        "shown": [{"label": s.label, "kind": s.kind, "value": s.value} for s in sol.shown],
        "parts": [
            {
                "prompt": p.prompt,
                "answer": p.answer,
                "row_label": p.row_label,
                "col_label": p.col_label,
            }
            for p in sol.parts
        ],
        "labels": {a.name: a.label for a in sol.answers},
        "answer": {a.name: a.value for a in sol.answers},
        "exact": {a.name: a.exact for a in sol.answers if a.exact is not None},
        "rounded": {a.name: a.rounded for a in sol.answers},
        "kinds": {a.name: a.kind for a in sol.answers},
        "tolerance": {a.name: a.tolerance for a in sol.answers if a.tolerance is not None},
        "options": {a.name: list(a.options) for a in sol.answers if a.options},
        "explanations": {a.name: a.explanation for a in sol.answers if a.explanation},
        "distractors": [
            {
                "misconception": d.misconception,
                "description": d.description,
                "answer": d.answer,
                "rounded": d.rounded,
            }
            for d in sol.distractors
        ],
        "coincident": [
            {
                "misconception": c.misconception,
                "description": c.description,
                "same_as": c.same_as,
                **({} if c.margin is None else {"margin": c.margin}),
            }
            for c in sol.coincident
        ],
        # how later answers follow from earlier ones, which the grader applies
        "carries": list(item.carries),
    }
    whole_only = [a.name for a in sol.answers if a.all_or_nothing]
    if whole_only:  # mark-all answers scored whole or not at all (absent: per option)
        q["all_or_nothing"] = whole_only
    if item.spec.carry is False:  # the grader credits no carried step (absent: it does)
        q["carry"] = False
    if item.spec.part_points:  # points given per part (else the grader splits them equally)
        q["part_points"] = dict(item.spec.part_points)
    if sol.shown_steps:  # a worked solution printed with the question (spot the bug)
        q["shown_steps"] = [
            {"title": st.title, "text": st.text, "math": st.math} for st in sol.shown_steps
        ]
    if sol.choices:
        q["choices"] = [
            {
                "label": c.label,
                "text": c.text,
                "correct": c.correct,
                "misconception": c.misconception,
                "rounded": c.rounded,
            }
            for c in sol.choices
        ]
        q["choice_answer"] = sol.choice_answer
    return q


def sheet_json(sheet: Sheet, large_print: bool = False) -> dict[str, Any]:
    """One sheet of key.json (its questions in printed order; on a sheet with pools, each
    says its slot: the pool it was picked from, or its own id)."""
    questions = [_item_json(i) for i in sheet.items]
    if any(i.slot is not None for i in sheet.items):
        for q, item in zip(questions, sheet.items, strict=True):
            q["slot"] = item.slot if item.slot is not None else item.spec.id
    return {
        "id": sheet.id,
        "code": sheet.code,
        "label": sheet.label,
        "student": None if sheet.student is None else _student_json(sheet.student, large_print),
        "questions": questions,
    }


def _student_json(student: Student, large_print: bool) -> dict[str, Any]:
    """A roster sheet's student; ``large_print`` (and the student's own column) adds
    ``"large_print": true``, the feedback page's size (absent: standard, as before)."""
    found: dict[str, Any] = {"name": student.name, "id": student.id}
    if large_print or student.large_print:
        found["large_print"] = True
    return found


def slots_json(build: Build) -> list[dict[str, Any]] | None:
    """The sheet's slots in the bank's order, for a build with pools or shuffled order
    (None otherwise): each pool with how many a sheet gets and its alternatives, each
    question placed on its own as a slot of its own."""
    if not build.bank.layout and not build.info.shuffle:
        return None
    layout = build.bank.layout or tuple(q.id for q in build.bank.questions)
    return [
        {"id": e.id, "pick": e.pick, "questions": list(e.alternatives)}
        if isinstance(e, Pool)
        else {"id": e, "pick": 1, "questions": [e]}
        for e in layout
    ]


def key_json(build: Build) -> dict[str, Any]:
    """The whole key.json document (with the course secret's fingerprint, when there is a
    secret: never the secret itself)."""
    doc: dict[str, Any] = {
        "format": KEY_FORMAT,
        "version": KEY_VERSION,
        "seed": build.seed,
        "title": build.info.title,
        "course": build.info.course,
    }
    if build.language != DEFAULT_LANGUAGE:  # an English key is written as before
        doc["language"] = build.language
    if build.decimal != ".":  # the separator students write: grade, scan, export read it
        doc["decimal"] = build.decimal
    if build.secret:
        doc["secret"] = secret_fingerprint(build.secret)
    slots = slots_json(build)
    if slots is not None:
        doc["shuffle"] = build.info.shuffle
        doc["slots"] = slots
    doc["sheets"] = [sheet_json(s, build.large_print) for s in build.sheets]
    return doc


def _param_json(p: ParamValue) -> Any:
    if isinstance(p, Pinned):
        v = p.value
        if isinstance(v, tuple):  # a matrix (tuple of rows) or a list of words
            return [list(r) if isinstance(r, tuple) else r for r in v]
        return v
    if isinstance(p, IntRange):
        return {"min": p.lo, "max": p.hi}
    return {"choices": list(p.values)}


def _release_file_version() -> str | None:
    """SymPy's version from its ``release.py`` (a few lines), found without importing
    SymPy; None when that file is not where SymPy keeps it. Much cheaper than reading the
    installed packages' metadata."""

    try:
        spec = importlib.util.find_spec("sympy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    release = os.path.join(os.path.dirname(spec.origin), "release.py")
    try:
        with open(release, encoding="utf-8") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return m.group(1) if m else None


@lru_cache(maxsize=1)
def _sympy_version() -> str:
    """SymPy's version, without importing SymPy (a build need not): from its release file,
    else from the installed packages' metadata."""

    loaded = sys.modules.get("sympy")
    if loaded is not None:
        return str(loaded.__version__)
    found = _release_file_version()
    if found is not None:
        return found
    # package metadata is read only for the manifest
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sympy")
    except PackageNotFoundError:
        return "unknown"


def sheet_draws(sheet: Sheet) -> dict[str, Any]:
    """The parameters drawn for one sheet, as the manifest lists them."""
    questions = {i.spec.id: i.given for i in sheet.items}
    draws: dict[str, Any] = {"sheet": sheet.id, "code": sheet.code, "questions": questions}
    if any(i.slot is not None for i in sheet.items):  # what each pool gave this sheet
        picked: dict[str, list[str]] = {}
        for i in sheet.items:
            if i.slot is not None:
                picked.setdefault(i.slot, []).append(i.spec.id)
        draws["pools"] = picked
    return draws


def manifest_json(build: Build, files: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """Everything needed to rebuild or audit the build: seed, bank hashes, versions, draws."""
    # its version for the manifest; a build has imported NumPy already
    import numpy

    return {
        "worksheetgen": __version__,
        "numpy": numpy.__version__,
        "sympy": _sympy_version(),
        "python": platform.python_version(),
        "seed": build.seed,
        **({"secret": secret_fingerprint(build.secret)} if build.secret else {}),
        "sheet": build.info.slug,
        "title": build.info.title,
        "options": options,
        "banks": [{"path": b.path, "sha256": b.sha256} for b in build.bank.files],
        "questions": [
            {
                "id": q.id,
                "family": q.family,
                "points": q.points,
                **({"part_points": dict(q.part_points)} if q.part_points else {}),
                "decimals": q.decimals,
                "params": {k: _param_json(v) for k, v in q.params.items()},
            }
            for q in build.bank.questions
        ],
        **({"slots": slots} if (slots := slots_json(build)) is not None else {}),
        **({"shuffle": True} if build.info.shuffle else {}),
        "draws": [sheet_draws(s) for s in build.sheets],
        "files": sorted(files),
    }


def dumps(data: Any) -> str:
    """Stable JSON text: sorted keys where order is not meaningful is not needed; fixed indent."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


# The one serializer of key.json and manifest.json: ``dumps``'s layout, with the one list that
# grows with the class (``sheets``, ``draws``) written an element at a time, so a class build
# streams its sheets to disk as they are drawn. An element is either indented as ``dumps``
# would (a single sheet: the file is exactly ``dumps`` of the whole document) or on one line
# (a class: one sheet per line keeps its key.json readable and grep-able without the cost of
# indenting it).

_SPLICE = "\x00worksheetgen-splice\x00"
_ITEM_INDENT = "    "  # an element of a top-level list, as dumps indents it


def json_element(value: Any, one_line: bool = True) -> str:
    """One element of a streamed top-level list, encoded (in a worker process, if need be)
    for ``StreamedList.add_encoded``."""
    if one_line:
        return _ITEM_INDENT + json.dumps(value, ensure_ascii=False, allow_nan=False)
    text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    # JSON strings hold no raw newline: every one is a line break of the layout
    return _ITEM_INDENT + text.replace("\n", "\n" + _ITEM_INDENT)


def split_at(doc: dict[str, Any], key: str) -> tuple[str, str]:
    """The text of ``dumps(doc)`` before and after the list at ``key`` (which is streamed)."""
    text = dumps({**doc, key: _SPLICE})
    before, after = text.split(json.dumps(_SPLICE, ensure_ascii=False))
    return before, after


class StreamedList:
    """Writes a JSON list to ``fh`` an element at a time ('[', elements, ']'), within
    ``around``: the document's text before and after it (``split_at``), or nothing."""

    def __init__(
        self, fh: IO[str], one_line: bool = True, around: tuple[str, str] = ("", "")
    ) -> None:
        self.fh = fh
        self.one_line = one_line
        self.count = 0
        self._after = around[1]
        fh.write(around[0])

    def add(self, value: Any) -> None:
        """Add one element."""
        self.add_encoded(json_element(value, self.one_line))

    def add_encoded(self, text: str) -> None:
        """Add one element already encoded by ``json_element`` (with this list's layout)."""
        self.fh.write(("[\n" if self.count == 0 else ",\n") + text)
        self.count += 1

    def close(self) -> None:
        """The end of the list, and the rest of the document."""
        self.fh.write("\n  ]" if self.count else "[]")
        self.fh.write(self._after)


def streamed_dumps(doc: dict[str, Any], key: str) -> str:
    """``dumps(doc)``, written by ``StreamedList`` (as a single sheet's build writes its
    key.json and manifest.json: the same serializer a class streams with)."""
    out = io.StringIO()
    items = doc[key]
    stream = StreamedList(out, one_line=False, around=split_at(doc, key))
    for value in items:
        stream.add(value)
    stream.close()
    return out.getvalue()
