"""Question text as HTML for LMS imports: prompt, given matrices and answer tables.

HTML is built as an ElementTree and serialized once; math is MathJax-friendly ``\\( ... \\)``
(Moodle's MathJax filter and Canvas both typeset it), with bank math passed through the same
safe-command filter as the sheets. Answer areas are filled by a callback per cell, so Moodle
can put a cloze gap and Canvas a ``[blank]`` where the student writes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Callable, Sequence
from typing import Any

from worksheetgen.errors import ExportError
from worksheetgen.exact import mathtex
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.keyjson.records import Cell, Choice, KeyAnswer, KeyDoc, KeyPart, Shown, Variant
from worksheetgen.keyjson.views import number_text, written_parts
from worksheetgen.language import N_, gettext, ngettext
from worksheetgen.render.markup import lms_math, markup_lms, sanitize_math
from worksheetgen.textrules import WORD_JOINER

CellContent = Callable[[Cell], str]
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'
MASKED_HINT = N_("Write a masked entry (−∞) as -inf; −∞ and masked are accepted too.")


def math(tex: str) -> str:
    """Inline math for MathJax, with only safe commands."""
    return lms_math(tex)


def markup_text(markup: str) -> str:
    """Prompt markup (text with $math$) as text with \\( \\) math, on one line (the one
    markup rule, ``render.markup.markup_lms``)."""
    return markup_lms(markup)


def choice_text(choice: Choice) -> str:
    """A multiple-choice option: key.json gives its text as math-mode LaTeX."""
    return math(choice.text)


def inline_html(text: str) -> str:
    """Plain text (math included) as an HTML span, escaped by ElementTree."""
    span = ET.Element("span")
    span.text = text
    return serialize(span)


def paragraphs(markup: str) -> list[str]:
    """Markup split on blank lines, each paragraph as text with \\( \\) math."""
    paras = [p for p in markup.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return [markup_text(p) for p in paras]


def add(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    """A child element with text (ElementTree escapes it)."""
    el = ET.SubElement(parent, tag, attrs)
    if text is not None:
        el.text = text
    return el


def xml_bytes(root: ET.Element) -> bytes:
    """A whole XML document in UTF-8 (serializing to text first is many times faster),
    parsed back before it is returned (see :class:`WellFormed`)."""
    data = XML_DECLARATION + ET.tostring(root, encoding="unicode").encode("utf-8") + b"\n"
    check = WellFormed(f"an XML file <{root.tag}>")
    check.feed(data.decode("utf-8"))
    check.done()
    return data


class WellFormed:
    """Parse an XML document back as it is written, a piece at a time: the last line of
    defence against a file an LMS cannot import. ElementTree escapes ``&<>`` but writes
    control characters as they are, so a text that slipped past the text rule
    (worksheetgen.textrules) would make a file no XML parser reads; this refuses it, with
    an ExportError, before the file is kept."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._parser = xml.parsers.expat.ParserCreate("UTF-8")
        self._pending: list[str] = []
        self._size = 0

    def feed(self, text: str, final: bool = False) -> None:
        """Parse the next piece of the document (``final``: the last), in chunks of 64 KB
        (a parser call per small piece would cost more than the writing)."""
        self._pending.append(text)
        self._size += len(text)
        if self._size < 65536 and not final:
            return
        chunk = "".join(self._pending)
        self._pending.clear()
        self._size = 0
        try:
            self._parser.Parse(chunk.encode("utf-8", "surrogatepass"), final)
        except xml.parsers.expat.ExpatError as exc:
            raise ExportError(
                f"expected {self.what} that parses back as XML, got "
                f"{xml.parsers.expat.errors.messages[exc.code]} at its line "
                f"{exc.lineno}, column {exc.offset} (a text in the key holds a "
                "character XML cannot carry); nothing written"
            ) from None

    def done(self) -> None:
        """The document is complete: it must have ended well-formed."""
        self.feed("", True)


_SPLIT = "wsg-split-here"


class XmlStream:
    """Write one XML document a piece at a time, in the bytes ``xml_bytes`` would give.

    A class of 1,000 students makes millions of elements; holding them all (and then the
    text) took gigabytes. Here an element is *opened* (its start tag, text and children so far
    are written), children appended to it later are written and dropped by ``flush``, and
    ``close`` writes its end tag. ElementTree still writes every tag and escapes every value.
    With ``indent`` (the spaces per level) the document is laid out as ``ET.indent`` would.
    """

    def __init__(self, out: Any, indent: str | None = None, what: str = "an XML export") -> None:
        self._what = what
        self._out = out.write  # a text stream
        self._indent = indent
        self._open: list[ET.Element] = []
        self._check: WellFormed | None = None
        self._write(XML_DECLARATION.decode("ascii"))

    def _write(self, text: str) -> None:
        """Write a piece of the document, and parse it back (see :class:`WellFormed`)."""
        if self._check is None:
            self._check = WellFormed(self._what)
        self._check.feed(text)
        self._out(text)

    def _child(self, el: ET.Element) -> None:
        if self._indent is not None:
            depth = len(self._open)
            ET.indent(el, space=self._indent, level=depth)
            el.tail = None
            self._write("\n" + self._indent * depth)
        self._write(ET.tostring(el, encoding="unicode"))

    def open(self, el: ET.Element) -> None:
        """Write ``el``'s start tag, text and present children; later children are streamed."""
        if self._open:
            self.flush()
            if self._indent is not None:
                self._write("\n" + self._indent * len(self._open))
        shell = ET.Element(el.tag, el.attrib)
        shell.text = None if self._indent is not None else el.text
        ET.SubElement(shell, _SPLIT)
        head, _, _ = ET.tostring(shell, encoding="unicode").partition(f"<{_SPLIT} />")
        self._write(head)
        self._open.append(el)
        self.flush()

    def flush(self) -> None:
        """Write the children appended to the innermost open element, and drop them."""
        el = self._open[-1]
        for child in el:
            self._child(child)
        del el[:]

    def close(self) -> None:
        """Write the rest of the innermost open element and its end tag."""
        self.flush()
        el = self._open.pop()
        if self._indent is not None:
            self._write("\n" + self._indent * len(self._open))
        self._write(f"</{el.tag}>")
        if not self._open:
            self._write("\n")
            if self._check is not None:
                self._check.done()


#: Moodle's default emoticons (its emoticon filter is on by default and turns them into
#: pictures: a part "(h)" would show a heart) and the starts of what its URL filter links
EMOTICONS = (
    ":-)", ":)", ":-D", ";-)", ":-/", "V-.", ":-P", ":-p", "B-)", "^-)", "8-)", "8-o",
    ":-(", "8-.", ":-I", ":-X", ":o)", "P-|", "8-[", ":-o", "xx-P", "|-.", "}-]",
    "(h)", "(y)", "(n)", "(martin)", "( )",
)  # fmt: skip
_FILTERED = re.compile(
    "|".join(re.escape(e) for e in sorted(EMOTICONS, key=len, reverse=True))
    + r"|(?:https?|ftp)://\S+|www\.\S+",
    re.IGNORECASE,
)
_MATH = re.compile(r"(\\\(.*?\\\))", re.DOTALL)
NOLINK = "nolink"  # the class Moodle's emoticon and URL filters leave alone


def _math_safe(tex: str) -> str:
    """Math with an empty group ``{}`` after the first character of anything a filter would
    rewrite (``(h)`` becomes ``({}h)``: the same formula, no emoticon)."""
    return _FILTERED.sub(lambda m: m.group(0)[0] + "{}" + m.group(0)[1:], tex)


def _runs(text: str) -> list[str]:
    """``text`` split as plain, protected, plain, protected, ..., plain (math made safe)."""
    out = [""]
    for k, piece in enumerate(_MATH.split(text)):
        if k % 2:
            out[-1] += _math_safe(piece)
            continue
        at = 0
        for m in _FILTERED.finditer(piece):
            out[-1] += piece[at : m.start()]
            out += [m.group(0), ""]
            at = m.end()
        out[-1] += piece[at:]
    return out


def _nolink(text: str, tail: str) -> ET.Element:
    span = ET.Element("span", {"class": NOLINK})
    span.text = text
    span.tail = tail
    return span


def protect(root: ET.Element) -> None:
    """Keep Moodle's filters off every text of a tree: what its emoticon or URL filter would
    rewrite goes in a ``<span class="nolink">`` (math gets an empty group instead)."""
    for el in list(root.iter()):
        if el.get("class") == NOLINK:
            continue  # protected already (a tree serialized twice)
        if el.text and _FILTERED.search(el.text):
            runs = _runs(el.text)
            el.text = runs[0]
            for k in range(1, len(runs), 2):
                el.insert(k // 2, _nolink(runs[k], runs[k + 1]))
        for child in list(el):
            if child.tail and _FILTERED.search(child.tail):
                runs = _runs(child.tail)
                child.tail = runs[0]
                at = list(el).index(child) + 1
                for k in range(1, len(runs), 2):
                    el.insert(at + k // 2, _nolink(runs[k], runs[k + 1]))


def protected_html(text: str) -> str:
    """Plain text (math included) as HTML that Moodle's filters leave as written."""
    return inline_html(text)[len("<span>") : -len("</span>")]


def protected_plain(text: str) -> str:
    """Plain text where HTML cannot go (a cloze gap's feedback): a word joiner after the first
    character of anything a filter would rewrite (it reads the same)."""
    runs = _runs(text)
    return "".join(r if k % 2 == 0 else r[0] + WORD_JOINER + r[1:] for k, r in enumerate(runs))


def serialize(root: ET.Element) -> str:
    """One HTML fragment, kept off Moodle's filters (see :func:`protect`)."""
    protect(root)
    return ET.tostring(root, encoding="unicode", method="html")


def _tex_value(kind: str, value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        return mathtex.bmatrix(value)
    if isinstance(value, list):
        if kind == "shape":
            return mathtex.shape(value)
        return mathtex.vector(value)
    return mathtex.cell(value)


def shown_tex(s: Shown) -> str:
    """A given value as LaTeX: label = matrix (or vector, or number)."""
    return f"{s.label} = {_tex_value(s.kind, s.value)}"


def question_root() -> ET.Element:
    """The outer element of a question's HTML."""
    return ET.Element("div", {"class": "worksheetgen-question"})


def _heatmap_fits(value: Any) -> bool:
    """True when a heatmap's value has rows of printed weights and the weights to shade."""
    if not isinstance(value, dict):
        return False
    rows, weights = value.get("rows"), value.get("weights")
    return (
        isinstance(rows, list)
        and isinstance(weights, list)
        and len(rows) == len(weights)
        and all(
            isinstance(r, list) and isinstance(w, list) and len(r) == len(w)
            for r, w in zip(rows, weights, strict=True)
        )
    )


def add_heatmap(root: ET.Element, s: Shown) -> None:
    """An attention heatmap as a shaded table: each printed weight on a grey, darker = more."""
    value = s.value
    row_label = str(value.get("row_label") or "row")
    col_label = str(value.get("col_label") or "column")
    table = add(
        root, "table", **{"class": "worksheetgen-heatmap", "border": "1", "cellpadding": "6"}
    )
    head = add(table, "tr")
    add(head, "th", math(s.label))
    for j in range(len(value["rows"][0]) if value["rows"] else 0):
        add(head, "th", f"{col_label} {j + 1}")
    for i, (row, weights) in enumerate(zip(value["rows"], value["weights"], strict=True)):
        tr = add(table, "tr")
        add(tr, "th", f"{row_label} {i + 1}")
        for text, w in zip(row, weights, strict=True):
            w = min(max(float(w), 0.0), 1.0) if isinstance(w, int | float) else 0.0
            grey = round(255 - 200 * w)
            ink = "#ffffff" if w >= 0.5 else "#000000"
            add(
                tr,
                "td",
                str(text),
                style=f"background-color: rgb({grey}, {grey}, {grey}); color: {ink}; "
                "text-align: center",
            )
    add(
        root,
        "p",
        gettext(
            "Attention weights {label}: row = {row}, column = {column}; darker cells carry more "
            "weight.",
            label=math(s.label),
            row=row_label,
            column=col_label,
        ),
    )


#: display kinds shown as a block of their own after the given values' math, as the
#: templates' shown/<kind> partials do: (does the value fit the kind, add it to the HTML);
#: a value of any other kind, or one that does not fit (a hand-edited key), is inline math
BLOCKS: dict[str, tuple[Callable[[Any], bool], Callable[[ET.Element, Shown], None]]] = {
    "heatmap": (_heatmap_fits, add_heatmap),
}


def _block(s: Shown) -> Callable[[ET.Element, Shown], None] | None:
    """How a shown value is added as a block, or None when it is inline math."""
    found = BLOCKS.get(s.kind)
    return found[1] if found is not None and found[0](s.value) else None


def add_intro(root: ET.Element, v: Variant) -> None:
    """The prompt paragraphs and the given values, as on the printed sheet."""
    for text in paragraphs(v.prompt):
        add(root, "p", text)
    plain = [s for s in v.shown if _block(s) is None]
    if plain:
        add(root, "p", "  ".join(math(shown_tex(s)) for s in plain))
    for s in v.shown:
        block = _block(s)
        if block is not None:
            block(root, s)
    if v.shown_steps:
        add(add(root, "p"), "b", gettext("The worked solution to check:"))
        steps = add(root, "ol")
        for step in v.shown_steps:
            li = add(
                steps,
                "li",
                " ".join(t for t in (markup_text(step.title), markup_text(step.text)) if t),
            )
            if step.math:
                add(li, "div", r"\(\displaystyle " + sanitize_math(step.math).strip() + r"\)")


def part_letter(i: int) -> str:
    """(a), (b), ... for the i-th part."""
    return f"({chr(ord('a') + i)})"


def add_part_prompt(root: ET.Element, i: int, part: KeyPart, single: bool) -> ET.Element:
    """A part's prompt paragraph, lettered when the question has several parts."""
    p = add(root, "p")
    if single:
        p.text = markup_text(part.prompt)
    else:
        b = add(p, "b", part_letter(i))
        b.tail = " " + markup_text(part.prompt)
    return p


def add_written_prompts(root: ET.Element, v: Variant, after: int) -> None:
    """A variant's written parts asked inside its graded question (lettered after its
    ``after`` graded parts), for a slot whose one written question is shared by every
    version: the student reads the prompt of the version they drew, with its values, and
    answers it in the written question that follows."""
    parts = written_parts(v)
    if not parts:
        return
    letters = [part_letter(after + j) for j in range(len(parts))]
    for j, part in enumerate(parts):
        add_part_prompt(root, after + j, part, False)
    add(
        root,
        "p",
        gettext(
            "Answer {letters} in words in the written question that follows this one in the quiz.",
            letters=_and(letters),
        ),
    )


def _and(items: Sequence[str]) -> str:
    """'(a)', '(a) and (b)', '(a) and (b) and (c)', in the language being rendered."""
    joined = items[0]
    for item in items[1:]:
        joined = gettext("{first} and {last}", first=joined, last=item)
    return joined


def shared_written_text(
    number: int, qid: str, title: str, points: float, parts: int = 1, where: str = ""
) -> str:
    """The text of the one written question of a slot with several versions (or a pool's
    deals): it asks for the written part(s) the graded question showed (``parts``: how many a
    sheet has there, the most of any), with their points. ``number`` is the graded question's
    number as the quiz shows it (``where`` says so: " of the quiz")."""
    root = question_root()
    values = {"number": number, "qid": qid, "title": markup_text(title)}
    if where:  # the graded question's number as the quiz shows it
        text = ngettext(
            "Write here your answer to the written part of question {number} of the quiz "
            "({qid}: {title}): the part the question above asks in words, about the values of "
            "your version of it.",
            "Write here your answers to the written parts of question {number} of the quiz "
            "({qid}: {title}): the parts the question above asks in words, about the values of "
            "your version of it.",
            parts,
            **values,
        )
    else:
        text = ngettext(
            "Write here your answer to the written part of question {number} ({qid}: "
            "{title}): the part the question above asks in words, about the values of your "
            "version of it.",
            "Write here your answers to the written parts of question {number} ({qid}: "
            "{title}): the parts the question above asks in words, about the values of your "
            "version of it.",
            parts,
            **values,
        )
    add(root, "p", text)
    if points:
        note = gettext(
            "It is graded by hand and worth {points} point(s), as on the printed key.",
            points=number_text(points),
        )
    else:
        note = gettext(
            "It is graded by hand and carries no points of its own: the question's points "
            "are in its other parts, as on the printed key."
        )
    add(root, "p", note)
    return serialize(root)


def shared_written_key(deals: Sequence[tuple[str, Sequence[Variant]]]) -> str:
    """The model answers of a shared written question, one per sheet (deal), each headed by
    the sheet and the graded question that showed its prompt (what the grader looks up)."""
    root = ET.Element("div", {"class": "worksheetgen-key"})
    for sheet_id, variants in deals:
        for v in variants:
            parts = written_parts(v)
            if parts:
                add(
                    add(root, "p"),
                    "b",
                    gettext(
                        "Sheet {sheet}: {qid} ({title})", sheet=sheet_id, qid=v.qid, title=v.title
                    ),
                )
                add_key(root, v, parts)
    return serialize(root)


def add_answer_area(root: ET.Element, part: KeyPart, content: CellContent) -> None:
    """Where the student writes a numeric answer: a table for matrices and vectors."""
    a = part.answer
    assert a is not None
    if a.kind == "scalar":
        p = add(root, "p", math(a.label + " =") + " ")
        add(p, "span", content(a.rows[0][0]))
        return
    if a.kind == "shape":
        p = add(root, "p", gettext("{label} has shape ", label=math(a.label)))
        cells = a.cells
        for k, cell in enumerate(cells):
            s = add(p, "span", content(cell))
            s.tail = " × " if k + 1 < len(cells) else gettext(" (rows × columns)")
        return
    table = add(root, "table", **{"class": "worksheetgen-grid", "border": "1", "cellpadding": "4"})
    head = add(table, "tr")
    add(head, "th", "")
    width = len(a.rows[0])
    col = part.col_label or "column"
    for j in range(width):
        add(head, "th", f"{col} {j + 1}")
    row = part.row_label or "row"
    for i, cells in enumerate(a.rows):
        tr = add(table, "tr")
        add(tr, "th", math(a.label) if a.kind == "vector" else f"{row} {i + 1}")
        for cell in cells:
            add(tr, "td", content(cell))


def answer_tex(a: KeyAnswer) -> str:
    """The key's printed answer as LaTeX (what the answer key shows)."""
    if a.kind == "matrix":
        return f"{a.label} \\approx {mathtex.bmatrix(a.rounded)}"
    if a.kind == "vector":
        return f"{a.label} \\approx {mathtex.vector(a.rounded)}"
    if a.kind == "shape":
        return f"{a.label} \\in \\mathbb{{R}}^{{{mathtex.shape(a.rounded)}}}"
    return f"{a.label} = {a.rounded}"


def small_values(a: KeyAnswer) -> list[Cell]:
    """Cells whose printed value reads 0 but whose exact value is not 0 (kept, not rounded)."""
    out = []
    for c in a.cells:
        if c.value is not None and c.value != 0 and float(c.printed) == 0:
            out.append(c)
    return out


def add_key(root: ET.Element, v: Variant, parts: Sequence[KeyPart]) -> None:
    """The answer key for these parts: printed answers, tolerances, choices, model answers."""
    single = len(parts) == 1
    for i, part in enumerate(parts):
        p = add(root, "p")
        prefix = "" if single else part_letter(i) + " "
        a = part.answer
        if part.choices:
            right = next(c for c in part.choices if c.correct)
            p.text = prefix + gettext(
                "Answer: {label}. {text}", label=right.label, text=choice_text(right)
            )
            continue
        assert a is not None
        if a.kind in NUMERIC_KINDS:
            p.text = prefix + math(answer_tex(a))
            if a.tolerance:
                p.text += gettext(
                    " (accepted within ±{tolerance} of the exact value)",
                    tolerance=number_text(a.tolerance),
                )
            tiny = small_values(a)
            if tiny:
                note = add(root, "p")
                note.text = gettext(
                    "Entries printed as 0 that are not exactly 0: {entries}",
                    entries="; ".join(
                        f"{c.label or a.name}: {number_text(c.value or 0.0)}" for c in tiny
                    ),
                )
        elif a.kind == "choice" and a.multi:  # every right option, in the order printed
            p.text = f"{prefix}Answers: " + "; ".join(markup_text(o) for o in a.right)
        elif a.kind == "choice":
            p.text = prefix + gettext("Answer: {answer}", answer=markup_text(str(a.value)))
            if a.explanation:
                p.text += " — " + markup_text(a.explanation)
        else:
            p.text = prefix + gettext("Model answer: {answer}", answer=markup_text(str(a.value)))


def key_html(v: Variant, parts: Sequence[KeyPart]) -> str:
    """The general feedback of a question: the answer key of its parts."""
    root = ET.Element("div", {"class": "worksheetgen-key"})
    add_key(root, v, parts)
    return serialize(root)


def written_part_note(v: Variant, points: float = 0.0) -> str:
    """What a mixed question's written part says about its points: its share of the
    question's points (key.json's per-part points, or a plain ``points: N`` split equally
    among the answers), as the sheet and ``grade`` give it."""
    if points:
        return gettext(
            "This written part is graded by hand: it is worth {points} of the question's "
            "{total} point(s), as on the printed key.",
            points=number_text(points),
            total=number_text(v.points),
        )
    return gettext(
        "This written part is graded by hand and carries no points of its own: the "
        "question's {total} point(s) are in its other parts, as on the printed key.",
        total=number_text(v.points),
    )


def any_masked(parts: Sequence[KeyPart]) -> bool:
    """True when some cell a student writes is −∞."""
    return any(p.answer is not None and any(c.masked for c in p.answer.cells) for p in parts)


def key_note(doc: KeyDoc) -> str:
    """What an export's header says about the key it came from, never its seed (an export is
    imported where students may see it): the sheet code of a one-sheet key and the course
    secret's fingerprint, when there is one; "" when neither is known."""
    notes = []
    if len(doc.sheets) == 1 and doc.sheets[0].code:
        notes.append(gettext("sheet code {code}", code=doc.sheets[0].code))
    elif len(doc.sheets) > 1:
        notes.append(ngettext("{n} sheet", "{n} sheets", len(doc.sheets)))
    if doc.secret:
        notes.append(gettext("course secret {secret}", secret=doc.secret))
    return "".join(", " + n for n in notes)


def build_marks(doc: KeyDoc) -> tuple[str, ...]:
    """What tells one build's key from another's without its seed: each sheet's code (a key
    from before sheet codes: its answers), for identifiers an LMS keeps apart."""
    return tuple(s.code or repr(s.variants) for s in doc.sheets)
