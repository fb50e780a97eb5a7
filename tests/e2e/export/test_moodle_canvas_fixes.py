"""What a real Moodle and Canvas showed in the exports (issue 18, sections 2 and 3), each
checked by parsing the exported file back and replaying what the LMS does with it: Moodle
takes the first answer that matches and shows the first 100 % answer as the correct one;
its emoticon and URL filters rewrite text outside ``<span class="nolink">``; Canvas compares
fill-in blanks as exact text.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import xml.etree.ElementTree as ET
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.e2e.export.test_export import (
    QTI,
    by_idnumber,
    export,
    fixture_key,
    gaps,
    items_by_title,
    moodle_questions,
    parse_gift,
    unzip_qti,
)

ROOT2 = 2**0.5


# Moodle's default emoticons (lib/classes/emoticon_manager / the emoticon filter's list)
EMOTICON = re.compile(
    r"\(h\)|\(y\)|\(n\)|\(martin\)|\( \)|:-?\)|:-D|;-\)|:-/|B-\)|8-\)|8-o|:-\(|:-P|www\.",
    re.IGNORECASE,
)


def _scalar_part(i: int) -> dict:
    return {"prompt": f"Write $p_{i}$.", "answer": f"p{i}"}


def _slips_question() -> dict:
    """Eight scalar parts (a) to (h), as the note bank's scale-effect question has:
    (a) two slips 0.004 apart (more than half the margin: not merged) that print alike;
    (b) a slip whose exact value lies within the key's margin but whose printed value does not;
    (c) a tolerance-0 answer whose slip is 0.0625 but prints 0.06;
    (d)-(h) √2, printed 1.41."""
    answer = {"p0": 0.5, "p1": 0.2495, "p2": 0.125}
    rounded = {"p0": "0.50", "p1": "0.25", "p2": "0.125"}
    tolerance = {"p0": 0.005, "p1": 0.01, "p2": 0.0}
    for i in range(3, 8):
        answer[f"p{i}"], rounded[f"p{i}"], tolerance[f"p{i}"] = ROOT2, "1.41", 0.005
    return {
        "id": "q-slips",
        "number": 5,
        "family": "scaling",
        "title": "Eight numbers",
        "points": 8,
        "decimals": 2,
        "format": "open",
        "prompt": "Compute each number :) as on www.example.org.",
        "given": {"d_k": 4},
        "parts": [_scalar_part(i) for i in range(8)],
        "labels": {f"p{i}": f"p_{i}" for i in range(8)},
        "answer": answer,
        "rounded": rounded,
        "kinds": {f"p{i}": "scalar" for i in range(8)},
        "tolerance": tolerance,
        "distractors": [
            {
                "misconception": "scale-by-dk",
                "description": "Divides by d_k (n) instead of its root.",
                "answer": {"p0": 0.6, "p1": 0.2589},
                "rounded": {"p0": "0.60", "p1": "0.26"},
            },
            {
                "misconception": "softmax-over-columns",
                "description": "Normalises the columns.",
                "answer": {"p0": 0.604, "p2": 0.0625},
                "rounded": {"p0": "0.60", "p2": "0.06"},
            },
        ],
    }


def _one_number() -> dict:
    """One probability (a numerical question) with two slips that print alike."""
    q = _slips_question()
    q.update(
        id="q-one",
        number=6,
        title="One number",
        points=2,
        parts=[_scalar_part(0)],
        labels={"p0": "p_0"},
        answer={"p0": 0.8044296825069569},
        rounded={"p0": "0.80"},
        kinds={"p0": "scalar"},
        tolerance={"p0": 0.005},
    )
    q["distractors"] = [
        {"misconception": m, "description": "", "answer": {"p0": x}, "rounded": {"p0": "0.60"}}
        for m, x in (("scale-by-dk", 0.6), ("no-scale", 0.604))
    ]
    return q


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    key = fixture_key()
    for sheet in key["sheets"]:
        sheet["questions"] += [_slips_question(), _one_number()]
    path = tmp_path / "build" / "key.json"
    path.parent.mkdir()
    path.write_text(json.dumps(key), encoding="utf-8")
    return path


def first_match(answers: list[tuple[int, str, str, str]], typed: str) -> tuple[int, str, str, str]:
    """The answer Moodle's numerical question engine picks for ``typed``: the first whose
    value ± tolerance holds it."""
    x = Decimal(typed)
    for a in answers:
        if abs(x - Decimal(a[1])) <= Decimal(a[2]):
            return a
    raise AssertionError(f"no answer matches {typed}")


def cloze_answers(alts: list[tuple[str, str, str]]) -> list[tuple[int, str, str, str]]:
    out = []
    for fraction, answer, feedback in alts:
        value, tol = answer.split(":")
        out.append((int(fraction), value, tol, feedback))
    return out


def numerical_answers(q: ET.Element) -> list[tuple[int, str, str, str]]:
    return [
        (
            int(a.get("fraction")),
            a.findtext("text"),
            a.findtext("tolerance"),
            htmllib.unescape(a.findtext("feedback/text")),
        )
        for a in q.findall("answer")
    ]


def test_moodle_gap_names_every_slip_that_gives_the_typed_value(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-slips:s1")
    answers = cloze_answers(gaps(q)[0][1])
    fraction, _, _, feedback = first_match(answers, "0.60")
    assert fraction == 0
    assert "scale-by-dk" in feedback and "softmax-over-columns" in feedback
    # each slip's own exact value is named with the other slip it cannot be told from
    for typed in ("0.6", "0.604"):
        assert "softmax-over-columns" in first_match(answers, typed)[3]


def test_moodle_numerical_names_every_slip_and_shows_the_printed_answer(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-one:s1")
    assert q.get("type") == "numerical"
    answers = numerical_answers(q)
    assert answers[0][:2] == (100, "0.80")  # "The correct answer is: 0.80"
    feedback = first_match(answers, "0.60")[3]
    assert "scale-by-dk" in feedback and "no-scale" in feedback
    # the margin is the key's: 0.8044 ± 0.005, no wider, no narrower
    for typed, right in (("0.7995", True), ("0.8093", True), ("0.7993", False), ("0.81", False)):
        found = [a for a in answers if abs(Decimal(typed) - Decimal(a[1])) <= Decimal(a[2])]
        assert bool(found and found[0][0] == 100) is right, typed


def test_moodle_slip_printed_outside_the_margin_gets_its_feedback(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-slips:s1")
    found = gaps(q)
    # (b): the slip's exact 0.2589 is within 0.2495 ± 0.01, its printed 0.26 is not
    fraction, _, _, feedback = first_match(cloze_answers(found[1][1]), "0.26")
    assert fraction == 0 and "scale-by-dk" in feedback
    assert first_match(cloze_answers(found[1][1]), "0.25")[0] == 100
    # (c): tolerance 0, the slip is 0.0625 but a student writes the printed 0.06
    fraction, _, _, feedback = first_match(cloze_answers(found[2][1]), "0.06")
    assert fraction == 0 and "softmax-over-columns" in feedback
    assert first_match(cloze_answers(found[2][1]), "0.125")[0] == 100


def test_moodle_gap_shows_the_printed_value_as_the_correct_answer(runner, key_file):
    q = by_idnumber(moodle_questions(export(runner, key_file, "moodle")), "q-slips:s1")
    for _, alts in gaps(q)[3:]:
        answers = cloze_answers(alts)
        assert answers[0][:2] == (100, "1.41")
        # and every number within the key's margin of √2 still gets full marks
        for typed in ("1.4093", "1.4191", "1.41421356"):
            assert first_match(answers, typed)[0] == 100
        with pytest.raises(AssertionError):
            first_match(answers, "1.4193")


def test_gift_numerical_answers_are_moodle_xmls(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    q = next(q for q in questions if q["name"] == "6. q-one [s1]")
    assert (q["answers"][0][0], q["answers"][0][1]) == (100, 0.80)
    fb = next(a[3] for a in q["answers"] if a[0] == 0 and a[1] == 0.60)
    assert "scale-by-dk" in fb and "no-scale" in fb
    slips = [q for q in questions if q["name"].startswith("5. q-slips [s1] (c)")]
    assert [a[1] for a in slips[0]["answers"] if a[0] == 0] == [0.06, 0.0625]


class _Filtered(HTMLParser):
    """Collects what Moodle's emoticon and URL filters would rewrite: matches in text outside
    a nolink span (math too: the filters run before MathJax)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img", "hr"):
            return
        self.stack.append(("class", "nolink") in attrs or any(self.stack))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("br", "img", "hr"):
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not any(self.stack):
            self.found.extend(EMOTICON.findall(data))


def _unprotected(html_text: str) -> list[str]:
    parser = _Filtered()
    parser.feed(html_text)
    parser.close()
    return parser.found


def test_moodle_texts_are_kept_off_the_emoticon_and_url_filters(runner, key_file):
    questions = moodle_questions(export(runner, key_file, "moodle"))
    q = by_idnumber(questions, "q-slips:s1")
    text = q.find("questiontext/text").text
    assert '<b><span class="nolink">(h)</span></b>' in text  # the label of part (h)
    key = q.find("generalfeedback/text").text
    assert '<span class="nolink">(h)</span> ' in key
    # no text of any question, feedback or answer is left for a filter to rewrite
    for question in questions:
        for path in ("questiontext/text", "generalfeedback/text", "answer/feedback/text"):
            for el in question.findall(path):
                body = el.text or ""
                body = re.sub(r"\{\d*:[A-Z_]+:(?:\\.|[^}\\])*\}", "", body)  # gaps: below
                assert _unprotected(body) == [], (question.findtext("name/text"), path)
    # inside a gap (plain text), a word joiner breaks the emoticon: (n) reads (⁠n)
    for _, alts in gaps(q):
        for _, _, feedback in alts:
            assert not EMOTICON.search(feedback)
    assert any("(\u2060n)" in fb for _, alts in gaps(q) for _, _, fb in alts)


def test_gift_texts_are_kept_off_the_filters(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    q = next(q for q in questions if q["name"] == "5. q-slips [s1] (h) p7")
    assert '<b><span class="nolink">(h)</span></b>' in q["text"]
    for q in questions:
        assert _unprotected(q["text"]) == [], q["name"]
        for a in q["answers"]:
            assert _unprotected(a[-1]) == [], q["name"]


def _blanks(item: ET.Element) -> dict[str, list[str]]:
    return {
        lid.get("ident")[len("response_") :]: [
            lab.findtext(f".//{QTI}mattext") for lab in lid.iter(f"{QTI}response_label")
        ]
        for lid in item.iter(f"{QTI}response_lid")
    }


def test_canvas_blanks_accept_the_spellings_a_student_types_and_say_which(runner, key_file):
    _, root = unzip_qti(export(runner, key_file, "qti"))
    item = items_by_title(root)["5. q-slips [s1]"]
    blanks = _blanks(item)
    # 0.50 ± 0.005 at 2 places: trailing zeros, a leading +, no leading zero
    for typed in ("0.50", "0.5", "0.500", "+0.50", ".50", ".5", "+.5", "+0.500"):
        assert typed in blanks["p0"], typed
    for typed in ("0.49", "0.51", "0.5000", "0.501", "1/2"):
        assert typed not in blanks["p0"], typed
    assert blanks["p0"][0] == "0.50"  # the printed value first
    assert {"1.41", "1.410", "+1.41"} <= set(blanks["p3"])
    assert "1.4" not in blanks["p3"]  # 1.40 lies outside √2 ± 0.005
    assert "1.414" not in blanks["p3"]  # more digits: the question says so
    assert all(len(texts) <= 40 for texts in blanks.values())  # bounded
    text = item.find(f"{QTI}presentation/{QTI}material/{QTI}mattext").text
    assert "give each number to 2 or 3 decimal places" in text
    assert "trailing zeros left out or one more" in text and "more digits are marked wrong" in text


def _canvas_score(item: ET.Element, typed: str) -> int:
    """Canvas's scoring of a numerical item: the first condition that holds sets the score."""
    x = Decimal(typed)
    for cond in item.iter(f"{QTI}respcondition"):
        var = cond.find(f"{QTI}conditionvar")
        setvar = cond.find(f"{QTI}setvar")
        if setvar is None:
            continue
        exact = [Decimal(e.text) for e in var.iter(f"{QTI}varequal")]
        low = [Decimal(e.text) for e in var.iter(f"{QTI}vargte")]
        high = [Decimal(e.text) for e in var.iter(f"{QTI}varlte")]
        if x in exact or (low and high and low[0] <= x <= high[0]):
            return int(setvar.text)
    return 0


def test_canvas_numerical_shows_the_printed_value_and_keeps_the_keys_margin(runner, key_file):
    _, root = unzip_qti(export(runner, key_file, "qti"))
    item = items_by_title(root)["6. q-one [s1]"]
    first = item.find(f".//{QTI}respcondition[@continue='No']")
    assert first.findtext(f".//{QTI}varequal") == "0.80"  # what Canvas shows as the answer
    for typed, score in (("0.80", 100), ("0.7995", 100), ("0.8093", 100), ("0.7993", 0)):
        assert _canvas_score(item, typed) == score, typed


def test_quiz_totals_are_the_keys_total(runner, key_file):
    key = json.loads(key_file.read_text(encoding="utf-8"))
    total = sum(q["points"] for q in key["sheets"][0]["questions"])
    files, _ = unzip_qti(export(runner, key_file, "qti"))
    (meta,) = [v for k, v in files.items() if k.endswith("assessment_meta.xml")]
    ns = "{http://canvas.instructure.com/xsd/cccv1p0}"
    assert Decimal(ET.fromstring(meta).findtext(f"{ns}points_possible")) == total
    # Moodle: a mixed question's written part (an essay of its own) has its share of the
    # question's 3 points, its graded question the rest
    questions = moodle_questions(export(runner, key_file, "moodle"))
    essay = by_idnumber(questions, "q-words:written")
    assert Decimal(essay.findtext("defaultgrade")) == Decimal("1.5")


def test_note_bank_totals_agree_in_canvas(tmp_path):
    from click.testing import CliRunner

    from tests.conftest import ROOT
    from worksheetgen.cli import main

    args = ["build", "--seed", "42", "--bank", str(ROOT / "banks" / "note.yaml"), "--no-pdf"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "--export", "qti"])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    total = sum(Decimal(str(q["points"])) for q in key["sheets"][0]["questions"])
    files, _ = unzip_qti(folder / "canvas-qti.zip")
    (meta,) = [v for k, v in files.items() if k.endswith("assessment_meta.xml")]
    ns = "{http://canvas.instructure.com/xsd/cccv1p0}"
    assert Decimal(ET.fromstring(meta).findtext(f"{ns}points_possible")) == total


def test_gift_choices_keep_the_printed_letters_and_say_moodle_may_reorder(runner, key_file):
    questions = parse_gift(export(runner, key_file, "gift").read_text(encoding="utf-8"))
    mc = next(q for q in questions if q["name"] == "3. q-mc [s1]")
    letters = [htmllib.unescape(a[1]).split(".", 1)[0] for a in mc["answers"]]
    assert letters == ["A", "B", "C"]  # the sheet's order and letters, whatever Moodle shows
    assert "Moodle may show the options in another order" in htmllib.unescape(mc["text"])
    pick = next(q for q in questions if q["name"] == "4. q-words [s1]")
    assert [htmllib.unescape(a[1]) for a in pick["answers"]] == [
        "A. <span>without the scale</span>",
        "B. <span>with the scale</span>",
        "C. <span>equally peaked</span>",
    ]
    assert "letter on the printed sheet" in htmllib.unescape(pick["text"])


def test_every_slip_a_student_writes_gets_named_in_a_real_banks_moodle_export(tmp_path):
    """The note bank, built and exported: in every numerical gap and question, what each slip
    prints is matched by an answer naming that slip, and the printed key value comes first."""
    from click.testing import CliRunner

    from tests.conftest import ROOT
    from worksheetgen.cli import main
    from worksheetgen.keyjson.read import gradable_parts, load_key

    args = ["build", "--seed", "42", "--bank", str(ROOT / "banks" / "note.yaml"), "--no-pdf"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path), "--export", "moodle"])
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    doc = load_key(folder / "key.json")
    questions = moodle_questions(folder / "moodle.xml")
    checked = 0
    for q in doc.questions:
        for v in q.variants:
            parts = gradable_parts(v)
            if not parts or any(p.choices for p in parts):
                continue
            xq = by_idnumber(questions, f"{v.qid}:{v.sheet_id}")
            if xq.get("type") == "numerical":
                answer_lists = [numerical_answers(xq)]
            elif xq.get("type") == "cloze":
                answer_lists = [
                    cloze_answers(alts) if kind == "NUMERICAL" else [] for kind, alts in gaps(xq)
                ]
            else:
                continue
            cells = [
                c
                for p in parts
                for c in ((p.answer.cells if p.kind != "choice" else (None,)) if p.answer else ())
            ]
            assert len(cells) == len(answer_lists), v.where
            for cell, answers in zip(cells, answer_lists, strict=True):
                if cell is None or cell.masked:
                    continue
                assert Decimal(answers[0][1]) == Decimal(cell.printed)
                for slip in cell.slips:
                    typed = slip.printed
                    if abs(Decimal(typed) - Decimal(repr(cell.value))) <= Decimal(
                        repr(cell.tolerance)
                    ):
                        continue  # the margin takes it: no mark can tell it from the key
                    fraction, _, _, feedback = first_match(answers, typed)
                    assert fraction == 0, (v.where, cell.label, typed)
                    assert all(m in feedback for m in slip.misconceptions), (v.where, typed)
                    checked += 1
    assert checked > 20
