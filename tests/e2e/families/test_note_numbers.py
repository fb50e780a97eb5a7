"""banks/practice.yaml reproduces note 3.2's own numbers, exactly as the note states them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from worksheetgen.cli import main


@pytest.fixture(scope="module")
def questions(tmp_path_factory) -> dict[str, dict]:
    from click.testing import CliRunner

    out = tmp_path_factory.mktemp("practice")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--bank",
            str(ROOT / "banks" / "practice.yaml"),
            "--seed",
            "1",
            "--no-pdf",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    (folder,) = Path(out).iterdir()
    key = json.loads((folder / "key.json").read_text())
    return {q["id"]: q for q in key["sheets"][0]["questions"]}


def test_worked_example_scaled_scores_and_weights(questions):
    q = questions["worked-example"]
    assert q["rounded"]["scaled"] == [["1.41", "0.00"], ["0.00", "1.41"]]  # S / sqrt(2)
    assert q["rounded"]["A"] == [["0.80", "0.20"], ["0.20", "0.80"]]


def test_worked_example_without_the_scale_is_more_peaked(questions):
    q = questions["worked-example-unscaled"]
    assert q["rounded"]["A_unscaled"] == ["0.88", "0.12"]
    assert q["rounded"]["A"] == ["0.80", "0.20"]
    assert q["answer"]["peaked"] == "without the scale"


def test_worked_example_with_the_causal_mask_row_one_is_one_zero(questions):
    q = questions["worked-example-causal"]
    assert q["rounded"]["A"][0] == ["1.00", "0.00"]
    assert q["answer"]["A"][0] == [1.0, 0.0]
    assert q["answer"]["masked"][0][1] == "-inf"


def test_practice_identity_gives_av_equal_to_a(questions):
    q = questions["practice-identity"]
    assert q["rounded"]["output"] == q["rounded"]["A"]


def test_practice_softmax_of_zero_two_and_its_scaled_version(questions):
    q = questions["practice-scale-row"]
    assert q["rounded"]["A_unscaled"] == ["0.12", "0.88"]
    assert q["rounded"]["A"] == ["0.20", "0.80"]
    assert q["answer"]["largest_change"] == "it lost probability"


def test_practice_causal_scores_masked_then_softmaxed(questions):
    q = questions["practice-causal"]
    assert q["rounded"]["masked"] == [["1", "-inf"], ["0", "1"]]
    assert q["rounded"]["A"] == [["1.00", "0.00"], ["0.27", "0.73"]]


def test_practice_two_heads_of_width_two_map_back_to_four(questions):
    q = questions["practice-heads"]
    assert q["answer"]["d_k"] == 2
    assert q["answer"]["concat_width"] == 4
    assert q["answer"]["W_O_shape"] == [4, 4]


def test_practice_bank_is_the_same_for_every_seed(tmp_path: Path):
    from click.testing import CliRunner

    keys = []
    for seed in ("1", "99"):
        CliRunner().invoke(
            main,
            [
                "build",
                "--bank",
                str(ROOT / "banks" / "practice.yaml"),
                "--seed",
                seed,
                "--no-pdf",
                "--out",
                str(tmp_path / seed),
            ],
        )
        (folder,) = (tmp_path / seed).iterdir()
        key = json.loads((folder / "key.json").read_text())
        keys.append([q["rounded"] for q in key["sheets"][0]["questions"]])
    assert keys[0] == keys[1]
