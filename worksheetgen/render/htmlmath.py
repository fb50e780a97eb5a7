"""Markup and math for the HTML documents: text escaped for HTML, math as MathML.

Math is the TeX the templates already carry, made safe by ``markup.sanitize_math`` and
converted by latex2mathml (a maintained converter; browsers draw MathML themselves, so the
page needs no script, font or network). The converter copies the text of ``\\text{…}`` into
its output unescaped, so every result is parsed back and written again by ElementTree, only
MathML elements and attributes kept: what a bank's math holds can never become markup of the
page. Math the converter cannot take prints as its TeX source, escaped, in ``<mtext>``.
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path
from typing import Any

from worksheetgen.exact import mathtex
from worksheetgen.exact.masked import is_masked_text
from worksheetgen.render.markup import sanitize_math, split_markup
from worksheetgen.speed.cache import load, private_cache_folder, store

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# what latex2mathml writes for the bounded math of the banks (anything else is refused)
MATHML_TAGS = frozenset(
    """math mrow mi mn mo mtext mspace msub msup msubsup mfrac msqrt mroot mtable mtr mtd
    mover munder munderover mstyle mpadded mphantom menclose semantics annotation merror
    mfenced mlabeledtr""".split()
)
MATHML_ATTRIBUTES = frozenset(
    """display mathvariant stretchy fence separator width height depth lspace rspace
    columnalign rowspacing columnspacing columnlines rowlines frame accent accentunder
    movablelimits minsize maxsize symmetric largeop linethickness scriptlevel displaystyle
    open close separators notation form""".split()
)


def escape(text: Any) -> str:
    """Text for an HTML element or a quoted attribute: ``& < > " '`` escaped."""
    return html.escape(str(text), quote=True)


# a number in TeX math, and the character before it (see _shape)
_NUMBER = re.compile(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)(?![0-9.])")
_SLOT = 0xE000  # numbers stand in the math's shape as Private Use characters U+E000, ...
_MAX_SLOTS = 6400


@lru_cache(maxsize=16384)  # the same matrices and labels recur on every sheet of a class
def math_html(tex: str, display: bool = False) -> str:
    """TeX math (from a bank or a template) as one ``<math>`` element.

    Every sheet of a class has the same math with other numbers, so the conversion is done
    once per *shape* (the math with each number replaced by a character of its own) and the
    numbers are put back as ``<mn>`` elements; math whose numbers cannot be told apart that
    way (a number right after ``^``, ``_`` or a letter, where TeX reads single digits) is
    converted whole."""
    mode = "block" if display else "inline"
    # digits are never touched by sanitize_math (a number after a backslash has no shape)
    shape = _shape(tex)
    if shape is not None:
        template, numbers = shape
        filler = _filler(template, mode)
        if filler is not None:
            return filler.format(*numbers)
    return _safe_converted(tex, mode)


@lru_cache(maxsize=16384)
def _safe_converted(tex: str, mode: str) -> str:
    return _converted(sanitize_math(tex).strip(), mode)


def _shape(tex: str) -> tuple[str, tuple[str, ...]] | None:
    """The math with every number replaced by its slot character, and the numbers; None
    where that could change how TeX reads it."""
    if _ANY_SLOT.search(tex) or _READS_DIGITS.search(tex):
        return None  # x^12 is x^1 2; \frac12 is \frac{1}{2}: read as TeX does
    # the text between the numbers and the numbers, alternating: [text, number, text, ...]
    parts = _NUMBER.split(tex)
    numbers = tuple(parts[1::2])
    if len(numbers) > _MAX_SLOTS:
        return None
    parts[1::2] = _SLOT_CHARS[: len(numbers)]
    return "".join(parts), numbers


_SLOT_CHARS = [chr(_SLOT + i) for i in range(_MAX_SLOTS)]


@lru_cache(maxsize=16384)
def _filler(template: str, mode: str) -> str | None:
    """The converted shape as a format string, its slots the numbers' places (``{0}``, or
    ``<mn>{0}</mn>`` where the converter made a slot an identifier); None where the slots do
    not each appear once, so the math is converted whole. Made once per shape: a sheet's
    math is then filled in by ``str.format``."""
    mathml = _safe_converted(template, mode)
    count = len(_ANY_SLOT.findall(template))
    if not count:
        return _braces(mathml)
    slots = re.findall("[\ue000-\uf8ff]", mathml)
    if sorted(slots) != _SLOT_CHARS[:count]:
        return None
    pieces = _SLOT_RE.split(mathml)  # [text, <mi>slot, bare slot, text, ...]
    out = [_braces(pieces[0])]
    for i in range(1, len(pieces), 3):
        in_mi, bare, text = pieces[i : i + 3]
        index = ord(in_mi or bare) - _SLOT
        out.append(f"<mn>{{{index}}}</mn>" if in_mi else f"{{{index}}}")
        out.append(_braces(text))
    return "".join(out)


def _braces(text: str) -> str:
    """Text kept as it is by ``str.format``."""
    return text.replace("{", "{{").replace("}", "}}")


# a digit right after ^, _, a backslash or a letter: TeX may read it alone
_READS_DIGITS = re.compile(r"[\\^_\\\\A-Za-z][0-9]")
_ANY_SLOT = re.compile("[\\ue000-\\uf8ff]")
_SLOT_RE = re.compile("<mi>([\ue000-\uf8ff])</mi>|([\ue000-\uf8ff])")


#: what the cached conversions depend on besides the converter's own files (bump it when
#: _clean or the fallback changes what they hold)
_CACHE_FORMAT = "mathml-2"


@lru_cache(maxsize=1)
def _cache_folder() -> Path | None:
    """The speed cache's folder of converted math shapes (by the installed converter's
    files, found without importing it), or None when there is none."""
    spec = importlib.util.find_spec("latex2mathml")
    if spec is None or not spec.submodule_search_locations:
        return None
    files = []
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).glob("*.py")):
            info = path.stat()
            files.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
    return private_cache_folder("mathml", "|".join([_CACHE_FORMAT, *files]))


@lru_cache(maxsize=16384)
def _converted(tex: str, mode: str) -> str:
    """latex2mathml's MathML of safe TeX, cleaned (or the TeX as text where it fails); kept in
    the speed cache, so a class's math shapes are converted once, not in every build."""
    folder = _cache_folder()
    entry = None
    if folder is not None:
        name = hashlib.blake2b(f"{mode}|{tex}".encode("utf-8", "surrogatepass"), digest_size=16)
        entry = folder / name.hexdigest()
        data = load(entry)
        if data is not None:
            return data.decode("utf-8", "surrogatepass")
    # the converter only when a document is written as HTML (it is not needed for --help)
    from latex2mathml.converter import convert

    try:
        out = _clean(convert(tex, display=mode), mode)
    except Exception:  # latex2mathml raises many kinds; the TeX prints as text instead
        out = f'<math display="{mode}"><mtext>{escape(tex)}</mtext></math>'
    if entry is not None:
        store(entry, out.encode("utf-8", "surrogatepass"))
    return out


def _clean(mathml: str, mode: str) -> str:
    """The converter's output parsed back and written by ElementTree, MathML only."""
    # defusedxml: the text of a bank's \text{} lands in what is parsed
    from defusedxml.ElementTree import fromstring

    root = fromstring(mathml)
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag not in MATHML_TAGS:
            raise ValueError(f"unexpected MathML element {tag}")
        el.tag = tag
        for name in list(el.attrib):
            if name not in MATHML_ATTRIBUTES:
                del el.attrib[name]
    _signs_as_tex_spaces_them(root)
    root.attrib["display"] = mode
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


#: signs that TeX sets as a binary operator between two terms and as a sign (no space)
#: at the start, after a relation, an operator, an opening bracket or punctuation
_SIGNS = frozenset("−+±∓")
#: operators after which a sign is still binary: closing brackets end a term
_CLOSING = frozenset(")]}|⟩‖⌋⌉")


def _signs_as_tex_spaces_them(root: ET.Element) -> None:
    """Space ``-\\infty`` and ``= -3`` as TeX does: ∞ is an identifier (latex2mathml makes
    it an operator, spaced as one), and a sign where TeX's rule makes it unary (first, or
    after an operator that is not a closing bracket) is a prefix operator, not the binary
    minus MathML's operator dictionary spaces it as in an infix position."""
    for parent in root.iter():
        before: ET.Element | None = None
        for child in parent:
            if child.tag == "mo" and (child.text or "").strip() == "∞":
                child.tag = "mi"
            if child.tag == "mo" and (child.text or "").strip() in _SIGNS:
                unary = before is None or (
                    before.tag == "mo" and (before.text or "").strip() not in _CLOSING
                )
                if unary and before is not None:
                    child.attrib["form"] = "prefix"
            before = child


@lru_cache(maxsize=16384)
def markup_html(markup: str) -> str:
    """Prompt markup (text with ``$math$``) as inline HTML: text escaped, math as MathML."""
    return "".join(math_html(t) if m else escape(t) for m, t in split_markup(markup))


@lru_cache(maxsize=4096)
def paragraphs_html(markup: str) -> str:
    """Markup as paragraphs: a blank line starts a new ``<p>``."""
    paragraphs = [p for p in markup.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return "".join(f"<p>{markup_html(p.strip())}</p>" for p in paragraphs)


def cell_text(x: Any) -> str:
    """One printed entry as text in a table cell: −∞ for a masked one, a minus sign (U+2212)
    for a negative number (screen readers say "minus", a hyphen they may skip)."""
    s = str(x)
    if is_masked_text(s):
        return "−∞"
    return s.replace("-", "−", 1) if s.startswith("-") else s


def given_tex(kind: str, value: Any) -> str:
    """A given value shown inline in the question's math display, as TeX: a matrix in
    brackets, a vector as a bracketed row, a number as printed."""
    if kind == "matrix":
        return mathtex.bmatrix(value)
    if kind == "vector":
        return mathtex.vector(value)
    return mathtex.cell(value)


def table_rows(answer: Any) -> list[list[Any]]:
    """The rows of a table answer: a matrix's rows, a vector as one row."""
    return list(answer.rounded) if answer.kind == "matrix" else [answer.rounded]
