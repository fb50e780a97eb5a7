"""``grade``'s outputs are byte-identical for the same inputs, as builds are: scores,
report, class report and every feedback page, PDFs included, whenever the run happens
(issue 33, section 7: the feedback PDFs' embedded font carried the time it was cut)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.classdata import class_csv
from worksheetgen.grading.key import grade_key
from worksheetgen.keyjson.read import load_key
from worksheetgen.report.grade import grade_files


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_grade_writes_the_same_bytes_for_the_same_inputs_at_any_time(tmp_path, monkeypatch):
    from worksheetgen.cli import main

    try:
        main(["build", "--seed", "42", "--versions", "3", "--no-pdf", "-q", "--out", str(tmp_path)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    key = folder / "key.json"
    text, _ = class_csv(grade_key(load_key(key)), seed=3)
    responses = tmp_path / "responses.csv"
    responses.write_text(text, "utf-8")
    grade_files(key, responses, tmp_path / "first")
    first = _files(tmp_path / "first")
    assert any(name.endswith(".pdf") and name.startswith("feedback/") for name in first)
    assert "class-report.pdf" in first
    later = time.time() + 3 * 86400  # the same run three days later
    monkeypatch.setattr(time, "time", lambda: later)
    grade_files(key, responses, tmp_path / "again")
    again = _files(tmp_path / "again")
    assert sorted(again) == sorted(first)
    differ = [name for name in first if first[name] != again[name]]
    assert differ == []
