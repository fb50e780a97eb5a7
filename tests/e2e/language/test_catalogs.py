"""The message catalogs: current with the code and templates, every language complete, each
.mo the compiled .po beside it, the language table as CLDR has it, and the documented commands
for adding a language working as written."""

from __future__ import annotations

import gettext
import shutil
import subprocess

from tests.unit.language.test_language import _documented
from worksheetgen.language import LOCALE_DIR


def test_the_documented_commands_add_a_language(tmp_path):
    """docs/guide/languages.md's init and compile, as written, on a copy of the catalogs: a
    French catalog with a translation is read back through the same gettext as a build's."""
    locale = tmp_path / "worksheetgen" / "locale"
    shutil.copytree(LOCALE_DIR, locale)
    subprocess.run(_documented("init"), cwd=tmp_path, check=True, capture_output=True)
    po = locale / "fr" / "LC_MESSAGES" / "worksheetgen.po"
    text = po.read_text(encoding="utf-8")
    assert '"Plural-Forms: nplurals=' in text  # French's plural rule, from CLDR
    text = text.replace(
        'msgid "Worked solution."\nmsgstr ""', 'msgid "Worked solution."\nmsgstr "Solution."'
    )
    po.write_text(text, encoding="utf-8")
    subprocess.run(_documented("compile"), cwd=tmp_path, check=True, capture_output=True)
    french = gettext.translation("worksheetgen", str(locale), ["fr"])
    assert french.gettext("Worked solution.") == "Solution."
    assert french.ngettext("{n} point", "{n} points", 1) == "{n} point"  # untranslated: English
