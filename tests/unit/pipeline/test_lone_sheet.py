"""A lone sheet is a class of one in its rendering too: its sheet is rendered into fragments
as a class's sheets are (``Renderer.sheet``, alone), and ``SheetSink`` puts each between its
document's head and tail. The documents are the same bytes the whole-document templates give
for the same solved sheet (``render_all``), with none of a class's odd-page starts or page
ranges."""

from __future__ import annotations

import pytest

from tests.solved import render_all
from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.resources import data_dir

DOCUMENTS = (
    "sheet.tex",
    "key.tex",
    "key-grid.tex",
    "sheet.md",
    "key.md",
    "key-grid.md",
    "sheet.html",
    "key.html",
)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"large_print": True, "language": "de"},
        {"scannable": True},
        {"scannable": True, "answer_sheet": True, "banks": [str(data_dir("banks") / "quiz.yaml")]},
    ],
    ids=["default", "large-print-de", "scannable", "answer-sheet"],
)
def test_a_lone_sheets_documents_are_its_fragment_between_head_and_tail(tmp_path, options):
    result = build(BuildOptions(seed=42, out=str(tmp_path), pdf=False, **options))
    (drawn,) = result.build.sheets
    scannable, answers = options.get("scannable", False), options.get("answer_sheet", False)
    whole = render_all(result.build, None, scannable and not answers, answers)
    for name in DOCUMENTS:
        assert (result.folder / name).read_text(encoding="utf-8") == whole[name], name
    sheet_tex = (result.folder / "sheet.tex").read_text(encoding="utf-8")
    # no class's odd-page start or page ranges to cut by (the preamble defines them)
    assert "\n\\wsstartsheet\n" not in sheet_tex and "\n\\wsreleasepages\n" in sheet_tex
    assert "\\openout\\wspages" not in sheet_tex
    assert sheet_tex.count("\\begin{document}") == sheet_tex.count("\\end{document}") == 1
    if answers:
        answer_tex = (result.folder / "answers.tex").read_text(encoding="utf-8")
        assert answer_tex.count("\\end{document}") == 1
        assert "\n\\wsstartsheet\n" not in answer_tex
