"""Any pile of pages (issue 36, section 2): a pile where nothing is marked is graded like
any other (no totals, never zeros), blank backs with dust, a scanner's edge or 1-bit
dithering are blank pages while pages with print but no code are not, and the pages are
streamed (memory does not grow with the pile)."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.e2e.scan.builds import build_folder
from tests.scansynth import render
from tests.unit.scan.test_scan_pile import _decoded

CHOICES = """\
sheet:
  id: choices
  title: Choices only
  kind: quiz
questions:
  - id: q-why-sqrt
    family: concept
    format: choice
    points: 2
    params: {ask: why-sqrt-dk}
  - id: q-mask
    family: concept
    format: choice
    points: 2
    params: {ask: mask-inf}
"""


def _read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text("utf-8"))))


@pytest.fixture(scope="module")
def choices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A class of three (Ann, Bo, Cy) whose questions are all multiple choice, scannable."""
    tmp = tmp_path_factory.mktemp("choices")
    bank = tmp / "choices.yaml"
    bank.write_text(CHOICES, "utf-8")
    roster = tmp / "roster.csv"
    roster.write_text("name,id\nAnn Lee,s1\nBo Chan,s2\nCy Diaz,s3\n", "utf-8")
    return build_folder(tmp / "out", "--scannable", "--roster", str(roster), bank=str(bank))


@needs_tex
def test_a_pile_with_nothing_marked_is_graded_with_no_totals(choices: Path, tmp_path: Path, runner):
    """Every page scanned, nothing marked: scores.csv, report.md, the class report are
    written as for any scan; a student whose pages hold no mark has no total (never 0) and
    no feedback page, as one with no responses; --absent zero gives 0 as for the absent."""
    from worksheetgen.cli import main

    scans = []
    for sid in ("s1", "s2"):
        for p, image in enumerate(render(choices / "students" / f"{sid}-sheet.pdf", 150), 1):
            scans.append(tmp_path / f"{sid}-{p}.png")
            image.save(scans[-1])
    out = tmp_path / "out"
    res = runner.invoke(
        main, ["scan", *map(str, scans), "--key", str(choices / "key.json"), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "scores.csv" in res.output and "report.md" in res.output
    rows = _read_csv(out / "responses.csv")
    assert {r["student"] for r in rows} == {"s1", "s2"} and not any(r["value"] for r in rows)
    scores = {r["student"]: r for r in _read_csv(out / "scores.csv")}
    assert [scores[s]["total"] for s in ("s1", "s2", "s3")] == ["", "", ""]
    assert scores["s1"]["max"] == "4"
    report = (out / "report.md").read_text("utf-8")
    assert "No responses from: s1, s2, s3" in report
    assert (out / "class-report.html").is_file() and (out / "class-report.pdf").is_file()
    assert not (out / "feedback").exists()
    zero = tmp_path / "zero"
    res = runner.invoke(
        main,
        ["scan", *map(str, scans), "--key", str(choices / "key.json"), "--out", str(zero)]
        + ["--absent", "zero"],
    )
    assert res.exit_code == 0, res.output
    assert {r["total"] for r in _read_csv(zero / "scores.csv")} == {"0"}
    assert (zero / "feedback" / "s1.html").is_file()


@needs_tex
def test_a_pile_with_no_page_of_the_class_is_graded_too(choices: Path, tmp_path: Path):
    """A pile of blank pages only: the issues, and a report that nobody handed anything in."""
    from PIL import Image

    from worksheetgen.scan.run import scan_files

    size = render(choices / "students" / "s1-sheet.pdf", 150)[0].size
    back = tmp_path / "back.png"
    Image.new("L", size, 255).save(back)
    result = scan_files([str(back)], choices / "key.json", tmp_path / "out")
    assert result.identified == 0 and result.grade is not None
    assert [i.kind for i in result.issues] == ["blank-page", "absent", "absent", "absent"]
    assert {r["total"] for r in _read_csv(tmp_path / "out" / "scores.csv")} == {""}


@needs_tex
def test_a_16_bit_grey_scan_reads_as_its_8_bit_copy(quiz: Path, tmp_path: Path):
    """A scanner's 16-bit grey PNG or TIFF: Pillow's own conversion clipped every value
    above 255 to white, so a printed page was a blank page, settled, never read."""
    import numpy as np
    from PIL import Image

    from worksheetgen.scan.run import scan_files

    # a scanner's black is not 0: 20 of 255, 5,140 of 65,535
    page = 20 + np.asarray(render(quiz / "sheet.pdf", 150)[0], dtype=np.uint16) * 215 // 255
    eight, png, tiff = tmp_path / "p8.png", tmp_path / "p16.png", tmp_path / "p16.tif"
    Image.fromarray(page.astype(np.uint8)).save(eight)
    Image.fromarray(page * 257).save(png)
    Image.fromarray(page * 257).save(tiff)
    assert Image.open(png).mode.startswith("I") and Image.open(tiff).mode.startswith("I")
    read = {}
    for scan in (eight, png, tiff):
        out = tmp_path / scan.name.replace(".", "-")
        result = scan_files([str(scan)], quiz / "key.json", out)
        assert result.identified == 1, (scan.name, [i.kind for i in result.issues])
        read[scan.name] = (out / "responses.csv").read_bytes()
    assert read["p16.png"] == read["p8.png"] == read["p16.tif"]


@needs_tex
@pytest.mark.parametrize("dpi", [150, 300])
def test_pages_with_print_and_no_code_are_never_blank(quiz: Path, dpi: int):
    """The key's pages, the sheet's (its corner marks and text), and three lines of 10 pt
    text: never blank, in PNG, JPEG or 1-bit."""
    from PIL import Image, ImageDraw, ImageFont

    from tests.scansynth import distort, encoded
    from worksheetgen.scan.pages import is_blank

    rng = random.Random(dpi)
    pages = [*render(quiz / "key.pdf", dpi)[:2], render(quiz / "sheet.pdf", dpi)[-1]]
    px = dpi / 25.4
    text = Image.new("L", (int(210 * px), int(297 * px)), 255)
    font = ImageFont.load_default(size=int(10 / 72 * dpi))
    for line in range(3):
        ImageDraw.Draw(text).text(
            (25 * px, (30 + 6 * line) * px),
            "Attention is all you need, and a quiz." * 2,
            fill=0,
            font=font,
        )
    pages.append(text)
    read = []
    for n, page in enumerate(pages):
        for fmt in ("png", "jpeg", "1bit"):
            image = Image.open(io.BytesIO(distort(page, rng, jpeg=False)))
            if is_blank(_decoded(encoded(image, fmt, rng)), "a4"):
                read.append((n, fmt))
    assert read == []


@needs_tex
def test_a_dusty_dithered_back_in_a_pile_is_a_blank_page(quiz: Path, tmp_path: Path):
    from PIL import Image

    from tests.scansynth import blank_back, distort, encoded
    from worksheetgen.scan.run import scan_files

    rng = random.Random(5)
    back = tmp_path / "back.png"
    image = Image.open(io.BytesIO(distort(blank_back(200, "grey", rng), rng, jpeg=False)))
    back.write_bytes(encoded(image, "1bit", rng))
    front = tmp_path / "front.png"
    render(quiz / "sheet.pdf", 200)[0].save(front)
    result = scan_files([str(front), str(back)], quiz / "key.json", tmp_path / "out")
    issue = next(i for i in result.issues if i.id == "page:back.png#1")
    assert (issue.kind, issue.settled) == ("blank-page", "blank")


# the process's own peak (VmHWM: getrusage's maxrss keeps the peak of the process it was
# forked from, across exec)
_PEAK = """
import sys
from worksheetgen.scan.run import scan_files
scan_files(sys.argv[3:], sys.argv[1], sys.argv[2])
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(status.split()[0])
"""


@needs_tex
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_a_pile_of_image_files_is_streamed_not_held(quiz: Path, tmp_path: Path):
    """Every scan's bytes were held until the end (about 3 MB more peak memory for each
    PNG page of 200 dpi): a file of one page is read again when it is decoded, so 45 pages
    take no more memory than 15 (a regression of 1.4 MB a page shows as 40 MB)."""
    import subprocess
    import sys

    from tests.scansynth import distort

    page = distort(render(quiz / "sheet.pdf", 200)[0], random.Random(2), jpeg=False)
    peaks = []
    for n in (15, 45):
        folder = tmp_path / f"pile{n}"
        folder.mkdir()
        files = []
        for i in range(n):
            files.append(folder / f"p{i:03d}.png")
            files[-1].write_bytes(page)
        run = subprocess.run(
            [sys.executable, "-c", _PEAK, str(quiz / "key.json"), str(folder / "out")]
            + [str(f) for f in files],
            capture_output=True,
            text=True,
            check=True,
        )
        peaks.append(int(run.stdout.split()[-1]) / 1024)  # MB
    assert len(page) > 1_400_000
    assert peaks[1] - peaks[0] < 40, peaks
