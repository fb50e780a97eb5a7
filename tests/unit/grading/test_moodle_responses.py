"""grade reads Moodle's own Responses report (issue 18): real Moodle 4.5.5 downloads in
tests/fixtures/moodle/ (its README says what each student typed).

A behaviour across modules, not one module's tests (errors, grading.key, grading.moodle,
grading.responses, grading.score, grading.spreadsheet, keyjson.read, textrules)."""

from __future__ import annotations

import csv
import io
import json
import re
from fractions import Fraction

import pytest

from tests.paths import MOODLE
from worksheetgen.errors import GradeError
from worksheetgen.grading.key import GradeKey, grade_key
from worksheetgen.grading.moodle import Attempts, Tries, parse_moodle
from worksheetgen.grading.responses import Responses
from worksheetgen.grading.score import GradeResult, StudentResult, grade
from worksheetgen.keyjson.read import load_key

FIXTURES = MOODLE


BANKS = ("default", "slips", "note")


QUIZ = {"default": 0, "slips": 1, "note": 2, "default-adaptive": 3}  # attempts.json order


EMAILS = {
    "s1": "ada.lovelace@example.com",
    "s2": "ben.carter@example.com",
    "s3": "zoe.nunez@example.com",
    "s4": "dan.ortiz@example.com",
    "s5": "eve.park@example.com",
    "s6": "finn.olsen@example.com",
}


def text_of(folder: str, name: str) -> str:
    return (FIXTURES / folder / name).read_bytes().decode("utf-8-sig")


def read(
    folder: str,
    name: str,
    text: str | None = None,
    tries: Tries = "last",
    attempts: Attempts = "highest",
    penalty: Fraction | None = None,
) -> tuple[Responses, GradeKey, GradeKey]:
    bank = "default" if folder == "default-adaptive" else folder
    doc = load_key(FIXTURES / bank / "key.json")
    key = grade_key(doc)
    body = text_of(folder, name) if text is None else text
    responses, graded_key = parse_moodle(body, doc, key, name, tries, attempts, penalty=penalty)
    return responses, graded_key, key


def graded(folder: str, name: str = "responses-resp-right.csv", **kw) -> GradeResult:
    responses, graded_key, _ = read(folder, name, **kw)
    return grade(graded_key, responses)


def student(result: GradeResult, who: str) -> StudentResult:
    return next(s for s in result.students if s.student == EMAILS[who])


def versions(graded_key: GradeKey, key: GradeKey) -> dict[str, dict[str, str]]:
    """The version (sheet id of the key) each student drew, per question: the key's sheet
    whose question (its very answers) the graded one is, which the graded one must name."""
    out: dict[str, dict[str, str]] = {}
    for sheet in graded_key.sheets:
        out[sheet.id] = {}
        for q in sheet.questions:
            (drawn,) = [
                s.id for s in key.sheets if getattr(s.question(q.id), "answers", 0) is q.answers
            ]
            # versions whose right answers read alike are all named ("A or C"), the one
            # graded among them
            assert drawn in re.split(r", | or ", q.version)
            out[sheet.id][q.id] = q.version
    return out


def error_of(folder: str, text: str) -> GradeError:
    with pytest.raises(GradeError) as info:
        read(folder, "responses.csv", text=text)
    return info.value


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_matches_each_slot_to_the_version_the_student_drew(bank):
    responses, graded_key, key = read(bank, "responses-resp-right.csv")
    attempts = json.loads((FIXTURES / "attempts.json").read_text())[QUIZ[bank]]["attempts"]
    for who, attempt in attempts.items():
        if attempt["state"] != "finished":
            continue
        drawn = versions(graded_key, key)[EMAILS[who]]
        for name in attempt["drawn"].values():
            m = re.fullmatch(r"\d+\. (\S+) \[(\w)\]( \(written\))?", name)
            assert m, name
            q = next(q for q in key.sheets[0].questions if q.id == m.group(1))
            kinds = {p.kind for p in q.answers}
            if not m.group(3) and kinds != {"text"}:  # an essay's version is not shown
                assert m.group(2) in re.split(r", | or ", drawn[m.group(1)]), (who, name)


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_names_the_version_moodle_drew_where_the_question_text_tells_it(bank):
    """Issue 34 §3: versions whose right answers read alike were all reported as the first
    of them; with the Question text beside the Right answer, the one Moodle drew is named
    (attempts.json: what Moodle recorded), and without it every one that fits is."""
    responses, graded_key, key = read(bank, "responses-qtext-resp-right.csv")
    attempts = json.loads((FIXTURES / "attempts.json").read_text())[QUIZ[bank]]["attempts"]
    told = versions(graded_key, key)
    alike = versions(*read(bank, "responses-resp-right.csv")[1:])
    several = 0
    for who, attempt in attempts.items():
        if attempt["state"] != "finished":
            continue
        for name in attempt["drawn"].values():
            m = re.fullmatch(r"\d+\. (\S+) \[(\w)\]( \(written\))?", name)
            assert m
            if m.group(3) or m.group(1) not in told[EMAILS[who]]:
                continue
            if any(p.kind != "text" for p in key.sheets[0].question(m.group(1)).answers):
                named = re.split(r", | or ", told[EMAILS[who]][m.group(1)])
                givens = {str(key.sheet(v).question(m.group(1)).given) for v in named}
                # named alone, unless the versions are the same question (the same drawn
                # values: nothing in Moodle tells which it drew), and then all of them
                assert named == [m.group(2)] or (len(givens) == 1 and m.group(2) in named)
                several += " or " in alike[EMAILS[who]][m.group(1)]
    if bank == "note":
        assert several  # versions alike in the download (self-vs-cross A and C), all named


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_student_who_typed_the_key_gets_full_marks(bank):
    s1 = student(graded(bank), "s1")
    assert s1.earned + s1.ungraded == s1.possible
    assert all(p.status in ("right", "ungraded") for q in s1.questions for p in q.parts)


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_names_the_slip_behind_each_planted_wrong_answer(bank):
    s2 = student(graded(bank), "s2")
    keyed = read(bank, "responses-resp-right.csv")[2]
    for q in s2.questions:
        wrong = [p for p in q.parts if p.status in ("wrong", "partial")]
        key_q = next(k for k in keyed.sheets[0].questions if k.id == q.id)
        if not key_q.slips and all(p.kind in ("text", "scalar") for p in q.parts):
            continue  # nothing to plant: no slip, no option (the README's rule)
        assert wrong, q.id
        if key_q.slips and bank != "slips":  # else a wrong option, or the choice's slip
            assert any(p.slips for p in wrong), q.id


def test_moodle_slips_bank_names_the_chosen_misconception_in_the_class_table():
    result = graded("slips")
    named = {s.misconception for s, _, _ in result.slip_counts()}
    assert {"softmax-over-columns", "no-scale", "scale-by-dk"} <= named


@pytest.mark.parametrize("bank", ["default", "note"])  # slips/ has no masked cell
def test_moodle_accepts_the_minus_infinity_sign_typed_as_a_masked_cell(bank):
    body = text_of(bank, "responses-resp-right.csv")
    assert "−∞" in body  # s3 typed U+2212 U+221E in masked cells
    s3 = student(graded(bank), "s3")
    assert s3.earned + s3.ungraded == s3.possible


def test_moodle_blank_gaps_are_unanswered_and_typed_text_is_wrong():
    s4 = student(graded("default"), "s4")
    q1 = s4.questions[0]
    scaled = q1.parts[0]  # 2x2: gaps 1-2 blank, gap 3 "abc", gap 4 right
    assert (scaled.total, scaled.answered, scaled.right) == (4, 2, 1)
    assert [w.wrote for w in scaled.wrong] == ["abc"]
    s4_slips = student(graded("slips"), "s4")  # no option ticked in a multiple-choice item
    items = [q.parts[0] for q in s4_slips.questions[:3]]
    assert all(p.kind == "choice" and p.answered == 0 and p.status == "blank" for p in items)


def test_moodle_credits_answers_within_the_tolerance_and_not_beyond():
    s5 = student(graded("default"), "s5")
    scaled, a = s5.questions[0].parts  # gaps 0-3 and 4-7: i%3==2 wrong, odd i within
    assert [w.entry for w in scaled.wrong] == ["2,1"]  # gap 2
    assert [w.entry for w in a.wrong] == ["1,2"]  # gap 5
    assert (scaled.right, a.right, scaled.answered, a.answered) == (3, 3, 4, 4)


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_lists_an_attempt_in_progress_and_does_not_grade_it(bank):
    result = graded(bank)
    assert EMAILS["s6"] not in {s.student for s in result.students}
    assert result.in_progress == (f"{EMAILS['s6']} (Finn Olsen)",)


def test_moodle_adaptive_counts_the_last_try_unless_asked_for_the_first():
    last = graded("default-adaptive", "responses-lasttry.csv")
    # without a penalty the best try: the key (with the export's, less than full marks)
    every = graded("default-adaptive", "responses-alltries.csv", penalty=Fraction(0))
    penalised = graded("default-adaptive", "responses-alltries.csv")
    first_of_every = graded("default-adaptive", "responses-alltries.csv", tries="first")
    first = graded("default-adaptive", "responses-firsttry.csv")
    for who in ("s2", "s5"):  # checked a slip first, then the key
        assert student(last, who).earned == student(last, who).possible
        assert student(every, who).earned == student(every, who).possible
        assert student(penalised, who).earned < student(penalised, who).possible
        assert student(first, who).earned < student(first, who).possible
        assert student(first_of_every, who).earned == student(first, who).earned
    assert every.in_progress == last.in_progress == (f"{EMAILS['s6']} (Finn Olsen)",)


def test_moodle_identifies_students_by_id_number_where_the_download_has_it():
    # the ID-number download has no Right answer columns: its ID column joined to the
    # Right-answer download's rows, as Moodle writes it (before the email)
    ids = [
        r[2] for r in csv.reader(io.StringIO(text_of("default", "responses-idnumber-email.csv")))
    ]
    rows = [r for r in text_of("default", "responses-resp-right.csv").split("\n") if r]
    joined = []
    for ident, row in zip(ids, rows, strict=True):
        m = re.match(r'^((?:"[^"]*"|[^,]*),(?:"[^"]*"|[^,]*),)', row)
        assert m
        joined.append(m.group(1) + ident + "," + row[m.end() :])
    responses, graded_key, _ = read("default", "x.csv", text="\n".join(joined))
    result = grade(graded_key, responses)
    assert [s.student for s in result.students] == ["S001", "S002", "S003", "S004", "S005"]
    assert result.students[0].name == "Ada Lovelace"
    assert result.in_progress == ("S006 (Finn Olsen)",)


def test_moodle_refuses_a_download_without_right_answers_naming_the_option():
    e = error_of("default", text_of("default", "responses.csv"))
    assert e.line == 1 and "Right answer" in e.message and "Display options" in e.message


def without_right_answers(folder: str) -> str:
    rows = list(csv.reader(io.StringIO(text_of(folder, "responses-qtext-resp-right.csv"))))
    keep = [i for i, c in enumerate(rows[0]) if not c.startswith("Right answer")]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[i] for i in keep] for r in rows)
    return out.getvalue()


@pytest.mark.parametrize("bank", BANKS)
def test_moodle_tells_the_versions_apart_by_question_text_without_right_answers(bank):
    responses, graded_key, key = read(bank, "q.csv", text=without_right_answers(bank))
    by_text = grade(graded_key, responses)
    by_right = graded(bank)
    assert "Right answer" not in without_right_answers(bank)
    assert [(s.student, s.earned) for s in by_text.students] == [
        (s.student, s.earned) for s in by_right.students
    ]
    by_right_versions = versions(*read(bank, "responses-resp-right.csv")[1:])
    for who, told in versions(graded_key, key).items():  # the text tells at least as much
        for qid, version in told.items():
            assert set(re.split(r", | or ", version)) <= set(
                re.split(r", | or ", by_right_versions[who][qid])
            ), (who, qid)


@pytest.mark.parametrize(
    ("name", "report"), [("grades.csv", "Grades"), ("statistics.csv", "Statistics")]
)
def test_moodle_refuses_another_report_given_as_responses(name, report):
    e = error_of("default", text_of("default", name))
    assert e.line == 1 and f"got a {report} report" in e.message


def test_moodle_refuses_a_quiz_from_another_key():
    with pytest.raises(GradeError) as info:
        read(
            "note", "responses-resp-right.csv", text=text_of("default", "responses-resp-right.csv")
        )
    assert info.value.line == 1 and "another key" in info.value.message


def test_moodle_refuses_a_right_answer_no_version_has_with_its_line():
    body = text_of("default", "responses-resp-right.csv")
    lines = body.split("\n")
    lines[3] = lines[3].replace("part 7: 0.62245933120185", "part 7: 0.62245933120186", 1)
    assert lines[3] != body.split("\n")[3]
    e = error_of("default", "\n".join(lines))
    assert e.line == 4 and e.field == "Right answer 1" and "another key" in e.message


def test_moodle_refuses_a_row_with_fewer_fields_with_its_line():
    lines = text_of("default", "responses-resp-right.csv").split("\n")
    lines[2] = lines[2].rsplit(",", 1)[0]
    e = error_of("default", "\n".join(lines))
    assert e.line == 3 and e.field == "fields"


def csv_rows(folder: str, name: str) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(text_of(folder, name))) if any(r)]


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("default", "responses.xlsx"),
        ("default", "responses.ods"),
        ("note", "responses-qtext-resp-right.xlsx"),
        ("note", "grades.ods"),
        ("default-adaptive", "responses-alltries.xlsx"),
    ],
)
def test_spreadsheet_download_has_the_cells_of_the_csv(folder, name):
    from worksheetgen.grading.spreadsheet import read_rows

    rows = read_rows(FIXTURES / folder / name, name)
    assert [r for _, r in rows] == csv_rows(folder, name.rsplit(".", 1)[0] + ".csv")
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1))


def test_spreadsheet_is_read_without_openpyxl_or_odfpy(monkeypatch):
    import sys

    from worksheetgen.grading.spreadsheet import read_rows

    for module in ("openpyxl", "odf"):  # import openpyxl / odf: ImportError
        monkeypatch.setitem(sys.modules, module, None)
    for name in ("responses.xlsx", "responses.ods"):
        rows = read_rows(FIXTURES / "default" / name, name)
        assert [r for _, r in rows] == csv_rows("default", "responses.csv")


def test_cloze_split_keeps_an_option_whose_text_holds_semicolons_and_colons():
    from worksheetgen.grading.moodle import _Gap, _shown_text, _split

    option = "first; part 3: then the softmax"  # an option text holding the next part
    gaps = [
        _Gap("a", (0, 0), value=1.0),
        _Gap("pick", (0, 0), options={_shown_text(option): "x"}),
        _Gap("b", (0, 0), value=2.0),
    ]
    text = f"part 1: 1.00; part 2: {option}; part 3: 2"
    assert _split(text, gaps, cloze=True) == ["1.00", option, "2"]
    assert _split("part 1: ; part 2: -; part 3: ", gaps, cloze=True) == ["", "-", ""]
    assert _split("part 1: 1; part 2: x", gaps, cloze=True) is None  # a part missing


def test_an_option_the_export_wrote_with_a_word_joiner_matches_its_text() -> None:
    """The Moodle export breaks a would-be emoticon ("(h)") with a word joiner; what Moodle
    then shows a student's choice as must still match the option."""
    from worksheetgen.grading.moodle import _shown_text
    from worksheetgen.textrules import WORD_JOINER

    assert _shown_text(f"scores grow ({WORD_JOINER}h) with d_k") == _shown_text(
        "scores grow (h) with d_k"
    )


def several_attempts_text() -> str:
    """The default download with Ben Carter's attempt three times: his own, then one that
    repeats Ada's right answers (a full score), then his own again."""
    rows = list(csv.reader(io.StringIO(text_of("default", "responses-resp-right.csv"))))
    header, body = rows[0], rows[1:]
    email = header.index("Email address")
    ada = next(r for r in body if r[email] == EMAILS["s1"])
    ben = next(r for r in body if r[email] == EMAILS["s2"])
    ben_right = [*ben[: header.index("Status")], *ada[header.index("Status") :]]
    others = [r for r in body if r[email] != EMAILS["s2"]]
    out = io.StringIO()
    csv.writer(out).writerows([header, ben, ben_right, ben, *others])
    return out.getvalue()


@pytest.mark.parametrize(
    ("rule", "counted", "full"), [("highest", 2, True), ("first", 1, False), ("last", 3, False)]
)
def test_moodle_several_attempts_count_as_the_attempt_rule_says(rule, counted, full):
    responses, graded_key, _ = read(
        "default", "responses.csv", text=several_attempts_text(), attempts=rule
    )
    result = grade(graded_key, responses)
    ben = student(result, "s2")
    assert (ben.earned == ben.possible) is full
    assert [s.student for s in result.students].count(EMAILS["s2"]) == 1
    assert responses.attempts == (
        f"{EMAILS['s2']} (Ben Carter), attempt {counted} of 3 counts ({rule})",
    )
    assert student(result, "s1").earned == student(result, "s1").possible  # one attempt


def test_moodle_all_tries_reads_a_slot_without_a_second_try_from_its_last_try():
    """Issue 34 §2: in an "all tries" download an attempt has a row per try up to the most
    tries of any slot; a slot answered at its first try shows "-" in the later rows (Moodle
    has no step of that try). It was read as blank (Hal: 6/24 there, 20/24 from the last-try
    download); its last try is the last row where it has a response."""
    rows = list(csv.reader(io.StringIO(text_of("default-adaptive", "responses-alltries.csv"))))
    header = rows[0]
    resp = [i for i, c in enumerate(header) if c.startswith("Response ")]
    ben = [k for k, r in enumerate(rows) if r[1] == "Ben"]
    assert len(ben) == 2
    first, second = rows[ben[0]], rows[ben[1]]
    # Ben's first try at slots 1 and 2 right (his second try's answers), no second try there
    for i in resp[:2]:
        first[i], second[i] = second[i], "-"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    # no penalty: the second tries of slots 3-5 (the key) count in full, as in the last try
    every = read(
        "default-adaptive", "responses-alltries.csv", text=out.getvalue(), penalty=Fraction(0)
    )
    result = grade(every[1], every[0])
    ben_result = student(result, "s2")
    last = student(graded("default-adaptive", "responses-lasttry.csv"), "s2")
    assert ben_result.earned == last.earned == last.possible
    assert all(q.parts and all(p.answered for p in q.parts) for q in ben_result.questions)
