"""A page code names its class: two sections built with one seed and title but different
rosters (or questions, pools, order) print different build fields, so a page of one is
refused against the other's key (issue 33, section 1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.e2e.scan.builds import build_folder as _build
from worksheetgen.scan.positions import key_codes


def _roster(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("name,id\n" + "".join(f"{n},{i}\n" for n, i in rows), "utf-8")
    return path


@pytest.fixture(scope="module")
def key_doc(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """key.json of a class of three with pools and a shuffled order (no PDFs)."""
    tmp = tmp_path_factory.mktemp("key")
    roster = _roster(tmp / "r.csv", [("Ann Lee", "s1"), ("Bo Chan", "s2"), ("Cy Diaz", "s3")])
    folder = _build(tmp / "out", "--no-pdf", "--roster", str(roster))
    return json.loads((folder / "key.json").read_text("utf-8"))


def _changed(doc: dict, change) -> dict:
    other = copy.deepcopy(doc)
    change(other)
    return other


def test_a_sheets_build_field_depends_on_the_class_and_what_the_sheet_holds(key_doc: dict):
    code, fields = key_codes(key_doc)
    assert len(fields) == 3
    assert key_codes(copy.deepcopy(key_doc)) == (code, fields)  # a pure function of key.json

    def rename(d):  # another roster: one student's name
        d["sheets"][2]["student"]["name"] = "Cy Diaz-Ruiz"

    def reorder(d):  # the roster in another order
        d["sheets"][0], d["sheets"][1] = d["sheets"][1], d["sheets"][0]

    def question_order(d):  # one sheet's questions in another order
        qs = d["sheets"][1]["questions"]
        qs[0], qs[1] = qs[1], qs[0]

    def other_answer(d):  # one answer of one sheet
        q = d["sheets"][1]["questions"][0]
        name = next(iter(q["answer"]))
        q["answer"][name] = [[123456]]

    def pools(d):  # another pool rule
        d["slots"][-1]["questions"].append("another")

    def course(d):
        d["course"] = "Another course"

    for change, moved in [
        (rename, {0, 1, 2}),  # the roster is the whole class's: every sheet moves
        (reorder, {0, 1, 2}),
        (question_order, {1}),
        (other_answer, {1}),
        (pools, {0, 1, 2}),
        (course, {0, 1, 2}),
    ]:
        other_code, other_fields = key_codes(_changed(key_doc, change))
        differ = {i for i in range(3) if other_fields[i] != fields[i]}
        assert moved <= differ, change.__name__
    # a question's own change moves only its sheet's field, the class's code stays
    assert key_codes(_changed(key_doc, other_answer))[0] == code


@needs_tex
def test_two_sections_of_one_seed_and_title_never_read_each_others_pages(tmp_path: Path, runner):
    """Sections A (Ann, Bo) and B (Ann, Cy), one seed, one title: B's pages, even those of
    the student both rosters share (the same questions), are never read against A's key:
    each is listed as a page of another class, and A's own pages in the pile are read."""
    import csv

    from tests.scansynth import render
    from worksheetgen.cli import main

    a = _roster(tmp_path / "section.csv", [("Ann Lee", "s1"), ("Bo Chan", "s2")])
    folder_a = _build(tmp_path / "a", "--scannable", "--roster", str(a))
    b = _roster(tmp_path / "section.csv", [("Ann Lee", "s1"), ("Cy Diaz", "s3")])
    folder_b = _build(tmp_path / "b", "--scannable", "--roster", str(b))
    assert folder_a.name == folder_b.name  # nothing in the name tells them apart
    key_a = json.loads((folder_a / "key.json").read_text("utf-8"))
    key_b = json.loads((folder_b / "key.json").read_text("utf-8"))
    assert key_a["sheets"][0] == key_b["sheets"][0]  # Ann's sheet is the same in both
    scans = []
    for sid, folder in [("s1", folder_b), ("s2", folder_a), ("s3", folder_b)]:
        page = render(folder / "students" / f"{sid}-sheet.pdf", 150)[0]
        scans.append(tmp_path / f"{folder.parent.name}-{sid}.png")
        page.save(scans[-1])
    out = tmp_path / "out"
    res = runner.invoke(
        main, ["scan", *map(str, scans), "--key", str(folder_a / "key.json"), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    issues = list(csv.DictReader((out / "issues.csv").open(encoding="utf-8")))
    other = [i for i in issues if i["kind"] == "other-class-page"]
    assert [i["id"] for i in other] == ["page:b-s1.png#1", "page:b-s3.png#1"]
    assert all(i["crop"] and (out / i["crop"]).is_file() and not i["settled"] for i in other)
    # only A's own page is read: Bo's rows; Ann's sheet (B's copy) is not hers in A
    rows = list(csv.DictReader((out / "responses.csv").open(encoding="utf-8")))
    assert {r["student"] for r in rows} == {"s2"}
    assert "absent:s1" in {i["id"] for i in issues}
    # and a person cannot name it as one of A's pages
    fixes = tmp_path / "fixes.csv"
    fixes.write_text("id,value\npage:b-s1.png#1,s1/1\n", "utf-8")
    res = runner.invoke(
        main,
        ["scan", *map(str, scans), "--key", str(folder_a / "key.json"), "--out", str(out)]
        + ["--corrections", str(fixes)],
    )
    assert res.exit_code == 1 and res.output.count("\n") == 1, res.output
    assert "fixes.csv:2: id: expected an unidentified page" in res.output
