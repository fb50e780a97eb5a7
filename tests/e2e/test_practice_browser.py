"""The practice pages in a real browser (Debian's headless Chromium through Playwright).

Their script is grade's rule ported to JavaScript; here it is run against Python's own
judgement (``grading.score``) on many entries of every bundled bank: the key's answers, every
slip's values, values just inside and just outside the margin, −∞ in every spelling grade
reads, blanks, and carried-forward values worked from a wrong earlier answer. Then the page is
used as a student would: typing, Check, the worked steps, and progress kept on reload."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.browser import BANKS, launched, needs_chromium
from worksheetgen.errors import UsageError
from worksheetgen.exact.kinds import NUMERIC_KINDS
from worksheetgen.exact.masked import MASKED_SPELLINGS
from worksheetgen.grading.key import QuestionKey, load_key
from worksheetgen.grading.responses import ResponseCell, _parse_number, _RowError
from worksheetgen.grading.score import _close, _grade_question
from worksheetgen.pipeline.build import build
from worksheetgen.pipeline.options import BuildOptions

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every bundled bank's lone sheet with its practice page (the folder, by bank)."""
    out = tmp_path_factory.mktemp("practice")
    return {
        bank: build(
            BuildOptions(
                seed=5,
                banks=(str(ROOT / "banks" / f"{bank}.yaml"),),
                out=str(out),
                pdf=False,
                practice=True,
            )
        ).folder
        for bank in BANKS
    }


def _page(browser: Any, path: Path) -> tuple[Any, Any, list[str]]:
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "request", lambda r: errors.append(f"request {r.url}") if r.url != path.as_uri() else None
    )
    page.goto(path.as_uri(), wait_until="load")
    return context, page, errors


# ---------------------------------------------------------------- the rule, against Python

NUMBER_TEXTS = [
    "0.5",
    " 0.50 ",
    "-0.5",
    "−0.5",
    "+.5",
    "5.",
    "1e-3",
    "1E3",
    "1/2",
    "-3 / 4",
    "2/0",
    "1,5",
    "2 359 296",
    "0.123 45",
    "12 34",
    "abc",
    "",
    "   ",
    "0x10",
    "1e400",
    "−inf",
    "-INF",
    "masked",
    "Masked",
    "-∞",
    "−∞",
    "-infinity",
    "−Infinity",
    "inf",
    "-oo",
    "∞",
    "٣",
    "1_000",
    "99999999999999999999/3",
    "-12345678901234567890123/7",
    "00.10",
    "+0",
    "-0",
]


def _python_number(text: str) -> str:
    """What grade reads in an entry, as the page's script says it: "blank", "null" (no
    number grade can read), or the number."""
    if not text.strip():
        return "blank"
    try:
        x = _parse_number(text)
    except _RowError:
        return "null"
    return "null" if x is None else "-Infinity" if x == -math.inf else repr(x)


def test_numbers_are_read_as_grade_reads_them(browser, built):
    context, page, errors = _page(browser, built["default"] / "practice.html")
    try:
        js = page.evaluate(
            "ts => ts.map(t => { const x = WSG.parseNumber(t);"
            " return x === null ? 'null' : Number.isNaN(x) ? 'blank' : String(x); })",
            NUMBER_TEXTS,
        )
        for text, got in zip(NUMBER_TEXTS, js, strict=True):
            assert got == _python_number(text) or (
                got not in ("null", "blank") and float(got) == float(_python_number(text))
            ), text
        assert errors == []
    finally:
        context.close()


def test_the_margin_is_grades_on_many_values(browser, built):
    rng = random.Random(37)
    cases = []
    for _ in range(3000):
        expected = rng.choice([rng.uniform(-5, 5), round(rng.uniform(-5, 5), 2), -math.inf, 0.0])
        tol = rng.choice([0.0, 0.005, 0.01, 0.023, 0.5])
        if math.isinf(expected):
            got = rng.choice([-math.inf, -1e9, 0.0])
        else:
            got = expected + rng.choice([1, -1]) * tol * rng.choice(
                [0, 0.5, 0.999999, 1, 1.000001, 2]
            )
            got = rng.choice([got, round(got, 2), round(got, 3)])
        cases.append((expected, got, tol))
    context, page, _ = _page(browser, built["default"] / "practice.html")
    try:
        payload = [
            ["-inf" if math.isinf(e) else e, "-inf" if math.isinf(g) else g, t] for e, g, t in cases
        ]
        js = page.evaluate(
            "cs => cs.map(c => WSG.close(c[0] === '-inf' ? -Infinity : c[0],"
            " c[1] === '-inf' ? -Infinity : c[1], c[2]))",
            payload,
        )
        for (e, g, t), ok in zip(cases, js, strict=True):
            assert ok == bool(_close(np.array([[e]]), np.array([[g]]), t)[0, 0]), (e, g, t)
    finally:
        context.close()


def _scenarios(q: QuestionKey, rng: random.Random) -> list[dict[str, Any]]:
    """Whole questions as a student might answer them: the key, each slip's values (for one
    part, and for every part), the key moved inside and outside its margin, blanks, −∞ in
    other spellings, and a wrong first part with later parts worked from it."""

    def key_values() -> dict[str, Any]:
        return {a.name: (a.grid.tolist() if a.grid is not None else a.text) for a in q.answers}

    out = [key_values()]
    for s in q.slips:
        every = key_values()
        for name, g in s.grids.items():
            one = key_values()
            one[name] = g.tolist()
            out.append(one)
            every[name] = g.tolist()
        out.append(every)
    numeric = [a for a in q.answers if a.grid is not None]
    for _ in range(6):
        moved = key_values()
        for a in numeric:
            step = max(a.tolerance, 0.005) * rng.choice([0.5, 0.99, 1.01, 1.6, 3])
            moved[a.name] = [
                [
                    x if math.isinf(x) or rng.random() < 0.5 else x + rng.choice([1, -1]) * step
                    for x in row
                ]
                for row in a.grid.tolist()
            ]
        out.append(moved)
    blank = key_values()
    for a in numeric[:1]:
        blank[a.name] = [
            [None if j == 0 else x for j, x in enumerate(row)] for row in a.grid.tolist()
        ]
    out.append(blank)
    if numeric and q.slips:
        # a slip in the first part, then the later parts worked from that wrong value (the
        # slip's own later values are exactly such work)
        first = numeric[0]
        for s in q.slips:
            if first.name in s.grids:
                carried = {**key_values(), **{n: g.tolist() for n, g in s.grids.items()}}
                out.append(carried)
    return out


def _cells(values: Any) -> list[list[Any]]:
    return (
        values if isinstance(values, list) and values and isinstance(values[0], list) else [values]
    )


def _python(q: QuestionKey, scenario: dict[str, Any]) -> list[dict[str, Any]]:
    got: dict[str, dict[tuple[int, int], ResponseCell]] = {}
    for a in q.answers:
        v = scenario[a.name]
        if a.kind in NUMERIC_KINDS:
            got[a.name] = {
                (i, j): ResponseCell(1, str(x), float(x))
                for i, row in enumerate(v)
                for j, x in enumerate(row)
                if x is not None
            }
        elif a.kind == "choice" and v is not None:
            got[a.name] = {(0, 0): ResponseCell(1, str(v), " ".join(str(v).casefold().split()))}
    result = _grade_question(q, got, q.carry, {})
    return [
        {
            "right": p.right,
            "carried": p.carried,
            "slips": sorted(s.misconception for s in p.slips),
            "sources": list(p.carried_from),
        }
        for p, a in zip(result.parts, q.answers, strict=True)
        if a.kind in NUMERIC_KINDS or a.kind == "choice"
    ]


JS_GRADE = """([n, scenario]) => {
  const q = WSG.key.questions.find(x => x.number === n);
  const vals = {}, full = {}, out = [];
  for (const a of q.answers) {
    const v = scenario[a.name];
    if (a.kind === 'choice') {
      const r = WSG.gradeChoice(q, a, v === null ? null : String(v), vals, full, q.carry);
      out.push({right: r.ok ? 1 : 0, carried: r.carried ? 1 : 0,
                slips: r.slips.map(s => s.name).sort(), sources: r.sources});
    } else if (a.grid) {
      const got = v.map(row => row.map(x => x === null ? NaN : x === '-inf' ? -Infinity : x));
      const r = WSG.gradeNumeric(q, a, got, vals, full, q.carry);
      const count = m => m.flat().filter(Boolean).length;
      out.push({right: count(r.right), carried: count(r.carried),
                slips: r.slips.map(s => s.name).sort(), sources: r.sources});
    }
  }
  return out;
}"""


def _json_cells(v: Any) -> Any:
    if isinstance(v, list):
        return [_json_cells(x) for x in v]
    if isinstance(v, float) and math.isinf(v):
        return "-inf"
    return v


@pytest.mark.parametrize("bank", BANKS)
def test_every_question_is_judged_as_grade_judges_it(browser, built, bank):
    key = load_key(built[bank] / "key.json")
    (sheet,) = key.sheets
    rng = random.Random(bank)
    context, page, errors = _page(browser, built[bank] / "practice.html")
    compared = 0
    try:
        for q in sheet.questions:
            for scenario in _scenarios(q, rng):
                want = _python(q, scenario)
                got = page.evaluate(JS_GRADE, [q.number, _json_cells(scenario)])
                assert got == want, (bank, q.number, scenario)
                compared += 1
        assert errors == []
    finally:
        context.close()
    assert compared > 20


# ---------------------------------------------------------------- as a student uses it


def _type_values(page: Any, n: int, name: str, values: Any) -> None:
    for i, row in enumerate(_cells(values), start=1):
        for j, x in enumerate(row, start=1):
            text = (
                "" if x is None else "-inf" if isinstance(x, float) and math.isinf(x) else repr(x)
            )
            page.locator(f'[data-q="{n}"][data-answer="{name}"][data-r="{i}"][data-c="{j}"]').fill(
                text
            )


def _answer_with_key(page: Any, q: QuestionKey) -> None:
    for a in q.answers:
        if a.grid is not None:
            values = a.grid.tolist()
            _type_values(page, q.number, a.name, values if a.kind == "matrix" else [values[0]])
        elif a.kind == "choice":
            radios = page.locator(f'input[type=radio][data-q="{q.number}"][data-answer="{a.name}"]')
            for k in range(radios.count()):
                if _norm(radios.nth(k).get_attribute("value")) == _norm(a.text):
                    radios.nth(k).check()


def _norm(text: Any) -> str:
    return " ".join(str(text).casefold().split())


def _states(page: Any, q: QuestionKey) -> dict[str, str]:
    page.click(f'button[data-check="{q.number}"]')
    return {
        a.name: page.get_attribute(f"#v-{q.number}-{a.name}", "data-state") or ""
        for a in q.answers
        if a.kind != "text"
    }


@pytest.mark.parametrize("bank", BANKS)
def test_typing_the_keys_answers_is_right_everywhere(browser, built, bank):
    (sheet,) = load_key(built[bank] / "key.json").sheets
    context, page, errors = _page(browser, built[bank] / "practice.html")
    try:
        for q in sheet.questions:
            _answer_with_key(page, q)
            assert set(_states(page, q).values()) <= {"right"}, q.number
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("bank", BANKS)
def test_each_slip_typed_is_named_with_how_to_avoid_it(browser, built, bank):
    (sheet,) = load_key(built[bank] / "key.json").sheets
    context, page, errors = _page(browser, built[bank] / "practice.html")
    named = 0
    try:
        for q in sheet.questions:
            for s in q.slips:
                for name, g in s.grids.items():
                    a = q.answer(name)
                    if a is None or bool(_close(a.grid, g, a.tolerance).all()):
                        continue  # this slip gives the right value for this part
                    _answer_with_key(page, q)
                    values = g.tolist()
                    _type_values(
                        page, q.number, name, values if a.kind == "matrix" else [values[0]]
                    )
                    states = _states(page, q)
                    assert states[name] == "wrong"
                    box = page.locator(f"#v-{q.number}-{name}")
                    assert box.locator(f'[data-slip="{s.misconception}"]').count() == 1, (
                        bank,
                        q.number,
                        name,
                        s.misconception,
                        box.inner_text(),
                    )
                    named += 1
            for a in q.answers:
                if a.kind == "choice" and a.choice_slips:
                    for label, m in a.choice_slips:
                        radios = page.locator(
                            f'input[type=radio][data-q="{q.number}"][data-answer="{a.name}"]'
                        )
                        for k in range(radios.count()):
                            if radios.nth(k).get_attribute("value").casefold() == label:
                                radios.nth(k).check()
                        assert _states(page, q)[a.name] == "wrong"
                        assert (
                            page.locator(f'#v-{q.number}-{a.name} [data-slip="{m}"]').count() == 1
                        )
                        named += 1
        assert errors == []
    finally:
        context.close()
    assert named > 0


def _masked_answer(built: dict[str, Path]) -> tuple[str, QuestionKey, Any] | None:
    for bank in BANKS:
        (sheet,) = load_key(built[bank] / "key.json").sheets
        for q in sheet.questions:
            for a in q.answers:
                if a.grid is not None and np.isinf(a.grid).any():
                    return bank, q, a
    return None


def test_minus_infinity_in_every_spelling_grade_reads_is_right(browser, built):
    found = _masked_answer(built)
    assert found is not None, "some bundled bank masks a score"
    bank, q, a = found
    i, j = map(int, np.argwhere(np.isinf(a.grid))[0])
    context, page, errors = _page(browser, built[bank] / "practice.html")
    try:
        _answer_with_key(page, q)
        cell = page.locator(
            f'[data-q="{q.number}"][data-answer="{a.name}"][data-r="{i + 1}"][data-c="{j + 1}"]'
        )
        for spelling in (*MASKED_SPELLINGS, "-INF", " -inf ", "Masked"):
            cell.fill(spelling)
            assert _states(page, q)[a.name] == "right", spelling
        cell.fill("0")
        assert _states(page, q)[a.name] == "wrong"
        assert errors == []
    finally:
        context.close()


def test_inside_and_outside_the_margin_an_empty_entry_and_text(browser, built):
    (sheet,) = load_key(built["default"] / "key.json").sheets
    q = sheet.questions[0]
    a = next(a for a in q.answers if a.grid is not None and a.tolerance > 0)
    context, page, errors = _page(browser, built["default"] / "practice.html")
    try:
        _answer_with_key(page, q)
        cell = page.locator(
            f'[data-q="{q.number}"][data-answer="{a.name}"][data-r="1"][data-c="1"]'
        )
        x = float(a.grid[0, 0])
        cell.fill(repr(x + a.tolerance * 0.9))
        assert _states(page, q)[a.name] == "right"
        cell.fill(repr(x + a.tolerance * 1.2 + 1e-6))
        assert _states(page, q)[a.name] == "wrong"
        cell.fill("")
        assert _states(page, q)[a.name] == "blank"
        assert "still empty" in page.inner_text(f"#v-{q.number}-{a.name}")
        cell.fill("twelve")
        assert "Not a number" in (_states(page, q) and page.inner_text(f"#v-{q.number}-{a.name}"))
        assert errors == []
    finally:
        context.close()


def test_worked_steps_one_at_a_time_and_progress_kept_in_the_browser(browser, built):
    context, page, errors = _page(browser, built["default"] / "practice.html")
    try:
        steps = page.locator("#w-1 li")
        total = steps.count()
        assert total >= 2 and page.locator("#w-1 li:not([hidden])").count() == 0
        page.click('button[data-reveal="1"]')
        assert page.locator("#w-1 li:not([hidden])").count() == 1
        page.click('button[data-reveal="1"]')
        assert page.locator("#w-1 li:not([hidden])").count() == 2
        first = page.locator("[data-entry]:not([type=radio])").first
        first.fill("0.42")
        page.reload(wait_until="load")
        assert page.locator("[data-entry]:not([type=radio])").first.input_value() == "0.42"
        assert page.locator("#w-1 li:not([hidden])").count() == 2
        assert errors == []
    finally:
        context.close()


# ---------------------------------------------------------------- the course secret


def test_a_build_with_a_course_secret_writes_practice_only_when_asked(tmp_path):
    options = BuildOptions(
        seed=1, out=str(tmp_path / "out"), pdf=False, practice=True, secret=b"s" * 32
    )
    with pytest.raises(UsageError, match="--practice: expected a build without a course secret"):
        build(options)
    assert not (tmp_path / "out").exists()
    from dataclasses import replace

    with pytest.raises(UsageError, match="--practice-despite-secret: expected --practice too"):
        build(replace(options, practice=False, practice_despite_secret=True))
    result = build(replace(options, practice_despite_secret=True))
    page = (result.folder / "practice.html").read_text("utf-8")
    assert "Practice copy: contains the answers." in page
    plain = build(replace(options, secret=None, out=str(tmp_path / "plain")))
    assert "contains the answers" not in (plain.folder / "practice.html").read_text("utf-8")
    data = json.loads(page.split('id="wsg-key">', 1)[1].split("</script>", 1)[0])
    assert data["questions"] and "<" not in page.split('id="wsg-key">', 1)[1].split("</script>")[0]
    _ = Fraction  # (grade's shares are exact; the page only says right or wrong)


# ---------------------------------------------------------------- a decimal comma

#: entries a student of a sheet printed with a decimal comma may type: commas and points
#: as decimal separators, and numbers with two separators (never read as thousands)
COMMA_TEXTS = [
    "0,25",
    "0.25",
    "−1,5",
    "-1.5",
    ",5",
    "5,",
    "1,234",
    "1.234,5",
    "1,234.5",
    "1,234,567",
    "2 359 296",
    "0,123 45",
    "1,5e3",
    "1/2",
    "abc",
    "",
]


def _python_comma_number(text: str) -> str:
    if not text.strip():
        return "blank"
    x = _parse_number(text, comma=True)
    return "null" if x is None else "-Infinity" if x == -math.inf else repr(x)


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default bank's lone sheet built in German (a decimal comma), with its practice
    page."""
    out = tmp_path_factory.mktemp("practice-de")
    return build(BuildOptions(seed=5, out=str(out), pdf=False, practice=True, language="de")).folder


def test_a_comma_sheets_page_reads_numbers_as_grade_reads_them(browser, german):
    """A decimal comma (0,25) and a point are read as grade reads them for a key printed with
    commas; 1,234 is 1.234, and a number with two separators is no number."""
    context, page, errors = _page(browser, german / "practice.html")
    try:
        js = page.evaluate(
            "ts => ts.map(t => { const x = WSG.parseNumber(t);"
            " return x === null ? 'null' : Number.isNaN(x) ? 'blank' : String(x); })",
            COMMA_TEXTS,
        )
        want = [_python_comma_number(t) for t in COMMA_TEXTS]
        assert [
            g if g in ("null", "blank") else repr(float(g)) if w not in ("null", "blank") else g
            for g, w in zip(js, want, strict=True)
        ] == want
        assert want[:4] == ["0.25", "0.25", "-1.5", "-1.5"]
        assert want[6:10] == ["1.234", "null", "null", "null"]
        assert errors == []
    finally:
        context.close()


def test_typing_the_keys_answers_with_commas_is_right(browser, german):
    """Every number of the key typed as the German sheet prints it (0,25) is right."""
    (sheet,) = load_key(german / "key.json").sheets
    context, page, errors = _page(browser, german / "practice.html")
    typed = 0
    try:
        for q in sheet.questions:
            for a in q.answers:
                if a.kind == "choice":
                    radios = page.locator(
                        f'input[type=radio][data-q="{q.number}"][data-answer="{a.name}"]'
                    )
                    for k in range(radios.count()):
                        if _norm(radios.nth(k).get_attribute("value")) == _norm(a.text):
                            radios.nth(k).check()
                if a.grid is None:
                    continue
                values = a.grid.tolist()
                for i, row in enumerate(values if a.kind == "matrix" else [values[0]], 1):
                    for j, x in enumerate(row, 1):
                        text = "-inf" if math.isinf(x) else repr(x).replace(".", ",")
                        typed += "," in text
                        page.locator(
                            f'[data-q="{q.number}"][data-answer="{a.name}"]'
                            f'[data-r="{i}"][data-c="{j}"]'
                        ).fill(text)
            assert set(_states(page, q).values()) <= {"right"}, q.number
        assert errors == []
    finally:
        context.close()
    assert typed > 5
