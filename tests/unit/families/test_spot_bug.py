"""Spot the bug: the worked solution contains exactly the planted slip; the key corrects it."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from worksheetgen.attention import slips as mc
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import BankError
from worksheetgen.families import FAMILIES
from worksheetgen.model import SheetIdentity
from worksheetgen.render.markup import markup_md, markup_tex
from worksheetgen.solve.item import make_item

BANK = """
sheet: {id: sb}
questions:
  - id: bug
    family: spot-the-bug
"""


def head(g: dict, slip: str | None) -> tuple[list[list[float]], list[list[float]]]:
    """One attention head in plain floats with the slip (or none) applied: (A, output)."""
    q, k, v, d_k, t = g["Q"], g["K"], g["V"], g["d_k"], g["T"]
    kk = k if slip == "no-transpose" else [list(c) for c in zip(*k, strict=True)]
    s = [[sum(q[i][m] * kk[m][j] for m in range(d_k)) for j in range(len(kk[0]))] for i in range(t)]
    div = {"scale-by-dk": d_k, "no-scale": 1}.get(slip or "", math.sqrt(d_k))
    s = [[x / div for x in row] for row in s]
    if g["causal"]:
        fill = 0.0 if slip == "mask-with-zero" else -math.inf
        s = [[x if j <= i else fill for j, x in enumerate(row)] for i, row in enumerate(s)]
    if slip == "softmax-over-columns":
        cols = [[s[i][j] for i in range(t)] for j in range(t)]
        w = [soft(c) for c in cols]
        a = [[w[j][i] for j in range(t)] for i in range(t)]
    else:
        a = [soft(row) for row in s]
    mix = k if slip == "mixed-keys" else v
    out = [
        [sum(a[i][j] * mix[j][c] for j in range(t)) for c in range(len(mix[0]))] for i in range(t)
    ]
    return a, out


def soft(row: list[float]) -> list[float]:
    m = max(x for x in row if x != -math.inf)
    e = [0.0 if x == -math.inf else math.exp(x - m) for x in row]
    return [x / sum(e) for x in e]


def printed(m: list[list[float]]) -> list[list[str]]:
    return [[f"{math.floor(x * 100 + 0.5) / 100:.2f}" for x in row] for row in m]


def last_matrix(math_text: str) -> list[list[str]]:
    body = math_text.split(r"\begin{bmatrix}")[1].split(r"\end{bmatrix}")[0]
    return [[c.strip() for c in row.split("&")] for row in body.split(r"\\")]


@pytest.fixture
def spec(write_bank):
    return load_banks([write_bank(BANK)]).questions[0]


def test_spot_the_bug_is_a_registered_family():
    assert "spot-the-bug" in FAMILIES


def test_worked_solution_contains_exactly_the_planted_slip_and_the_key_corrects_it(spec):
    planted = Counter()
    for seed in range(30):
        item = make_item(spec, SheetIdentity(seed, "sb"), 1)
        g, sol = item.given, item.solution
        slip = g["slip"]
        planted[slip] += 1
        assert mc.get(slip).applies(g, {})
        shown_a = next(s for s in sol.shown_steps if s.title == "Softmax")
        shown_out = sol.shown_steps[-1]
        bad_a, bad_out = head(g, slip)
        assert last_matrix(shown_a.math) == printed(bad_a)
        assert last_matrix(shown_out.math) == printed(bad_out)
        good_a, good_out = head(g, None)
        assert sol.answer("A").rounded == printed(good_a)
        assert sol.answer("output").rounded == printed(good_out)
        assert printed(bad_out) != printed(good_out)  # the slip shows in the result
        # no other slip would have printed the same result
        for d in sol.distractors:
            if d.misconception != slip:
                assert d.rounded["output"] != printed(bad_out)
        choice = sol.answer("slip")
        assert choice.value == mc.get(slip).description
        assert choice.value in choice.options and len(choice.options) >= 3
        title = mc.get(slip).title  # the key names a slip as people do, not by its id
        assert title in choice.explanation and title in sol.steps[0].title
    assert len(planted) >= 4, planted


def test_the_scale_step_shows_what_the_student_divided_by(spec):
    seen = set()
    for seed in range(40):
        item = make_item(spec, SheetIdentity(seed, "sb"), 1)
        slip, titles = item.given["slip"], [s.title for s in item.solution.shown_steps]
        scale = [s.math for s in item.solution.shown_steps if s.title == "Scale"]
        if slip == "no-scale":
            assert "Scale" not in titles
        elif slip == "scale-by-dk":
            assert scale[0].startswith("S/2 ")
        else:
            assert scale[0].startswith(r"S/\sqrt{2}")
        seen.add(slip)
    assert {"no-scale", "scale-by-dk"} <= seen


def test_a_pinned_slip_is_always_planted_where_it_applies(write_bank):
    path = write_bank(BANK + "    params: {slip: mask-with-zero}\n")
    spec = load_banks([path]).questions[0]
    for seed in range(8):
        item = make_item(spec, SheetIdentity(seed, "sb"), 1)
        assert item.given["slip"] == "mask-with-zero" and item.given["causal"] is True


def test_a_pinned_slip_that_cannot_apply_is_a_bank_error(write_bank):
    path = write_bank(BANK + "    params: {slip: mask-with-zero, causal: false}\n")
    with pytest.raises(BankError, match="expected causal: true"):
        load_banks([path])
    path = write_bank(BANK + "    params: {slip: no-transpose, T: 3}\n", name="b2.yaml")
    with pytest.raises(BankError, match="expected T = d_k = 2"):
        load_banks([path])


def test_the_sheet_shows_the_buggy_work_and_the_key_names_the_slip(spec, write_bank):
    from tests.solved import make_build, render_all

    build = make_build(load_banks([write_bank(BANK)]), 3)
    docs = render_all(build)
    slip = mc.get(build.sheets[0].items[0].given["slip"])
    assert "The worked solution to check:" in docs["sheet.tex"]
    assert "**The worked solution to check:**" in docs["sheet.md"]
    # the key names the slip by its name, its math typeset, never by its id
    said = {"key.tex": markup_tex(slip.title), "key.md": markup_md(slip.title)}
    for doc, name in said.items():
        assert f"The slip: {name}." in docs[doc]
        assert f"The slip is {slip.name}" not in docs[doc]
    assert "The slip: " not in docs["sheet.tex"] + docs["sheet.md"]
