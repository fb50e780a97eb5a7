"""``scan``'s verification view (issue 36, section 3): each page with an issue (every page
with ``--verify-pages all``) drawn upright with every box outlined by what was read, in
colours that differ in line too, each part labelled, a legend; issues.csv names each box
issue's picture; report.md lists the issues a person must settle in issues.csv's words;
``--feedback-scans`` puts each student's pages so drawn on their feedback pages."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tests.browser import needs_chromium
from tests.conftest import needs_tex
from tests.e2e.scan.test_scan import _one_sheet_scans
from tests.unit.scan.test_scan_views import BOX, _colour, _edge_at, _flag_at, _nearest
from worksheetgen.scan.run import scan_files


@pytest.fixture(scope="module")
def scans(quiz: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The quiz's sheet marked (seed 4: several marks, a box only filled in, unclear boxes
    on pages 1, 3 and 4; page 2 has none)."""
    return _one_sheet_scans(quiz, tmp_path_factory.mktemp("scans"), 4, 150, {})[2]


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"))))


def _boxes(quiz: Path) -> dict[int, list[dict]]:
    """The first sheet's boxes by page, with their question and answer."""
    from worksheetgen.scan.setup import open_key

    setup = open_key(quiz / "key.json", quiz / "unused")
    return setup.sheets[0]


@needs_tex
def test_each_box_issue_names_the_view_of_its_page_where_its_boxes_are_flagged(
    quiz, scans, tmp_path
):
    out = tmp_path / "out"
    scan_files([str(f) for f in scans], quiz / "key.json", out, jobs=1)
    issues = [r for r in _rows(out / "issues.csv") if r["kind"] != "blank-page"]
    assert issues and all(r["view"] for r in issues)
    drawn = sorted(p.name for p in (out / "verify").iterdir())
    assert drawn == sorted({Path(r["view"]).name for r in issues})
    assert "page-0002.jpg" not in drawn  # no issue there: not drawn
    sid = json.loads((quiz / "key.json").read_text())["sheets"][0]["id"]
    boxes = _boxes(quiz)
    for r in issues:
        page = int(Path(r["view"]).stem.split("-")[1])  # the pages were read in order
        view = Image.open(out / r["view"])
        part = [b for b in boxes[page] if f"{sid}/{b['question']}/{b['answer']}" == r["id"]]
        flags = [_flag_at(view, b["x"], b["y"]) for b in part]
        if r["kind"] == "unmarked":  # no box with ink to flag: the label says it
            continue
        assert "flagged" in flags, (r, flags)
    # a part read as its one marked box, outlined solid blue, and no flag
    responses = _rows(out / "responses.csv")
    flagged = {r["id"] for r in issues}
    for row in responses:
        gid = f"{row['student']}/{row['question']}/{row['answer']}"
        value = row["value"] or row["mark"]
        if gid in flagged or not value or value == "?":
            continue
        for page in (1, 3, 4):
            hit = [
                b
                for b in boxes[page]
                if f"{sid}/{b['question']}/{b['answer']}" == gid
                and str(b.get("option", b.get("mark"))) == value
            ]
            if hit:
                view = Image.open(out / "verify" / f"page-{page:04d}.jpg")
                assert _edge_at(view, hit[0]["x"], hit[0]["y"]) == "marked", gid
                assert _flag_at(view, hit[0]["x"], hit[0]["y"]) != "flagged", gid
                return
    raise AssertionError("no part read as marked on a page drawn")


@needs_tex
def test_verify_pages_all_draws_every_page_and_none_draws_nothing_else_the_same(
    quiz, scans, tmp_path
):
    files = [str(f) for f in scans]
    scan_files(files, quiz / "key.json", tmp_path / "all", jobs=1, verify_pages="all")
    scan_files(files, quiz / "key.json", tmp_path / "none", jobs=1, verify_pages="none")
    scan_files(files, quiz / "key.json", tmp_path / "issues", jobs=1)
    assert sorted(p.name for p in (tmp_path / "all" / "verify").iterdir()) == [
        f"page-{n:04d}.jpg" for n in range(1, len(files) + 1)
    ]
    assert not (tmp_path / "none" / "verify").exists()
    assert not any(r["view"] for r in _rows(tmp_path / "none" / "issues.csv"))
    # what was read and graded is the same whichever pages are drawn
    for name in ("responses.csv", "scores.csv", "crops/box-0001.png"):
        first = (tmp_path / "none" / name).read_bytes()
        assert (
            first
            == (tmp_path / "issues" / name).read_bytes()
            == (tmp_path / "all" / name).read_bytes()
        )
    # the views of a page are the same bytes drawn for its issue or for "all"
    for view in (tmp_path / "issues" / "verify").iterdir():
        assert view.read_bytes() == (tmp_path / "all" / "verify" / view.name).read_bytes()


@needs_tex
def test_report_md_lists_the_open_issues_in_the_words_of_issues_csv(quiz, scans, tmp_path):
    out = tmp_path / "out"
    scan_files([str(f) for f in scans], quiz / "key.json", out, jobs=1)
    issues = [r for r in _rows(out / "issues.csv") if not r["settled"]]
    report = (out / "report.md").read_text("utf-8")
    head = f"## Issues for a person ({len(issues)})"
    assert head in report and report.index(head) < report.index("## Slips seen")
    section = report[report.index(head) : report.index("## Slips seen")]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == len(issues)
    for line, issue in zip(rows, issues, strict=True):
        assert line.startswith(f"| {issue['kind']} | `{issue['id']}` |"), line
        assert issue["detail"] in line.replace("\\", ""), line
        assert f"[{issue['view']}](<{issue['view']}>)" in line, line
    # settled by a corrections file: no longer listed, counted
    fixes = tmp_path / "fixes.csv"
    first = issues[0]
    fixes.write_text(f"id,value\n{first['id']},blank\n", "utf-8")
    scan_files([str(f) for f in scans], quiz / "key.json", out, str(fixes), jobs=1)
    again = (out / "report.md").read_text("utf-8")
    assert f"## Issues for a person ({len(issues) - 1})" in again
    assert "(1 settled already: issues.csv's settled column)" in again
    assert f"`{first['id']}`" not in again.split("## Slips seen")[0]


@needs_tex
def test_feedback_scans_put_each_students_pages_as_read_on_their_feedback_pages(
    quiz, scans, tmp_path
):
    import base64
    import re
    import subprocess

    from worksheetgen.scan.overlay import FEEDBACK_DPI

    files = [str(f) for f in scans]
    plain, shown = tmp_path / "plain", tmp_path / "shown"
    scan_files(files, quiz / "key.json", plain, jobs=1)
    scan_files(files, quiz / "key.json", shown, jobs=1, feedback_scans=True)
    (html,) = sorted((shown / "feedback").glob("*.html"))
    (pdf,) = sorted((shown / "feedback").glob("*.pdf"))
    text = html.read_text("utf-8")
    before = (plain / "feedback" / html.name).read_text("utf-8")
    assert "<img" not in before  # without the option: the page as before
    # the page as before, then the scans: each page read, embedded (no file to lose)
    assert text.startswith(before[: before.index("</body>")])
    images = re.findall(r'<img src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == len(files)
    # the marks as read drawn on them: a box read as marked outlined in the marked blue
    sid = json.loads((quiz / "key.json").read_text())["sheets"][0]["id"]
    rows = _rows(shown / "responses.csv")
    boxes = _boxes(quiz)
    scale = FEEDBACK_DPI / 25.4
    hits = 0
    for page, data in enumerate(images, start=1):
        view = Image.open(io.BytesIO(base64.b64decode(data)))
        assert view.width == round(210 * scale)
        for row in rows:
            value = row["value"] or row["mark"]
            for b in boxes[page]:
                if (
                    f"{sid}/{b['question']}/{b['answer']}"
                    != f"{row['student']}/{row['question']}/{row['answer']}"
                ):
                    continue
                if value and value != "?" and str(b.get("option", b.get("mark"))) == value:
                    colour = _colour(view, b["x"] * scale - 2.5, (b["y"] + BOX / 2) * scale)
                    assert _nearest(colour) == "marked", (page, row)
                    hits += 1
    assert hits >= 3
    # in the PDF: a page for each scan after the feedback, the JPEG embedded as it is
    listed = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    jpegs = [line.split() for line in listed.stdout.splitlines()[2:]]
    assert len(jpegs) == len(files) and all(j[8] == "jpeg" for j in jpegs), listed.stdout
    words = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
    assert f"Your scanned pages, as they were read: page {len(files)} of {len(files)}" in words
    extracted = tmp_path / "img"
    subprocess.run(["pdfimages", "-j", "-f", "2", str(pdf), str(extracted)], check=True)
    first = sorted(tmp_path.glob("img-*.jpg"))[0].read_bytes()
    assert first == base64.b64decode(images[0])


@pytest.fixture(scope="module")
def browser():
    from tests.browser import launched

    yield from launched()


@needs_tex
@needs_chromium
def test_a_feedback_page_with_scans_opens_in_a_browser_with_no_console_error(
    quiz, scans, tmp_path, browser
):
    out = tmp_path / "out"
    scan_files([str(f) for f in scans], quiz / "key.json", out, jobs=1, feedback_scans=True)
    (html,) = sorted((out / "feedback").glob("*.html"))
    page = browser.new_page()
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.goto(html.as_uri())
    sizes = page.eval_on_selector_all(
        "img", "els => els.map(e => [e.complete, e.naturalWidth, e.getBoundingClientRect().width])"
    )
    page.close()
    assert len(sizes) == len(scans)
    assert all(done and natural > 600 and shown > 100 for done, natural, shown in sizes), sizes
    assert messages == []
