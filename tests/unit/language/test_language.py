"""The message catalogs: current with the code and templates, every language complete, each
.mo the compiled .po beside it, the language table as CLDR has it, and the documented commands
for adding a language working as written."""

from __future__ import annotations

import gettext
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from tests.conftest import ROOT
from worksheetgen import language
from worksheetgen.language import LANGUAGES, LOCALE_DIR

POT = LOCALE_DIR / "worksheetgen.pot"


SHIPPED = [code for code in LANGUAGES if code != language.DEFAULT]


PYBABEL = Path(sys.executable).with_name("pybabel")


GUIDE = ROOT / "docs" / "guide" / "languages.md"


def _po(code: str):
    with open(LOCALE_DIR / code / "LC_MESSAGES" / "worksheetgen.po", "rb") as fh:
        return read_po(fh)


def _ids(catalog) -> set[tuple[str | None, str]]:
    return {(m.context, m.id if isinstance(m.id, str) else m.id[0]) for m in catalog if m.id}


def _documented(command: str) -> list[str]:
    """The guide's command line that starts with ``pybabel <command>``, as arguments."""
    lines = [ln.strip() for ln in GUIDE.read_text(encoding="utf-8").splitlines()]
    found = [ln for ln in lines if ln.startswith(f"pybabel {command} ")]
    assert len(found) == 1, f"docs/guide/languages.md: one `pybabel {command}` line, got {found}"
    return [str(PYBABEL), *found[0].split()[1:]]


def test_every_shipped_language_but_english_has_a_catalog_and_only_those():
    folders = sorted(p.name for p in LOCALE_DIR.iterdir() if p.is_dir())
    assert folders == sorted(SHIPPED)


def test_the_template_holds_every_message_of_the_code_and_templates(tmp_path):
    """The documented extraction, run on this checkout, finds exactly the committed .pot's
    messages (a message added to the code without extracting it would print in English)."""
    args = _documented("extract")
    out = args.index("-o")
    args[out + 1] = str(tmp_path / "new.pot")
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    with open(tmp_path / "new.pot", "rb") as fh:
        fresh = read_po(fh)
    with open(POT, "rb") as fh:
        committed = read_po(fh)
    assert _ids(fresh) == _ids(committed)


@pytest.mark.parametrize("code", SHIPPED)
def test_every_message_is_translated_with_the_same_placeholders(code):
    catalog = _po(code)
    with open(POT, "rb") as fh:
        template = read_po(fh)
    assert _ids(catalog) == _ids(template)
    names = re.compile(r"\{(\w*)\}")
    for m in catalog:
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        strings = [m.string] if isinstance(m.string, str) else list(m.string)
        assert all(strings) and not m.fuzzy, m.id
        wanted = set(names.findall(ids[-1])) | set(names.findall(ids[0]))
        for text in strings:
            # a plural form may leave the count out ("ein Blatt"), never add a placeholder
            assert set(names.findall(text)) <= wanted | {"n"}, (m.id, text)
            assert set(names.findall(text)) >= wanted - {"n"}, (m.id, text)


@pytest.mark.parametrize("code", SHIPPED)
def test_each_compiled_catalog_is_its_po_compiled(code):
    """The committed .mo says what the .po says (run the documented compile when this fails)."""
    buffer = io.BytesIO()
    write_mo(buffer, _po(code))
    buffer.seek(0)
    fresh = gettext.GNUTranslations(buffer)
    with open(LOCALE_DIR / code / "LC_MESSAGES" / "worksheetgen.mo", "rb") as fh:
        committed = gettext.GNUTranslations(fh)
    assert committed._catalog == fresh._catalog  # type: ignore[attr-defined]
    assert committed.plural(1) == fresh.plural(1) and committed.plural(2) == fresh.plural(2)


@pytest.mark.parametrize("code", list(LANGUAGES))
def test_the_language_table_agrees_with_cldr(code):
    locale = Locale.parse(code)
    chosen = LANGUAGES[code]
    assert chosen.decimal == locale.number_symbols["latn"]["decimal"]
    assert chosen.direction == ("rtl" if locale.character_order == "right-to-left" else "ltr")


def test_gettext_fills_placeholders_in_the_current_language():
    assert language.gettext("Page {page} of {count}", page=2, count=3) == "Page 2 of 3"
    with language.using("de"):
        assert language.gettext("Page {page} of {count}", page=2, count=3) == "Seite 2 von 3"
        assert language.ngettext("{n} point", "{n} points", 1) == "1 Punkt"
        assert language.ngettext("{n} point", "{n} points", 2.5, n="2,5") == "2,5 Punkte"
        assert language.table_label("query") == "Anfrage"
        assert language.table_label("wordy") == "wordy"  # a plugin's own label stays
        assert language.pgettext("table label", "key") == "Schlüssel"
        assert language.gettext("key") == "V"  # the grid's version column
    assert language.gettext("key") == "key"
