"""The HTML sheets and keys in a real browser: Debian's headless Chromium, driven through
the DevTools protocol by Playwright (no browser of its own is downloaded).

Every bundled bank's sheet.html and key.html opens with no console error and no request
(the page's Content-Security-Policy is bypassed, so anything it referred to would really be
asked for), the accessibility tree names every cell to fill as the page labels it, and at
200% zoom nothing is wider than the window (a wide table scrolls in its own box). The
pictures of the pages are written for a person to look at (``WSG_HTML_SHOTS=folder``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import BANKS, launched, needs_chromium
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launched()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every bundled bank's lone sheet, and a class of three (one in large print)."""
    out = tmp_path_factory.mktemp("html")
    found = {}
    for bank in BANKS:
        result = build(
            BuildOptions(
                seed=1, banks=(str(ROOT / "banks" / f"{bank}.yaml"),), out=str(out), pdf=False
            )
        )
        for kind in ("sheet", "key"):
            found[f"{bank}-{kind}"] = result.folder / f"{kind}.html"
    roster = out / "roster.csv"
    roster.write_text(
        'name,id,large_print\n"Zoë O\'Brien </style>",z1,yes\nAda,a1,\n"李 小龍",c1,no\n',
        encoding="utf-8",
    )
    result = build(
        BuildOptions(
            seed=2,
            banks=(str(ROOT / "banks" / "slips.yaml"),),
            out=str(out),
            pdf=False,
            roster=str(roster),
        )
    )
    found["class-sheets"] = result.folder / "sheets.html"
    found["class-keys"] = result.folder / "keys.html"
    found["large-sheet"] = result.folder / "students" / "z1-sheet.html"
    return found


def _open(browser, path: Path, zoom: int = 100):
    """A page opened at a zoom (200: a 1280-pixel window at 200%), with what it logged and
    requested."""
    width = 1280 * 100 // zoom
    context = browser.new_context(
        bypass_csp=True,
        viewport={"width": width, "height": 900},
        device_scale_factor=zoom / 100,
    )
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    return context, page, errors, requests


def _shot(page, name: str) -> None:
    folder = os.environ.get("WSG_HTML_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("name", [f"{b}-{k}" for b in BANKS for k in ("sheet", "key")])
def test_every_bundled_banks_page_opens_clean_and_asks_for_nothing(browser, pages, name):
    context, page, errors, requests = _open(browser, pages[name])
    try:
        assert errors == []
        assert requests == [pages[name].as_uri()]
        assert page.title() and page.locator("h1").count() == 1
        assert page.locator("math").count() > 0
        _shot(page, f"{name}-100")
    finally:
        context.close()


def _ax_names(page) -> dict[str, list[str]]:
    """The accessibility tree's names of the page's text boxes and radio buttons."""
    session = page.context.new_cdp_session(page)
    tree = session.send("Accessibility.getFullAXTree")
    named: dict[str, list[str]] = {}
    for node in tree["nodes"]:
        role = node.get("role", {}).get("value")
        if role in ("textbox", "radio"):
            named.setdefault(role, []).append(node.get("name", {}).get("value", ""))
    return named


@pytest.mark.parametrize("name", [f"{b}-sheet" for b in BANKS] + ["class-sheets"])
def test_the_accessibility_tree_names_every_cell_to_fill(browser, pages, name):
    context, page, errors, _ = _open(browser, pages[name])
    try:
        wanted = page.eval_on_selector_all(
            "[data-entry]:not([type=radio])",
            "els => els.map(e => e.getAttribute('aria-label'))",
        )
        assert wanted and all(wanted)
        named = _ax_names(page)
        boxes = [n for n in named.get("textbox", []) if n.startswith("Question ")]
        assert sorted(boxes) == sorted(wanted)
        # every cell of a table is named by its own row and column
        if name != "class-sheets":
            assert len(set(boxes)) == len(boxes)
        # radio buttons (multiple choice) are named by their option's text
        assert all(named.get("radio", []))
        # header cells are the tables' own: every cell to fill sits in a row with one
        rows = page.eval_on_selector_all(
            "table.answer tbody tr",
            "rs => rs.map(r => r.querySelectorAll('th[scope=row]').length"
            " + r.querySelectorAll('td:first-child:empty').length)",
        )
        assert all(r == 1 for r in rows)
    finally:
        context.close()


@pytest.mark.parametrize("name", ["default-sheet", "note-key", "slips-key", "large-sheet"])
def test_at_200_percent_nothing_is_clipped_and_wide_tables_scroll_in_their_box(
    browser, pages, name
):
    context, page, errors, _ = _open(browser, pages[name], zoom=200)
    try:
        assert errors == []
        width = page.evaluate("document.documentElement.scrollWidth")
        inner = page.evaluate("window.innerWidth")
        assert width <= inner, f"the page is {width}px wide in a {inner}px window"
        # every table is inside its own scrolling box or fits
        loose = page.evaluate(
            """() => [...document.querySelectorAll('table')].filter(t =>
                t.getBoundingClientRect().right > window.innerWidth + 1 &&
                !t.closest('.scroll')).length"""
        )
        assert loose == 0
        _shot(page, f"{name}-200")
    finally:
        context.close()


def test_large_print_is_at_least_14_points_with_cells_to_match(browser, pages):
    context, page, _, _ = _open(browser, pages["large-sheet"])
    try:
        body = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert body * 72 / 96 >= 14  # CSS pixels to points
        cell = page.evaluate(
            "parseFloat(getComputedStyle(document.querySelector('input.cell')).fontSize)"
        )
        assert cell >= body
        height = page.evaluate(
            "document.querySelector('input.cell').getBoundingClientRect().height"
        )
        assert height >= body * 1.2
        _shot(page, "large-sheet-100")
    finally:
        context.close()


def test_minus_infinity_is_set_as_a_sign_not_a_binary_minus(browser, pages):
    """A masked cell's −∞ (and ``= -\\infty`` in the worked steps) is spaced as TeX spaces
    it: no gap between the sign and ∞, where the binary minus of ``a - b`` has one on each
    side (issue 37: MathML spaced it as a subtraction)."""
    gaps: list[float] = []
    for name in ("default-key", "quiz-key", "class-keys"):
        context, page, _, _ = _open(browser, pages[name])
        try:
            gaps += page.evaluate(
                """() => [...document.querySelectorAll('math mi, math mo')]
                  .filter(mi => mi.textContent.trim() === '∞')
                  .map(mi => {
                    const sign = mi.previousElementSibling;
                    if (!sign || sign.textContent.trim() !== '−') return null;
                    const em = parseFloat(getComputedStyle(mi).fontSize);
                    return (mi.getBoundingClientRect().left
                            - sign.getBoundingClientRect().right) / em;
                  })
                  .filter(gap => gap !== null)"""
            )
        finally:
            context.close()
    assert len(gaps) > 10  # the keys hold masked cells
    assert max(gaps) < 0.05, max(gaps)
