"""The TA's answer grid: every sheet's answers per question, from the solved sheets the key
prints (key.json holds the same printed values), compact on paper."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from worksheetgen.pipeline.build import BuildOptions, build
from worksheetgen.render import grid
from worksheetgen.render.grid import (
    GridItem,
    GridRow,
    PartAnswer,
    grid_layout,
    grid_questions,
)

needs_tex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX is not installed")
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext")

BANK = """\
sheet: {id: grid, title: Grid quiz}
questions:
  - id: table
    family: softmax
  - id: picked
    family: softmax
    format: choice
  - id: head
    family: lab3
    params: {T: 4}
  - id: idea
    family: concept
"""

HEADER = re.compile(r"^\(([a-z])\)(?: (\d+))?$")


def _tables(md: str) -> dict[int, list[tuple[list[str], list[list[str]]]]]:
    """The grid's Markdown tables, by question number: (header cells, rows of cells)."""
    out: dict[int, list[tuple[list[str], list[list[str]]]]] = {}
    number = 0
    lines = md.splitlines()
    for i, line in enumerate(lines):
        found = re.match(r"## Question (\d+)\.", line)
        if found:
            number = int(found.group(1))
        if line.startswith("| sheet | code |"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            out.setdefault(number, []).append((header, rows))
    return out


def _printed(cell: str) -> str:
    """A grid cell as key.json prints the value: $0.25$ -> 0.25, $-\\infty$ -> -inf."""
    cell = cell.strip("$").replace("**", "")
    return "-inf" if cell == r"-\infty" else cell


def _check_against_key(folder: Path, grid_md: str) -> int:
    key = json.loads((folder / "key.json").read_text("utf-8"))
    tables = _tables((folder / grid_md).read_text("utf-8"))
    checked = 0
    for sheet in key["sheets"]:
        for q in sheet["questions"]:
            for header, rows in tables[q["number"]]:
                (row,) = [r for r in rows if r[1] == f"`{sheet['code']}`"]
                for name, cell in zip(header[2:], row[2:], strict=True):
                    found = HEADER.match(name)
                    if found is None:  # a row's own margin
                        continue
                    part = q["parts"][ord(found.group(1)) - ord("a")]
                    if q.get("choice_answer"):
                        assert _printed(cell) == q["choice_answer"]
                        checked += 1
                        continue
                    value = q["rounded"][part["answer"]]
                    if found.group(2) is not None:
                        r, c = (0, int(found.group(2)) - 1)
                        if isinstance(value[0], list):  # a matrix: row and column
                            r, c = int(found.group(2)[0]) - 1, int(found.group(2)[1:]) - 1
                            value = value[r] if r < len(value) else []
                        if c >= len(value):  # a smaller table than another sheet's
                            assert cell == ""
                            continue
                        value = value[c]
                    if q["kinds"][part["answer"]] == "text":
                        assert cell == ""
                    elif q["kinds"][part["answer"]] == "choice":  # the option's letter
                        letter = "ABCDEFGH"[q["options"][part["answer"]].index(value)]
                        assert cell == f"**{letter}**", (sheet["id"], q["id"], name)
                    else:
                        assert _printed(cell) == str(value), (sheet["id"], q["id"], name)
                    checked += 1
    return checked


def _entries(folder: Path) -> int:
    """How many answers key.json prints: every cell of a table, one per other part."""
    key = json.loads((folder / "key.json").read_text("utf-8"))
    count = 0
    for sheet in key["sheets"]:
        for q in sheet["questions"]:
            for part in q["parts"]:
                value = q["rounded"][part["answer"]]
                if q.get("choice_answer") or not isinstance(value, list):
                    count += 1
                else:
                    count += sum(len(r) if isinstance(r, list) else 1 for r in value)
    return count


def test_a_class_grid_has_every_sheets_answers_as_its_key_prints_them(tmp_path, write_bank):
    bank = write_bank(BANK)
    result = build(
        BuildOptions(seed=5, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=4)
    )
    assert {"keys-grid.tex", "keys-grid.md"} <= set(result.files)
    assert _check_against_key(result.folder, "keys-grid.md") == _entries(result.folder)


def test_a_single_build_writes_the_same_grid_for_its_one_sheet(tmp_path, write_bank):
    bank = write_bank(BANK)
    result = build(BuildOptions(seed=5, banks=(str(bank),), out=str(tmp_path), pdf=False))
    assert {"key-grid.tex", "key-grid.md"} <= set(result.files)
    assert _check_against_key(result.folder, "key-grid.md") == _entries(result.folder)
    manifest = json.loads((result.folder / "manifest.json").read_text("utf-8"))
    assert {"key-grid.tex", "key-grid.md"} <= set(manifest["files"])


def test_multiple_choice_shows_the_right_letter(tmp_path, write_bank):
    bank = write_bank(BANK)
    result = build(
        BuildOptions(seed=9, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=6)
    )
    key = json.loads((result.folder / "key.json").read_text("utf-8"))
    letters = [s["questions"][1]["choice_answer"] for s in key["sheets"]]
    ((header, rows),) = _tables((result.folder / "keys-grid.md").read_text("utf-8"))[2]
    # six versions, each its own: the key column names the worked key of each
    assert header == ["sheet", "code", "key", "(a)"]
    assert [r[3] for r in rows] == [f"**{x}**" for x in letters]


def test_a_pick_one_answer_shows_the_letter_the_sheet_prints_for_it(tmp_path, write_bank):
    bank = write_bank(
        """\
        sheet: {id: picks, title: Picks}
        questions:
          - id: bug
            family: spot-the-bug
          - id: map
            family: heatmap
        """
    )
    result = build(
        BuildOptions(seed=3, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=8)
    )
    assert _check_against_key(result.folder, "keys-grid.md") == _entries(result.folder)
    tables = _tables((result.folder / "keys-grid.md").read_text("utf-8"))
    picks = [r[h.index("(a)")] for h, rows in tables[1][:1] for r in rows]
    assert set(picks) <= {f"**{x}**" for x in "ABCDEFGH"} and len(set(picks)) > 1


def _part(rows: int, cols: int, margin: str = "", digits: int = 1) -> PartAnswer:
    cells = tuple(tuple(f"{r}.{c}" + "0" * (digits - 1) for c in range(cols)) for r in range(rows))
    return PartAnswer("a", "A", "matrix", cells, margin)


def _row(label: str, *parts: PartAnswer) -> GridRow:
    return GridRow(label, f"CODE-{label}", (GridItem("q", 1, "Q", parts),))


def test_a_wide_table_is_split_into_blocks_of_whole_rows_that_fit_the_page():
    rows = [_row("A", _part(4, 4, digits=4)), _row("B", _part(4, 4, digits=4))]
    (question,) = grid_questions(rows)
    room = grid_layout(rows).answers_width
    assert all(b.width <= room for b in question.blocks)
    indexes = [c.index for b in question.blocks for g in b.groups for c in g.columns]
    assert indexes == [f"{r}{c}" for r in range(1, 5) for c in range(1, 5)]
    # whole rows, shared out evenly: two blocks of two rows each
    assert [len(b.groups[0].columns) for b in question.blocks] == [8, 8]
    entries = [e for b in question.blocks for e in b.lines[1].cells[0].entries]
    assert entries == [f"{r}.{c}000" for r in range(4) for c in range(4)]


def test_a_table_of_short_numbers_takes_one_block_as_wide_as_the_text():
    rows = [_row("A", _part(4, 4)), _row("B", _part(4, 4))]
    (question,) = grid_questions(rows)
    assert len(question.blocks) == 1 and len(question.blocks[0].groups[0].columns) == 16


def test_the_margin_is_printed_once_over_its_columns_when_every_sheet_shares_it():
    (shared,) = grid_questions([_row("A", _part(2, 2, "0.02")), _row("B", _part(2, 2, "0.02"))])
    (group,) = shared.blocks[0].groups
    assert group.margin == "0.02" and not group.own_margin
    (mixed,) = grid_questions([_row("A", _part(2, 2, "0.02")), _row("B", _part(2, 2, "0.03"))])
    (group,) = mixed.blocks[0].groups
    assert group.margin == "" and group.own_margin
    assert [line.cells[0].margin for line in mixed.blocks[0].lines] == ["0.02", "0.03"]


def test_sheets_whose_tables_differ_in_size_share_one_set_of_columns():
    (question,) = grid_questions([_row("A", _part(2, 2)), _row("B", _part(3, 3))])
    indexes = [c.index for b in question.blocks for g in b.groups for c in g.columns]
    assert indexes == [f"{r}{c}" for r in range(1, 4) for c in range(1, 4)]
    small = [e for b in question.blocks for e in b.lines[0].cells[0].entries]
    assert small.count("") == 5  # a 2 x 2 table leaves the third row and column blank


@needs_tex
@needs_poppler
def test_the_class_grid_pdf_is_a_few_pages_with_every_sheet_code(tmp_path):
    result = build(BuildOptions(seed=42, out=str(tmp_path), versions=30))
    grid, keys = result.folder / "keys-grid.pdf", result.folder / "keys.pdf"
    assert "keys-grid.pdf" in result.files
    text = subprocess.run(
        ["pdftotext", "-layout", str(grid), "-"], capture_output=True, text=True, check=True
    ).stdout
    key = json.loads((result.folder / "key.json").read_text("utf-8"))
    for sheet in key["sheets"]:
        assert sheet["code"] in text
    pages = text.count("\f")
    assert pages * 8 < _pages(keys)  # compact: far fewer pages than the key
    assert not any(p.name.endswith("-grid.pdf") for p in (result.folder / "versions").iterdir())


def _pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    return int(re.search(r"Pages:\s+(\d+)", info.stdout).group(1))


def test_a_shuffled_class_grid_names_each_sheets_number_for_the_question(tmp_path, write_bank):
    bank = write_bank(BANK.replace("title: Grid quiz}", "title: Grid quiz, shuffle: true}"))
    result = build(
        BuildOptions(seed=5, banks=(str(bank),), out=str(tmp_path), pdf=False, versions=6)
    )
    key = json.loads((result.folder / "key.json").read_text("utf-8"))
    printed = {  # (sheet label, question title or id) -> its number on that sheet
        (s["label"], q["id"]): q["number"] for s in key["sheets"] for q in s["questions"]
    }
    assert len({n for (_, qid), n in printed.items() if qid == "table"}) > 1  # shuffled
    grid = (result.folder / "keys-grid.md").read_text("utf-8")
    assert "## Question" not in grid  # no one number stands for every sheet
    seen = 0
    for qid, heading in (("table", "Scaled softmax table"), ("head", "Lab 3")):
        section = grid.split(f"## {heading}")[1].split("\n## ")[0]
        assert "(numbered per sheet" in section.splitlines()[0]
        for (label, q), number in printed.items():
            if q == qid:
                assert f"| {label}, Q{number} |" in section
                seen += 1
    assert seen == 12


def test_a_long_name_breaks_at_its_spaces_and_hyphens_never_inside_a_word():
    # issue 32: "Subramanian-Krishn / amurthy" broke where the column was full
    tex, short = grid._label_tex("Subramanian-Krishnamurthy Venkataraman", grid.NAME_WIDTH)
    assert not short
    assert tex == r"\parbox[t]{100.0pt}{\raggedright Subramanian-Krishnamurthy Venkataraman}"
    # a word wider than the column is cut where the room ends, and listed in full
    tex, short = grid._label_tex("Wolfeschlegelsteinhausenbergerdorff Smith", grid.NAME_WIDTH)
    assert short and r"\allowbreak" not in tex
    assert tex.endswith("…}") and "Wolfeschlegel" in tex and "Smith" not in tex
    # more than three lines of words: cut on the third
    long = "Maximiliana Theodora Wilhelmina von Hohenzollern-Sigmaringen zu Liechtenstein"
    tex, short = grid._label_tex(long, grid.NAME_WIDTH)
    assert short and "Maximiliana Theodora Wilhelmina von Hohenzollern-" in tex
    # a script written without spaces breaks between its characters
    tex, short = grid._label_tex("山田太郎" * 4, grid.NAME_WIDTH)
    assert not short and tex.count(r"\allowbreak{}") == 15
    # a right-to-left name is one run, its words in their order
    tex, _ = grid._label_tex("محمد بن سلمان العتيبي", grid.NAME_WIDTH)
    assert r"\wsrtl{\wsarab محمد بن سلمان العتيبي}" in tex


def test_the_widest_label_fits_the_column_made_for_it():
    # a lone sheet's label sets the column's width: it is never cut ("Worksh…"), nor given
    # a break inside it
    layout = grid.grid_layout([GridRow("Worksheet", "OPNA-3DG7", ())])
    assert layout.shortened == ()
    assert layout.labels["OPNA-3DG7"] == r"\parbox[t]{47.9pt}{\raggedright Worksheet}"
    for name in ("Subramanian-Krishnamurthy", "Ada", "Ελένη Παπαδοπούλου"):
        layout = grid.grid_layout([GridRow(name, "C", ()), GridRow("Bo", "D", ())])
        assert layout.shortened == (), name
