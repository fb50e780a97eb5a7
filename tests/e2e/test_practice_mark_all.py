"""A mark-all-that-apply question on the HTML sheet and the practice page, in a real browser:
its options are checkboxes, and Check judges the set ticked by grade's rule
(``grading.score.multi_share``), kept on reload."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import launched, needs_chromium
from worksheetgen.grading.key import load_key, norm_text
from worksheetgen.grading.score import multi_share
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("practice-mark-all")
    options = BuildOptions(
        seed=7,
        banks=(str(ROOT / "tests" / "fixtures" / "mark-all.yaml"),),
        out=str(out),
        pdf=False,
        practice=True,
    )
    return build(options).folder


def test_the_sheets_options_are_checkboxes(folder: Path):
    sheet = (folder / "sheet.html").read_text(encoding="utf-8")
    assert sheet.count('type="checkbox" name="q1a"') == 5
    assert sheet.count('type="checkbox" name="q2a"') == 4
    assert "Question 1 (a): mark all that apply" in sheet
    assert 'type="radio" name="q3a"' in sheet  # the pick-one question stays pick-one


def test_check_judges_every_set_as_grade_does(browser: Any, folder: Path):
    key = load_key(folder / "key.json")
    (sheet,) = key.sheets
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / "practice.html").as_uri(), wait_until="load")
    for q in sheet.questions[:2]:
        ans = q.answers[0]
        boxes = page.locator(f'input[name="q{q.number}a"]')
        assert boxes.count() == len(ans.options)
        for marks in itertools.product((False, True), repeat=len(ans.options)):
            for i, m in enumerate(marks):
                boxes.nth(i).set_checked(m)
            page.click(f'button[data-check="{q.number}"]')
            said = page.locator(f"#v-{q.number}-{ans.name}").inner_text()
            chosen = frozenset(norm_text(o) for o, m in zip(ans.options, marks, strict=True) if m)
            share = multi_share(ans, chosen)
            if not chosen:
                assert "Nothing entered yet" in said
            elif chosen == frozenset(ans.right):
                assert "Right." in said
            elif share > 0:
                assert f"{round(float(share) * 100)} percent of its points" in said, said
            else:
                assert "Not right." in said
    # the ticks are kept on reload
    boxes = page.locator('input[name="q1a"]')
    for i in range(5):
        boxes.nth(i).set_checked(i in (0, 2))
    page.reload(wait_until="load")
    boxes = page.locator('input[name="q1a"]')
    assert [boxes.nth(i).is_checked() for i in range(5)] == [True, False, True, False, False]
    assert errors == []
    context.close()
