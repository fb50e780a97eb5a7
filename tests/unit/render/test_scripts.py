"""Every name right (issue 32 section 4): one font per script, whole words at a time, and
right-to-left names in their order.

The TeX markup a name gets (``escape_tex``), the fonts its words take, the Unicode
bidirectional levels, and Arabic letters in their joined forms. What the pages show is
checked in tests/e2e/test_names_on_the_page.py.
"""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from worksheetgen.render import scripts
from worksheetgen.render.markup import escape_tex
from worksheetgen.tex.engines import PDFLATEX_CHARS

ARABIC = "محمد بن سلمان"
HEBREW = "דוד בן־גוריון"


def _pagella() -> Path | None:
    if shutil.which("kpsewhich") is None:
        return None
    found = subprocess.run(
        ["kpsewhich", "texgyrepagella-regular.otf"], capture_output=True, text=True
    ).stdout.strip()
    return Path(found) if found else None


@pytest.mark.skipif(_pagella() is None, reason="TeX Gyre Pagella is not installed")
def test_the_table_of_pagellas_letters_is_the_installed_fonts():
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    path = _pagella()
    assert path is not None
    for style in ("regular", "bold", "italic", "bolditalic"):
        font = TTFont(str(path).replace("regular", style), lazy=True)
        cmap = {c for c in font.getBestCmap() if c < 0x2000 or 0xFB00 <= c <= 0xFB04}
        assert cmap == set(scripts.PAGELLA), style


def test_text_pdflatex_prints_gets_no_markup_so_its_documents_stay_the_same():
    # every character of a pdfLaTeX document: no font switch, no direction
    assert not any(scripts.needs_fonts(c) for c in PDFLATEX_CHARS)
    for name in ("Zoë O'Brien & Co_1", "Łukasz Żółtowski-Wójcik", "Nguyễn Thị Minh Khai"):
        assert "\\ws" not in escape_tex(name)
    assert escape_tex("Zoë O'Brien & Co_1") == r"Zoë O\textquotesingle{}Brien \& Co\_1"


def test_a_greek_name_is_set_in_one_font_whole_never_letter_by_letter():
    # Pagella has α..ω but no ά or ἀ: before, Ἀλέξανδρος took DejaVu for two letters only
    for name in ("Ἀλέξανδρος", "Ελένη", "Σωκράτης", "Αλεξανδρα"):
        assert set(scripts.fonts(name)) == {scripts.SERIF}, name
        assert escape_tex(name) == rf"{{\wsserif {name}}}"
    assert escape_tex("Ἀλέξανδρος Παπαδόπουλος") == r"{\wsserif Ἀλέξανδρος Παπαδόπουλος}"


def test_each_script_has_its_font_and_a_mixed_word_changes_where_its_script_does():
    assert escape_tex("Иван Петрович") == r"{\wsserif Иван Петрович}"
    assert escape_tex("山田太郎、李") == r"{\wscjk 山田太郎、李}"
    assert escape_tex("김민준") == r"{\wscjk 김민준}"
    # the hyphen between a Greek and a Latin half goes with the Greek
    assert escape_tex("Παπαδόπουλος-Smith") == r"{\wsserif Παπαδόπουλος-}Smith"
    # punctuation around a word stays in the text's font
    assert escape_tex('("Ελένη"),') == r"(\textquotedbl{}{\wsserif Ελένη}\textquotedbl{}),"


def test_a_latin_word_with_a_letter_pagella_lacks_is_set_whole_in_the_serif():
    assert "\u01c5" not in {chr(c) for c in scripts.PAGELLA}
    assert escape_tex("\u01c5emal Ada") == r"{\wsserif ǅemal} Ada"
    # a modifier letter Pagella lacks (the Hawaiian ʻokina) too: never a letter on its own
    assert escape_tex("Kaʻiulani Ada") == r"{\wsserif Kaʻiulani} Ada"
    # a combining mark Pagella lacks (U+0346) takes its letter's word along
    assert escape_tex("Ana n\u0346o") == "Ana {\\wsserif n\u0346o}"


def test_right_to_left_names_are_set_right_to_left_in_their_font():
    assert escape_tex(ARABIC) == rf"\wsrtl{{\wsarab {ARABIC}}}"
    assert escape_tex(HEBREW) == rf"\wsrtl{{\wshebr {HEBREW}}}"
    # a Latin first word: a left-to-right name with one right-to-left run
    assert escape_tex("Omar الفاروق Haddad") == r"Omar \wsrtl{\wsarab الفاروق} Haddad"
    # digits after Arabic letters read left to right inside the run
    assert escape_tex("Omar الفاروق 12") == r"Omar \wsrtl{{\wsarab الفاروق} \wsltr{12}}"
    assert escape_tex("فاطمة 2") == r"\wsrtl{{\wsarab فاطمة} \wsltr{2}}"
    # brackets around a right-to-left name are the text's
    assert escape_tex(f"Sheet ({ARABIC}), s01") == rf"Sheet (\wsrtl{{\wsarab {ARABIC}}}), s01"


def test_a_long_run_still_breaks_inside_its_font_group():
    run = "山田" * 20
    tex = escape_tex(run)
    assert tex.startswith(r"{\wscjk 山\allowbreak{}田")
    assert tex.count(r"\allowbreak{}") == len(run) - 1


def test_bidirectional_levels_and_the_visual_order():
    assert scripts.levels("ab") == [0, 0]
    assert scripts.levels(ARABIC) == [1] * len(ARABIC)
    mixed = "Omar الفاروق 12"
    assert scripts.levels(mixed) == [0] * 5 + [1] * 8 + [2, 2]
    assert scripts.visual(mixed) == "Omar 12 " + "الفاروق"[::-1]
    assert scripts.visual(ARABIC) == ARABIC[::-1]
    # a right-to-left line: its brackets mirrored, the Latin word at its left end
    assert scripts.visual("(שלום) x") == "x (" + "שלום"[::-1] + ")"
    assert scripts.visual("Ada Lovelace") == "Ada Lovelace"


def test_arabic_letters_take_the_form_their_neighbours_give_them():
    shaped = scripts.shape_arabic("محمد بن")
    names = [unicodedata.name(c) for c in shaped]
    assert names == [
        "ARABIC LETTER MEEM INITIAL FORM",
        "ARABIC LETTER HAH MEDIAL FORM",
        "ARABIC LETTER MEEM MEDIAL FORM",
        "ARABIC LETTER DAL FINAL FORM",
        "SPACE",
        "ARABIC LETTER BEH INITIAL FORM",
        "ARABIC LETTER NOON FINAL FORM",
    ]
    # lam and alef are one ligature; alef joins nothing after it
    assert scripts.shape_arabic("لا") == "\ufefb"
    assert scripts.shape_arabic("سلام") == "\ufeb3\ufefc\ufee1"
    assert scripts.shape_arabic("Ada") == "Ada"


def test_a_long_hyphenated_name_breaks_after_its_hyphens_never_inside_a_part():
    # issue 32: the answer grid's list of shortened names broke "Württemberg-Hoh / enlohe"
    tex = escape_tex("von Württemberg-Hohenlohe-Langenburg, Gräfin")
    assert tex == r"von Württemberg-\allowbreak{}Hohenlohe-\allowbreak{}Langenburg, Gräfin"
    # a part that is long itself still breaks anywhere (it must fit the page)
    tex = escape_tex("Ana-" + "w" * 40)
    assert tex.startswith(r"Ana-\allowbreak{}w\allowbreak{}w") and tex.count("allowbreak") == 40
    # a hyphen pair stays two hyphens (no en dash), with no break between them
    assert escape_tex("a--" + "b" * 30).startswith(r"a-\kern0pt -\allowbreak{}b\allowbreak{}")


def test_brackets_in_a_right_to_left_run_are_mirrored_as_luatex_does_not():
    # LuaTeX sets a bracket in a right-to-left run as it is: "(علي)" printed ")علي(" (the
    # Arabic font, shaped by HarfBuzz, mirrors its own; Pagella's are the text's)
    assert escape_tex("محمد (علي)") == r"\wsrtl{{\wsarab محمد} ){\wsarab علي}(}"
    assert escape_tex("(محمد)") == r"\wsrtl{){\wsarab محمد}(}"
    # around a right-to-left run in a left-to-right line they are the line's, as written
    assert escape_tex("Ada (محمد)") == r"Ada (\wsrtl{\wsarab محمد})"
