"""``--practice``: a self-contained practice page per sheet that answers back.

The page is the sheet's HTML with the grader's view of its key inside (as JSON) and a small
script (``templates/html/practice.js``): "Check" judges each entry by ``grade``'s rule (the
key's margin; −∞ in every spelling grade reads; carried-forward credit from the student's own
earlier entries through the key's ``carries``; the slips whose values a wrong answer matches,
each with how to avoid it), "Show the worked step" reveals the key's steps one at a time, and
what the student typed is kept in the browser's localStorage only.

The key data comes from what ``grade`` reads: the sheet's key.json record, read back by the one
reader into grading's ``QuestionKey`` (so the margins, slips and carries are exactly the
grader's). The answers are in the page: a build with a course secret writes it only when asked
explicitly (``--practice-despite-secret``), and the page then says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from worksheetgen.attention.slips import MISCONCEPTIONS
from worksheetgen.errors import UsageError
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.exact.mathtex import decimals_in
from worksheetgen.exact.rounding import SLACK, half_unit
from worksheetgen.keyjson import write as keyfile
from worksheetgen.language import said
from worksheetgen.model import Build, Sheet
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.render.htmlmath import markup_html
from worksheetgen.render.htmlwords import script_words

if TYPE_CHECKING:  # grading's key (and key.json's reader) only for a build with --practice
    from worksheetgen.grading.key import GradedAnswer, QuestionKey

PRACTICE = "practice"  # the document kind (templates/html/practice.html.j2) and file suffix


def check_practice(options: BuildOptions) -> None:
    """A practice page holds the answers: a build with a course secret (whose keys are kept
    from students) writes them only when asked explicitly."""
    if options.practice_despite_secret and not options.practice:
        raise UsageError(
            "--practice-despite-secret: expected --practice too, got a build without practice pages"
        )
    if options.practice and options.secret is not None and not options.practice_despite_secret:
        raise UsageError(
            "--practice: expected a build without a course secret (a practice page holds "
            "the answers), got one; add --practice-despite-secret to write the pages anyway, "
            'each marked "practice copy: contains the answers"'
        )


def _grid(grid: Any) -> list[list[float | str]] | None:
    """A float grid as JSON: −∞ as "-inf" (JSON has no infinity)."""
    if grid is None:
        return None
    return [["-inf" if math.isinf(x) else float(x) for x in row] for row in grid.tolist()]


def _rounding(q: QuestionKey, a: GradedAnswer) -> float:
    """grading.score._rounding: half a unit of the printed digits of a rounded answer."""
    if a.tolerance <= 0 or a.rounded is None:
        return 0.0
    return half_unit(decimals_in(a.rounded))


def _slip_words(name: str, description: str) -> dict[str, str]:
    """A slip as the page names it: its title, what it does and how to avoid it (HTML), in the
    language being rendered (key.json keeps a slip's English words: the catalog's messages;
    a description no catalog knows, a plugin's, as it is)."""
    known = MISCONCEPTIONS.get(name)
    return {
        "name": name,
        "title": markup_html(said(known.title)) if known else name,
        "what": markup_html(said(description or (known.description if known else ""))),
        "avoid": markup_html(said(known.avoid)) if known and known.avoid else "",
    }


def _question(q: QuestionKey) -> dict[str, Any]:
    from worksheetgen.grading.key import norm_text  # grading's key: only with --practice

    answers: list[dict[str, Any]] = []
    for a in q.answers:
        answers.append(
            {
                "name": a.name,
                "part": a.part,
                "kind": a.kind,
                "grid": _grid(a.grid),
                "text": None if a.kind in NUMERIC_KINDS else norm_text(a.text or ""),
                "tolerance": a.tolerance,
                "rounding": _rounding(q, a),
                "choice_slips": [list(pair) for pair in a.choice_slips],
            }
        )
        if a.multi:  # mark all that apply: the right options, how many there are, the rule
            answers[-1].update(
                right=list(a.right), options=len(a.options), all_or_nothing=a.all_or_nothing
            )
    slips: list[dict[str, Any]] = []
    for s in q.slips:
        entry: dict[str, Any] = dict(_slip_words(s.misconception, s.description))
        entry["grids"] = {name: _grid(g) for name, g in s.grids.items()}
        entry["texts"] = {
            name: norm_text(v)
            for name, v in s.answers.items()
            if name not in s.grids and isinstance(v, str)
        }
        slips.append(entry)
    named = {s.misconception for s in q.slips}
    # a multiple-choice option's slip that the key lists with the option only
    for a in q.answers:
        for _, m in a.choice_slips:
            if m not in named:
                named.add(m)
                slips.append({**_slip_words(m, ""), "grids": {}, "texts": {}})
    given = {k: v for k, v in q.given.items() if any(k in c.inputs for c in q.carries)}
    return {
        "number": q.number,
        "carry": q.carry,
        "answers": answers,
        "slips": slips,
        "carries": [
            {"answer": c.answer, "inputs": list(c.inputs), "steps": list(c.steps), "args": c.args}
            for c in q.carries
        ],
        "given": given,
    }


def practice_data(build: Build, sheet: Sheet) -> str:
    """The grader's view of one sheet's key, as the JSON the practice page reads (safe to
    put inside a <script> element: no "<" in it)."""
    from worksheetgen.grading.key import parse_key  # grading's key: only with --practice

    doc = json.loads(json.dumps(keyfile.key_json(replace(build, sheets=(sheet,)))))
    key = parse_key(doc, f"the key of sheet {sheet.id}")
    (sheet_key,) = key.sheets
    data = {
        "sheet": sheet.code or sheet.id,
        "slack": SLACK,
        "masked": sorted(MASKED_SPELLINGS),
        "comma": key.decimal == ",",  # the sheet prints 0,25: an entry may say so
        "questions": [_question(q) for q in sheet_key.questions],
    }
    return _script_safe(data)


def _script_safe(data: Any) -> str:
    """JSON to put inside a <script> element: no "<", ">" or "&" in it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def practice_context(build: Build, sheet: Sheet) -> dict[str, Any]:
    """What the practice template sees besides a document's context (the page is marked as
    holding the answers when the build has a course secret)."""
    return {
        "practice": True,
        "practice_data": practice_data(build, sheet),
        "practice_marked": build.secret is not None,
        "script_words": _script_safe(script_words()),
    }
