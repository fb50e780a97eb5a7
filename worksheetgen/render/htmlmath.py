"""Markup and math for the HTML documents: text escaped for HTML, math as MathML.

Math is the TeX the templates already carry, made safe by ``markup.sanitize_math`` and
converted by latex2mathml (a maintained converter; browsers draw MathML themselves, so the
page needs no script, font or network). The converter copies the text of ``\\text{…}`` into
its output unescaped, so every result is parsed back and written again by ElementTree, only
MathML elements and attributes kept: what a bank's math holds can never become markup of the
page. Math the converter cannot take prints as its TeX source, escaped, in ``<mtext>``.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

from worksheetgen.exact import mathtex
from worksheetgen.exact.masked import is_masked_text
from worksheetgen.render.markup import sanitize_math, split_markup

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


@lru_cache(maxsize=16384)  # the same matrices and labels recur on every sheet of a class
def math_html(tex: str, display: bool = False) -> str:
    """TeX math (from a bank or a template) as one ``<math>`` element."""
    # the converter only when a document is written as HTML (it is not needed for --help)
    from latex2mathml.converter import convert

    safe = sanitize_math(tex).strip()
    mode = "block" if display else "inline"
    try:
        return _clean(convert(safe, display=mode), mode)
    except Exception:  # latex2mathml raises many kinds; the TeX prints as text instead
        return f'<math display="{mode}"><mtext>{escape(safe)}</mtext></math>'


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
    root.attrib["display"] = mode
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


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
