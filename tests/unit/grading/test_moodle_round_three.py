"""Issue 34 §2: which of a student's attempts counts follows Moodle's grading method as the
download states it."""

from __future__ import annotations

import csv
import io

from tests.paths import MOODLE
from worksheetgen.grading.key import grade_key
from worksheetgen.grading.moodle import parse_moodle
from worksheetgen.keyjson.read import load_key

REAL = MOODLE / "real-4"


def _with_grades(grades: dict[int, str]) -> str:
    """real-4's Right-answer download with the Grade column of some rows (by row index)
    set, as Moodle writes it once the essays are marked."""
    rows = list(csv.reader(io.StringIO((REAL / "responses-right.csv").read_text("utf-8-sig"))))
    col = next(i for i, c in enumerate(rows[0]) if c.startswith("Grade/"))
    for k, text in grades.items():
        rows[k][col] = text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _gia(text: str):
    doc = load_key(REAL / "key.json")
    responses, _ = parse_moodle(text, doc, grade_key(doc), "r.csv")
    (line,) = [a for a in responses.attempts if "Gia" in a]
    return line


def test_highest_grade_counts_the_attempt_moodle_graded_highest():
    """Gia's second attempt is the key (grade's own score higher), but Moodle graded her
    first higher (an adaptive quiz's penalties, or a teacher's essay marks): Moodle's
    "Highest grade" counts the first, and so does grade when the download states both."""
    rows = list(csv.reader(io.StringIO((REAL / "responses-right.csv").read_text("utf-8-sig"))))
    gia = [k for k, r in enumerate(rows) if r[1] == "Gia"]
    assert len(gia) == 2
    assert "attempt 2 of 2 counts" in _gia(_with_grades({}))  # no grades stated: its scores
    assert "attempt 1 of 2 counts" in _gia(_with_grades({gia[0]: "25.00", gia[1]: "20.50"}))
    assert "attempt 2 of 2 counts" in _gia(_with_grades({gia[0]: "20.00", gia[1]: "30.00"}))
    # equal grades: the earliest, as Moodle keeps it
    assert "attempt 1 of 2 counts" in _gia(_with_grades({gia[0]: "30.00", gia[1]: "30.00"}))


ADAPTIVE = MOODLE / "adaptive-tries"


def _scores(name: str, *flags: str) -> dict[str, tuple[str, ...]]:
    import tempfile

    from click.testing import CliRunner

    from worksheetgen.cli import main

    with tempfile.TemporaryDirectory() as out:
        argv = ["grade", "--key", str(ADAPTIVE / "key.json"), str(ADAPTIVE / name), "--out", out]
        argv += flags
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output
        with open(f"{out}/scores.csv", encoding="utf-8", newline="") as fh:
            return {r["student"]: tuple(r.values()) for r in csv.DictReader(fh)}


def test_a_real_all_tries_download_grades_as_its_last_try_download():
    """The real adaptive quiz of fixtures/moodle/adaptive-tries: Ben and Eve checked a wrong
    answer first on slots 1, 3 and 5 only; their second rows show "-" at slots 2 and 4,
    which Moodle has no second try of. Without a penalty (``--penalty 0``) each student's
    scores from the "All tries" download (csv and xlsx) are those of the last-try download
    (main read slots 2 and 4 as blank: 22 of 30 for both); with the export's penalty, each
    slot's share of its mark is the one Moodle's Grades report gives."""
    rows = list(
        csv.reader(io.StringIO((ADAPTIVE / "responses-alltries.csv").read_text("utf-8-sig")))
    )
    head = rows[0]
    ben = [r for r in rows[1:] if r[1] == "Ben"]
    assert len(ben) == 2
    later = [ben[1][i] for i, c in enumerate(head) if c.startswith("Response ")]
    assert later[1] == later[3] == "-" and "-" not in (later[0], later[2], later[4])
    last = _scores("responses-lasttry.csv")
    unpenalised = _scores("responses-alltries.csv", "--penalty", "0")
    assert unpenalised == last == _scores("responses-alltries.xlsx", "--penalty", "0")
    assert {s[-2] for k, s in last.items() if "ben" in k or "eve" in k} == {"28.33", "28.5"}
    penalised = _scores("responses-alltries.csv", "--no-carry")
    assert penalised == _scores("responses-alltries.xlsx", "--no-carry")
    grades = list(csv.reader(io.StringIO((ADAPTIVE / "grades.csv").read_text("utf-8-sig"))))
    head = grades[0]
    slots = [i for i, c in enumerate(head) if c.startswith("Q. ")]
    most = [float(head[i].split("/")[1]) for i in slots]
    for row in grades[1:]:
        mine = next((s for s in penalised.values() if s[1] == f"{row[1]} {row[0]}"), None)
        if mine is None or row[slots[0]] == "-":
            continue  # the average row, Finn's attempt in progress
        # scores.csv: student, name, a column per slot (one question each), total, max
        maxima = [6, 5, 6, 3, 10]
        for k, (i, m) in enumerate(zip(slots, most, strict=True)):
            moodle = float(row[i]) / m
            assert abs(float(mine[2 + k]) / maxima[k] - moodle) < 0.02, (row[1], k + 1)
