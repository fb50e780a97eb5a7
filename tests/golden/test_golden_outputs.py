"""Every bundled bank builds the same bytes as recorded: a refactoring that moves code keeps them.

A difference here is either a bug the change introduced or a deliberate fix; a fix re-records
(``python -m tests.golden.outputs --record --pdf``) in its own commit that says what changed.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.golden import outputs

TEXTS = json.loads((outputs.HERE / "digests.json").read_text())
CASES = list(outputs.cases())


def test_the_recorded_matrix_is_the_whole_matrix() -> None:
    assert sorted(TEXTS) == sorted(case.name for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_text_outputs_are_the_recorded_bytes(case: outputs.Case) -> None:
    texts, _ = outputs.digests_of(case, pdf=False)
    assert texts == TEXTS[case.name]


def _recorded_pages() -> dict:
    path = outputs.HERE / "pdf-pages.json"
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.mark.slow
@pytest.mark.tex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_pdf_pages_are_the_recorded_pixels(case: outputs.Case) -> None:
    recorded = _recorded_pages()
    if recorded.get("toolchain") != outputs.toolchain():
        pytest.skip(f"pages were recorded with {recorded.get('toolchain')!r}")
    texts, pages = outputs.digests_of(case, pdf=True)
    # the manifest says whether PDFs were built; every other text is the same either way
    texts.pop("manifest.json")
    assert texts == {k: v for k, v in TEXTS[case.name].items() if k != "manifest.json"}
    assert pages == recorded["pages"][case.name]
