"""One build path, several sinks: whichever sink takes the sheets, the folder is the same.

A behaviour across modules, not one module's tests (pipeline, pipeline.build, pipeline.plan)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import needs_tex
from tests.solved import make_build
from worksheetgen.pipeline import build as pipeline
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.pipeline.plan import SheetIdentity, plan_sheet, plan_versions


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


@needs_tex
def test_a_class_compiled_after_writing_is_the_bytes_the_streamed_build_gives(
    tmp_path, monkeypatch
):
    """Where TeX cannot read through pipes, TexSink compiles the written documents after
    the loop (compile_and_split): the same PDFs, cut the same way."""
    options = BuildOptions(seed=4, versions=2, out=str(tmp_path / "streamed"))
    streamed = build(options)
    monkeypatch.setattr(pipeline, "can_stream", lambda: False)
    after = build(BuildOptions(seed=4, versions=2, out=str(tmp_path / "after")))
    assert streamed.details is not None and "sheets" in streamed.details.seconds
    assert _files(after.folder) == _files(streamed.folder)
    assert sorted(after.files) == sorted(streamed.files)
    assert any(name.startswith("versions/") and name.endswith(".pdf") for name in after.files)


def test_a_lone_sheet_is_a_class_of_one_drawn_by_its_identity(tmp_path):
    result = build(BuildOptions(seed=6, out=str(tmp_path), pdf=False, secret=b"s" * 16))
    (entry,) = plan_sheet("self-attention", 6, b"s" * 16).entries
    assert entry.identity == SheetIdentity(6, "self-attention", b"s" * 16)
    assert "ssss" not in repr(entry)  # the course secret is never printed
    assert result.folder.name == "self-attention-seed6"
    alone = make_build(result.build.bank, 6, secret=b"s" * 16)
    assert result.build.sheets == alone.sheets


def test_each_version_is_planned_by_its_own_identity():
    plan = plan_versions(3, 8, b"k" * 16)
    assert [e.identity for e in plan.entries] == [
        SheetIdentity(8, v, b"k" * 16) for v in ("A", "B", "C")
    ]
    assert [e.id for e in plan.entries] == ["A", "B", "C"]
