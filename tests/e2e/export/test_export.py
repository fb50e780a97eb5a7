"""LMS export: Moodle XML, GIFT and Canvas QTI, parsed back and checked number by number.

Two sources of keys: a real build of the note's practice bank (numbers checked against
values computed here with math.exp, independently of the build's SymPy/mpmath), and a
hand-made key.json with masked cells, a tiny probability, distractors and a multiple-choice
item (the contract of issue 2 and 3), whose numbers are also computed here by hand.
"""

from __future__ import annotations

import html as htmllib
import io
import json
import math
import re
import xml.etree.ElementTree as ET
import zipfile
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import ROOT
from worksheetgen.cli import main

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


WORKED = math.exp(math.sqrt(2)) / (1 + math.exp(math.sqrt(2)))  # note: A[0][0] ≈ 0.80


TINY = 1 / (1 + math.exp(8))  # softmax([-4, 4])[0] ≈ 0.000335, printed 0.00


BIG = 1 - TINY


PROMPT = r"Scores {S}: note = # ~ & <tag> \ backslash, with $S = QK^\top$ and $\neq$."


def _question_p(value: float, printed: str, slip: float, slip_printed: str) -> dict:
    """One softmax probability (a scalar), with the no-scale slip as a distractor."""
    return {
        "id": "q-prob",
        "number": 1,
        "family": "scaling",
        "title": "One probability",
        "points": 2,
        "decimals": 2,
        "format": "open",
        "prompt": PROMPT,
        "given": {"row": [2, 0], "d_k": 2},
        "shown": [
            {"label": "s", "kind": "vector", "value": ["2", "0"]},
            {"label": "d_k", "kind": "scalar", "value": "2"},
        ],
        "parts": [{"prompt": "Softmax the scaled row: write $p_1$.", "answer": "p"}],
        "labels": {"p": "p_1"},
        "answer": {"p": value},
        "rounded": {"p": printed},
        "kinds": {"p": "scalar"},
        "tolerance": {"p": 0.005},
        "exact": {"p": "exp(sqrt(2))/(1 + exp(sqrt(2)))"},
        "distractors": [
            {
                "misconception": "no-scale",
                "description": "Skips the scale.",
                "answer": {"p": slip},
                "rounded": {"p": slip_printed},
            }
        ],
    }


def _question_mask() -> dict:
    """A causal table with a masked cell, then A with a tiny probability."""
    a_slip = [[math.exp(2) / (math.exp(2) + 1), 1 / (math.exp(2) + 1)], [TINY, BIG]]
    return {
        "id": "q-mask",
        "number": 2,
        "family": "causal",
        "title": None,
        "points": 4,
        "decimals": 2,
        "format": "open",
        "prompt": "Mask, then softmax.",
        "given": {"S": [[2, 0], [-4, 4]], "causal": True},
        "shown": [{"label": "S", "kind": "matrix", "value": [["2", "0"], ["-4", "4"]]}],
        "parts": [
            {
                "prompt": "Write the masked scores.",
                "answer": "masked",
                "row_label": "query",
                "col_label": "key",
            },
            {"prompt": "Write $A$.", "answer": "A", "row_label": "query", "col_label": "key"},
        ],
        "labels": {"masked": r"\text{masked}", "A": "A"},
        "answer": {"masked": [[2.0, "-inf"], [-4.0, 4.0]], "A": [[1.0, 0.0], [TINY, BIG]]},
        "rounded": {
            "masked": [["2.00", "-inf"], ["-4.00", "4.00"]],
            "A": [["1.00", "0.00"], ["0.00", "1.00"]],
        },
        "kinds": {"masked": "matrix", "A": "matrix"},
        "tolerance": {"masked": 0.005, "A": 0.01},
        "distractors": [
            {
                "misconception": "mask-with-zero",
                "description": "Masks with 0 instead of -inf.",
                "answer": {"masked": [[2.0, 0.0], [-4.0, 4.0]], "A": a_slip},
                "rounded": {
                    "masked": [["2.00", "0.00"], ["-4.00", "4.00"]],
                    "A": [["0.88", "0.12"], ["0.00", "1.00"]],
                },
            }
        ],
    }


def _question_mc() -> dict:
    """A multiple-choice item: the options are the slips' results, the correct one is B."""
    return {
        "id": "q-mc",
        "number": 3,
        "family": "softmax",
        "title": "Pick A",
        "points": 1,
        "decimals": 2,
        "format": "choice",
        "prompt": "Which is $A$?",
        "given": {"S": [[2, 0], [0, 2]], "d_k": 2},
        "parts": [{"prompt": "Which of these is $A$?", "answer": "A"}],
        "answer": {"A": [[WORKED, 1 - WORKED], [1 - WORKED, WORKED]]},
        "rounded": {"A": [["0.80", "0.20"], ["0.20", "0.80"]]},
        "kinds": {"A": "matrix"},
        "tolerance": {"A": 0.01},
        "distractors": [
            {
                "misconception": "no-scale",
                "description": "Skips the scale.",
                "answer": {},
                "rounded": {},
            },
            {
                "misconception": "scale-by-dk",
                "description": "Divides by d_k.",
                "answer": {},
                "rounded": {},
            },
        ],
        "choices": [
            {
                "label": "A",
                "text": r"\begin{bmatrix} 0.88 & 0.12 \\ 0.12 & 0.88 \end{bmatrix}",
                "correct": False,
                "misconception": "no-scale",
            },
            {
                "label": "B",
                "text": r"\begin{bmatrix} 0.80 & 0.20 \\ 0.20 & 0.80 \end{bmatrix}",
                "correct": True,
                "misconception": None,
            },
            {
                "label": "C",
                "text": r"\begin{bmatrix} 0.73 & 0.27 \\ 0.27 & 0.73 \end{bmatrix}",
                "correct": False,
                "misconception": "scale-by-dk",
            },
        ],
        "choice_answer": "B",
    }


def _question_words() -> dict:
    """A pick-one answer and a written answer (graded by hand)."""
    return {
        "id": "q-words",
        "number": 4,
        "family": "scale-effect",
        "title": "Why scale",
        "points": 3,
        "decimals": 2,
        "format": "open",
        "prompt": "Think about the scale.",
        "given": {"d_k": 64},
        "parts": [
            {"prompt": "Which softmax is more peaked?", "answer": "peaked"},
            {"prompt": "Why divide by $\\sqrt{d_k}$?", "answer": "why"},
        ],
        "answer": {
            "peaked": "without the scale",
            "why": "The variance of $q \\cdot k$ grows like $d_k$.",
        },
        "rounded": {"peaked": "without the scale", "why": "The variance grows like d_k."},
        "kinds": {"peaked": "choice", "why": "text"},
        "options": {"peaked": ["without the scale", "with the scale", "equally peaked"]},
        "distractors": [],
    }


def fixture_key() -> dict:
    """Two sheets (two variants per question); sheet 2 has a different probability."""
    p2 = math.exp(1) / (1 + math.exp(1))  # softmax([2, 0] / sqrt(4))[0] ≈ 0.7311
    s1 = [
        _question_p(WORKED, "0.80", math.exp(2) / (1 + math.exp(2)), "0.88"),
        _question_mask(),
        _question_mc(),
        _question_words(),
    ]
    s2 = [
        _question_p(p2, "0.73", math.exp(2) / (1 + math.exp(2)), "0.88"),
        _question_mask(),
        _question_mc(),
        _question_words(),
    ]
    return {
        "format": "worksheetgen-key",
        "version": 1,
        "seed": 7,
        "title": "Fixture sheet",
        "course": "Note 3.2",
        "sheets": [
            {"id": "s1", "label": "Version A", "student": None, "questions": s1},
            {"id": "s2", "label": "Version B", "student": None, "questions": s2},
        ],
    }


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "build" / "key.json"
    path.parent.mkdir()
    path.write_text(json.dumps(fixture_key()), encoding="utf-8")
    return path


def export(runner, key: Path, fmt: str, out: Path | str | None = None) -> Path:
    args = ["export", "--to", fmt, "--key", str(key)]
    if out is not None:
        args += ["--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    return Path(result.output.strip().rsplit(": ", 1)[1])


GAP = re.compile(r"\{(\d*):(NUMERICAL|SHORTANSWER|MULTICHOICE_V):((?:\\.|[^}\\])*)\}")


def split_alts(body: str) -> list[tuple[str, str, str]]:
    """Cloze alternatives as (fraction, answer, feedback); '\\}' and '\\#' are escapes."""
    out = []
    for alt in re.split(r"(?<!\\)~", body):
        fraction = "0"
        if alt.startswith("="):
            fraction, alt = "100", alt[1:]
        m = re.match(r"%(-?\d+)%", alt)
        if m:
            fraction, alt = m.group(1), alt[m.end() :]
        answer, *feedback = re.split(r"(?<!\\)#", alt, maxsplit=1)
        out.append((fraction, _unescape_cloze(answer), _unescape_cloze("".join(feedback))))
    return out


def _unescape_cloze(text: str) -> str:
    return text.replace("\\}", "}").replace("\\#", "#")


def moodle_questions(path: Path) -> list[ET.Element]:
    return ET.parse(path).getroot().findall("question")


def by_idnumber(questions: list[ET.Element], idnumber: str) -> ET.Element:
    return next(q for q in questions if q.findtext("idnumber") == idnumber)


def gaps(question: ET.Element) -> list[tuple[str, list[tuple[str, str, str]]]]:
    text = question.find("questiontext/text").text
    return [(m.group(2), split_alts(htmllib.unescape(m.group(3)))) for m in GAP.finditer(text)]


def exact_answer(alts: list[tuple[str, str, str]]) -> str:
    """A numerical gap's exact answer with the key's tolerance: its last 100 % answer (the
    printed value, where it differs, comes first)."""
    return [a for f, a, _ in alts if f == "100"][-1]


def num(answer: str) -> tuple[float, float]:
    value, tol = answer.split(":")
    return float(value), float(tol)


def test_moodle_puts_each_question_in_its_own_category_with_one_question_per_variant(
    runner, key_file
):
    questions = moodle_questions(export(runner, key_file, "moodle"))
    current, seen = None, {}
    for q in questions:
        if q.get("type") == "category":
            current = q.findtext("category/text")
            continue
        seen.setdefault(current, []).append(q.findtext("idnumber"))
    assert seen == {
        "$course$/top/Fixture sheet/01 q-prob - One probability": ["q-prob:s1", "q-prob:s2"],
        "$course$/top/Fixture sheet/02 q-mask - Causal masking": ["q-mask:s1", "q-mask:s2"],
        "$course$/top/Fixture sheet/03 q-mc - Pick A": ["q-mc:s1", "q-mc:s2"],
        "$course$/top/Fixture sheet/04 q-words - Why scale": ["q-words:s1", "q-words:s2"],
        # one essay both versions share: a separate draw could give another version's
        "$course$/top/Fixture sheet/04 q-words - Why scale (written part)": [
            "q-words:written",
        ],
    }


def test_moodle_scalar_is_numerical_with_the_keys_tolerance_and_slips_as_zero_answers(
    runner, key_file
):
    questions = moodle_questions(export(runner, key_file, "moodle"))
    for sheet, value in (("s1", WORKED), ("s2", math.exp(1) / (1 + math.exp(1)))):
        q = by_idnumber(questions, f"q-prob:{sheet}")
        assert q.get("type") == "numerical"
        answers = q.findall("answer")
        right = [a for a in answers if a.get("fraction") == "100"]
        # the printed value first (Moodle shows it as the correct answer), inside the margin
        printed = "0.80" if sheet == "s1" else "0.73"
        assert Decimal(right[0].findtext("text")) == Decimal(printed)
        inner = Decimal(right[0].findtext("tolerance"))
        assert inner == Decimal("0.005") - abs(Decimal(printed) - Decimal(repr(value)))
        assert float(right[1].findtext("text")) == pytest.approx(value, abs=1e-15)
        assert float(right[1].findtext("tolerance")) == 0.005
        wrong = [a for a in answers if a.get("fraction") == "0"]
        slip = math.exp(2) / (1 + math.exp(2))
        assert [float(a.findtext("text")) for a in wrong] == pytest.approx([0.88, slip])
        for a in wrong:
            assert "no-scale" in a.findtext("feedback/text")
            assert float(a.findtext("tolerance")) == 0.005


def test_moodle_question_text_has_the_exact_prompt_and_mathjax_math(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-prob:s1")
    page = htmllib.unescape(q.find("questiontext/text").text)
    assert r"Scores {S}: note = # ~ & <tag> \ backslash, with \(S = QK^\top\) and \(\neq\)." in page
    assert r"\(s = \left[2,\ 0\right]\)" in page
    assert "$" not in page


def test_moodle_cloze_text_cannot_open_a_gap_of_its_own(runner, tmp_path):
    data = fixture_key()
    q = data["sheets"][0]["questions"][1]  # a cloze question (a table with a masked cell)
    q["prompt"] = "Mask {1:NUMERICAL:=7:0} then softmax, with $\\frac{1}{2}$."
    key = tmp_path / "key.json"
    key.write_text(json.dumps(data), encoding="utf-8")
    question = by_idnumber(moodle_questions(export(runner, key, "moodle")), "q-mask:s1")
    assert question.get("type") == "cloze"
    # Moodle counts every gap in the source: only ours, one mark each
    assert len(gaps(question)) == int(question.findtext("defaultgrade"))
    page = htmllib.unescape(question.find("questiontext/text").text)
    assert "Mask {1:NUMERICAL:=7:0} then softmax, with \\(\\frac{1}{2}\\)." in page


def test_moodle_matrices_are_cloze_with_a_numerical_gap_per_entry_and_masked_cells_asked(
    runner, key_file
):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-mask:s1")
    assert q.get("type") == "cloze"
    found = gaps(q)
    assert len(found) == 8  # two 2x2 tables, every entry asked
    masked_table, a_table = found[:4], found[4:]
    # the masked cell is a short answer that accepts -inf, −∞ and "masked" ...
    kind, alts = masked_table[1]
    assert kind == "SHORTANSWER"
    accepted = {a for f, a, _ in alts if f == "100"}
    assert {"-inf", "−∞", "masked"} <= accepted
    # ... and the 0 that mask-with-zero writes there is named
    zero = [(a, fb) for f, a, fb in alts if f == "0"]
    assert zero and all("mask-with-zero" in fb for _, fb in zero)
    assert "0" in {a for a, _ in zero}
    # finite cells are numerical with the key's tolerance
    expected_masked = [2.0, None, -4.0, 4.0]
    for (kind, alts), want in zip(masked_table, expected_masked, strict=True):
        if want is not None:
            assert kind == "NUMERICAL"
            assert num(exact_answer(alts)) == (want, 0.005)
    # A: the tiny probability keeps its value (never rounded to 0), tolerance from the key
    expected_a = [1.0, 0.0, TINY, BIG]
    for (kind, alts), want in zip(a_table, expected_a, strict=True):
        assert kind == "NUMERICAL" and alts[0][0] == "100"
        value, tol = num(exact_answer(alts))
        assert value == pytest.approx(want, abs=1e-15) and tol == 0.01
    assert num(exact_answer(a_table[2][1]))[0] > 3e-4
    # where the slip changes A, the slip's printed and exact values are 0 % answers naming it
    kind, alts = a_table[0]
    wrong = [(a, fb) for f, a, fb in alts if f == "0"]
    assert [num(a)[0] for a, _ in wrong] == pytest.approx([0.88, math.exp(2) / (math.exp(2) + 1)])
    assert all("mask-with-zero" in fb for _, fb in wrong)
    # the general feedback shows the key and says the tiny entry is not 0
    feedback = htmllib.unescape(q.find("generalfeedback/text").text)
    assert r"\begin{bmatrix} 1.00 & 0.00 \\ 0.00 & 1.00 \end{bmatrix}" in feedback
    assert "0.000335" in feedback


def test_moodle_multiple_choice_keeps_order_and_names_each_slip(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-mc:s1")
    assert q.get("type") == "multichoice"
    assert q.findtext("shuffleanswers") == "false" and q.findtext("single") == "true"
    answers = q.findall("answer")
    texts = [htmllib.unescape(a.findtext("text")) for a in answers]
    assert [t.split("\\\\")[0] for t in texts] == [
        r"<span>\(\begin{bmatrix} 0.88 & 0.12 ",
        r"<span>\(\begin{bmatrix} 0.80 & 0.20 ",
        r"<span>\(\begin{bmatrix} 0.73 & 0.27 ",
    ]
    assert [a.get("fraction") for a in answers] == ["0", "100", "0"]
    feedback = [a.findtext("feedback/text") for a in answers]
    assert "no-scale" in feedback[0] and "Skips the scale" in feedback[0]
    assert feedback[1] == "Correct."
    assert "scale-by-dk" in feedback[2] and "Divides by d_k" in feedback[2]


def test_moodle_pick_one_answer_is_a_gap_and_written_part_an_essay_with_grader_info(
    runner, key_file
):
    questions = moodle_questions(export(runner, key_file, "moodle"))
    graded = by_idnumber(questions, "q-words:s1")
    assert graded.get("type") == "multichoice"
    answers = graded.findall("answer")
    right = [htmllib.unescape(a.findtext("text")) for a in answers if a.get("fraction") == "100"]
    assert right == ["<span>without the scale</span>"]
    # the written part is asked in the graded question, so each student reads their version's
    text = htmllib.unescape(graded.find("questiontext/text").text)
    assert "<b>(b)</b>" in text and "in the written question that follows" in text
    essay = by_idnumber(questions, "q-words:written")  # one for both versions
    assert essay.findtext("name/text") == "4. q-words (written)"
    # the written part's share of a plain points: 3 over its two answers, as grade splits it
    assert essay.get("type") == "essay" and essay.findtext("defaultgrade") == "1.5"
    assert "worth 1.5 point(s), as on the printed key" in essay.find("questiontext/text").text
    info = htmllib.unescape(essay.find("graderinfo/text").text)
    assert r"The variance of \(q \cdot k\) grows like \(d_k\)." in info
    assert "Sheet s1:" in info and "Sheet s2:" in info  # each version's model answer
    assert essay.findtext("generalfeedback/text") in (None, "")  # not shown to students


def _gift_tokens(text: str) -> list[tuple[str, bool]]:
    """Characters with an 'escaped' flag, per GIFT: backslash escapes the next character."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append((text[i + 1], True))
            i += 2
        else:
            out.append((text[i], False))
            i += 1
    return out


def _plain(tokens: list[tuple[str, bool]]) -> str:
    return "".join(c for c, _ in tokens)


def _split_on(tokens, chars: str) -> list[tuple[str, list]]:
    """Split at unescaped chars in ``chars``; each piece keeps the char that started it."""
    pieces, cur, lead = [], [], ""
    for c, esc in tokens:
        if not esc and c in chars:
            if cur or lead:
                pieces.append((lead, cur))
            cur, lead = [], c
        else:
            cur.append((c, esc))
    pieces.append((lead, cur))
    return [p for p in pieces if p[0] or p[1]]


def parse_gift(text: str) -> list[dict]:
    """A small GIFT reader: categories, ::name::, [html] text, {answers} with feedback."""
    questions, category = [], None
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("//")]
        if not lines:
            continue
        body = "\n".join(lines).strip()
        if body.startswith("$CATEGORY:"):
            category = body[len("$CATEGORY:") :].strip()
            continue
        tokens = _gift_tokens(body)
        assert _plain(tokens[:2]) == "::" and not tokens[0][1]
        end = next(
            i
            for i in range(2, len(tokens) - 1)
            if _plain(tokens[i : i + 2]) == "::" and not tokens[i][1]
        )
        name = _plain(tokens[2:end])
        rest = tokens[end + 2 :]
        assert _plain(rest[:6]) == "[html]"
        rest = rest[6:]
        open_at = next(i for i, (c, e) in enumerate(rest) if c == "{" and not e)
        close_at = max(i for i, (c, e) in enumerate(rest) if c == "}" and not e)
        assert close_at == len(rest) - 1, "text after the answer block"
        qtext, block_tokens = _plain(rest[:open_at]), rest[open_at + 1 : close_at]
        q = {
            "category": category,
            "name": name,
            "text": qtext,
            "answers": [],
            "kind": "essay",
            "general": "",
        }
        plain = _plain(block_tokens)
        if plain.startswith("####") and not block_tokens[0][1]:
            q["general"] = plain[4:]
        elif block_tokens and block_tokens[0] == ("#", False):
            q["kind"] = "numerical"
            for _, piece in _split_on(block_tokens[1:], "="):
                ans, *fb = [_plain(p) for _, p in _split_on(piece, "#")]
                m = re.match(r"%(-?\d+)%(.*)", ans)
                weight, ans = (int(m.group(1)), m.group(2)) if m else (100, ans)
                value, tol = ans.split(":")
                q["answers"].append((weight, float(value), float(tol), fb[0] if fb else ""))
        elif block_tokens:
            q["kind"] = "choice"
            for lead, piece in _split_on(block_tokens, "=~"):
                ans, *fb = [_plain(p) for _, p in _split_on(piece, "#")]
                m = re.match(r"%(-?\d+)%(.*)", ans)
                weight = int(m.group(1)) if m else (100 if lead == "=" else 0)
                ans = m.group(2) if m else ans
                q["answers"].append((weight, ans.strip(), fb[0].strip() if fb else ""))
        questions.append(q)
    return questions


def test_gift_escapes_special_characters_so_the_prompt_reads_back_exactly(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    q = next(q for q in questions if q["name"] == "1. q-prob [s1]")
    assert (
        htmllib.unescape(q["text"]).count(
            r"Scores {S}: note = # ~ & <tag> \ backslash, with \(S = QK^\top\) and \(\neq\)."
        )
        == 1
    )


def test_gift_numerical_questions_carry_value_tolerance_and_named_slips(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    q = next(q for q in questions if q["name"] == "1. q-prob [s1]")
    assert q["kind"] == "numerical"
    assert q["category"] == "$course$/top/Fixture sheet/01 q-prob - One probability"
    printed, right = [a for a in q["answers"] if a[0] == 100]
    assert printed[1] == 0.80  # first: Moodle shows it as the correct answer
    assert printed[2] == pytest.approx(0.005 - abs(0.80 - WORKED), abs=1e-15)
    assert right[1] == pytest.approx(WORKED, abs=1e-15) and right[2] == 0.005
    slips = [a for a in q["answers"] if a[0] == 0]
    assert [a[1] for a in slips] == pytest.approx([0.88, math.exp(2) / (1 + math.exp(2))])
    assert all("no-scale" in a[3] for a in slips)


def test_gift_splits_matrices_into_one_question_per_entry_in_a_category_per_variant(
    runner, key_file
):
    text = export(runner, key_file, "gift").read_text(encoding="utf-8")
    assert "GIFT has no cloze question" in text  # the stated reason
    questions = [q for q in parse_gift(text) if q["name"].startswith("2. q-mask [s1]")]
    assert {q["category"] for q in questions} == {
        "$course$/top/Fixture sheet/02 q-mask - Causal masking/s1"
    }
    assert len(questions) == 8
    masked = next(q for q in questions if q["name"].endswith("masked query 1, key 2"))
    assert masked["kind"] == "choice"  # a short answer: every alternative starts with =
    assert {a for w, a, _ in masked["answers"] if w == 100} >= {"-inf", "−∞", "masked"}
    tiny = next(q for q in questions if q["name"].endswith("A query 2, key 1"))
    right = [a for a in tiny["answers"] if a[0] == 100][-1]
    assert right[1] == pytest.approx(TINY, rel=1e-12) and right[2] == 0.01


def test_gift_multiple_choice_and_essay_read_back(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    mc = next(q for q in questions if q["name"] == "3. q-mc [s1]")
    assert [w for w, _, _ in mc["answers"]] == [0, 100, 0]
    assert "no-scale" in mc["answers"][0][2] and "scale-by-dk" in mc["answers"][2][2]
    assert htmllib.unescape(mc["answers"][1][1]).startswith(r"B. <span>\(\begin{bmatrix} 0.80")
    # one essay both versions share, every version's model answer in its feedback
    essay = next(q for q in questions if q["name"] == "4. q-words (written)")
    assert essay["kind"] == "essay"
    assert r"grows like \(d_k\)" in htmllib.unescape(essay["general"])
    assert "Sheet s2:" in htmllib.unescape(essay["general"])


def unzip_qti(path: Path) -> tuple[dict[str, bytes], ET.Element]:
    with zipfile.ZipFile(path) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    manifest = ET.fromstring(files["imsmanifest.xml"])
    ns = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"
    hrefs = [f.get("href") for f in manifest.iter(f"{ns}file")]
    assert hrefs and all(h in files for h in hrefs)  # every listed file is in the zip
    (qti_name,) = [h for h in hrefs if not h.endswith("assessment_meta.xml")]
    return files, ET.fromstring(files[qti_name])


def items_by_title(root: ET.Element) -> dict[str, ET.Element]:
    return {i.get("title"): i for i in root.iter(f"{QTI}item")}


def qtype(item: ET.Element) -> str:
    for f in item.iter(f"{QTI}qtimetadatafield"):
        if f.findtext(f"{QTI}fieldlabel") == "question_type":
            return f.findtext(f"{QTI}fieldentry")
    raise AssertionError("no question_type")


def test_qti_groups_variants_of_each_question_and_picks_one(runner, key_file):
    files, root = unzip_qti(export(runner, key_file, "qti"))
    groups = [s for s in root.iter(f"{QTI}section") if s.get("ident") != "root_section"]
    assert [g.get("title") for g in groups] == [
        "1. q-prob: One probability",
        "2. q-mask: Causal masking",
        "3. q-mc: Pick A",
        "4. q-words: Why scale",
        "4. q-words: Why scale (written part)",
    ]
    for g in groups:
        assert g.findtext(f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_number") == "1"
        # the two sheets' variants; the written part: one essay both versions share
        assert len(g.findall(f"{QTI}item")) == (1 if "written" in g.get("title") else 2)
    points = [g.findtext(f".//{QTI}points_per_item") for g in groups]
    # a mixed question's 3 points split between its two answers, as the sheet and grade do
    assert points == ["2", "4", "1", "1.5", "1.5"]


def test_qti_numerical_question_has_exact_value_and_margin_from_the_key(runner, key_file):
    _, root = unzip_qti(export(runner, key_file, "qti"))
    item = items_by_title(root)["1. q-prob [s1]"]
    assert qtype(item) == "numerical_question"
    printed, within = item.findall(f".//{QTI}respcondition[@continue='No']")
    # first the printed value (Canvas shows it as the answer) with no margin of its own ...
    assert printed.findtext(f".//{QTI}varequal") == "0.80"
    assert printed.findtext(f".//{QTI}vargte") == printed.findtext(f".//{QTI}varlte") == "0.80"
    # ... then the key's margin around the exact value, as a range
    assert within.find(f"{QTI}conditionvar/{QTI}or") is None
    low, high = within.findtext(f".//{QTI}vargte"), within.findtext(f".//{QTI}varlte")
    exact = Decimal(repr(WORKED))
    assert Decimal(high) - exact == Decimal("0.005") == exact - Decimal(low)


def test_qti_multiple_choice_has_distractors_with_feedback_naming_the_slip(runner, key_file):
    _, root = unzip_qti(export(runner, key_file, "qti"))
    item = items_by_title(root)["3. q-mc [s1]"]
    assert qtype(item) == "multiple_choice_question"
    labels = item.findall(f".//{QTI}response_label")
    assert len(labels) == 3
    right = item.find(f".//{QTI}respcondition[@continue='No']").findtext(f".//{QTI}varequal")
    assert right == labels[1].get("ident")
    feedback = {
        f.get("ident"): f.findtext(f".//{QTI}mattext") for f in item.findall(f"{QTI}itemfeedback")
    }
    assert "no-scale" in feedback[labels[0].get("ident") + "_fb"]
    assert "scale-by-dk" in feedback[labels[2].get("ident") + "_fb"]


def _decimals_within(value: float, tol: float, digits: int) -> set[str]:
    """Every decimal with ``digits`` places within ``tol`` of ``value``, by brute force."""
    out = set()
    for k in range(int((value - 1) * 10**digits), int((value + 1) * 10**digits) + 1):
        if abs(k / 10**digits - value) <= tol + 1e-12:
            out.add(f"{k / 10**digits:.{digits}f}")
    return out


def test_qti_matrix_blanks_accept_printed_decimals_within_tolerance_and_masked_spellings(
    runner, key_file
):
    _, root = unzip_qti(export(runner, key_file, "qti"))
    item = items_by_title(root)["2. q-mask [s1]"]
    assert qtype(item) == "fill_in_multiple_blanks_question"
    text = item.find(f"{QTI}presentation/{QTI}material/{QTI}mattext").text
    blanks = {
        lid.get("ident")[len("response_") :]: [
            lab.findtext(f".//{QTI}mattext") for lab in lid.iter(f"{QTI}response_label")
        ]
        for lid in item.iter(f"{QTI}response_lid")
    }
    assert set(blanks) == {
        "masked_1_1",
        "masked_1_2",
        "masked_2_1",
        "masked_2_2",
        "A_1_1",
        "A_1_2",
        "A_2_1",
        "A_2_2",
    }
    assert all(f"[{b}]" in text for b in blanks)
    assert {"-inf", "−∞", "masked"} <= set(blanks["masked_1_2"])
    for name, value, tol in (
        ("A_2_1", TINY, 0.01),
        ("A_2_2", BIG, 0.01),
        ("masked_2_1", -4.0, 0.005),
    ):
        two_places = {t for t in blanks[name] if re.fullmatch(r"[-−]?\d+\.\d\d", t)}
        assert {t.replace("−", "-") for t in two_places} == _decimals_within(value, tol, 2)
    assert "0.00" in blanks["A_2_1"] and "0.02" not in blanks["A_2_1"]
    # each blank adds its share of the score when any of its accepted answers is given
    conditions = [
        c
        for c in item.iter(f"{QTI}respcondition")
        if c.find(f"{QTI}setvar[@action='Add']") is not None
    ]
    assert len(conditions) == len(blanks)
    for c in conditions:
        (respident,) = {v.get("respident") for v in c.iter(f"{QTI}varequal")}
        bid = respident[len("response_") :]
        assert len(c.findall(f".//{QTI}varequal")) == len(blanks[bid])
        assert float(c.findtext(f"{QTI}setvar")) == pytest.approx(100 / 8, abs=0.01)


def test_qti_zip_is_the_same_bytes_for_the_same_key(runner, key_file, tmp_path):
    a = export(runner, key_file, "qti", tmp_path / "a.zip").read_bytes()
    b = export(runner, key_file, "qti", tmp_path / "b.zip").read_bytes()
    assert a == b
    with zipfile.ZipFile(io.BytesIO(a)) as zf:
        assert "imsmanifest.xml" in zf.namelist()
        assert any(n.endswith("/assessment_meta.xml") for n in zf.namelist())


def test_class_build_streams_each_export_to_the_bytes_export_gives(tmp_path):
    from click.testing import CliRunner

    from worksheetgen.export import export_bytes

    roster = tmp_path / "roster.csv"
    roster.write_text("name\nAda Lovelace\nAlan Turing\nGrace Hopper\n", encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--seed",
            "4",
            "--bank",
            str(ROOT / "banks" / "note.yaml"),
            "--no-pdf",
            "--roster",
            str(roster),
            "--out",
            str(tmp_path / "out"),
            "--export",
            "moodle",
            "--export",
            "gift",
            "--export",
            "qti",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = (tmp_path / "out").iterdir()
    data = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    for fmt, name in (("moodle", "moodle.xml"), ("gift", "gift.txt"), ("qti", "canvas-qti.zip")):
        assert (folder / name).read_bytes() == export_bytes(data, fmt), fmt


@pytest.fixture(scope="module")
def practice_build(tmp_path_factory) -> Path:
    """The note's practice bank, built with every export."""
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("practice")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--bank",
            str(ROOT / "banks" / "practice.yaml"),
            "--no-pdf",
            "--out",
            str(out),
            "--export",
            "moodle",
            "--export",
            "gift",
            "--export",
            "qti",
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def test_build_export_writes_every_format_beside_key_json(practice_build):
    names = {p.name for p in practice_build.iterdir()}
    assert {"key.json", "moodle.xml", "gift.txt", "canvas-qti.zip"} <= names
    manifest = json.loads((practice_build / "manifest.json").read_text())
    assert {"moodle.xml", "gift.txt", "canvas-qti.zip"} <= set(manifest["files"])


def test_real_build_moodle_has_the_notes_worked_example_with_key_tolerances(practice_build):
    key = json.loads((practice_build / "key.json").read_text())
    sheet = key["sheets"][0]
    worked = next(q for q in sheet["questions"] if q["id"] == "worked-example")
    q = by_idnumber(
        moodle_questions(practice_build / "moodle.xml"), f"worked-example:{sheet['id']}"
    )
    found = gaps(q)
    scaled, a = found[:4], found[4:8]
    r2 = math.sqrt(2)
    for (kind, alts), want in zip(scaled, [r2, 0, 0, r2], strict=True):
        value, tol = num(exact_answer(alts))
        assert kind == "NUMERICAL" and value == pytest.approx(want, abs=1e-12)
        assert tol == worked["tolerance"]["scaled"] >= 0.005
    for (kind, alts), want in zip(a, [WORKED, 1 - WORKED, 1 - WORKED, WORKED], strict=True):
        value, tol = num(exact_answer(alts))
        assert kind == "NUMERICAL" and value == pytest.approx(want, abs=1e-12)
        assert tol == worked["tolerance"]["A"] >= 0.005  # half a unit of 0.01, or wider


def test_real_build_causal_example_asks_masked_cell_and_keeps_exact_zero(practice_build):
    key = json.loads((practice_build / "key.json").read_text())
    sheet_id = key["sheets"][0]["id"]
    q = by_idnumber(
        moodle_questions(practice_build / "moodle.xml"), f"worked-example-causal:{sheet_id}"
    )
    kinds = [k for k, _ in gaps(q)]
    assert kinds.count("SHORTANSWER") == 1  # the one future key of a 2x2 causal table
    a_row1 = [num(alts[0][1])[0] for k, alts in gaps(q)[-4:-2]]
    assert a_row1 == [1.0, 0.0]  # the note: with the causal mask row 1 is [1, 0]


def test_real_build_qti_and_gift_parse_back(practice_build):
    _, root = unzip_qti(practice_build / "canvas-qti.zip")
    titles = [
        s.get("title") for s in root.iter(f"{QTI}section") if s.get("ident") != "root_section"
    ]
    assert len(titles) == 7  # one group per question of the practice bank
    questions = parse_gift((practice_build / "gift.txt").read_text(encoding="utf-8"))
    a11 = next(
        q
        for q in questions
        if q["name"].startswith("1. worked-example [") and q["name"].endswith("A query 1, key 1")
    )
    right = [a for a in a11["answers"] if a[0] == 100][-1]
    assert right[1] == pytest.approx(WORKED, abs=1e-12)


def _broken(mutate) -> dict:
    data = fixture_key()
    mutate(data["sheets"][0]["questions"])
    return data


@pytest.mark.parametrize(
    ("mutate", "field", "words"),
    [
        (
            lambda qs: qs[0]["tolerance"].pop("p"),
            "sheets[0].questions[0].tolerance.p",
            "expected the tolerance",
        ),
        (
            lambda qs: qs[0]["rounded"].update(p="0.90"),
            "sheets[0].questions[0].tolerance.p",
            "accepts the printed 0.90",
        ),
        (
            lambda qs: qs[1]["rounded"]["masked"][0].__setitem__(1, "0.00"),
            "sheets[0].questions[1].rounded.masked[0][1]",
            'expected "-inf"',
        ),
        (
            lambda qs: qs[2]["choices"][0].update(correct=True, misconception=None),
            "sheets[0].questions[2].choices",
            "exactly one correct choice, got 2",
        ),
        (
            lambda qs: qs[0]["parts"][0].update(answer="q"),
            "sheets[0].questions[0].parts[0].answer",
            "expected one of the answers",
        ),
        (
            lambda qs: qs[1]["answer"]["A"][1].pop(),
            "sheets[0].questions[1].answer.A[1]",
            "expected 2 entries like row 0, got 1",
        ),
        (
            lambda qs: qs[1]["rounded"]["A"].pop(),
            "sheets[0].questions[1].rounded.A",
            "expected the same shape as the answer (2x2), got 1x2",
        ),
        (
            lambda qs: qs[0]["answer"].update(p="-inf"),
            "sheets[0].questions[0].answer.p",
            "only matrix and vector entries can be masked",
        ),
    ],
)
def test_bad_key_is_one_line_error_naming_the_field_and_nothing_is_written(
    runner, tmp_path, mutate, field, words
):
    path = tmp_path / "key.json"
    path.write_text(json.dumps(_broken(mutate)), encoding="utf-8")
    for fmt in ("moodle", "gift", "qti"):
        result = runner.invoke(main, ["export", "--to", fmt, "--key", str(path)])
        assert result.exit_code == 1
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.output
        assert lines[0].startswith(f"worksheetgen: error: {path}: {field}: ")
        assert words in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.json"]


def test_missing_or_invalid_key_file_is_a_clear_error(runner, tmp_path):
    result = runner.invoke(main, ["export", "--to", "moodle", "--key", str(tmp_path / "nope.json")])
    assert result.exit_code == 1 and "no such file" in result.output
    bad = tmp_path / "key.json"
    bad.write_text('{"seed": 1,\n "sheets": [}', encoding="utf-8")
    result = runner.invoke(main, ["export", "--to", "gift", "--key", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:2: expected JSON" in result.output


def test_export_writes_beside_the_key_by_default_and_into_a_folder_given_as_out(
    runner, key_file, tmp_path
):
    assert export(runner, key_file, "moodle") == key_file.parent / "moodle.xml"
    folder = tmp_path / "lms"
    folder.mkdir()
    assert export(runner, key_file, "gift", folder) == folder / "gift.txt"
    new = export(runner, key_file, "qti", str(tmp_path / "new") + "/")
    assert new == tmp_path / "new" / "canvas-qti.zip" and new.is_file()
    named = export(runner, key_file, "moodle", tmp_path / "quiz.xml")
    assert named == tmp_path / "quiz.xml" and named.is_file()


def test_export_quiet_prints_nothing_and_still_writes(runner, key_file):
    result = runner.invoke(main, ["export", "--to", "gift", "--key", str(key_file), "-q"])
    assert (result.exit_code, result.output) == (0, "")
    assert (key_file.parent / "gift.txt").is_file()


def test_export_help_and_unknown_format(runner):
    result = runner.invoke(main, ["export", "--help"])
    assert result.exit_code == 0 and "--to [gift|moodle|qti]" in result.output
    result = runner.invoke(main, ["export", "--to", "blackboard", "--key", "key.json"])
    assert result.exit_code == 2 and "blackboard" in result.output


def test_a_shown_heatmap_becomes_a_shaded_table_of_the_printed_weights(runner, tmp_path):
    data = fixture_key()
    words = data["sheets"][0]["questions"][3]
    words["shown"] = [
        {
            "label": "A",
            "kind": "heatmap",
            "value": {
                "rows": [["1.00", "0.00"], ["0.30", "0.70"]],
                "weights": [[1.0, 0.0], [0.3, 0.7]],
                "row_label": "query",
                "col_label": "key",
            },
        }
    ]
    path = tmp_path / "key.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    q = by_idnumber(moodle_questions(export(runner, path, "moodle")), "q-words:s1")
    page = ET.fromstring(q.find("questiontext/text").text)
    table = page.find(".//table[@class='worksheetgen-heatmap']")
    cells = [(td.text, td.get("style")) for td in table.iter("td")]
    assert [t for t, _ in cells] == ["1.00", "0.00", "0.30", "0.70"]
    greys = [int(re.search(r"rgb\((\d+),", style).group(1)) for _, style in cells]
    assert greys[1] == 255 and greys[0] < greys[3] < greys[2] < 255  # darker = more weight


def test_a_worked_solution_to_check_is_shown_step_by_step(runner, tmp_path):
    data = fixture_key()
    data["sheets"][0]["questions"][3]["shown_steps"] = [
        {
            "title": "Scores",
            "text": "",
            "math": r"S = QK^\top = \begin{bmatrix} 1 & 0 \end{bmatrix}",
        },
        {"title": "Scale by $d_k$", "text": "(the slip)", "math": ""},
    ]
    path = tmp_path / "key.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    q = by_idnumber(moodle_questions(export(runner, path, "moodle")), "q-words:s1")
    page = ET.fromstring(q.find("questiontext/text").text)
    steps = page.findall(".//ol/li")
    assert [li.text for li in steps] == ["Scores", r"Scale by \(d_k\) (the slip)"]
    assert (
        steps[0].find("div").text
        == r"\(\displaystyle S = QK^\top = \begin{bmatrix} 1 & 0 \end{bmatrix}\)"
    )
