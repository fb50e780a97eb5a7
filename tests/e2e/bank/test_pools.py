"""Pools and shuffled order (issue 17, item 3).

A bank entry ``pool:`` fills a slot with ``pick`` of its alternatives per sheet, drawn from
(seed, secret, sheet id, slot id) alone; ``shuffle`` prints each sheet's questions in an
order of its own. Numbers never depend on the slot or the place; key.json, grading and the
exports keep question ids and say which slot each question fills.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.solved import make_build
from tests.unit.bank.test_pools import ATTENTION, POOLS, SHAPES, _build, _key, _order, _roster
from worksheetgen.bank.load import load_banks
from worksheetgen.cli import main


def _fill(key: dict, template: str) -> str:
    """A filled-in template: every entry the key's printed answer (a choice: its letter)."""
    questions = {(s["id"], q["id"]): q for s in key["sheets"] for q in s["questions"]}
    rows = list(csv.DictReader(io.StringIO(template)))
    out = [list(rows[0])]
    for row in rows:
        q = questions[(row["student"], row["question"])]
        name, entry = row["answer"], row["entry"]
        kind, value = q["kinds"][name], q["rounded"][name]
        if q.get("choices"):
            value = q["choice_answer"]
        elif kind == "matrix":
            r, c = (int(x) for x in entry.split(","))
            value = value[r - 1][c - 1]
        elif kind == "vector":
            value = value[int(entry) - 1]
        elif kind == "shape":
            value = "x".join(value)
        out.append([*list(row.values())[:-1], value])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(out)
    return buf.getvalue()


def test_grading_a_class_whose_students_drew_different_alternatives(runner, tmp_path):
    folder = _build(tmp_path, "r", roster=str(_roster(tmp_path / "r.csv", ["a", "b", "c", "d"])))
    key_path = folder / "key.json"
    key = _key(folder)
    template = tmp_path / "template.csv"
    result = runner.invoke(main, ["grade", "--key", str(key_path), "--template", str(template)])
    assert result.exit_code == 0, result.output
    text = template.read_text("utf-8")
    for sheet in key["sheets"]:  # the template lists what each student has, and only that
        rows = csv.DictReader(io.StringIO(text))
        listed = {row["question"] for row in rows if row["student"] == sheet["id"]}
        assert listed == {q["id"] for q in sheet["questions"]}
    responses = tmp_path / "responses.csv"
    responses.write_text(_fill(key, text), encoding="utf-8")
    out = tmp_path / "graded"
    result = runner.invoke(
        main, ["grade", "--key", str(key_path), str(responses), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        scores = list(csv.DictReader(fh))
    assert len(scores) == 4 and all(s["total"] == s["max"] for s in scores)
    # each student's max is the points of what that student drew
    for s, sheet in zip(scores, key["sheets"], strict=True):
        assert float(s["max"]) == sum(q["points"] for q in sheet["questions"])


def test_a_response_for_a_question_the_student_did_not_draw_is_an_error(runner, tmp_path):
    folder = _build(tmp_path, "r", roster=str(_roster(tmp_path / "r.csv", ["a", "b", "c", "d"])))
    key = _key(folder)
    sheet = key["sheets"][0]
    drawn = {q["id"] for q in sheet["questions"]}
    (missing, *_) = sorted((ATTENTION | SHAPES) - drawn)
    responses = tmp_path / "responses.csv"
    responses.write_text(
        "student,question,answer,entry,value\n"
        f'{sheet["id"]},p-heads,d_k,,4\n{sheet["id"]},{missing},A,"1,1",1\n',
        encoding="utf-8",
    )
    out = tmp_path / "graded"
    result = runner.invoke(
        main, ["grade", "--key", str(folder / "key.json"), str(responses), "--out", str(out)]
    )
    assert result.exit_code == 1
    assert f"responses.csv:3: question: expected a question id of sheet '{sheet['id']}'" in (
        result.output
    )
    assert f"got '{missing}'" in result.output
    assert not out.exists()


def _moodle_download(key_path: Path, picks: list[list[tuple[str, str]]]) -> str:
    """A Moodle Responses download (as Moodle 4.5 writes its columns) of a quiz made from
    ``export --to moodle``: per attempt, the (sheet id, question id) of the variant Moodle's
    random question drew in each slot, with the exact values as its Right answer (Moodle's
    14 digits) and the same typed as the Response."""
    from worksheetgen.grading.moodle import _gaps, _php_number
    from worksheetgen.keyjson.read import load_key

    doc = load_key(key_path)
    variants = {(v.sheet_id, v.qid): v for q in doc.questions for v in q.variants}
    head = ["Last name", "First name", "Email address", "Status", "Started", "Completed"]
    head += ["Duration", "Grade/10.00"]
    for n in range(1, max(len(attempt) for attempt in picks) + 1):  # a column pair per slot
        head += [f"Response {n}", f"Right answer {n}"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for i, attempt in enumerate(picks):
        row = [f"Student{i}", "Test", f"s{i}@example.com", "Finished", "", "", "", "10.00"]
        for where in attempt:
            gaps, cloze = _gaps(variants[where])
            texts = [
                g.right
                if g.options
                else "-inf"
                if g.value is None
                else f"{_php_number(g.value):.14g}"
                for g in gaps
            ]
            text = (
                "; ".join(f"part {k}: {t}" for k, t in enumerate(texts, 1)) if cloze else texts[0]
            )
            row += [text, text]
        w.writerow(row)
    return buf.getvalue()


def test_grading_a_moodle_download_of_a_quiz_with_a_pool_of_pick_1(runner, tmp_path, write_bank):
    bank = write_bank(
        "questions:\n  - id: own\n    family: heads\n  - pool: p\n    from:\n"
        "      - id: alt-soft\n        family: softmax\n        points: 2\n"
        "      - id: alt-causal\n        family: causal\n        points: 2\n"
    )
    folder = _build(tmp_path, "v", bank=bank, versions=6)
    key = _key(folder)
    drawn = {(s["id"], q["id"]) for s in key["sheets"] for q in s["questions"]}
    soft = sorted(w for w in drawn if w[1] == "alt-soft")
    causal = sorted(w for w in drawn if w[1] == "alt-causal")
    assert soft and causal
    # Moodle's random questions mix the versions: each student's slots from any sheet
    picks = [[("A", "own"), soft[0]], [("B", "own"), causal[0]], [("C", "own"), causal[-1]]]
    download = tmp_path / "responses.csv"
    download.write_text(_moodle_download(folder / "key.json", picks), encoding="utf-8")
    out = tmp_path / "graded"
    argv = ["grade", "--key", str(folder / "key.json"), str(download), "--out", str(out)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        scores = list(csv.DictReader(fh))
    assert [(s["own"], s["alt-soft"], s["alt-causal"], s["total"]) for s in scores] == [
        ("1", "2", "", "3"),
        ("1", "", "2", "3"),
        ("1", "", "2", "3"),
    ]


def test_grading_a_moodle_download_of_a_quiz_with_a_pool_of_pick_2(runner, tmp_path, write_bank):
    bank = write_bank(
        "questions:\n  - id: own\n    family: heads\n  - pool: p\n    pick: 2\n    from:\n"
        "      - id: alt-soft\n        family: softmax\n        points: 2\n"
        "      - id: alt-causal\n        family: causal\n        points: 2\n"
        "      - id: alt-heads\n        family: heads\n        points: 3\n"
    )
    folder = _build(tmp_path, "v", bank=bank, versions=6)
    key = _key(folder)
    drawn = {(s["id"], q["id"]) for s in key["sheets"] for q in s["questions"]}
    by_id = {qid: sorted(w for w in drawn if w[1] == qid) for qid in ("alt-soft", "alt-causal")}
    heads = sorted(w for w in drawn if w[1] == "alt-heads")
    assert by_id["alt-soft"] and by_id["alt-causal"] and heads
    # two slots for the pool, each any version of any alternative (Moodle's random questions)
    picks = [
        [("A", "own"), by_id["alt-soft"][0], by_id["alt-causal"][-1]],
        [("B", "own"), heads[0], by_id["alt-soft"][-1]],
    ]
    download = tmp_path / "responses.csv"
    download.write_text(_moodle_download(folder / "key.json", picks), encoding="utf-8")
    out = tmp_path / "graded"
    argv = ["grade", "--key", str(folder / "key.json"), str(download), "--out", str(out)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        scores = list(csv.DictReader(fh))
    got = [(s["own"], s["alt-soft"], s["alt-causal"], s["alt-heads"], s["total"]) for s in scores]
    assert got == [("1", "2", "2", "", "5"), ("1", "2", "", "3", "6")]
    # an attempt whose two random questions drew two versions of one question is listed and
    # not graded; the other attempts are graded (the file is never refused for it)
    twice = [
        [("A", "own"), by_id["alt-soft"][0], by_id["alt-soft"][-1]],
        [("B", "own"), heads[0], by_id["alt-soft"][-1]],
    ]
    assert by_id["alt-soft"][0] != by_id["alt-soft"][-1]
    download.write_text(_moodle_download(folder / "key.json", twice), encoding="utf-8")
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    first, last = by_id["alt-soft"][0][0], by_id["alt-soft"][-1][0]
    with open(out / "scores.csv", encoding="utf-8", newline="") as fh:
        assert [s["student"] for s in csv.DictReader(fh)] == ["s1@example.com"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "s0@example.com (Test Student0): question alt-soft twice in pool p "
        f"(versions {first} and {last}, line 2)."
    ) in report
    # under a German key (its sheets' words German), the note is German, as report.md is
    doc = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    german = tmp_path / "de" / "key.json"
    german.parent.mkdir()
    german.write_text(json.dumps({**doc, "language": "de"}), encoding="utf-8")
    result = runner.invoke(main, ["grade", "--key", str(german), *argv[3:]])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "s0@example.com (Test Student0): Aufgabe alt-soft zweimal im Pool p "
        f"(Versionen {first} und {last}, Zeile 2)."
    ) in report
    assert "twice in pool" not in report


def test_grading_a_moodle_download_of_a_pool_with_written_parts_in_some_alternatives_is_refused(
    runner, tmp_path, write_bank
):
    bank = write_bank(
        "questions:\n  - pool: p\n    from:\n"
        "      - id: alt-soft\n        family: softmax\n"
        "      - id: alt-idea\n        family: concept\n"
    )
    folder = _build(tmp_path, "v", bank=bank, versions=3)
    download = ROOT / "tests" / "fixtures" / "moodle" / "default" / "responses-resp-right.csv"
    out = tmp_path / "graded"
    argv = ["grade", "--key", str(folder / "key.json"), str(download), "--out", str(out)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 1
    assert result.output == (
        f"worksheetgen: error: {folder / 'key.json'}: slots: expected a pool whose "
        "alternatives all have a written part or none, as the Moodle export deals them, got "
        "pool 'p' with alt-soft without one (grade such a quiz from a responses CSV: grade "
        "--template)\n"
    )
    assert not out.exists()


def test_gift_refuses_a_pool_of_pick_2_it_cannot_deal(exported, runner, tmp_path):
    key = str(exported / "key.json")
    result = runner.invoke(main, ["export", "--to", "gift", "--key", key, "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert "pool shapes: expected a pool GIFT can deal as the sheets did, got pick 2" in (
        result.output
    )
    assert "Traceback" not in result.output and not list(tmp_path.iterdir())


def test_config_shuffle_and_the_option_that_wins(runner, tmp_path, monkeypatch):
    bank = tmp_path / "plain.yaml"
    bank.write_text(POOLS.read_text("utf-8").replace("  shuffle: true\n", ""), encoding="utf-8")
    (tmp_path / "worksheetgen.toml").write_text("shuffle = true\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["config"])
    assert "shuffle = true  (" in result.output and "worksheetgen.toml:1)" in result.output

    def order(*args: str) -> dict[str, list[str]]:
        out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
        argv = ["build", "--seed", "11", "--bank", str(bank), "--no-pdf", "--versions", "8"]
        res = runner.invoke(main, [*argv, "--out", str(out), "-q", *args])
        assert res.exit_code == 0, res.output
        (folder,) = out.iterdir()
        return _order(folder)

    from_config = order()
    assert from_config == order("--shuffle")
    assert from_config != order("--no-shuffle")
    (tmp_path / "worksheetgen.toml").write_text("\nshuffle = 'yes'\n", encoding="utf-8")
    result = runner.invoke(main, ["config"])
    assert result.exit_code == 1
    assert "worksheetgen.toml:2: shuffle: expected true or false, got 'yes'" in result.output


def test_a_single_build_with_pools_through_the_cli(runner, tmp_path):
    out = tmp_path / "out"
    argv = ["build", "--seed", "5", "--bank", str(POOLS), "--no-pdf", "--out", str(out)]
    result = runner.invoke(main, [*argv, "--export", "moodle"])
    assert result.exit_code == 0, result.output
    assert "4 questions" in result.output
    (folder,) = out.iterdir()
    bank = load_banks([POOLS])
    again = make_build(bank, 5, [("pools", "Worksheet", None)])
    (sheet,) = _key(folder)["sheets"]
    assert [q["id"] for q in sheet["questions"]] == [i.spec.id for i in again.sheets[0].items]


H = "questions:\n  - id: a\n    family: heads\n  - id: b\n    family: heads\n"


BAD_POOLS = [
    pytest.param(
        H + "  - pool: p\n    pick: 3\n    from: [a, b]\n",
        ("bank.yaml:7: questions[2].pick: expected at most 2 (the pool has 2 alternatives), got 3"),
        id="pick-too-many",
    ),
    pytest.param(
        H + "  - pool: p\n    pick: 0\n    from: [a, b]\n",
        ("bank.yaml:7: questions[2].pick: expected a whole number of at least 1, got 0"),
        id="pick-zero",
    ),
    pytest.param(
        H + "  - pool: p\n    pick: 1.5\n    from: [a, b]\n",
        ("bank.yaml:7: questions[2].pick: expected a whole number of at least 1, got 1.5"),
        id="pick-not-int",
    ),
    pytest.param(
        H + "  - pool: p\n    pick: two\n    from: [a, b]\n",
        ("bank.yaml:7: questions[2].pick: expected a whole number of at least 1, got 'two'"),
        id="pick-text",
    ),
    pytest.param(
        H + "  - pool: p\n    from: []\n",
        (
            "bank.yaml:7: questions[2].from: expected a non-empty list of question "
            "ids or questions, got an empty list"
        ),
        id="empty-pool",
    ),
    pytest.param(
        H + "  - pool: p\n    pick: 1\n",
        (
            "bank.yaml:6: questions[2].from: expected a non-empty list of question "
            "ids or questions, got nothing"
        ),
        id="no-from",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a, bb]\n",
        (
            "bank.yaml:7: questions[2].from[1]: expected the id of a question in "
            "the banks, got 'bb' (did you mean \"b\"?)"
        ),
        id="unknown-id",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a, b]\n  - pool: r\n    from: [b]\n",
        (
            "bank.yaml:9: questions[3].from[0]: expected a question named by one "
            "pool only, got 'b', already in pool 'p' at bank.yaml:7"
        ),
        id="two-pools",
    ),
    pytest.param(
        H + "  - pool: a\n    from: [b]\n",
        (
            "bank.yaml:6: questions[2].pool: expected a pool id that is no "
            "question's id, got 'a', the id of the question at bank.yaml:2"
        ),
        id="pool-id-is-question",
    ),
    pytest.param(
        H + "  - pool: p\n    from:\n      - a\n      - pool: inner\n        from: [b]\n",
        (
            "bank.yaml:9: questions[2].from[1].pool: expected a question id or a "
            "question, got a pool inside a pool"
        ),
        id="pool-in-pool",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a]\n  - pool: r\n    from: [b, p]\n",
        (
            "bank.yaml:9: questions[3].from[1]: expected a question id, got 'p', a "
            "pool (a pool inside a pool)"
        ),
        id="pool-names-pool",
    ),
    pytest.param(
        H + "  - pool: p\n    from:\n      - id: a\n        family: heads\n",
        (
            "bank.yaml:8: questions[2].from[0].id: expected a question placed only "
            "through its pool, got 'a', also placed on its own at bank.yaml:2"
        ),
        id="inline-also-own",
    ),
    pytest.param(
        (
            "questions:\n"
            "  - pool: p\n"
            "    from:\n"
            "      - id: a\n"
            "        family: heads\n"
            "  - id: a\n"
            "    family: heads\n"
        ),
        (
            "bank.yaml:6: questions[1].id: expected a question placed only through "
            "its pool, got 'a' on its own, already an alternative of a pool at "
            "bank.yaml:4"
        ),
        id="own-after-inline",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a]\n  - pool: p\n    from: [b]\n",
        (
            "bank.yaml:8: questions[3].pool: expected a unique pool id, got 'p' "
            "again (first at bank.yaml:6)"
        ),
        id="dup-pool",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a]\n    points: 2\n",
        ("bank.yaml:8: questions[2].points: unknown field; expected one of: pool, pick, from"),
        id="pool-field",
    ),
    pytest.param(
        "sheet:\n  shuffle: 'yes'\n" + H,
        "bank.yaml:2: sheet.shuffle: expected true or false, got 'yes'",
        id="shuffle-text",
    ),
    pytest.param(
        H + "  - pool: p\n    from: [a, b, a]\n",
        (
            "bank.yaml:7: questions[2].from[2]: expected each alternative once, got "
            "'a' again (first at line 7)"
        ),
        id="dup-in-pool",
    ),
    pytest.param(
        H + "  - pool: 'a b'\n    from: [a]\n",
        (
            "bank.yaml:6: questions[2].pool: expected a pool id of letters, digits, "
            "'-', '_' or '.' (at most 64), got 'a b'"
        ),
        id="bad-pool-id",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_POOLS)
def test_a_bad_pool_is_one_line_with_file_line_and_field_and_writes_nothing(
    runner, tmp_path, monkeypatch, text, expected
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bank.yaml").write_text(text, encoding="utf-8")
    argv = ["build", "--seed", "1", "--bank", "bank.yaml", "--no-pdf", "--out", "out"]
    result = runner.invoke(main, argv)
    assert result.exit_code == 1
    assert result.output == f"worksheetgen: error: {expected}\n"
    assert not (tmp_path / "out").exists()


def test_a_pool_names_questions_of_other_banks_and_two_banks_pools_are_checked_together(
    runner, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    Path("one.yaml").write_text("questions:\n  - pool: p\n    from: [a, b]\n", encoding="utf-8")
    Path("two.yaml").write_text(H, encoding="utf-8")
    argv = ["build", "--seed", "1", "--no-pdf", "--out", "out", "--bank", "one.yaml"]
    result = runner.invoke(main, [*argv, "--bank", "two.yaml"])
    assert result.exit_code == 0, result.output
    (folder,) = Path("out").iterdir()
    (sheet,) = _key(folder)["sheets"]
    assert [q["slot"] for q in sheet["questions"]] == ["p"]
    Path("three.yaml").write_text("questions:\n  - pool: r\n    from: [b]\n", encoding="utf-8")
    result = runner.invoke(main, [*argv, "--bank", "two.yaml", "--bank", "three.yaml"])
    assert result.exit_code == 1
    assert result.output == (
        "worksheetgen: error: three.yaml:3: questions[0].from[0]: expected a question named "
        "by one pool only, got 'b', already in pool 'p' at one.yaml:3\n"
    )
