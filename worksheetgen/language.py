"""The languages the outputs are written in: each language's properties (its name, its writing
direction, how it writes a decimal number, the LaTeX language it asks for) and its message
catalog, ``locale/<code>/LC_MESSAGES/worksheetgen.po`` compiled to ``.mo`` (gettext, made and
kept with Babel's ``pybabel``: docs/guide/languages.md).

Every fixed word an output prints is a whole sentence with named placeholders (``{name}``,
filled by :func:`gettext`), never pieces joined, so a language may order its words as it
needs, right to left included. English is the catalogs' source (the messages themselves):
an English build asks no catalog.

The language of the documents being rendered is a context variable (:func:`using`), so that
the templates' ``_()`` and the code they call (points in words, the carried-credit line)
speak one language without passing it through every call.

May import: the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import gettext as _gettext

DOMAIN = "worksheetgen"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


@dataclass(frozen=True)
class Language:
    """One language the outputs can be written in."""

    code: str  # ISO 639-1, the catalog's folder and HTML's lang
    name: str  # in its own words
    direction: str  # "ltr" or "rtl": HTML's dir, the layout's direction
    decimal: str  # the decimal separator students write ("." or ",")
    babel: str  # the LaTeX babel package's name of the language ("" for English: none)


#: the shipped languages (a catalog under locale/ for each but English)
LANGUAGES: dict[str, Language] = {
    "en": Language("en", "English", "ltr", ".", ""),
    "de": Language("de", "Deutsch", "ltr", ",", "ngerman"),
}
DEFAULT = "en"

#: the decimal separators a build may print its numbers with (``--decimal``), by name
SEPARATORS: dict[str, str] = {"point": ".", "comma": ","}

_CURRENT: ContextVar[str] = ContextVar("worksheetgen_language", default=DEFAULT)
#: the decimal separator being printed with, when a build set it apart from its language's
_SEPARATOR: ContextVar[str | None] = ContextVar("worksheetgen_decimal", default=None)


def language(code: str | None = None) -> Language:
    """The language of ``code`` (default: the one being rendered)."""
    return LANGUAGES[code or _CURRENT.get()]


@contextmanager
def using(code: str, separator: str | None = None) -> Iterator[Language]:
    """Render in the language ``code`` inside the block (KeyError for a language not shipped),
    its numbers with the decimal ``separator`` ("." or ","; None: the language's own)."""
    chosen = LANGUAGES[code]
    if separator not in (None, *SEPARATORS.values()):
        raise ValueError(f"decimal separator: expected . or ,, got {separator!r}")
    token = _CURRENT.set(code)
    sep_token = _SEPARATOR.set(separator)
    try:
        yield chosen
    finally:
        _SEPARATOR.reset(sep_token)
        _CURRENT.reset(token)


def separator(code: str | None = None, chosen: str | None = None) -> str:
    """The decimal separator of a build in the language ``code`` whose ``--decimal`` is
    ``chosen`` (a name of :data:`SEPARATORS`, None: the language's); with neither, the one
    being rendered with."""
    if chosen is not None:
        return SEPARATORS[chosen]
    if code is not None:
        return LANGUAGES[code].decimal
    return _SEPARATOR.get() or LANGUAGES[_CURRENT.get()].decimal


@cache
def catalog(code: str) -> _gettext.NullTranslations:
    """The compiled catalog of a language (English: the messages themselves)."""
    # imported here: --help (which lists the languages) reads no catalog
    import gettext as _gettext

    if code == DEFAULT:
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, str(LOCALE_DIR), [code])


def gettext(message: str, /, **values: Any) -> str:
    """``message`` in the current language, its ``{placeholders}`` filled with ``values``."""
    code = _CURRENT.get()
    text = message if code == DEFAULT else catalog(code).gettext(message)
    return text.format(**values) if values else text


def ngettext(singular: str, plural: str, count: int | float, /, **values: Any) -> str:
    """The singular or plural form for ``count`` in the current language (its own plural
    rule; a fraction takes the plural), ``{n}`` (``count`` unless given, as a printed number
    may be) and the other placeholders filled."""
    code = _CURRENT.get()
    whole = count if isinstance(count, int) else (int(count) if float(count).is_integer() else 2)
    if code == DEFAULT:
        text = singular if whole == 1 else plural
    else:
        text = catalog(code).ngettext(singular, plural, whole)
    return text.format(**{"n": count, **values})


def pgettext(context: str, message: str, /, **values: Any) -> str:
    """``message`` in the sense ``context`` names (one English word, two meanings: "key" as
    a table's column and as the answer key), its placeholders filled."""
    code = _CURRENT.get()
    text = message if code == DEFAULT else catalog(code).pgettext(context, message)
    return text.format(**values) if values else text


def said(message: str) -> str:
    """A message marked where it was defined (:func:`N_`: a slip's description, say), in the
    current language; a text no catalog knows (a plugin's) as it is, and "" as "" (gettext
    gives the catalog's header for it)."""
    return gettext(message) if message else message


def table_label(word: str) -> str:
    """A table's row or column label in the current language (a label no catalog knows, a
    plugin family's own, as it is)."""
    return pgettext("table label", word) if word else word


def decimal(text: str) -> str:
    """A printed number (``"0.25"``, ``"-1.5"``) with the decimal separator being rendered
    with (the language's, or the build's ``--decimal``)."""
    sep = separator()
    return text if sep == "." else text.replace(".", sep)


#: a decimal point between two digits: the point of a printed number, in math or in text
#: (a length such as 0.5em or 0.5\\textwidth has a letter after its digits and is left alone,
#: and so is a section's number: the course note "3.2" the families' words cite, in English
#: and German)
_POINT = re.compile(
    r"(?<![Nn]ote [0-9])(?<!Skript [0-9])(?<=[0-9])\."
    r"(?=[0-9]+(?![0-9]*(?:[a-z]{2}\b|\\[a-z@]*(?:width|height|skip))))"
)
#: the separator of a list's entries in math (``[0.26,\ 0.04]``): a semicolon beside
#: decimal commas, so that ``[0{,}26;\ 0{,}04]`` reads as two numbers
_LIST_COMMA = re.compile(r",(?=\\ )")
#: math in a text (markup as LaTeX or Markdown: ``$...$``, ``$$...$$``, ``\[...\]``) and a
#: tag of HTML, each kept apart from the text around it
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\[.*?\\\]", re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def decimal_text(text: str) -> str:
    """Every decimal number of a plain text (``"A = 0.25, B = -1.5"``) with the separator
    being rendered with: a point between two digits becomes it."""
    sep = separator()
    return text if sep == "." or "." not in text else _POINT.sub(sep, text)


def decimal_math(tex: str) -> str:
    """Every decimal number of LaTeX math with the separator being rendered with: a comma
    in braces (``0{,}25``), so that TeX spaces it as a digit, not as punctuation; the
    entries of a list then separated by semicolons."""
    sep = separator()
    if sep == "." or "." not in tex:
        return tex
    return _POINT.sub("{" + sep + "}", _LIST_COMMA.sub(";", tex))


def math_lists(tex: str) -> str:
    """The entries of LaTeX math's lists (``[0.26,\\ 0.04]``) apart by semicolons where the
    separator being rendered with is a comma."""
    return tex if separator() == "." else _LIST_COMMA.sub(";", tex)


def decimal_markup(text: str) -> str:
    """:func:`decimal_math` inside the math of a text in LaTeX or Markdown, :func:`decimal_text`
    around it."""
    if separator() == "." or "." not in text:
        return text
    out: list[str] = []
    at = 0
    for m in _MATH.finditer(text):
        out += [decimal_text(text[at : m.start()]), decimal_math(m.group())]
        at = m.end()
    out.append(decimal_text(text[at:]))
    return "".join(out)


def decimal_html(html: str) -> str:
    """:func:`decimal_text` on the text of an HTML fragment (its MathML's numbers too), its
    tags as they are."""
    sep = separator()
    if sep == "." or "." not in html:
        return html
    out: list[str] = []
    at = 0
    for m in _TAG.finditer(html):
        out += [_POINT.sub(sep, html[at : m.start()]), m.group()]
        at = m.end()
    out.append(_POINT.sub(sep, html[at:]))
    return "".join(out)


def N_(message: str) -> str:
    """Marks ``message`` for the catalog where it is defined; translated where it is used."""
    return message


def NP_(context: str, message: str) -> str:
    """As :func:`N_`, for a message in a context (:func:`pgettext`)."""
    return message


# the table labels, for the catalog (extracted from here)
_LABELS = (
    NP_("table label", "query"),
    NP_("table label", "key"),
    NP_("table label", "dim"),
    NP_("table label", "token"),
    NP_("table label", "head"),
    NP_("table label", "row"),
    NP_("table label", "column"),
)
