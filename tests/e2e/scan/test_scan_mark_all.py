"""Scanning a mark-all-that-apply question: every option's box is read, and several marks
are the answer (one set, "A;C"), not an issue; its grade is the per-option rule's."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from tests.conftest import ROOT, needs_tex
from tests.scansynth import Plan, fill, render
from worksheetgen.scan.run import scan_files

BANK = ROOT / "tests" / "fixtures" / "mark-all.yaml"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from worksheetgen.cli import main

    out = tmp_path_factory.mktemp("mark-all-scan")
    try:
        main(["build", "--seed", "7", "--bank", str(BANK), "--out", str(out), "-q", "--scannable"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


@needs_tex
def test_every_marked_option_of_a_mark_all_question_is_its_answer(built: Path, tmp_path: Path):
    positions = json.loads((built / "scan.json").read_text())
    key = json.loads((built / "key.json").read_text())
    questions = key["sheets"][0]["questions"]
    # question 1 (per option): A and C marked; question 2 (all or nothing): every right
    # option; question 3 (pick one): its right option
    right_2 = [
        "ABCD"[questions[1]["options"]["marked"].index(o)] for o in questions[1]["answer"]["marked"]
    ]
    right_3 = "ABCD"[
        questions[2]["options"]["why_sqrt_dk"].index(questions[2]["answer"]["why_sqrt_dk"])
    ]
    marks = {"1.a": {"A", "C"}, "2.a": set(right_2), "3.a": {right_3}}

    def plan(boxes: list[dict], rng: random.Random) -> list[str | None]:
        group, _ = boxes[0]["id"].rsplit(".", 1)
        return ["cross" if b["id"].rsplit(".", 1)[1] in marks[group] else None for b in boxes]

    dpi = 200
    images = render(built / "sheet.pdf", dpi)
    fill(images, positions, 0, dpi, plan, random.Random(3), Plan())
    files = []
    for i, im in enumerate(images):
        files.append(tmp_path / f"p{i}.png")
        im.save(files[-1])
    out = tmp_path / "out"
    result = scan_files([str(f) for f in files], built / "key.json", out, jobs=1)
    assert [i.kind for i in result.issues] == []
    rows = list(csv.DictReader(io.StringIO((out / "responses.csv").read_text())))
    values = {r["question"]: r["value"] for r in rows}
    assert values == {"ma-mask": "A;C", "ma-shapes": ";".join(right_2), "ma-why-sqrt": right_3}
    scores = list(csv.DictReader(io.StringIO((out / "scores.csv").read_text())))
    (row,) = scores
    options = questions[0]["options"]["marked"]
    right = set(questions[0]["answer"]["marked"])
    hits = sum(options[i] in right for i in (0, 2))
    misses = 2 - hits
    expected = max(0.0, hits / 3 - misses / 2) * 3  # 3 right, 2 wrong options; 3 points
    assert float(row["ma-mask"]) == pytest.approx(round(expected, 2), abs=0.006)
    assert float(row["ma-shapes"]) == 2 and float(row["ma-why-sqrt"]) == 2
