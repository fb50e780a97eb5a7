"""The course secret's loose ends: no LMS export shows the seed, and `check` reads the course
configuration (banks, decimals, secret) as `build` does."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.unit.pipeline.test_course_loose_ends import BANK, SECRET
from worksheetgen.cli import main

SEED = 987654321


def _exported(runner, tmp_path: Path, *extra: str, env: dict[str, str]) -> dict[str, bytes]:
    out = tmp_path / "out"
    args = ["build", "--seed", str(SEED), "--no-pdf", "--out", str(out), *extra]
    for fmt in ("moodle", "gift", "qti"):
        args += ["--export", fmt]
    result = runner.invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    folder = next(p.parent for p in out.rglob("key.json"))
    files = {name: (folder / name).read_bytes() for name in ("moodle.xml", "gift.txt")}
    with zipfile.ZipFile(io.BytesIO((folder / "canvas-qti.zip").read_bytes())) as zf:
        files.update({name: zf.read(name) for name in zf.namelist()})
    files["key.json"] = (folder / "key.json").read_bytes()
    return files


@pytest.mark.parametrize("secret", ["", SECRET])
@pytest.mark.parametrize("extra", [(), ("--versions", "3")])
def test_no_lms_export_prints_the_seed(runner, tmp_path, secret, extra):
    files = _exported(runner, tmp_path, *extra, env={"WORKSHEETGEN_SECRET": secret})
    key = json.loads(files.pop("key.json"))
    assert key["seed"] == SEED
    for name, data in files.items():
        assert str(SEED).encode() not in data, name
        assert b"seed" not in data.lower(), name
    if secret:  # the fingerprint, so a TA can tell which course's key an export came from
        for name in ("moodle.xml", "gift.txt"):
            assert key["secret"].encode() in files[name], name
    if not extra:  # one sheet: its code, as the sheet prints it
        assert key["sheets"][0]["code"].encode() in files["gift.txt"]


def test_canvas_keeps_two_seeds_apart_without_the_seed(runner, tmp_path):
    env = {"WORKSHEETGEN_SECRET": ""}
    names = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        args = ["build", "--seed", seed, "--no-pdf", "--out", str(out), "--export", "qti"]
        assert runner.invoke(main, args, env=env).exit_code == 0
        with zipfile.ZipFile(next(out.rglob("canvas-qti.zip"))) as zf:
            names.append(sorted(zf.namelist()))
    assert names[0] != names[1]  # the assessment's identifier differs between the builds


def _config(tmp_path: Path, bank: Path, **more: str) -> Path:
    lines = [f'banks = ["{bank.name}"]', *(f"{k} = {v}" for k, v in more.items())]
    path = tmp_path / "worksheetgen.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_check_reads_the_banks_of_the_configuration(runner, tmp_path, write_bank):
    bank = write_bank(BANK.replace("id: lab\n", "id: from-the-config\n"))
    path = _config(tmp_path, bank)
    args = ["check", "--stress", "3", "--config", str(path)]
    result = runner.invoke(main, args, env={"WORKSHEETGEN_SECRET": ""})
    assert result.exit_code == 0, result.output
    assert "from-the-config" in result.output


def test_check_options_win_over_the_configuration(runner, tmp_path, write_bank):
    write_bank(BANK.replace("id: lab\n", "id: from-the-config\n"))
    path = _config(tmp_path, tmp_path / "bank.yaml")
    other = write_bank(BANK.replace("id: lab\n", "id: from-the-option\n"), "other.yaml")
    args = ["check", "--stress", "3", "--config", str(path), "--bank", str(other)]
    result = runner.invoke(main, args, env={"WORKSHEETGEN_SECRET": ""})
    assert result.exit_code == 0, result.output
    assert "from-the-option" in result.output and "from-the-config" not in result.output


def test_check_refuses_a_bad_configuration_in_one_line(runner, tmp_path, write_bank):
    bank = write_bank(BANK)
    path = _config(tmp_path, bank, decimals="9")
    result = runner.invoke(main, ["check", "--config", str(path)], env={"WORKSHEETGEN_SECRET": ""})
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert f"{path}:2: decimals: expected an integer from 0 to 6" in result.output


def test_check_at_the_configured_decimals(runner, tmp_path, write_bank, monkeypatch):
    import worksheetgen.pipeline.check as check_module

    seen: list[object] = []
    real = check_module.check_banks

    def spy(*args, **kwargs):
        seen.append((kwargs.get("decimals"), kwargs.get("secret")))
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "check_banks", spy)
    path = _config(tmp_path, write_bank(BANK), decimals="3")
    env = {"WORKSHEETGEN_SECRET": SECRET}
    result = runner.invoke(main, ["check", "--stress", "2", "--config", str(path)], env=env)
    assert result.exit_code == 0, result.output
    assert seen == [(3, SECRET.encode())]
