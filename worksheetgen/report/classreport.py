"""The class report and each student's feedback page: files an instructor looks at.

``class_report`` gives, from a graded class: ``class-report.html`` (one file that works
offline: the pictures are inline SVG, no script, no link, no font to fetch),
``class-report.pdf`` (the same pictures, a page each, after a summary page) and the numbers
behind every picture as CSVs in ``class-report/`` (``analysis.csv_files``). Beside it,
``feedback/<student>.html`` and ``.pdf``: one page per student who handed something in (or
every student, with zeros asked for: ``GradeResult.absent``) that is safe to hand back:
that student's name, answers and marks per part, and for each wrong answer the slip that
reproduces it with one sentence on how to avoid it (``attention.slips``' ``avoid``, the
note's "where students get stuck"), and nothing about any other student.

Math in the bank's text is shown as plain Unicode (``plain_math``): √, ∞, ×, ᵀ and
subscripts, so neither the page nor the PDF needs a math renderer.
"""

from __future__ import annotations

import base64
import re
import textwrap
from collections.abc import Mapping, Sequence
from html import escape

from worksheetgen.attention.slips import MISCONCEPTIONS
from worksheetgen.bank.roster import file_stems
from worksheetgen.grading.key import GradeKey, norm_text
from worksheetgen.grading.score import GradeResult, PartResult, StudentResult
from worksheetgen.language import N_, decimal, gettext, language, ngettext, pgettext, said
from worksheetgen.render.markup import split_markup
from worksheetgen.report import charts
from worksheetgen.report.analysis import (
    ClassStats,
    analyse,
    csv_files,
    points_shown,
    points_words,
)
from worksheetgen.report.marks import END, SCRIPT, SUB, SUP, balanced, no_marks
from worksheetgen.tex.pdfsplit import split_pages

HTML_FILE = "class-report.html"
PDF_FILE = "class-report.pdf"
DATA_DIR = "class-report"
FEEDBACK_DIR = "feedback"

_SUB_FROM = "0123456789aehijklmnoprstuvx+-=()"
_SUB_TO = "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎"
# a capital subscript (W_O, W_K, W_V) has no Unicode form: the small letter's stands in
_SUB = str.maketrans(_SUB_FROM + "AEHIJKLMNOPRSTUVX", _SUB_TO + "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()nijkmtx", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵐᵗˣ")
_SCRIPTS = set(_SUB_TO) | set("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵐᵗˣ")
_SYMBOLS = {
    r"\infty": "∞",
    r"\times": "×",
    r"\cdot": "·",
    r"\top": "T",
    r"\lt": "<",
    r"\gt": ">",
    r"\le": "≤",
    r"\ge": "≥",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\ne": "≠",
    r"\to": "→",
    r"\sum": "Σ",
    r"\ldots": "…",
    r"\dots": "…",
    r"\quad": " ",
    r"\,": " ",
}


def _group(tex: str, i: int) -> tuple[str, int]:
    """The braced group or single token at ``tex[i]``, and where it ends."""
    if i < len(tex) and tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1 : j], j + 1
        return tex[i + 1 :], len(tex)
    if i < len(tex) and tex[i] == "\\":
        m = re.match(r"\\[A-Za-z]+", tex[i:])
        if m:
            return m.group(0), i + len(m.group(0))
    return tex[i : i + 1], i + 1


_EXACT_SUB = str.maketrans(_SUB_FROM, _SUB_TO)


def _math(tex: str, rich: bool = False) -> str:
    out: list[str] = []
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch in "_^":
            body, i = _group(tex, i + 1)
            text = _math(body, rich)
            # rich text sets a capital as a capital (W_O, not Wₒ)
            table = (_EXACT_SUB if rich else _SUB) if ch == "_" else _SUP
            script = text.translate(table)
            if ch == "^" and body.strip() == r"\top":
                script = "ᵀ"
            elif ch == "^" and body.strip() in ("(i)", "{(i)}"):
                script = "⁽ⁱ⁾"
            elif any(c not in _SCRIPTS for c in script) and rich:
                script = (SUB if ch == "_" else SUP) + text + END
            elif any(c not in _SCRIPTS for c in script):
                script = ("_" if ch == "_" else "^") + (text if len(text) == 1 else f"({text})")
            out.append(script)
            continue
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            word = m.group(0) if m else "\\"
            i += len(word)
            if word == r"\sqrt":
                body, i = _group(tex, i)
                inner = _math(body, rich)
                single = len(inner.rstrip("".join(_SCRIPTS))) == 1  # √2, √dₖ
                out.append("√" + (inner if single else f"({inner})"))
            elif word in (r"\mathrm", r"\text", r"\mathbf", r"\mathit", r"\operatorname"):
                body, i = _group(tex, i)
                out.append(_math(body, rich))
            elif word == r"\frac":
                a, i = _group(tex, i)
                b, i = _group(tex, i)
                out.append(f"({_math(a, rich)})/({_math(b, rich)})")
            else:
                out.append(_SYMBOLS.get(word, word.lstrip("\\")))
            continue
        if ch in "{}":
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def plain_math(markup: str, rich: bool = False) -> str:
    """A bank's markup (text with ``$…$``) as plain Unicode text: "√dₖ", "QKᵀ", "−∞";
    ``rich``: scripts Unicode cannot write exactly between ``SUB``/``SUP`` and ``END``."""
    return "".join(_math(t, rich).replace("-", "−") if m else t for m, t in split_markup(markup))


def flat_scripts(text: str) -> str:
    """``rich`` text as plain text: ``W\ue000Q\ue002`` reads ``W_Q``."""
    return SCRIPT.sub(
        lambda m: (
            ("_" if m.group(1) == SUB else "^")
            + (m.group(2) if len(m.group(2)) == 1 else f"({m.group(2)})")
        ),
        text,
    )


def part_names(key: GradeKey, width: int = 64, rich: bool = False) -> dict[tuple[str, str], str]:
    """Each part named as the sheet names it, by (question id, answer name): its letter and
    its prompt as text, shortened ("(c) What is the shape of one head's W_Q⁽ⁱ⁾?"), never the
    answer's internal name."""
    names: dict[tuple[str, str], str] = {}
    for sheet in key.sheets:
        for q in sheet.questions:
            for a in q.answers:
                if (q.id, a.name) in names:
                    continue  # the first sheet's wording (every sheet asks it alike)
                prompt = " ".join(plain_math(a.prompt, rich).split())
                short = textwrap.shorten(prompt, width, placeholder=" …") if prompt else ""
                short = balanced(short)
                names[(q.id, a.name)] = f"{a.part} {short}".strip()
    return names


def slip_title(misconception: str, description: str = "", rich: bool = False) -> str:
    """A slip as a person reads it: its title (or its description), not its id."""
    known = MISCONCEPTIONS.get(misconception)
    if known and known.title:
        return plain_math(said(known.title), rich)
    if description:
        return balanced(textwrap.shorten(plain_math(description, rich), 60, placeholder=" …"))
    return misconception


# --- HTML ------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}h3{font-size:1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:left;vertical-align:top}td.n{text-align:right}.fig svg{max-width:100%;height:auto}
.slip{color:#8b1d1a}.ok{color:#23632b}.muted{color:#666}
"""
#: a large-print student's feedback page (key.json's sheet ``large_print``): set as the HTML
#: sheets set one (style.css.j2's body.large), 16 pt for the browser's 12
_LARGE_CSS = "body.large{font-size:16pt}\n"


def _lang() -> str:
    """The page's language and direction (``lang`` and ``dir``): the key's."""
    lang = language()
    return f'lang="{lang.code}"' + (f' dir="{lang.direction}"' if lang.code != "en" else "")


def _title(result: GradeResult) -> str:
    """The key's title as the pages print it (a key without one: "worksheet", in words)."""
    title = result.key.title
    return plain_math(title, rich=True) if title else gettext("worksheet")


def _page(title: str, body: Sequence[str], large: bool = False) -> str:
    css, tag = (_CSS + _LARGE_CSS, '<body class="large">') if large else (_CSS, "<body>")
    return (
        f'<!DOCTYPE html>\n<html {_lang()}>\n<head>\n<meta charset="utf-8">\n'
        # no request of any kind: nothing to load, no script
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{escape(title)}</title>\n<style>{css}</style>\n</head>\n{tag}\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _num(x: float | None, digits: int = 2) -> str:
    return gettext("n/a") if x is None else decimal(f"{x:.{digits}f}")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    for row in rows:
        out.append(
            "<tr>"
            + "".join(
                f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
                for i, c in enumerate(row)
            )
            + "</tr>"
        )
    out.append("</table>")
    return "\n".join(out)


def _class_html(
    result: GradeResult, stats: ClassStats, svgs: dict[str, str], cells: Sequence[str]
) -> str:
    """The page: ``svgs`` the four charts by name, ``cells`` the heatmaps' pictures."""
    title = gettext("Class report: {title}", title=_title(result))
    body = [f"<h1>{_scripts_html(title)}</h1>"]
    mean = "" if stats.mean is None else f" {_mean_text(stats)}"
    body.append(
        "<p>"
        + _handed_in(result, stats)
        + mean
        + " "
        + gettext(
            "The numbers behind each picture are in the CSV files of {folder}.",
            folder=f"<code>{DATA_DIR}/</code>",
        )
        + "</p>"
    )
    if result.unreadable:
        body.append(
            "<p>"
            + gettext(
                "{n} unreadable value(s) were graded as wrong (grade --lenient); report.md "
                "lists them.",
                n=len(result.unreadable),
            )
            + "</p>"
        )
    body += [f"<h2>{gettext('Scores')}</h2>", f'<div class="fig">{svgs["histogram"]}</div>']
    body += [f"<h2>{gettext('Questions')}</h2>", f'<div class="fig">{svgs["questions"]}</div>']
    body.append(
        '<p class="muted">'
        + escape(
            gettext(
                "Facility: the mean share of a question's points the class earned. "
                "Discrimination: the point-biserial correlation of the question's score with "
                "the rest of the total (below 0.2, in red, the question does not tell stronger "
                "students from weaker ones; a question fewer than {few} students answered is "
                "drawn in grey with their number, n: too few to judge).",
                few=charts.FEW_STUDENTS,
            ),
            quote=False,
        )
        + "</p>"
    )
    if any(q.number is None for q in stats.questions):
        body.append(f"<p>{escape(said(_BY_ID))}</p>")
    body.append(
        _table(
            [
                pgettext("report column", "question"),
                pgettext("report column", "title"),
                pgettext("report column", "students"),
                pgettext("report column", "facility"),
                pgettext("report column", "discrimination"),
            ],
            [
                (
                    escape(q.label),
                    _scripts_html(plain_math(q.title, rich=True)),
                    str(q.students),
                    _num(q.facility),
                    _num(q.discrimination),
                )
                for q in stats.questions
            ],
            {2, 3, 4},
        )
    )
    names = part_names(result.key, rich=True)
    numbers = {q.id: escape(q.label) for q in stats.questions}
    body += [f"<h2>{gettext('Parts')}</h2>", f'<div class="fig">{svgs["parts"]}</div>']
    body.append(
        _table(
            [
                pgettext("report column", "question"),
                pgettext("report column", "part"),
                pgettext("report column", "success"),
                pgettext("report column", "right"),
                pgettext("report column", "partly"),
                pgettext("report column", "wrong"),
                pgettext("report column", "blank"),
                pgettext("report column", "by hand"),
            ],
            [
                (
                    numbers.get(p.question, escape(p.question)),
                    _scripts_html(names.get((p.question, p.answer), p.part)),
                    _num(p.success),
                    str(p.right),
                    str(p.partial),
                    str(p.wrong),
                    str(p.blank),
                    str(p.marked),
                )
                for p in stats.parts
            ],
            {2, 3, 4, 5, 6, 7},
        )
    )
    body += [f"<h2>{gettext('Slips')}</h2>", f'<div class="fig">{svgs["slips"]}</div>']
    if stats.slips:
        body.append(
            _table(
                [
                    pgettext("report column", "slip"),
                    pgettext("report column", "what it is"),
                    pgettext("report column", "answers"),
                    pgettext("report column", "students"),
                ],
                [
                    (
                        f"{_scripts_html(slip_title(s.misconception, s.description, True))}"
                        f' <span class="muted">({escape(s.misconception)})</span>',
                        _scripts_html(plain_math(s.description, rich=True)),
                        str(s.answers),
                        str(s.students),
                    )
                    for s in stats.slips
                ],
                {2, 3},
            )
        )
    if stats.cells:
        body.append(f"<h2>{gettext('Table cells missed')}</h2>")
        body.append(
            '<p class="muted">'
            + gettext(
                "Each cell: how many students left it wrong or blank (over the students whose "
                "table has this shape)."
            )
            + (f" {escape(said(_BY_HAND))}" if stats.tables_by_hand else "")
            + "</p>"
        )
        body += [f'<div class="fig">{svg}</div>' for svg in cells]
    elif stats.tables_by_hand:
        body += [
            f"<h2>{gettext('Table cells missed')}</h2>",
            f'<p class="muted">{escape(said(_NO_CELLS))}</p>',
        ]
    return _page(flat_scripts(title), body)


# --- feedback pages --------------------------------------------------------------------


def _slip_lines(p: PartResult) -> list[tuple[str, str]]:
    """(what the slip is, how to avoid it) for each slip that reproduces a wrong answer."""
    out = []
    for slip in p.slips:
        known = MISCONCEPTIONS.get(slip.misconception)
        # in the key's language (a German key's descriptions are German already: as they are)
        name = plain_math(said(known.title), rich=True) if known else slip.misconception
        what = plain_math(said(slip.description or (known.description if known else "")), rich=True)
        avoid = plain_math(said(known.avoid), rich=True) if known and known.avoid else ""
        out.append((f"{name}: {what}".rstrip(": "), avoid))
    return out


_MINUS_INF = {"-inf": "−∞", "-oo": "−∞", "-infinity": "−∞"}


def _written(p: PartResult) -> str:
    seen: dict[str, str] = {}
    for entry, text in p.written:
        # a masked cell written -inf (as the responses file spells it) reads −∞
        text = no_marks(text)  # what a student typed never sets a script
        seen.setdefault(entry or "", _MINUS_INF.get(text.strip().lower(), text))
    if not seen:
        return gettext("(blank)")
    if list(seen) == [""]:
        # a written answer's math ($d_k$) reads as the sheet's does; a lone $ stays a dollar
        return plain_math(seen[""], rich=True) if p.kind in ("text", "choice") else seen[""]
    return "; ".join(f"({e}) {t}" for e, t in seen.items())


_STATUS = {
    "right": N_("right"),
    "carried": N_("right (credit carried forward from your earlier answer)"),
    "partial": N_("partly right"),
    "wrong": N_("wrong"),
    "blank": N_("blank"),
    "ungraded": N_("to be marked by hand"),
    "marked": N_("marked by hand"),
}


def _feedback_lines(
    result: GradeResult, s: StudentResult, names: dict[tuple[str, str], str]
) -> list[tuple[str, str]]:
    """The page's content as (style, text) lines: h1, h2, plain, slip, avoid; parts named
    by ``names`` (``part_names``)."""
    who = no_marks(s.name or s.student)
    score = f"{points_shown(s.earned)} / {points_shown(s.possible)}"
    if s.ungraded:
        score = gettext(
            "{score} (+ {ungraded} to be marked by hand)",
            score=score,
            ungraded=points_shown(s.ungraded),
        )
    lines = [
        ("h1", gettext("Feedback: {title}", title=_title(result))),
        ("plain", gettext("Student: {name}", name=who)),
        ("plain", gettext("Score: {score}", score=score)),
    ]
    if not s.responded:  # a page only when the instructor asked for zeros (--absent zero)
        lines.append(("plain", gettext("No answers were handed in: counted as 0.")))
        return lines
    for q in s.questions:
        lines.append(
            (
                "h2",
                gettext(
                    "Question {number}: {title} ({earned} / {possible})",
                    number=q.number,
                    title=plain_math(q.title, rich=True),
                    earned=points_shown(q.earned),
                    possible=points_shown(q.possible),
                ),
            )
        )
        if q.tries is not None and q.penalty:  # an adaptive quiz's wrong tries
            counted, made = q.tries
            lines.append(
                (
                    "plain",
                    ngettext(
                        "Your try {counted} of {made} counts, less {penalty} for the {n} wrong "
                        "try before it.",
                        "Your try {counted} of {made} counts, less {penalty} for the {n} wrong "
                        "tries before it.",
                        counted - 1,
                        counted=counted,
                        made=made,
                        penalty=points_shown(q.penalty),
                    ),
                )
            )
        if q.averaged is not None:  # an average of attempts
            lines.append(
                ("plain", gettext("The mean of your attempts; below, your last attempt's."))
            )
        for p in q.parts:
            name = names.get((q.id, p.answer), p.part)
            if p.pending:  # a mark still to give: no points yet, and never a 0
                text = gettext(
                    "{part} — not marked yet ({points}).",
                    part=name,
                    points=points_words(p.possible),
                )
            elif p.status == "ungraded":  # free text a person has still to mark
                text = gettext(
                    "{part} — {status} ({points}). Your answer: {answer}",
                    part=name,
                    status=said(_STATUS[p.status]),
                    points=points_words(p.possible),
                    answer=_written(p),
                )
            elif p.marked:  # a part marked by hand: its points say it all (not the mark typed)
                text = gettext(
                    "{part} — {status}, {earned} / {possible}.",
                    part=name,
                    status=said(_STATUS[p.status]),
                    earned=points_shown(p.earned),
                    possible=points_shown(p.possible),
                )
            else:
                text = gettext(
                    "{part} — {status}, {earned} / {possible}. Your answer: {answer}",
                    part=name,
                    status=said(_STATUS[p.status]),
                    earned=points_shown(p.earned),
                    possible=points_shown(p.possible),
                    answer=_written(p),
                )
            lines.append(("plain", text))
            slips = _slip_lines(p)
            for what, avoid in slips:
                lines.append(("slip", gettext("Slip: {what}", what=what)))
                if avoid:
                    lines.append(("avoid", gettext("To avoid it: {avoid}", avoid=avoid)))
            if p.kind == "choice" and p.status in ("wrong", "partial"):
                # a concept question has no step to redo: the right option, and why
                lines += _right_option(result.key, s.sheet, q.id, p.answer)
            elif not slips and p.status in ("partial", "wrong"):
                lines.append(
                    (
                        "avoid",
                        gettext(
                            "No named slip reproduces this answer: redo the step with the "
                            "worked example and compare entry by entry."
                        ),
                    )
                )
    return lines


def _right_option(key: GradeKey, sheet: str, question: str, answer: str) -> list[tuple[str, str]]:
    """The lines after a wrong multiple-choice answer: the right option by the letter the
    sheet printed it under (and its text, where it is words), and why it is right (the key's
    explanation), when the key says."""
    found = key.sheet(sheet)
    q = found.question(question) if found is not None else None
    ans = q.answer(answer) if q is not None else None
    if ans is None or ans.text is None:
        return []
    if ans.multi:  # mark all that apply: every right option by its letter
        texts = [norm_text(o) for o in ans.options]
        shown = "; ".join(
            f"{chr(ord('A') + texts.index(norm_text(o)))}: {plain_math(o, rich=True)}"
            for o in ans.options
            if norm_text(o) in ans.right
        )
        right = gettext("The right options are {options}.", options=shown)
    elif ans.options and all(len(o) == 1 for o in ans.options):  # an item's option labels
        right = gettext("The right option is {option}.", option=ans.text)
    else:
        texts = [norm_text(o) for o in ans.options]
        letter = (
            f"{chr(ord('A') + texts.index(norm_text(ans.text)))}: "
            if norm_text(ans.text) in texts and len(texts) <= 26
            else ""
        )
        right = gettext(
            "The right option is {option}.", option=letter + plain_math(ans.text, rich=True)
        )
    out = [("avoid", right)]
    if ans.explanation:
        out.append(("avoid", gettext("Why: {why}", why=plain_math(ans.explanation, rich=True))))
    return out


def _scripts_html(text: str) -> str:
    """Escaped ``rich`` text with its scripts as ``<sub>`` and ``<sup>``."""
    return SCRIPT.sub(
        lambda m: f"<sub>{m.group(2)}</sub>" if m.group(1) == SUB else f"<sup>{m.group(2)}</sup>",
        escape(text),
    )


#: a student's scanned pages on the feedback page: (JPEG, width, height) each
Scans = Mapping[str, Sequence[tuple[bytes, int, int]]]
#: said above them (in the page's language, where written)
SCANS_HEADING = N_("Your scanned pages, as they were read")
SCANS_LEGEND = N_(
    "Each box is outlined by what was read: a thick solid line, marked; a double line, "
    "taken back (filled in); a dashed line with a corner flag, looked at by hand; a thin "
    "line, empty."
)


def _scans_html(pictures: Sequence[tuple[bytes, int, int]]) -> list[str]:
    """The student's scanned pages, each embedded in the page (a data: URI, which the
    page's Content-Security-Policy allows: it loads nothing)."""
    body = [f"<h2>{escape(said(SCANS_HEADING))}</h2>", f"<p>{escape(said(SCANS_LEGEND))}</p>"]
    for n, (jpeg, width, height) in enumerate(pictures, start=1):
        data = base64.b64encode(jpeg).decode("ascii")
        alt = gettext("Scanned page {n}, each box outlined by what was read", n=n)
        body.append(
            f'<p><img src="data:image/jpeg;base64,{data}" width="{width}" height="{height}" '
            f'style="max-width:100%;height:auto" alt="{escape(alt)}"></p>'
        )
    return body


def _feedback_html(
    lines: Sequence[tuple[str, str]],
    pictures: Sequence[tuple[bytes, int, int]] = (),
    large: bool = False,
) -> str:
    """A student's feedback page (``large``: in large print)."""
    body = []
    for style, text in lines:
        t = _scripts_html(text)
        if style in ("h1", "h2"):
            body.append(f"<{style}>{t}</{style}>")
        elif style == "slip":
            body.append(f'<p class="slip">{t}</p>')
        elif style == "avoid":
            body.append(f'<p class="ok">{t}</p>')
        else:
            body.append(f"<p>{t}</p>")
    if pictures:
        body += _scans_html(pictures)
    return _page(flat_scripts(lines[0][1]), body, large)


def _pdf_lines(lines: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The lines as a PDF page sets them: the same Unicode text as the HTML (√dₖ, QKᵀ, −∞),
    in an embedded font that has those glyphs, never spelled out in ASCII."""
    return [(style if style in ("h1", "h2") else "plain", text) for style, text in lines]


def feedback_pages(
    result: GradeResult, paper: str = "a4", scans: Scans | None = None
) -> dict[str, bytes]:
    """Each student's feedback page, HTML and PDF (on ``paper``: a4 or letter), by file name
    inside FEEDBACK_DIR. The PDFs are written as one text document (its fonts embedded
    once) and cut apart per student. ``scans``: each student's scanned pages (by the
    responses' student column), shown after the feedback (HTML: embedded; PDF: a page
    each)."""
    # fontTools: only when pages are written
    from worksheetgen.report.textpdf import LARGE_PRINT, TextPdf

    files: dict[str, bytes] = {}
    stems = file_stems([s.student for s in result.students])
    doc = TextPdf(paper)
    ranges: list[tuple[int, int]] = []
    names = part_names(result.key, rich=True)
    for stem, s in zip(stems, result.students, strict=True):
        if not result.has_total(s):
            continue  # nothing handed in, no total: no page to hand back
        lines = _feedback_lines(result, s, names)
        pictures = (scans or {}).get(s.student, ())
        sheet = result.key.sheet(s.sheet)
        large = sheet is not None and sheet.large_print
        files[f"{stem}.html"] = _feedback_html(lines, pictures, large).encode("utf-8")
        first = len(doc.pages)
        doc.add(lines, LARGE_PRINT if large else 1.0)
        for n, (jpeg, width, height) in enumerate(pictures, start=1):
            caption = gettext(
                "Your scanned pages, as they were read: page {n} of {count}",
                n=n,
                count=len(pictures),
            )
            doc.add_picture(jpeg, width, height, caption)
        ranges.append((first + 1, len(doc.pages)))
    pdfs = split_pages(doc.pdf(), ranges) if ranges else []
    paged = [stem for stem, s in zip(stems, result.students, strict=True) if result.has_total(s)]
    for stem, pdf in zip(paged, pdfs, strict=True):
        files[f"{stem}.pdf"] = pdf
    return files


# --- the class report ------------------------------------------------------------------


#: said where the sheets numbered the questions differently
_BY_ID = N_(
    "The sheets numbered the questions differently (shuffled or drawn from pools): each "
    "question is named by its id in the bank, [like-this]."
)


#: said where table parts were marked by hand (scanned score boxes, typed marks)
_BY_HAND = N_(
    "A table part marked by hand (a score box read by scan, a typed mark) holds its points, "
    "not its cells: it is not counted in these pictures."
)
_NO_CELLS = N_(
    "No picture of the table cells missed: every table part was marked by hand (score boxes "
    "read by scan, or typed marks), which hold a part's points, not which cells were wrong."
)


def _mean_text(stats: ClassStats) -> str:
    """The mean score, and what it leaves out: the parts still to be marked by hand."""
    mean = decimal(f"{stats.mean:.1f} %")
    if not stats.to_mark:
        return gettext("Mean score: {mean} of the points.", mean=mean)
    return ngettext(
        "Mean score: {mean} of the points marked so far ({n} part still to be marked by hand "
        "are left out of every number, not counted as 0).",
        "Mean score: {mean} of the points marked so far ({n} parts still to be marked by hand "
        "are left out of every number, not counted as 0).",
        stats.to_mark,
        mean=mean,
    )


def _handed_in(result: GradeResult, stats: ClassStats) -> str:
    return gettext(
        "{handed} of {n} students handed something in.",
        handed=stats.students,
        n=len(result.students),
    )


def _summary_lines(result: GradeResult, stats: ClassStats) -> list[tuple[str, str]]:
    lines = [
        ("h1", gettext("Class report: {title}", title=_title(result))),
        ("plain", _handed_in(result, stats)),
    ]
    if stats.mean is not None:
        lines.append(("plain", _mean_text(stats)))
    lines.append(("h2", gettext("Questions: facility, discrimination (point-biserial)")))
    if any(q.number is None for q in stats.questions):
        lines.append(("plain", said(_BY_ID)))
    for q in stats.questions:
        lines.append(
            (
                "plain",
                gettext(
                    "{question} {title}: facility {facility}, discrimination {discrimination}, "
                    "{n} students",
                    question=q.label,
                    title=plain_math(q.title, rich=True),
                    facility=_num(q.facility),
                    discrimination=_num(q.discrimination),
                    n=q.students,
                ),
            )
        )
    lines.append(("h2", gettext("Slips: answers, students")))
    for sl in stats.slips:
        lines.append(
            (
                "plain",
                gettext(
                    "{slip}: {answers} answers, {students} students",
                    slip=slip_title(sl.misconception, sl.description, True),
                    answers=sl.answers,
                    students=sl.students,
                ),
            )
        )
    if not stats.slips:
        lines.append(("plain", gettext("No wrong answer was reproduced by a named slip.")))
    if stats.tables_by_hand:
        lines.append(("h2", gettext("Table cells missed")))
        lines.append(("plain", said(_BY_HAND) if stats.cells else said(_NO_CELLS)))
    return lines


def class_report(
    result: GradeResult, paper: str = "a4", scans: Scans | None = None
) -> dict[str, bytes]:
    """Every file of the class report, by path relative to grade's output folder (its PDF
    and the feedback pages on ``paper``, with each student's ``scans``)."""
    stats = analyse(result)
    # rich: a script Unicode cannot write (W_Q) is set as one in the pictures and the PDF
    names = part_names(result.key, width=40, rich=True)
    titles = {q.id: plain_math(q.title, rich=True) for q in stats.questions}
    numbers = {q.id: q.label for q in stats.questions}
    labels = {k: f"{numbers.get(k[0], '?')} {v}" for k, v in names.items()}
    slips = {
        sl.misconception: slip_title(sl.misconception, sl.description, True) for sl in stats.slips
    }
    summary = _pdf_lines(_summary_lines(result, stats))
    charts.use_fonts(
        [*(t for _, t in summary), *titles.values(), *labels.values(), *slips.values()]
    )
    canvas = charts.Canvas(paper)
    for fig in charts.text_page(summary, paper=paper):
        canvas.page(fig)
    svgs = {
        "histogram": canvas.add(charts.histogram(stats)),
        "questions": canvas.add(charts.questions(stats, titles)),
        "parts": canvas.add(charts.parts(stats, labels)),
        "slips": canvas.add(charts.slips(stats, slips)),
    }
    cells = [canvas.add(fig) for fig in charts.heatmaps(stats.cells, labels)]
    files = {
        HTML_FILE: _class_html(result, stats, svgs, cells).encode("utf-8"),
        PDF_FILE: canvas.pdf(),
    }
    for name, text in csv_files(stats).items():
        files[f"{DATA_DIR}/{name}"] = text.encode("utf-8")
    for name, data in feedback_pages(result, paper, scans).items():
        files[f"{FEEDBACK_DIR}/{name}"] = data
    return files
