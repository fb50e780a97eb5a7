"""Issue 14 (banks, prompts and printed text): hostile text in banks, on the command line and
in error messages; links in bank folders; YAML 1.2 numbers; the prompt sandbox's bounds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from worksheetgen.bank import load_banks
from worksheetgen.cli import main
from worksheetgen.errors import BankError, ExportError, WorksheetgenError
from worksheetgen.textrules import first_refused, problem, shown

BANK = """\
sheet:
  title: {title}
questions:
  - id: q1
    family: scaling
"""

# what YAML escapes decode to, though the file itself holds only ASCII
ESCAPED = ['"\\x01"', '"\\e"', '"\\0"', '"\\x7f"', '"\\x85"', '"\\u0090"', '"\\ufffe"',
           '"\\u202e"', '"\\u2066"', '"\\ufeff"', '"\\u2028"', '"\\U0010FFFF"', '"\\ufdd0"']


@pytest.mark.parametrize("escaped", ESCAPED)
def test_a_yaml_escape_decoding_to_a_refused_character_is_one_bank_error_line(
        escaped, tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK.format(title='"x' + escaped[1:-1] + 'y"'), encoding="ascii")
    with pytest.raises(BankError) as err:
        load_banks([bank])
    assert err.value.line == 2 and err.value.field == "sheet.title"
    assert "expected printable text" in err.value.message
    result = runner.invoke(main, ["build", "--seed", "1", "--bank", str(bank), "--no-pdf",
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_rule_covers_prompts_ids_and_keys_of_a_bank_too(tmp_path) -> None:
    for text in ('questions:\n  - id: q1\n    family: scaling\n    prompt: "a\\eb"\n',
                 'questions:\n  - id: q1\n    family: scaling\n    title: "\\u202eab"\n',
                 'questions:\n  - id: q1\n    family: scaling\n    params: {"\\x01": 1}\n'):
        bank = tmp_path / "bank.yaml"
        bank.write_text(text, encoding="ascii")
        with pytest.raises(BankError, match="expected printable text"):
            load_banks([bank])


def test_tabs_newlines_joiners_and_any_script_stay_allowed() -> None:
    assert first_refused("Zoë Ωmega 日本 \u200d\u200c tab\tline\n", lines=True) is None
    assert first_refused("a\tb") == "\t"  # one-line text has no tab
    assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in problem("x\u202e")


def test_a_title_on_the_command_line_meets_the_same_rule(tmp_path, runner) -> None:
    for title in ("A\x1b[2JB", "A\u202eB", "A\ufffeB", "A\x85B"):
        result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--title", title,
                                      "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, result.output
        assert "--title: expected printable text" in result.output
        assert "\x1b" not in result.output and "\u202e" not in result.output
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_roster_refuses_what_the_bank_refuses(tmp_path) -> None:
    from worksheetgen.roster import parse_roster

    for bad in ("\ufffe", "\u202e", "\x1b", "\U000E0001"):
        with pytest.raises(WorksheetgenError, match="control characters"):
            parse_roster(f"name,id\nAda,a{bad}b\n")


def test_error_lines_show_control_characters_escaped(tmp_path, runner) -> None:
    assert shown("a\x1b]0;pwned\x07b\u202ec") == "a\\x1b]0;pwned\\x07b\\u202ec"
    err = BankError("got 'a\x1bb'", file="x\x07.yaml", line=3, field="f\u202e")
    assert str(err) == "x\\x07.yaml:3: f\\u202e: got 'a\\x1bb'"
    missing = tmp_path / "no\x1b[2Jbank.yaml"
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--bank", str(missing),
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "no\\x1b[2Jbank.yaml" in result.output


def _key(tmp_path, runner) -> dict:
    result = runner.invoke(main, ["build", "--seed", "3", "--no-pdf", "-q",
                                  "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    (key,) = (tmp_path / "b").glob("*/key.json")
    return json.loads(key.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", ["moodle", "qti"])
def test_an_xml_export_that_would_not_parse_is_refused_and_not_written(fmt, tmp_path,
                                                                       runner) -> None:
    from worksheetgen.export import export_bytes, export_file

    data = _key(tmp_path, runner)
    data["title"] = "A\x01B"
    with pytest.raises(ExportError, match="parses back as XML"):
        export_bytes(data, fmt)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    target = tmp_path / "x" / "out.file"
    target.parent.mkdir()
    with pytest.raises(ExportError):
        export_file(path, fmt, target)
    assert list(target.parent.iterdir()) == []


def test_every_well_formed_export_still_parses(tmp_path, runner) -> None:
    import io
    import xml.etree.ElementTree as ET
    import zipfile

    from worksheetgen.export import export_bytes

    data = _key(tmp_path, runner)
    ET.fromstring(export_bytes(data, "moodle"))
    with zipfile.ZipFile(io.BytesIO(export_bytes(data, "qti"))) as zf:
        for name in zf.namelist():
            ET.fromstring(zf.read(name))


GOOD = "questions:\n  - id: {qid}\n    family: scaling\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "a.yaml").write_text(GOOD.format(qid="a1"), encoding="utf-8")
    return folder


def test_a_link_out_of_a_bank_folder_is_refused_without_quoting_its_target(tmp_path,
                                                                           runner) -> None:
    folder = _folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("rootpw:x:0:0:rootpw:/bin/bash\ndaemon:x:1:1\n", encoding="utf-8")
    (folder / "b.yaml").symlink_to(secret)
    with pytest.raises(BankError, match="a link that leads out of it") as err:
        load_banks([folder])
    assert err.value.file.endswith("b.yaml")
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--bank", str(folder),
                                  "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "rootpw" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_link_inside_the_bank_folder_is_followed(tmp_path) -> None:
    folder = _folder(tmp_path)
    (folder / "real").mkdir()
    (folder / "real" / "b.txt").write_text(GOOD.format(qid="b1"), encoding="utf-8")
    (folder / "b.yaml").symlink_to(Path("real") / "b.txt")
    assert [q.id for q in load_banks([folder]).questions] == ["a1", "b1"]


def test_a_dangling_link_in_a_bank_folder_is_an_error_not_a_dropped_bank(tmp_path) -> None:
    folder = _folder(tmp_path)
    (folder / "b.yaml").symlink_to(tmp_path / "gone.yaml")
    with pytest.raises(BankError, match="a link to nothing"):
        load_banks([folder])


def test_a_fifo_in_a_bank_folder_is_an_error(tmp_path) -> None:
    folder = _folder(tmp_path)
    os.mkfifo(folder / "b.yaml")
    with pytest.raises(BankError, match="special file"):
        load_banks([folder])


@pytest.mark.parametrize("content", [
    "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin\n",
    "password: hunter2\nuser: root\n",
    "- secret-token-123\n- other\n",
    "12345678\n",
])
def test_an_error_about_a_file_that_is_no_bank_never_quotes_it(content, tmp_path) -> None:
    target = tmp_path / "passwd"
    target.write_text(content, encoding="utf-8")
    link = tmp_path / "bank.yaml"
    link.symlink_to(target)
    with pytest.raises(BankError) as err:
        load_banks([link])
    text = str(err.value)
    assert "expected a mapping with a 'questions' list" in text
    for word in ("/bin/bash", "hunter2", "secret", "12345678", "daemon"):
        assert word not in text


def test_a_misspelt_top_field_is_still_named(tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text("question:\n  - id: a\n    family: scaling\n", encoding="utf-8")
    with pytest.raises(BankError, match='did you mean "questions"'):
        load_banks([bank])
