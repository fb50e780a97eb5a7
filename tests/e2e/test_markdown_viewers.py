"""The Markdown documents read right in the common viewers (issue 37, section 2): pandoc and
Python-Markdown with pymdownx.arithmatex (MkDocs Material's math), over every bundled bank's
sheets, keys and TA grid.

- A part letter at a line start, "(a) ...", is not read as a lettered list (pandoc's
  fancy_lists): part letters print in bold, as the sheets print them.
- A worked step's display math is a block of its numbered item, on lines of its own: one-line
  ``$$ … $$`` after an item's text was read by Python-Markdown as a lazy continuation of the
  paragraph, and printed as dollars.
- The heatmap's shade blocks are code spans (a monospaced font sets ░ ▒ ▓ █ and the blank at
  one width), and the slip fingerprints are separated by ";", not "·", which read as a product
  between matrices.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.browser import BANKS
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

ROOT = Path(__file__).resolve().parents[2]
PANDOC = shutil.which("pandoc")
DOCUMENTS = ("sheets.md", "keys.md", "keys-grid.md")


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every bundled bank's class documents (three versions), by "bank/document"."""
    out = tmp_path_factory.mktemp("markdown")
    found = {}
    for bank in BANKS:
        options = BuildOptions(
            seed=3,
            banks=(str(ROOT / "banks" / f"{bank}.yaml"),),
            out=str(out),
            pdf=False,
            versions=3,
        )
        folder = build(options).folder
        for name in DOCUMENTS:
            found[f"{bank}/{name}"] = (folder / name).read_text("utf-8")
    return found


def _python_markdown(text: str) -> str:
    markdown = pytest.importorskip("markdown")
    pytest.importorskip("pymdownx.arithmatex")
    return markdown.markdown(
        text,
        extensions=["tables", "pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )


def _pandoc(text: str) -> str:
    if PANDOC is None:
        pytest.skip("needs pandoc (apt-get install pandoc)")
    done = subprocess.run(
        [PANDOC, "-f", "markdown", "-t", "html", "--mathjax"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


NAMES = [f"{b}/{d}" for b in BANKS for d in DOCUMENTS]


@pytest.mark.parametrize("name", NAMES)
def test_pandoc_reads_no_lettered_list_and_every_display(documents, name):
    text = documents[name]
    html = _pandoc(text)
    assert re.findall(r'<ol type="[aAiI]"', html) == []
    assert "$$" not in html
    displays = len(re.findall(r'class="math display"', html))
    assert displays == _displays(text)


@pytest.mark.parametrize("name", NAMES)
def test_python_markdown_reads_every_display_as_a_block(documents, name):
    text = documents[name]
    html = _python_markdown(text)
    assert "$$" not in html
    assert html.count('<div class="arithmatex">') == _displays(text)


def _displays(text: str) -> int:
    """The display math blocks of a document: "$$" alone on a line opens and closes one,
    "$$ … $$" on one line is one."""
    lines = [line.strip() for line in text.splitlines()]
    alone = sum(1 for line in lines if line == "$$")
    assert alone % 2 == 0
    one_line = sum(1 for line in lines if line.startswith("$$ ") and line.endswith(" $$"))
    return alone // 2 + one_line


def test_shades_are_code_spans_and_fingerprints_are_not_joined_by_a_product(documents):
    shaded = [t for n, t in documents.items() if n.endswith("keys-grid.md") and "`▓`" in t]
    assert shaded, "a bundled bank's grid shows a heatmap"
    for text in shaded:
        cells = re.findall(r"\| ([^|`]*[░▒▓█][^|]*) \|", text)
        assert cells == []  # every shade is inside a code span
        html = _python_markdown(text)
        assert re.findall(r"<code>[░▒▓█\u00a0]</code>", html)
    fingerprints = [
        line
        for text in documents.values()
        for line in text.splitlines()
        if line.startswith("- _correct_:") or line.startswith("- `")
    ]
    assert fingerprints
    assert not [line for line in fingerprints if "$ · $" in line]
