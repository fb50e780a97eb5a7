"""Compiled templates are cached between runs, safely, and never change what is rendered.

A behaviour across modules, not one module's tests (errors, render, render.documents)."""

from __future__ import annotations

from pathlib import Path

from worksheetgen.errors import TemplateError


def test_a_cache_folder_others_may_write_is_not_used():
    from worksheetgen.render.documents import _bytecode_cache

    made = _bytecode_cache("probe")
    assert made is not None  # the session's private folder works
    folder = Path(made.directory)
    folder.chmod(0o777)
    try:
        assert _bytecode_cache("probe") is None
    finally:
        folder.chmod(0o700)


def test_a_prompt_is_cached_only_once_it_has_passed_the_checks(tmp_path, monkeypatch):
    import pytest

    from worksheetgen.render import prompts as render

    monkeypatch.setenv("WORKSHEETGEN_CACHE_DIR", str(tmp_path))
    render._prompt_cache_dir.cache_clear()
    render.compile_prompt.cache_clear()
    try:
        with pytest.raises(render.PromptError):
            render.compile_prompt("{{ ''.__class__ }} is refused")
        assert not list(tmp_path.glob("prompts-*/*"))
        text = "Row {% for i in range(T) %}{{ i + 1 }} {% endfor %}of {{ name|upper }}"
        first = render.render_prompt(text, {"T": 3, "name": "q"})
        assert len(list(tmp_path.glob("prompts-*/*.prompt"))) == 1
        render.compile_prompt.cache_clear()  # as a new process would: from the cache file
        assert render.render_prompt(text, {"T": 3, "name": "q"}) == first == "Row 1 2 3 of Q"
        with pytest.raises(TemplateError):  # the limits still hold for a cached prompt
            render.render_prompt(text, {"T": 10**6, "name": "q"})
    finally:
        render._prompt_cache_dir.cache_clear()
        render.compile_prompt.cache_clear()
