"""``scan`` grades the rows it writes to responses.csv as records, without reading the file
back (issue 35 §2): what it writes is what ``grade`` writes from that responses.csv."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import needs_tex
from tests.e2e.scan.test_scan_outputs import scans  # noqa: F401 (fixtures)
from worksheetgen.report.grade import grade_files
from worksheetgen.scan.run import scan_files

pytestmark = needs_tex


def _texts(folder: Path) -> dict[str, bytes]:
    """Every text output under ``folder`` but scan's own (responses, issues, crops)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.suffix in (".csv", ".md", ".html")
        and p.name not in ("responses.csv", "issues.csv")
    }


def test_scan_writes_what_grade_writes_from_its_responses_csv(quiz, scans, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    scan_files([str(f) for f in scans["s4"]], quiz / "key.json", out, jobs=1)
    text = (out / "responses.csv").read_text("utf-8")
    assert ",?\n" in text and any(line.endswith(",") for line in text.splitlines())
    again = tmp_path / "again"
    again.mkdir()
    grade_files(
        quiz / "key.json",
        out / "responses.csv",
        again,
        label=str(out / "responses.csv"),  # as scan names it
        unanswered=True,
    )
    scanned, graded = _texts(out), _texts(again)
    assert "scores.csv" in scanned and any(n.startswith("feedback/") for n in scanned)
    # scan's report.md adds the issues a person must settle (issues.csv's rows), as one
    # section between grade's own: the rest of it is grade's, byte for byte
    report = scanned.pop("report.md").decode("utf-8")
    head, _, rest = report.partition("## Issues for a person")
    assert rest, report
    _, _, after = rest.partition("\n## ")
    assert (head + "## " + after).encode("utf-8") == graded.pop("report.md")
    assert scanned == graded
