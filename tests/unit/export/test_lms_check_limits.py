"""What the shared LMS check scripts (/work/shared/lms/, outside this repo) report on the note
bank that is no defect of the export, covered here as the behaviour it is (see
docs/guide/lms-export.md, "What the check scripts report").

A behaviour across modules, not one module's tests (pipeline.build, pipeline.options)."""

from __future__ import annotations

import html as htmllib
import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@pytest.fixture(scope="module")
def note(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("note")
    options = BuildOptions(
        seed=42,
        banks=(str(ROOT / "banks" / "note.yaml"),),
        out=str(out / "b"),
        pdf=False,
        versions=3,
        exports=("qti",),
    )
    return build(options).folder


def _items(folder: Path) -> dict[str, ET.Element]:
    with zipfile.ZipFile(folder / "canvas-qti.zip") as zf:
        (name,) = [n for n in zf.namelist() if n.count("/") == 1 and "meta" not in n]
        root = ET.fromstring(zf.read(name))
    return {i.get("title") or "": i for i in root.iter(f"{QTI}item")}


def test_a_canvas_pick_one_blank_takes_the_letter_and_the_option_as_shown_not_its_tex(note):
    # check.sh types key.json's option text, `$AK$` math and all, into spot-the-bug's choice
    # blank and reports "Canvas says wrong" (2 problems): the item asks for the letter and
    # shows the option with its math as \( \) (what a student reads, MathJax-rendered), and
    # takes the letter in either case and the option's text as shown; the bank's $...$ is
    # source notation a student never sees on the page.
    items = {t: i for t, i in _items(note).items() if "spot-the-bug [" in t}
    assert items
    checked = 0
    for title, item in items.items():
        text = htmllib.unescape(item.findtext(f".//{QTI}mattext") or "")
        assert "Your choice (letter): [choice_1]" in text, title
        assert not re.search(r"(?<!\\)\$", re.sub(r"<[^>]+>", "", text)), title
        lid = next(
            r for r in item.iter(f"{QTI}response_lid") if r.get("ident") == "response_choice_1"
        )
        labels = {
            (lab.get("ident") or ""): htmllib.unescape(lab.findtext(f".//{QTI}mattext") or "")
            for lab in lid.iter(f"{QTI}response_label")
        }
        right = {
            v.text
            for c in item.iter(f"{QTI}respcondition")
            for v in c.iter(f"{QTI}varequal")
            if v.get("respident") == "response_choice_1"
        }
        accepted = sorted(labels[r] for r in right if r in labels)
        letter = next(a for a in accepted if len(a) == 1 and a.isupper())
        (option,) = [a for a in accepted if len(a) > 1]
        assert accepted == sorted([letter, letter.lower(), option]), title
        # the option as the item lists it: "F. Mixes ... \(AK\) instead of \(AV\)."
        assert f"{letter}. {option}" in text, title
        assert "$" not in option
        checked += 1
    assert checked >= 2
