"""A build's documents compile at once; when several fail, the error said is the first
document's in the build's order, whichever TeX run ended first (a sheet names the question
an error is in; the grid's worked keys, compiled beside it, may not).

A behaviour across modules, not one module's tests (errors, tex)."""

from __future__ import annotations

import time

import pytest

from tests.conftest import needs_tex
from worksheetgen.errors import CompileError
from worksheetgen.tex import run as tex

SLOW_FAILURE = (
    "\\documentclass{article}\\begin{document}\n"
    "\\count255=0 \\loop\\advance\\count255 by 1 \\ifnum\\count255<4000000 \\repeat\n"
    "$a^b^c$\n\\end{document}\n"
)
QUICK_FAILURE = "\\documentclass{article}\\begin{document}\n\\undefinedcommand\n\\end{document}\n"
FINE = "\\documentclass{article}\\begin{document}\nfine\n\\end{document}\n"


@needs_tex
def test_the_first_document_s_failure_is_said_even_when_a_later_one_fails_first(
    tmp_path,
) -> None:
    jobs = [tex.TexJob("sheet", SLOW_FAILURE), tex.TexJob("grid", QUICK_FAILURE)]
    with pytest.raises(CompileError) as caught:
        tex.compile_all(jobs, tmp_path / "kept")
    assert "Double superscript" in str(caught.value)
    assert caught.value.file == "sheet.tex"


@needs_tex
def test_documents_after_a_failure_are_stopped_not_waited_for(tmp_path) -> None:
    endless = "\\documentclass{article}\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n"
    jobs = [tex.TexJob("sheet", QUICK_FAILURE), tex.TexJob("grid", endless)]
    started = time.monotonic()
    with pytest.raises(CompileError) as caught:
        tex.compile_all(jobs, tmp_path / "kept")
    assert caught.value.file == "sheet.tex"
    assert time.monotonic() - started < 30


@needs_tex
def test_a_document_before_a_failure_that_compiles_does_not_hide_it(tmp_path) -> None:
    jobs = [tex.TexJob("sheet", FINE), tex.TexJob("grid", QUICK_FAILURE)]
    with pytest.raises(CompileError) as caught:
        tex.compile_all(jobs, tmp_path / "kept")
    assert caught.value.file == "grid.tex"
    assert "Undefined control sequence" in str(caught.value)
