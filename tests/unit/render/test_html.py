"""The HTML sheets and keys: escaped, self-contained, labelled, large print (#37 §2).

What a browser makes of them (console, requests, the accessibility tree, how they look) is
tested in tests/e2e/test_html_browser.py; here the files themselves are read.

A behaviour across modules, not one module's tests (bank.roster, errors, pipeline.build,
pipeline.options, pipeline.sheet, render, render.documents, render.htmlmath, render.htmlwords,
resources)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from worksheetgen.bank.roster import parse_roster
from worksheetgen.errors import RosterError
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions
from worksheetgen.render.htmlmath import markup_html, math_html
from worksheetgen.render.htmlwords import WORDS, say

HOSTILE_BANK = r"""
sheet:
  title: 'Quiz </title></style><script>alert(1)</script>'
  course: "Course \"quoted\" & 'single' <b>bold</b>"
  instructions: >-
    Read </style><img src=x onerror=alert(2)> and
    $\text{</math><script>alert(3)</script>}$
questions:
  - id: a
    family: softmax
    title: '<iframe src="https://example.com/"></iframe>'
    params: {T: 2, d_k: 4}
    prompt: 'Prompt <script>alert(4)</script> with $x < y$ and $\text{"q" </math>}$.'
""".lstrip()

PLAIN_BANK = """
sheet:
  title: Quiz
questions:
  - id: a
    family: softmax
    params: {T: 2, d_k: 4}
"""

HOSTILE_ROSTER = (
    "name,id,large_print\n"
    '"O\'Brien ""Q"" </style><script>alert(5)</script>",s1,yes\n'
    '"<img src=x onerror=alert(6)>",s2,no\n'
)


class Tags(HTMLParser):
    """Every start tag and attribute an HTML parser finds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(text)
    parser.close()
    return parser.tags


def _class(tmp_path: Path, bank: str, roster: str, **options) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "bank.yaml").write_text(bank, encoding="utf-8")
    (tmp_path / "roster.csv").write_text(roster, encoding="utf-8")
    result = build(
        BuildOptions(
            seed=3,
            banks=(str(tmp_path / "bank.yaml"),),
            out=str(tmp_path / "out"),
            pdf=False,
            roster=str(tmp_path / "roster.csv"),
            **options,
        )
    )
    return result.folder


def test_hostile_bank_and_roster_text_never_becomes_markup(tmp_path):
    folder = _class(tmp_path, HOSTILE_BANK, HOSTILE_ROSTER)
    pages = sorted(folder.glob("*.html")) + sorted(folder.glob("students/*.html"))
    assert len(pages) == 6
    for page in pages:
        text = page.read_text("utf-8")
        found = tags_of(text)
        names = [t for t, _ in found]
        assert "script" not in names and "img" not in names and "iframe" not in names, page
        assert "b" not in names, page  # the course's <b> is text
        assert names.count("style") == 1 and names.count("title") == 1, page
        assert not any(k.startswith("on") for _, attrs in found for k in attrs), page
        assert not any(v and "example.com" in v for _, attrs in found for v in attrs.values()), page
        # the text is there, as text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    own = (folder / "students" / "s1-sheet.html").read_text("utf-8")
    assert "O&#39;Brien &#34;Q&#34; &lt;/style&gt;&lt;script&gt;alert(5)" in own.replace(
        "&quot;", "&#34;"
    )


def test_math_text_cannot_close_the_math_or_open_an_element():
    out = math_html(r"\text{</math><script>alert(1)</script> & \"q\"} < y")
    found = [t for t, _ in tags_of(out)]
    assert "script" not in found and found[0] == "math"
    assert out.count("<math") == 1 and out.endswith("</math>")
    assert "&lt;/math&gt;&lt;script&gt;" in out
    # text around math is escaped, math stays MathML
    html = markup_html("a <b> & $x^2$")
    assert html.startswith("a &lt;b&gt; &amp; <math") and "<msup>" in html


def test_math_the_converter_refuses_prints_as_its_tex_source():
    out = math_html(r"\frac{1}{")  # sanitize_math closes the group: still some TeX
    assert out.startswith("<math") and "<script" not in out


def test_fixed_strings_are_whole_sentences_with_named_placeholders():
    for key, text in WORDS.items():
        assert not text.startswith(" ") and not text.endswith(" "), key
        for name in re.findall(r"\{(\w*)\}", text):
            assert name, f"{key}: placeholders are named"
    assert str(say("cell", number=2, letter="b", row="query", i=1, col="key", j=3)) == (
        "Question 2 (b): query 1, key 3"
    )
    assert str(say("sheet_title", title="<x>")) == "&lt;x&gt;"


def test_every_cell_to_fill_has_its_own_name_and_tables_have_header_cells(tmp_path):
    folder = _class(tmp_path, PLAIN_BANK, "name,id\nAda,a\n")
    sheet = (folder / "students" / "a-sheet.html").read_text("utf-8")
    found = tags_of(sheet)
    cells = [a for t, a in found if t == "input" and a.get("data-entry")]
    labels = [a["aria-label"] for a in cells]
    assert labels and len(set(labels)) == len(labels)
    assert "Question 1 (a): query 2, key 1" in labels
    assert all(t != "th" or a.get("scope") in ("col", "row") for t, a in found)
    html_tag = next(a for t, a in found if t == "html")
    assert html_tag["lang"] == "en"
    headings = [int(t[1]) for t, _ in found if re.fullmatch(r"h[1-6]", t)]
    steps = [b - a for a, b in zip(headings, headings[1:], strict=False)]
    assert headings[0] == 1 and all(step <= 1 for step in steps)
    # nothing is fetched: no src or href, and the page says so to the browser too
    assert not any(k in ("src", "href") for _, attrs in found for k in attrs)
    assert "default-src 'none'" in sheet


def test_large_print_by_the_build_and_by_a_roster_column(tmp_path):
    roster = "name,id,Large Print\nAda,a,yes\nBob,b,\n"
    folder = _class(tmp_path / "one", HOSTILE_BANK, roster)
    students = folder / "students"
    assert '<body class="large">' in (students / "a-sheet.html").read_text("utf-8")
    assert '<body class="large">' in (students / "a-key.html").read_text("utf-8")
    assert "<body>" in (students / "b-sheet.html").read_text("utf-8")
    assert "<body>" in (folder / "sheets.html").read_text("utf-8")
    every = _class(tmp_path / "all", HOSTILE_BANK, roster, large_print=True)
    for page in every.rglob("*.html"):
        assert '<body class="large">' in page.read_text("utf-8"), page
    style = (students / "a-sheet.html").read_text("utf-8")
    size = re.search(r"body\.large \{ font-size: (\d+)pt", style)
    assert size is not None and int(size.group(1)) >= 14


@pytest.mark.parametrize("cell", ["maybe", "2", "ja"])
def test_a_large_print_cell_must_say_yes_or_no(cell):
    with pytest.raises(
        RosterError, match=rf"roster.csv:3: large_print: expected yes or no .*'{cell}'"
    ):
        parse_roster(f"name,id,large_print\nAda,a,yes\nBob,b,{cell}\n")


def test_large_print_values_are_read():
    students = parse_roster("name,large print\nA,Yes\nB,0\nC,\nD,TRUE\n")
    assert [s.large_print for s in students] == [True, False, False, True]


def test_a_class_with_practice_gets_one_practice_page_per_student(tmp_path):
    folder = _class(tmp_path, PLAIN_BANK, "name,id\nAda,a\nBob,b\n", practice=True)
    own = sorted(p.name for p in (folder / "students").iterdir())
    assert own == [
        "a-key.html",
        "a-practice.html",
        "a-sheet.html",
        "b-key.html",
        "b-practice.html",
        "b-sheet.html",
    ]
    combined = (folder / "sheets.html").read_text("utf-8")
    assert "wsg-key" not in combined and "<script" not in combined  # the answers stay out
    page = (folder / "students" / "b-practice.html").read_text("utf-8")
    found = [t for t, _ in tags_of(page)]
    assert found.count("script") == 3 and "script-src 'unsafe-inline'" in page
    assert "contains the answers" not in page  # no course secret in this build


def test_math_converted_by_its_shape_equals_the_whole_conversion(monkeypatch):
    """Every sheet has the same math with other numbers: it is converted once per shape and
    the numbers put back; on every bundled bank's math that is the whole conversion."""
    from tests.solved import make_build
    from worksheetgen.pipeline.sheet import document_context, load_bank
    from worksheetgen.render import htmlmath
    from worksheetgen.render.documents import render_document
    from worksheetgen.resources import data_dir

    seen: set[tuple[str, bool]] = set()
    plain = htmlmath.math_html.__wrapped__

    def spy(tex: str, display: bool = False) -> str:
        seen.add((tex, display))
        return plain(tex, display)

    monkeypatch.setattr(htmlmath, "math_html", spy)
    for bank in sorted((data_dir("banks")).glob("*.yaml")):
        build = make_build(load_bank(BuildOptions(seed=2, banks=(str(bank),))), 2)
        for kind in ("sheet", "key"):
            render_document("html", kind, document_context(build))
    shaped = 0
    for tex, display in seen:
        mode = "block" if display else "inline"
        whole = htmlmath._converted(htmlmath.sanitize_math(tex).strip(), mode)
        assert plain(tex, display) == whole, tex
        shaped += htmlmath._shape(tex) is not None
    assert len(seen) > 200 and shaped > len(seen) * 0.8
    # where TeX reads single digits, the math is converted whole
    assert htmlmath._shape("x^12") is None and htmlmath._shape(r"\frac12") is None
    assert "<mn>12</mn>" in htmlmath.math_html("x_{12} + 0.5")


def test_converted_math_is_kept_in_the_speed_cache_and_read_back_the_same():
    from worksheetgen.render import htmlmath

    folder = htmlmath._cache_folder()
    assert folder is not None  # the tests' private cache (conftest)
    htmlmath._converted.cache_clear()
    before = set(folder.iterdir())
    first = htmlmath._converted(r"\frac{\uE000}{\sqrt{d_k}} \text{cached}", "block")
    written = set(folder.iterdir()) - before
    assert len(written) == 1
    htmlmath._converted.cache_clear()
    assert htmlmath._converted(r"\frac{\uE000}{\sqrt{d_k}} \text{cached}", "block") == first
    # an entry that is not whole is not trusted: converted again
    (entry,) = written
    entry.write_bytes(b"<math>tampered</math>")
    htmlmath._converted.cache_clear()
    assert htmlmath._converted(r"\frac{\uE000}{\sqrt{d_k}} \text{cached}", "block") == first
