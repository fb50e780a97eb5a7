"""The old failures of worksheetgen.toml, the secret and init, still open in round four
(issue 33, section 6): each is one line naming the file and line, never a traceback.

A behaviour across modules, not one module's tests (errors, pipeline.config)."""

from __future__ import annotations

import os
import stat

import pytest

from worksheetgen.errors import ConfigError
from worksheetgen.pipeline.config import init_course, load_config


def test_toml_nested_thousands_deep_is_one_line_naming_the_file(tmp_path):
    for text, line in [
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", 1),
        ('course = "c"\ny = ' + "{a = " * 3000 + "1" + "}" * 3000 + "\n", 2),
    ]:
        path = tmp_path / "worksheetgen.toml"
        path.write_text(text, "utf-8")
        with pytest.raises(ConfigError) as caught:
            load_config(str(path))
        assert str(caught.value).startswith(f"{path}:{line}: expected TOML nested at most")


def test_toml_that_is_not_utf8_is_one_line_naming_the_line_of_the_byte(tmp_path):
    path = tmp_path / "worksheetgen.toml"
    path.write_bytes(b'paper = "a4"\n\ncourse = "Caf\xe9"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    assert str(caught.value) == f"{path}:3: expected UTF-8 text, got the byte 0xE9"


def test_a_space_that_does_not_fit_the_configured_paper_names_the_configuration(tmp_path):
    path = tmp_path / "worksheetgen.toml"
    path.write_text('paper = "letter"\nspace = "250mm"\n', "utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(str(path))
    assert str(caught.value) == (
        f"{path}:2: space: expected a height that fits on a letter page (at most 239.4mm, "
        f"the text height; paper from {path}:1), got '250mm'"
    )
    # the paper given on the command line: the configuration's space is still named
    path.write_text('space = "250mm"\n', "utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), {"paper": "letter"})
    assert str(caught.value).startswith(f"{path}:1: space: expected a height that fits")
    assert "paper from --paper" in str(caught.value)
    assert load_config(str(path)).value("space").height == "250mm"  # fits on A4


@pytest.mark.parametrize("mask", [0o000, 0o002, 0o077])
def test_init_writes_0644_and_0600_whatever_the_umask(tmp_path, mask):
    previous = os.umask(mask)
    try:
        config, secret = init_course(tmp_path)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(config.stat().st_mode) == 0o644
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
