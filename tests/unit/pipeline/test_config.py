"""worksheetgen.toml, `init`, `config`, the secret file and keys from another secret."""

from __future__ import annotations

import pytest

from worksheetgen.errors import ConfigError
from worksheetgen.pipeline.config import find_config, load_config, read_secret_file

NO_ENV: dict[str, str] = {}


def test_a_secret_file_others_may_read_is_refused_in_one_line(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("x" * 40)
    secret.chmod(0o640)
    with pytest.raises(ConfigError, match="expected mode 0600.*got 0640"):
        read_secret_file(secret)
    secret.chmod(0o600)
    assert read_secret_file(secret) == b"x" * 40


def test_the_configuration_is_found_in_a_parent_folder(tmp_path):
    (tmp_path / "worksheetgen.toml").write_text('title = "Quiz 1"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / "worksheetgen.toml"
    config = load_config(start=deep, environ=NO_ENV)
    assert config.settings["title"].value == "Quiz 1"
    assert config.settings["title"].source == f"{tmp_path / 'worksheetgen.toml'}:1"


def test_command_line_options_win_over_the_file(tmp_path):
    (tmp_path / "worksheetgen.toml").write_text("decimals = 2\njobs = 3\nout = 'built'\n")
    config = load_config(options={"decimals": 4, "jobs": None}, start=tmp_path, environ=NO_ENV)
    assert (
        config.settings["decimals"].value == 4
        and config.settings["decimals"].source == "--decimals"
    )
    assert config.value("jobs") == 3
    assert config.value("out") == str(tmp_path / "built")  # relative to the file's folder


def test_large_print_from_the_file_and_the_command_line(tmp_path):
    (tmp_path / "worksheetgen.toml").write_text("large_print = true\n")
    config = load_config(start=tmp_path, environ=NO_ENV)
    assert config.value("large_print") is True
    config = load_config(options={"large_print": False}, start=tmp_path, environ=NO_ENV)
    assert config.value("large_print") is False
    assert config.settings["large_print"].source == "--no-large-print"
