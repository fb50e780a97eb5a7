"""The student-number grid's records (#36 §3): what TeX recorded becomes scan.json's
``student_number`` and each page's ``number_boxes`` (apart from the answers' boxes), read back
through the contract with every field checked; the option's and the configuration key's
refusals are one line each.

A behaviour across modules, not one module's tests (api, errors, pipeline.config,
pipeline.options, scan.contract, scan.layout, scan.positions)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from worksheetgen.errors import ConfigError, ScanError, UsageError
from worksheetgen.scan.contract import parse_positions
from worksheetgen.scan.layout import SP_PER_MM
from worksheetgen.scan.positions import SCAN_FORMAT, SCAN_VERSIONS, positions_json


def _recorded(digits: int) -> str:
    """What TeX writes for a sheet of two pages: an answer box on each, the grid on page 1."""
    lines = ["p 0 1", f"b 1.a.A {int(30 * SP_PER_MM)} {int(200 * SP_PER_MM)}"]
    for c in range(1, digits + 1):
        for d in range(10):
            x, y = int((140 + 5.5 * c) * SP_PER_MM), int((190 - 5.2 * d) * SP_PER_MM)
            lines.append(f"b n.{c}.{d} {x} {y}")
    lines += ["p 0 2", f"b 2.a.B {int(30 * SP_PER_MM)} {int(200 * SP_PER_MM)}"]
    return "\n".join(lines) + "\n"


def _parse(doc: dict) -> object:
    return parse_positions(doc, "scan.json", 1, SCAN_FORMAT, SCAN_VERSIONS)


def test_the_grid_is_recorded_apart_from_the_answers_boxes_and_read_back():
    doc = positions_json(7, "a4", _recorded(3), digits=3)
    assert doc["student_number"] == 3
    page1, page2 = doc["sheets"][0]["pages"]
    assert [b["id"] for b in page1["boxes"]] == ["1.a.A"]
    assert len(page1["number_boxes"]) == 30 and "number_boxes" not in page2
    read = _parse(doc)
    assert read.student_number == 3
    assert len(read.sheets[0].pages[0].number_boxes) == 30
    assert read.sheets[0].pages[1].number_boxes == ()


def test_without_the_option_scan_json_is_as_before():
    doc = positions_json(7, "a4", _recorded(0))
    assert "student_number" not in doc
    assert all("number_boxes" not in p for p in doc["sheets"][0]["pages"])
    assert _parse(doc).student_number == 0


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d.update(student_number=13), "student_number: expected an integer from 1 to 12"),
        (
            lambda d: d.update(student_number="8"),
            "student_number: expected an integer from 1 to 12",
        ),
        (lambda d: d.pop("student_number"), "number_boxes: expected none (scan.json has no"),
        (
            lambda d: d["sheets"][0]["pages"][0]["number_boxes"][0].update(id="n.4.0"),
            "number_boxes[0].id: expected a student-number box (n.1.0 to n.3.9), got 'n.4.0'",
        ),
        (
            lambda d: d["sheets"][0]["pages"][0]["number_boxes"][1].update(id="n.1.0"),
            "number_boxes[1].id: expected each box once",
        ),
        (
            lambda d: d["sheets"][0]["pages"][0]["number_boxes"].pop(),
            "sheets[0].pages: expected the student-number grid's 30 boxes",
        ),
        (
            lambda d: d["sheets"][0]["pages"][0]["number_boxes"][2].update(x="left"),
            "number_boxes[2].x: expected a number of mm on the page, got 'left'",
        ),
    ],
)
def test_a_damaged_grid_record_is_one_line_naming_its_field(damage, message):
    doc = copy.deepcopy(positions_json(7, "a4", _recorded(3), digits=3))
    damage(doc)
    with pytest.raises(ScanError) as info:
        _parse(doc)
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_the_option_is_refused_without_scannable_and_with_a_roster():
    from worksheetgen.pipeline.options import BuildOptions, check_student_number

    check_student_number(BuildOptions(seed=1))  # none asked: nothing to refuse
    check_student_number(BuildOptions(seed=1, scannable=True, student_number=8, versions=3))
    for options, said in [
        (BuildOptions(seed=1, student_number=8), "expected --scannable too"),
        (
            BuildOptions(seed=1, scannable=True, student_number=8, roster="class.csv"),
            "expected a lone sheet or --versions N",
        ),
        (BuildOptions(seed=1, scannable=True, student_number=13), "expected 1 to 12 digits"),
    ]:
        with pytest.raises(UsageError, match=said):
            check_student_number(options)


def test_the_configuration_key_and_the_api_keyword_take_the_same_digits(tmp_path: Path):
    from worksheetgen import api
    from worksheetgen.pipeline.config import load_config
    from worksheetgen.pipeline.options import BuildOptions

    toml = tmp_path / "worksheetgen.toml"
    toml.write_text("scannable = true\nstudent_number = 8\n", encoding="utf-8")
    config = load_config(str(toml), {})
    assert BuildOptions.from_config(config, 1).student_number == 8
    toml.write_text("scannable = true\nstudent_number = 13\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"worksheetgen.toml:2: student_number: expected an "):
        load_config(str(toml), {})
    with pytest.raises(UsageError, match="student_number"):
        api.build(1, student_number=13, out=tmp_path / "out", pdf=False)
    with pytest.raises(UsageError, match="student_number"):
        api.build(1, student_number=True, out=tmp_path / "out", pdf=False)
    assert not (tmp_path / "out").exists()
