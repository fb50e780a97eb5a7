"""Issue 34 §2: which of a student's attempts counts follows Moodle's grading method as the
download states it."""

from __future__ import annotations

import csv
import io

from tests.paths import MOODLE

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
