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

_CURRENT: ContextVar[str] = ContextVar("worksheetgen_language", default=DEFAULT)


def language(code: str | None = None) -> Language:
    """The language of ``code`` (default: the one being rendered)."""
    return LANGUAGES[code or _CURRENT.get()]


@contextmanager
def using(code: str) -> Iterator[Language]:
    """Render in the language ``code`` inside the block (KeyError for a language not shipped)."""
    chosen = LANGUAGES[code]
    token = _CURRENT.set(code)
    try:
        yield chosen
    finally:
        _CURRENT.reset(token)


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
    """A printed number (``"0.25"``, ``"-1.5"``) with the current language's decimal separator."""
    sep = LANGUAGES[_CURRENT.get()].decimal
    return text if sep == "." else text.replace(".", sep)


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
