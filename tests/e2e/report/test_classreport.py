"""grade's class report (HTML and PDF with pictures, the numbers in CSVs), each student's
feedback page, and grading a real class without friction (every unreadable value in one run,
--lenient, a versions template per student)."""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import astuple, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.browser import needs_chromium
from tests.classdata import class_csv
from tests.conftest import ROOT
from tests.unit.report.test_classreport import _pearson
from worksheetgen.cli import main
from worksheetgen.grading.key import load_key
from worksheetgen.grading.responses import parse_responses
from worksheetgen.grading.score import grade
from worksheetgen.report import charts
from worksheetgen.report.analysis import analyse, points_text
from worksheetgen.report.charts import HEATMAPS_PER_FIGURE

HEADER = "student,question,answer,entry,value\n"


@pytest.fixture(scope="module")
def roster_key(tmp_path_factory) -> Path:
    """key.json of the default bank built for the 30 students of the golden roster."""
    out = tmp_path_factory.mktemp("class")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--roster",
            str(ROOT / "tests" / "golden" / "roster.csv"),
            "--seed",
            "7",
            "--no-pdf",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    (key,) = out.glob("*/key.json")
    return key


@pytest.fixture(scope="module")
def graded_class(roster_key, tmp_path_factory):
    """The class graded by the CLI: (output folder, what each student wrote, the key)."""
    key = load_key(roster_key)
    text, wrote = class_csv(key, seed=3)
    folder = tmp_path_factory.mktemp("graded")
    responses = folder / "responses.csv"
    responses.write_text(text, encoding="utf-8")
    out = folder / "out"
    result = CliRunner().invoke(
        main, ["grade", "--key", str(roster_key), str(responses), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out, wrote, key, text


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_class_report_files_are_written(graded_class):
    out, _, key, _ = graded_class
    for name in ("class-report.html", "class-report.pdf"):
        assert (out / name).stat().st_size > 1000, name
    for name in ("histogram", "questions", "parts", "slips", "cells"):
        assert _rows(out / "class-report" / f"{name}.csv"), name
    stems = {p.stem for p in (out / "feedback").glob("*.html")}
    assert len(stems) == len(key.sheets) == len({p.stem for p in (out / "feedback").glob("*.pdf")})


def test_histogram_and_facility_match_scores_csv(graded_class):
    out, _, _, _ = graded_class
    scores = _rows(out / "scores.csv")
    percents = [100 * float(r["total"]) / float(r["max"]) for r in scores]
    hist = _rows(out / "class-report" / "histogram.csv")
    assert sum(int(r["students"]) for r in hist) == len(scores)
    for r in hist:
        lo, hi = float(r["from_percent"]), float(r["to_percent"])
        want = sum(1 for p in percents if lo <= p < hi or (hi == 100 and p == 100))
        assert int(r["students"]) == want, r
    for q in _rows(out / "class-report" / "questions.csv"):
        col = [float(s[q["question"]]) / float(q["points"]) for s in scores]
        assert float(q["facility"]) == pytest.approx(sum(col) / len(col), abs=1e-3)


def test_discrimination_is_the_point_biserial_with_the_rest_of_the_total(graded_class):
    out, _, _, _ = graded_class
    scores = _rows(out / "scores.csv")
    for q in _rows(out / "class-report" / "questions.csv"):
        item = [float(s[q["question"]]) for s in scores]
        rest = [float(s["total"]) - float(s[q["question"]]) for s in scores]
        assert float(q["discrimination"]) == pytest.approx(_pearson(item, rest), abs=2e-3)


def test_cell_heatmap_counts_the_students_who_missed_each_cell(roster_key):
    key = load_key(roster_key)
    sheets = key.sheets[:4]
    rows = [HEADER]
    for n, sheet in enumerate(sheets):
        q = sheet.question("softmax-table")
        assert q is not None
        a = q.answer("A")
        assert a is not None
        for r, row in enumerate(a.rounded, 1):
            for c, v in enumerate(row, 1):
                wrong = (r, c) == (1, 1) or ((r, c) == (1, 2) and n < 2)
                rows.append(f'{sheet.id},softmax-table,A,"{r},{c}",{"9" if wrong else v}\n')
    stats = analyse(grade(key, parse_responses("".join(rows), key, "r.csv")))
    (m,) = [x for x in stats.cells if (x.question, x.answer) == ("softmax-table", "A")]
    assert m.students == 4
    assert m.missed[0][0] == 4 and m.missed[0][1] == 2
    assert all(v == 0 for row in m.missed[1:] for v in row)


def _text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html.split("<body>", 1)[1])


def test_each_feedback_page_shows_its_student_only(graded_class):
    out, wrote, key, _ = graded_class
    stems = sorted((out / "feedback").glob("*.html"))
    by_id = {s.id: s for s in key.sheets}
    assert len(stems) == len(by_id)
    from worksheetgen.bank.roster import file_stems

    ids = [s.id for s in key.sheets]
    for stem, sid in zip(file_stems(ids), ids, strict=True):
        html = (out / "feedback" / f"{stem}.html").read_text(encoding="utf-8")
        text = " ".join(_text_of(html).split())
        import html as h

        text = h.unescape(text)
        me = by_id[sid]
        assert me.name in text, sid
        for other in key.sheets:
            if other.id != sid:
                assert other.name not in text, (sid, other.id)
        # every value this student wrote that no other student wrote is on the page; a
        # value only others wrote never is
        mine = set(wrote[sid])
        others = {v for o, vs in wrote.items() if o != sid for v in vs}
        for v in mine - others:
            assert v in text, (sid, v)
        # (values like 0.47 or 12345 only: a short number such as 1 is also a part's points)
        # the marks "0.75 / 1.5" out, the points of a part still to mark "(0.88 points)",
        # and the key's own reasons ("Why: its weight goes from 0.88 to 0.73": this
        # student's sheet's numbers, told after a wrong choice)
        answers = re.sub(r"[\d.]+ / [\d.]+|\([\d.]+ points?\)", " ", text)
        answers = re.sub(r"Why: .*?(?=\(\w\) |Question \d|$)", " ", answers)
        for v in others - mine:
            if re.fullmatch(r"-?\d+\.\d\d|\d{4,}", v):
                assert not re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", answers), (sid, v)


def test_feedback_names_the_slip_and_how_to_avoid_it(graded_class):
    out, _, _, _ = graded_class
    pages = [p.read_text(encoding="utf-8") for p in (out / "feedback").glob("*.html")]
    slips = [p for p in pages if "Slip: " in p]
    assert slips, "no student made a slip in the made-up class"
    for page in slips:
        assert "To avoid it: " in page


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs poppler's pdftotext")
def test_feedback_pdf_shows_its_student_and_no_other(graded_class):
    out, _, key, _ = graded_class
    from worksheetgen.bank.roster import file_stems

    ids = [s.id for s in key.sheets]
    for stem, sheet in list(zip(file_stems(ids), key.sheets, strict=True))[:6]:
        text = subprocess.run(
            ["pdftotext", "-enc", "UTF-8", str(out / "feedback" / f"{stem}.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        flat = " ".join(text.split())
        assert " ".join(sheet.name.split())[:12] in flat, (sheet.id, flat[:200])
        for other in key.sheets:
            if other.id != sheet.id:
                assert " ".join(other.name.split()) not in flat


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="needs poppler's pdftoppm")
def test_class_report_pdf_pages_render(graded_class, tmp_path):
    out, _, _, _ = graded_class
    subprocess.run(
        ["pdftoppm", "-png", "-r", "60", str(out / "class-report.pdf"), str(tmp_path / "p")],
        check=True,
    )
    pages = sorted(tmp_path.glob("p*.png"))
    assert len(pages) >= 5
    assert all(p.stat().st_size > 2000 for p in pages)


def test_class_report_html_loads_nothing_from_anywhere(graded_class):
    out, _, _, _ = graded_class
    html = (out / "class-report.html").read_text(encoding="utf-8")
    assert html.count("<svg") >= 5
    links = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", html)
    assert all(u.startswith(("#", "data:")) for u in links), links
    assert "<script" not in html and "@import" not in html
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="needs Debian's chromium (apt-get install chromium); .ci/run installs it",
)
def test_class_report_in_a_headless_browser(graded_class, tmp_path):
    """The page loads with no network request and every picture renders with a size."""
    assert CHROMIUM is not None, "CI must have chromium: .ci/run installs it"
    out, _, _, _ = graded_class
    page = out / "class-report.html"
    # every SVG's drawn size, written into the DOM by a script in a copy of the page (the
    # report itself has none); the net log records every request the browser made
    # the copy drops the page's Content-Security-Policy, so that anything the page refers
    # to would really be requested (and show in the net log) rather than be blocked
    probe = tmp_path / "probe.html"
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text("utf-8"))
    probe.write_text(
        text.replace(
            "</body>",
            "<script>window.onload=function(){var s=document.querySelectorAll('svg');"
            "var o=[];for(var i=0;i<s.length;i++){var r=s[i].getBoundingClientRect();"
            "o.push(Math.round(r.width)+'x'+Math.round(r.height)+':'+"
            "s[i].querySelectorAll('path,rect,text,use').length);}"
            "document.body.setAttribute('data-svgs',o.join(' '));"
            "var r=performance.getEntriesByType('resource').map(function(e){return e.name;});"
            "document.body.setAttribute('data-loads',r.length+' '+r.join(' '));};</script></body>",
        ),
        encoding="utf-8",
    )
    netlog = tmp_path / "net.json"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--log-net-log={netlog}",
        "--virtual-time-budget=3000",
        "--dump-dom",
        probe.as_uri(),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    m = re.search(r'data-svgs="([^"]*)"', run.stdout)
    assert m, run.stdout[:500]
    sizes = m.group(1).split()
    assert len(sizes) >= 5
    for s in sizes:
        w, h, n = re.fullmatch(r"(\d+)x(\d+):(\d+)", s).groups()  # type: ignore[union-attr]
        assert int(w) > 100 and int(h) > 100 and int(n) > 5, sizes
    # nothing the page asked for: no resource in the page's own timing list, and in the
    # browser's net log no request but its own background ones (idle priority: its clock
    # and update checks, which --disable-background-networking does not all stop)
    loads = re.search(r'data-loads="([^"]*)"', run.stdout)
    assert loads and loads.group(1) == "0 ", loads
    log = netlog.read_text(encoding="utf-8", errors="replace")
    asked = {
        m.group(2)
        for m in re.finditer(r'\{"priority":"([A-Z]+)"[^{}]*"url":"([^"]+)"', log)
        if m.group(1) != "IDLE"
    }
    assert all(u.startswith(("file:", "data:", "about:", "chrome:")) for u in asked), asked


def test_no_report_does_not_import_matplotlib(roster_key, tmp_path):
    """matplotlib (and the fonts' subsetter) load only when grade writes the class report."""
    key = load_key(roster_key)
    text, _ = class_csv(key, seed=2)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from worksheetgen.cli import main\n"
        f"args = ['grade', '--key', {str(roster_key)!r}, {str(tmp_path / 'r.csv')!r}]\n"
        f"args += ['--out', {str(tmp_path / 'out')!r}, '--no-report']\n"
        "assert CliRunner().invoke(main, args).exit_code == 0\n"
        "print(sorted(m for m in ('matplotlib', 'fontTools') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert (tmp_path / "out" / "scores.csv").exists()


def test_heatmaps_draw_every_cell_of_every_table_with_its_count(graded_class):
    """All the tables' heatmaps in one picture: a shaded square per cell of each table, and
    each cell's count and each table's part written in it."""
    out, _, _, _ = graded_class
    html = (out / "class-report.html").read_text(encoding="utf-8")
    section = html[html.index("<h2>Table cells missed</h2>") :]
    svgs = re.findall(r"<svg.*?</svg>", section, re.S)
    cells = _rows(out / "class-report" / "cells.csv")
    tables = {(r["question"], r["answer"]) for r in cells}
    assert 0 < len(svgs) <= math.ceil(len(tables) / HEATMAPS_PER_FIGURE)
    drawn = 0
    texts: list[str] = []
    for svg in svgs:
        (group,) = re.findall(r'<g id="PolyCollection_\d+">(.*?)</g>', svg, re.S)
        drawn += group.count("<path")
        texts += [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert drawn == len(cells)
    counts = [t for t in texts if t.isdigit()]
    for r in cells:
        assert r["missed"] in counts
    titles = [t for t in texts if t.startswith("missed by how many of")]
    assert len(titles) == len(tables)


def _bad_class(key) -> tuple[str, list[int]]:
    text, _ = class_csv(key, seed=5)
    lines = text.splitlines(keepends=True)
    bad = []
    for i in (3, 40, 41, 200):
        parts = lines[i].rstrip("\n").rsplit(",", 1)
        lines[i] = parts[0] + ",zero point five\n"
        bad.append(i + 1)
    return "".join(lines), bad


def test_every_unreadable_value_is_listed_in_one_run(roster_key, tmp_path):
    key = load_key(roster_key)
    text, bad = _bad_class(key)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["grade", "--key", str(roster_key), str(tmp_path / "r.csv"), "--out", str(out)]
    )
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if ln.startswith("worksheetgen: error:")]
    assert [int(re.search(r"r\.csv:(\d+):", ln).group(1)) for ln in lines] == bad  # type: ignore[union-attr]
    assert all(": value: expected " in ln for ln in lines)
    assert not out.exists() or not any(out.iterdir())


def test_lenient_grades_unreadable_values_as_wrong_and_lists_them(roster_key, tmp_path):
    key = load_key(roster_key)
    text, bad = _bad_class(key)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["grade", "--key", str(roster_key), str(tmp_path / "r.csv"), "--out", str(out)]
        + ["--lenient"],
    )
    assert result.exit_code == 0, result.output
    assert "4 unreadable value(s) graded as wrong" in result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    for n in bad:
        assert f"r.csv:{n}: value: expected" in report
    # graded as wrong: no credit, as if those entries were left out, and said to be wrong
    lenient = {r["student"]: float(r["total"]) for r in _rows(out / "scores.csv")}
    kept = [ln for i, ln in enumerate(text.splitlines(keepends=True), 1) if i not in bad]
    res = grade(key, parse_responses("".join(kept), key, "k.csv"))
    for s in res.students:
        assert lenient[s.student] == pytest.approx(float(s.earned), abs=0.006)
    again = grade(key, parse_responses(text, key, "r.csv", lenient=True))
    shown = [
        w.wrote
        for s in again.students
        for q in s.questions
        for p in q.parts
        for w in p.wrong
        if p.status in ("wrong", "partial")
    ]
    assert shown.count("zero point five") == len(bad)


def test_lenient_does_not_forgive_a_student_the_key_does_not_have(roster_key, tmp_path):
    resp = tmp_path / "r.csv"
    resp.write_text(HEADER + 'nobody,softmax-table,A,"1,1",0.5\n', encoding="utf-8")
    result = CliRunner().invoke(
        main, ["grade", "--key", str(roster_key), str(resp), "--out", str(tmp_path), "--lenient"]
    )
    assert result.exit_code != 0
    assert "r.csv:2: student: expected a sheet id" in result.output


@pytest.fixture(scope="module")
def versions_key(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("versions")
    result = CliRunner().invoke(
        main, ["build", "--versions", "3", "--seed", "2", "--no-pdf", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    (key,) = out.glob("*/key.json")
    return key


def test_versions_template_has_rows_per_student(versions_key, tmp_path):
    key = load_key(versions_key)
    target = tmp_path / "t.csv"
    result = CliRunner().invoke(
        main,
        ["grade", "--key", str(versions_key), str(target), "--template", "--students", "4"],
    )
    assert result.exit_code == 0, result.output
    rows = _rows(target)
    assert {r["student"] for r in rows} == {"student01", "student02", "student03", "student04"}
    assert {r["sheet"] for r in rows} == {s.id for s in key.sheets}
    # fill in: student01 wrote version 1 all right, student02 version 3 all right,
    # student03 version 2 with marks typed per part for one question; student04 nothing
    vs = [s.id for s in key.sheets]
    plan = {"student01": vs[0], "student02": vs[2], "student03": vs[1]}
    by_version = {s.id: s for s in key.sheets}
    filled = []
    for r in rows:
        sheet = by_version[r["sheet"]]
        if plan.get(r["student"]) == r["sheet"]:
            q = sheet.question(r["question"])
            assert q is not None
            a = q.answer(r["answer"])
            assert a is not None
            value = a.rounded if a.kind not in ("choice", "text") else a.text
            if a.kind == "matrix":
                rr, cc = (int(x) for x in r["entry"].split(","))
                value = a.rounded[rr - 1][cc - 1]
            elif a.kind == "vector":
                value = a.rounded[int(r["entry"]) - 1]
            elif a.kind == "shape":
                value = "x".join(str(x) for x in a.rounded)
            r = dict(r, value=str(value))
        filled.append(r)
    path = tmp_path / "filled.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(filled)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["grade", "--key", str(versions_key), str(path), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    scores = {r["student"]: r for r in _rows(out / "scores.csv")}
    assert scores["student01"]["sheet"] == vs[0]
    assert scores["student02"]["sheet"] == vs[2]
    for who in ("student01", "student02", "student03"):
        # free-text parts are graded by hand: the rest is right
        assert float(scores[who]["total"]) + float(scores[who].get("ungraded") or 0) == float(
            scores[who]["max"]
        ), scores[who]


def test_typed_marks_and_typed_answers_mix_in_one_class(roster_key, tmp_path):
    """One student's answers typed entry by entry, another's marks typed per part, a third
    both (marks for one question, answers for the rest), in one file."""
    key = load_key(roster_key)
    a, b, c = key.sheets[:3]
    lines = ["student,question,answer,entry,value,mark\n"]
    for sheet, how in ((a, "answers"), (b, "marks"), (c, "both")):
        for q in sheet.questions:
            for ans in q.answers:
                mark = how == "marks" or (how == "both" and q.id == "softmax-table")
                if mark:
                    lines.append(f"{sheet.id},{q.id},{ans.name},,,r\n")
                    continue
                if ans.kind == "matrix":
                    for r, row in enumerate(ans.rounded, 1):
                        for col, v in enumerate(row, 1):
                            lines.append(f'{sheet.id},{q.id},{ans.name},"{r},{col}",{v},\n')
                elif ans.kind in ("vector", "shape"):
                    for col, v in enumerate(ans.rounded, 1):
                        lines.append(f"{sheet.id},{q.id},{ans.name},{col},{v},\n")
                else:
                    value = ans.text if ans.kind in ("choice", "text") else ans.rounded
                    lines.append(f'{sheet.id},{q.id},{ans.name},,"{value}",\n')
    result = grade(key, parse_responses("".join(lines), key, "mix.csv"))
    for s in result.students[:3]:
        assert s.earned + s.ungraded == s.possible, s.student
    statuses = {p.status for q in result.students[2].questions for p in q.parts}
    assert "marked" in statuses and "right" in statuses


def test_no_report_writes_only_scores_and_report_md(roster_key, tmp_path):
    key = load_key(roster_key)
    text, _ = class_csv(key, seed=2)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["grade", "--key", str(roster_key), str(tmp_path / "r.csv"), "--out", str(out)]
        + ["--no-report"],
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "scores.csv"]


@pytest.fixture(scope="module")
def quiz_class(tmp_path_factory):
    """banks/quiz.yaml (a title with math, multi-head parts) built and graded for 30 students:
    (output folder, key)."""
    out = tmp_path_factory.mktemp("quiz")
    roster = ROOT / "tests" / "golden" / "roster.csv"
    bank = ROOT / "banks" / "quiz.yaml"
    args = ["build", "--seed", "7", "--bank", str(bank), "--roster", str(roster)]
    result = CliRunner().invoke(main, [*args, "--no-pdf", "--out", str(out / "b")])
    assert result.exit_code == 0, result.output
    (key_path,) = (out / "b").glob("*/key.json")
    key = load_key(key_path)
    text, _ = class_csv(key, seed=3)
    (out / "r.csv").write_text(text, encoding="utf-8")
    args = ["grade", "--key", str(key_path), str(out / "r.csv"), "--out", str(out / "g")]
    result = CliRunner().invoke(main, [*args, "--lenient"])
    assert result.exit_code == 0, result.output
    return out / "g", key


def _pdf_text(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs poppler's pdftotext")
def test_report_pdfs_typeset_math_and_name_parts_as_the_sheet_does(quiz_class):
    """#26 §2: no ASCII math in any PDF's text; parts named by letter and prompt, slips by
    title, never by the key's internal names."""
    out, key = quiz_class
    from worksheetgen.bank.roster import file_stems

    ids = {a.name for s in key.sheets for q in s.questions for a in q.answers if "_" in a.name}
    assert {"d_k", "concat_width", "W_O_shape"} <= ids
    slip_ids = {sl.misconception for s in key.sheets for q in s.questions for sl in q.slips}
    stems = file_stems([s.id for s in key.sheets])
    texts = {"class report": _pdf_text(out / "class-report.pdf")}
    for stem in stems[:3]:
        texts[stem] = _pdf_text(out / "feedback" / f"{stem}.pdf")
    for where, text in texts.items():
        for ascii_math in ("d_k", "^T", "sqrt(", "W_O", "W_Q", "^(", "e^x", "-inf"):
            assert ascii_math not in text, (where, ascii_math)
        # raw TeX (a roster name may hold a backslash or a dollar: only commands count)
        assert not re.search(r"\\(sqrt|top|infty|times|text|frac|cdot)\b|\$[^$\n]*_", text), where
        for word in ids | {i for i in slip_ids if "-" in i}:
            assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text), (where, word)
    for stem in stems[:3]:  # a script Unicode has no letter for is set as a script
        assert "W_Q" not in texts[stem] and "^(" not in texts[stem], texts[stem]
        html = (out / "feedback" / f"{stem}.html").read_text("utf-8")
        assert "W_Q" not in html and "W<sub>Q</sub>" in html
        assert not re.search("[\ue000-\ue002]", html)
    assert "QKᵀ/√dₖ" in texts["class report"]
    report_html = (out / "class-report.html").read_text("utf-8")
    assert "W_Q" not in report_html and "W<sub>Q</sub>" in report_html
    assert any("What is the width dₖ of each head?" in " ".join(t.split()) for t in texts.values())


@pytest.mark.skipif(shutil.which("pdfinfo") is None, reason="needs poppler's pdfinfo")
def test_a_shuffled_letter_class_report_names_questions_by_id_on_letter_pages(tmp_path):
    """A shuffled class printed each question under different numbers: the class report
    names them by their bank ids (never by one sheet's number) and says why; its PDF is on
    the paper grade was given, every page; the CLI lists the feedback pages as one line."""
    roster = ROOT / "tests" / "golden" / "roster.csv"
    args = ["build", "--seed", "7", "--roster", str(roster), "--shuffle", "--no-pdf"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    (key_path,) = (tmp_path / "b").glob("*/key.json")
    key = load_key(key_path)
    assert len({tuple(q.id for q in s.questions) for s in key.sheets}) > 1  # really shuffled
    text, _ = class_csv(key, seed=3)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    out = tmp_path / "g"
    grade_args = ["grade", "--key", str(key_path), str(tmp_path / "r.csv"), "--out", str(out)]
    result = CliRunner().invoke(main, [*grade_args, "--paper", "letter"])
    assert result.exit_code == 0, result.output
    ids = {q.id for s in key.sheets for q in s.questions}
    questions = _rows(out / "class-report" / "questions.csv")
    assert {r["question"] for r in questions} == ids
    assert {r["number"] for r in questions} == {""}
    html = (out / "class-report.html").read_text("utf-8")
    assert "numbered the questions differently" in html
    for qid in ids:
        assert f"[{qid}]" in html
    pdf = _pdf_text(out / "class-report.pdf")
    assert "numbered the questions differently" in " ".join(pdf.split())
    info = subprocess.run(
        ["pdfinfo", "-f", "1", "-l", "99", str(out / "class-report.pdf")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sizes = re.findall(r"Page +\d+ size: +([\d.]+ x [\d.]+) pts", info)
    assert len(sizes) >= 4 and set(sizes) == {"612 x 792"}, sizes
    boxes = subprocess.run(
        ["pdftotext", "-bbox", str(out / "class-report.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    words = re.findall(r'xMin="([-\d.]+)"[^>]*xMax="([-\d.]+)"[^>]*>([^<]*)<', boxes)
    off = [w for x0, x1, w in words if float(x0) < 0 or float(x1) > 612]
    assert words and not off, off  # every label on the page, none cut at its left edge
    lines = result.output.splitlines()
    assert len(lines) < 12, result.output  # not a line per feedback page
    folded = [line for line in lines if "feedback" in line]
    assert folded and "--verbose lists them" in folded[0], result.output
    verbose = CliRunner().invoke(main, [*grade_args, "--paper", "letter", "--verbose"])
    assert verbose.exit_code == 0, verbose.output
    assert sum(".pdf" in line and "feedback" in line for line in verbose.output.splitlines()) == 30


def test_an_unshuffled_class_report_keeps_the_printed_numbers(graded_class):
    out, *_ = graded_class
    questions = _rows(out / "class-report" / "questions.csv")
    assert [r["number"] for r in questions] == [str(i) for i in range(1, len(questions) + 1)]
    assert "numbered the questions differently" not in (out / "class-report.html").read_text()


def _one_mark(roster_key, tmp_path, mark: str):
    """Grade one mark row (the first sheet's first part) into ``tmp_path``: that sheet,
    question and answer, and the text of the sheet's feedback page."""
    key = load_key(roster_key)
    sheet = key.sheets[0]
    q = sheet.questions[0]
    a = q.answers[0]
    text = "student,question,answer,entry,value,mark\n" + f"{sheet.id},{q.id},{a.name},,,{mark}\n"
    (tmp_path / "m.csv").write_text(text, encoding="utf-8")
    args = ["grade", "--key", str(roster_key), str(tmp_path / "m.csv"), "--out", str(tmp_path)]
    result = CliRunner().invoke(main, [*args, "-q"])
    assert result.exit_code == 0, result.output
    (page,) = [p for p in (tmp_path / "feedback").glob("*.html") if sheet.id in p.name]
    return (sheet, q, a), _text_of(page.read_text("utf-8"))


def test_a_part_marked_by_hand_shows_its_points_not_the_mark_as_typed(roster_key, tmp_path):
    """Scanned or typed marks (3/5, right) are points: the feedback page says "marked by
    hand, 0.6 / 0.6." once, not also "Your answer: marked by hand: 3/5"."""
    _, body = _one_mark(roster_key, tmp_path, "3/5")
    assert "marked by hand, " in body and "Your answer: marked by hand" not in body


def test_question_labels_fit_inside_the_picture(graded_class):
    """Each question's label ("Q2 its title", or "[its-id] its title" for a shuffled class)
    is drawn inside the picture, not cut off at its left edge (the SVG has no margin)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from worksheetgen.report import charts
    from worksheetgen.report.analysis import QuestionStats

    out, _, key, text = graded_class
    stats = analyse(grade(key, parse_responses(text, key, "r.csv")))
    long_ids = [
        QuestionStats(f"q-a-rather-long-question-id-{i}", None, q.title, *astuple(q)[3:])
        for i, q in enumerate(stats.questions)
    ]
    wide = "x" * 80
    assert stats.slips
    figures = [
        charts.questions(replace(stats, questions=tuple(qs)), {q.id: wide for q in qs})
        for qs in (stats.questions, long_ids)
    ]
    figures += [
        charts.parts(stats, {(p.question, p.answer): wide for p in stats.parts}),
        charts.slips(stats, {sl.misconception: wide for sl in stats.slips}),
    ]
    for fig in figures:
        renderer = FigureCanvasAgg(fig).get_renderer()
        for label in fig.axes[0].get_yticklabels():
            assert label.get_window_extent(renderer).x0 >= 0, label.get_text()


def test_a_pending_mark_is_still_to_mark_not_blank_nor_zero(roster_key, tmp_path):
    """A mark of "?" (a TA's "later", or a part whose scanned boxes a person has to look
    at) is counted to be marked by hand: in scores.csv's ungraded column, report.md and the
    feedback page, never as a blank answer."""
    (sheet, q, a), body = _one_mark(roster_key, tmp_path, "?")
    (row,) = [r for r in _rows(tmp_path / "scores.csv") if r["student"] == sheet.id]
    assert float(row["ungraded"]) == float(q.points_of(a.name))
    report = (tmp_path / "report.md").read_text("utf-8")
    assert "not marked yet" in report
    line = next(ln for ln in body.splitlines() if "not marked yet" in ln)
    points = q.points_of(a.name)
    said = f"{points_text(points)} point" + ("" if points == 1 else "s")
    assert f"not marked yet ({said})" in line, line
    assert "Your answer" not in line and "blank" not in line and "0 / " not in line, line


@pytest.mark.parametrize("command", ["grade", "scan"])
def test_quiet_and_verbose_together_are_refused_in_one_line(command, tmp_path):
    args = [command, str(tmp_path / "x.csv"), "--key", str(tmp_path / "key.json"), "-q", "-v"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "--quiet and --verbose: expected one of them, got both" in result.output


def test_discrimination_of_a_question_few_students_answered_is_grey_with_its_n(graded_class):
    """A point-biserial over 3 to 9 students is noise: never the alarm red, and the picture
    says how many students it is over."""
    from matplotlib.colors import to_hex

    out, _, key, text = graded_class
    stats = analyse(grade(key, parse_responses(text, key, "r.csv")))
    first, *rest = stats.questions
    few = replace(first, students=4, discrimination=0.05)
    many = [replace(q, students=30, discrimination=0.05) for q in rest]
    fig = charts.questions(replace(stats, questions=(few, *many)))
    bars = fig.axes[1].patches
    assert to_hex(bars[0].get_facecolor()) == charts.GREY  # the first question's bar
    assert {to_hex(b.get_facecolor()) for b in bars[1:]} == {charts.RED}
    notes = [t.get_text() for t in fig.axes[1].texts]
    assert notes == ["n = 4, too few"]
    html = (out / "class-report.html").read_text("utf-8")
    assert f"fewer than {charts.FEW_STUDENTS} students answered is drawn in grey" in html


def test_the_question_charts_tick_labels_do_not_collide(graded_class):
    """The facility and discrimination axes sit side by side: the last tick label of the
    one ("1.00") ran into the first of the other ("-1.0")."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    out, _, key, text = graded_class
    stats = analyse(grade(key, parse_responses(text, key, "r.csv")))
    fig = charts.questions(stats)
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = [
        label.get_window_extent(renderer)
        for ax in fig.axes
        for label in ax.get_xticklabels()
        if label.get_text()
    ]
    assert len(boxes) >= 6
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a.x1 <= b.x0 or b.x1 <= a.x0, (a, b)


def test_table_parts_marked_by_hand_have_no_cells_and_the_report_says_why(roster_key, tmp_path):
    """A scanned score box or a typed mark holds a part's points, not its cells: the
    cells-missed picture counts none of them (it drew them as all missed: solid red)."""
    key = load_key(roster_key)
    sheet = key.sheets[0]
    tables = [(q, a) for q in sheet.questions for a in q.answers if a.kind == "matrix"]
    text = "student,question,answer,entry,value,mark\n" + "".join(
        f"{sheet.id},{q.id},{a.name},,,{'x' if i % 2 else '?'}\n" for i, (q, a) in enumerate(tables)
    )
    (tmp_path / "m.csv").write_text(text, encoding="utf-8")
    args = ["grade", "--key", str(roster_key), str(tmp_path / "m.csv"), "--out", str(tmp_path)]
    result = CliRunner().invoke(main, [*args, "-q"])
    assert result.exit_code == 0, result.output
    cells = list(csv.DictReader((tmp_path / "class-report" / "cells.csv").open(encoding="utf-8")))
    assert cells == []
    html = (tmp_path / "class-report.html").read_text("utf-8")
    assert "No picture of the table cells missed: every table part was marked by hand" in html


def test_a_wrong_multiple_choice_answer_is_told_the_right_option_and_why(tmp_path):
    """A concept question has no step to redo: the feedback names the right option by the
    letter the sheet printed and the key's explanation (it said "redo the step with the
    worked example and compare entry by entry")."""
    from worksheetgen.grading.key import norm_text

    out = tmp_path / "b"
    args = ["build", "--seed", "3", "--bank", str(ROOT / "banks" / "quiz.yaml"), "--no-pdf"]
    assert CliRunner().invoke(main, [*args, "--out", str(out), "-q"]).exit_code == 0
    (key_path,) = out.glob("*/key.json")
    sheet = load_key(key_path).sheets[0]
    q = sheet.question("q-mask")
    (ans,) = q.answers
    right = [norm_text(o) for o in ans.options].index(norm_text(ans.text))
    wrong = chr(ord("A") + (right + 1) % len(ans.options))
    text = f"student,question,answer,entry,value\n{sheet.id},q-mask,{ans.name},,{wrong}\n"
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["grade", "--key", str(key_path), str(tmp_path / "r.csv"), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "feedback" / f"{sheet.id}.html").read_text("utf-8")
    block = page.split("A causal mask sets future scores")[1].split("<h2>")[0]
    assert "redo the step" not in block
    assert f"The right option is {chr(ord('A') + right)}: Minus infinity gives" in block
    assert "Why: A score of 0 is an ordinary score" in block


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs poppler's pdftotext")
def _large_print_class(tmp_path: Path) -> Path:
    """A class of Ada (large print) and Bob, graded: the output folder."""
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id,large_print\nAda Lovelace,a1,yes\nBob Jones,b1,no\n", "utf-8")
    built = tmp_path / "class"
    result = CliRunner().invoke(
        main,
        ["build", "--roster", str(roster), "--seed", "7", "--no-pdf", "--out", str(built)],
    )
    assert result.exit_code == 0, result.output
    (key_path,) = built.glob("*/key.json")
    raw = key_path.read_text("utf-8")
    assert raw.count('"large_print": true') == 1  # Ada's only; Bob's student has no such field
    key = load_key(key_path)
    assert [s.large_print for s in key.sheets] == [True, False]
    text, _ = class_csv(key, seed=3)
    responses = tmp_path / "responses.csv"
    responses.write_text(text, encoding="utf-8")
    out = tmp_path / "graded"
    result = CliRunner().invoke(
        main, ["grade", "--key", str(key_path), str(responses), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def test_a_large_print_students_feedback_pdf_is_in_large_print(tmp_path):
    """key.json says which students' sheets were in large print (a roster's column): their
    feedback PDF sets its text 14/9 as large, the others' stay as they were."""
    from tests.pagewords import faults, pages
    from worksheetgen.report.textpdf import LARGE_PRINT

    out = _large_print_class(tmp_path)

    def height(pdf: Path) -> float:
        """The median height of the page's words (the plain text's)."""
        found = sorted(w.y1 - w.y0 for _, _, words in pages(pdf) for w in words)
        return found[len(found) // 2]

    large, plain = out / "feedback" / "a1.pdf", out / "feedback" / "b1.pdf"
    assert height(large) == pytest.approx(LARGE_PRINT * height(plain), rel=0.03)
    assert faults(large) == []


@needs_chromium
def test_a_large_print_students_feedback_page_is_in_large_print_in_a_browser(tmp_path):
    """Their feedback HTML too: its text at 16 pt in a browser (as the HTML sheets set large
    print), its headings in proportion; the others' page at the browser's 12 pt, as before."""
    from tests.browser import launched

    out = _large_print_class(tmp_path)
    sizes = {}
    for browser in launched():
        page = browser.new_page()
        for stem in ("a1", "b1"):
            page.goto((out / "feedback" / f"{stem}.html").as_uri())
            sizes[stem] = page.eval_on_selector_all(
                "h1, p",
                "els => els.map(e => [e.tagName, parseFloat(getComputedStyle(e).fontSize)])",
            )
        page.close()
    px = 96 / 72  # CSS pixels a point
    large = [size for tag, size in sizes["a1"] if tag == "P"]
    plain = [size for tag, size in sizes["b1"] if tag == "P"]
    assert large and large == pytest.approx([16 * px] * len(large), abs=0.01)
    assert plain and plain == pytest.approx([12 * px] * len(plain), abs=0.01)
    assert dict(sizes["a1"])["H1"] == pytest.approx(1.5 * 16 * px, abs=0.01)
    assert '<body class="large">' not in (out / "feedback" / "b1.html").read_text("utf-8")


def test_help_does_not_import_matplotlib():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from worksheetgen.cli import main\n"
        "assert CliRunner().invoke(main, ['grade', '--help']).exit_code == 0\n"
        "assert CliRunner().invoke(main, ['build', '--help']).exit_code == 0\n"
        "print('matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
