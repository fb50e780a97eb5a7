"""grade and a real Moodle download of a quiz whose written parts are dealt with their graded
parts (issue 22 §2): a question with several versions, a pool of pick 1 and a pool of pick 2,
each with a written part, exported so that the graded question asks the written part and one
essay per slot answers it. tests/fixtures/moodle/real-4/ holds the download (its README says
how it was made; what Moodle drew and each student typed is in attempts.json)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from tests.conftest import key_as_version_1
from tests.unit.grading.test_moodle_written import KEY, REAL
from worksheetgen.cli import main


def _questions(xml: bytes) -> list[tuple[str, str, int, str, str]]:
    """(name, ID number, number of gaps, the text of an essay, its mark) of every question."""
    out = []
    for q in ET.fromstring(xml).iter("question"):
        if q.get("type") == "category":
            continue
        text = q.findtext("questiontext/text") or ""
        gaps = len(re.findall(r"\{\d+:(?:NUMERICAL|SHORTANSWER|MULTICHOICE\w*):", text))
        essay = text if q.get("type") == "essay" else ""
        mark = q.findtext("defaultgrade") or ""
        name = q.findtext("name/text") or ""
        out.append((name, q.findtext("idnumber") or "", gaps, essay, mark))
    return out


def test_the_fixture_is_what_todays_export_of_its_bank_makes(runner, tmp_path):
    """Fails when the build or the Moodle export of real-4/bank.yaml no longer makes the
    questions the real download was taken on: then make the download again (README)."""
    argv = ["build", "--seed", "42", "--versions", "4", "--no-pdf", "--export", "moodle"]
    argv += ["--bank", str(REAL / "bank.yaml"), "--out", str(tmp_path)]
    result = runner.invoke(main, argv)
    assert result.exit_code == 0, result.output
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    fresh = json.loads((folder / "key.json").read_text("utf-8"))
    kept = json.loads(KEY.read_text("utf-8"))
    if kept["version"] == 1:  # a fixture taken before key.json version 2
        fresh = key_as_version_1(fresh)
    assert fresh["sheets"] == kept["sheets"], "renew real-4"
    made = _questions((folder / "moodle.xml").read_bytes())
    assert made == _questions((REAL / "moodle.xml").read_bytes()), "renew real-4"
    essays = [(n, i) for n, i, _, e, _ in made if e]
    assert essays == [
        ("1. q-scale (written)", "q-scale:written"),
        ("2. why (written)", "why:written"),
        ("3. two (written)", "two:written"),
    ]
