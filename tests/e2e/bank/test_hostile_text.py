"""Issue 14 (banks, prompts and printed text): hostile text in banks, on the command line and
in error messages; links in bank folders; YAML 1.2 numbers; the prompt sandbox's bounds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import needs_tex
from tests.unit.bank.test_hostile_text import _folder
from worksheetgen.bank.load import load_banks
from worksheetgen.cli import main
from worksheetgen.errors import BankError, ExportError
from worksheetgen.textrules import shown

BANK = """\
sheet:
  title: {title}
questions:
  - id: q1
    family: scaling
"""


# what YAML escapes decode to, though the file itself holds only ASCII
ESCAPED = [
    '"\\x01"',
    '"\\e"',
    '"\\0"',
    '"\\x7f"',
    '"\\x85"',
    '"\\u0090"',
    '"\\ufffe"',
    '"\\u202e"',
    '"\\u2066"',
    '"\\ufeff"',
    '"\\u2028"',
    '"\\U0010FFFF"',
    '"\\ufdd0"',
]


@pytest.mark.parametrize("escaped", ESCAPED)
def test_a_yaml_escape_decoding_to_a_refused_character_is_one_bank_error_line(
    escaped, tmp_path, runner
) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(BANK.format(title='"x' + escaped[1:-1] + 'y"'), encoding="ascii")
    with pytest.raises(BankError) as err:
        load_banks([bank])
    assert err.value.line == 2 and err.value.field == "sheet.title"
    assert "expected printable text" in err.value.message
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--bank", str(bank), "--no-pdf", "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_title_on_the_command_line_meets_the_same_rule(tmp_path, runner) -> None:
    for title in ("A\x1b[2JB", "A\u202eB", "A\ufffeB", "A\x85B"):
        result = runner.invoke(
            main,
            ["build", "--seed", "1", "--no-pdf", "--title", title, "--out", str(tmp_path / "out")],
        )
        assert result.exit_code == 2, result.output
        assert "--title: expected printable text" in result.output
        assert "\x1b" not in result.output and "\u202e" not in result.output
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_title_on_the_command_line_has_the_length_limit_of_a_bank_title(tmp_path, runner) -> None:
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--title", "x" * 4001, "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 2
    assert "--title: expected at most 4000 characters, got 4001" in result.output


def test_error_lines_show_control_characters_escaped(tmp_path, runner) -> None:
    assert shown("a\x1b]0;pwned\x07b\u202ec") == "a\\x1b]0;pwned\\x07b\\u202ec"
    err = BankError("got 'a\x1bb'", file="x\x07.yaml", line=3, field="f\u202e")
    assert str(err) == "x\\x07.yaml:3: f\\u202e: got 'a\\x1bb'"
    missing = tmp_path / "no\x1b[2Jbank.yaml"
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--no-pdf",
            "--bank",
            str(missing),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "no\\x1b[2Jbank.yaml" in result.output


def _key(tmp_path, runner) -> dict:
    result = runner.invoke(
        main, ["build", "--seed", "3", "--no-pdf", "-q", "--out", str(tmp_path / "b")]
    )
    assert result.exit_code == 0, result.output
    (key,) = (tmp_path / "b").glob("*/key.json")
    return json.loads(key.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", ["moodle", "qti"])
def test_an_xml_export_that_would_not_parse_is_refused_and_not_written(
    fmt, tmp_path, runner, monkeypatch
) -> None:
    from worksheetgen import inputs
    from worksheetgen.export import export_bytes, export_file

    data = _key(tmp_path, runner)
    data["title"] = "A\x01B"
    # the key's own text rule refuses it first ...
    with pytest.raises(ExportError, match="title: expected printable text"):
        export_bytes(data, fmt)
    # ... and without that rule, the parse-back of the written XML is the last defence
    monkeypatch.setattr(inputs, "text_problem", lambda text, lines=False: None)
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


def test_a_link_out_of_a_bank_folder_is_refused_without_quoting_its_target(
    tmp_path, runner
) -> None:
    folder = _folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("rootpw:x:0:0:rootpw:/bin/bash\ndaemon:x:1:1\n", encoding="utf-8")
    (folder / "b.yaml").symlink_to(secret)
    with pytest.raises(BankError, match="a link that leads out of it") as err:
        load_banks([folder])
    assert err.value.file.endswith("b.yaml")
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--no-pdf", "--bank", str(folder), "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1 and "rootpw" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def _pdf_words(pdf: Path) -> tuple[float, list[tuple[float, str]]]:
    """The page width and every word's right edge and text, on every page of a PDF."""
    import html
    import re
    import subprocess

    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    width = float(re.search(r'<page width="([0-9.]+)"', out).group(1))
    words = [
        (float(x), html.unescape(w))
        for x, w in re.findall(
            r'<word xMin="[0-9.]+" yMin="[0-9.]+" xMax="([0-9.]+)" '
            r'yMax="[0-9.]+">([^<]*)</word>',
            out,
        )
    ]
    return width, words


def _pdf_text(pdf: Path) -> str:
    import subprocess

    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


@needs_tex
@pytest.mark.parametrize("extra", ["", "Ωmega "], ids=["pdflatex", "lualatex"])
def test_names_print_exactly_as_written_without_ligatures(extra, tmp_path, runner) -> None:
    name = extra + "Jean--Luc O,,Hara---X <<a>> !`b ?`c ''d ``e"
    roster = tmp_path / "roster.csv"
    roster.write_text('name,id\n"' + name.replace('"', '""') + '",s1\n', encoding="utf-8")
    result = runner.invoke(
        main,
        ["build", "--seed", "1", "--roster", str(roster), "-q", "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 0, result.output
    (pdf,) = (tmp_path / "out").glob("*/students/s1-sheet.pdf")
    assert name in _pdf_text(pdf)


@needs_tex
def test_long_unspaced_names_titles_and_words_wrap_and_are_never_cut(tmp_path, runner) -> None:
    name = "Zz" + "abcdefghij" * 19 + "ENDNAME"  # 199 characters, no space
    word = "W" + "x" * 1990 + "ENDWORD"
    math = "y" * 1500 + "ENDMATH"
    roster = tmp_path / "roster.csv"
    roster.write_text(f"name,id\n{name},s1\n", encoding="utf-8")
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        f"sheet:\n  title: {'T' * 150}ENDTITLE\nquestions:\n  - id: q1\n"
        f"    family: scaling\n    prompt: 'Look: {word} now ${math}$.'\n",
        encoding="utf-8",
    )
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--roster",
            str(roster),
            "-q",
            "--bank",
            str(bank),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    (pdf,) = (tmp_path / "out").glob("*/students/s1-sheet.pdf")
    width, words = _pdf_words(pdf)
    margin = 2 / 2.54 * 72  # --geometry margin=2cm
    assert max(x for x, _ in words) <= width - margin + 1
    text = "".join(w for _, w in words)
    # Page 1 prints the whole name on its name line; every page's footer names the sheet by
    # the name's first 59 characters and an ellipsis, then the sheet code.
    assert text.count(name) == 1
    pages = int(re.findall(r"Page\d+of(\d+)", text)[-1])
    footers = re.findall(re.escape(name[:59]) + r"(?:…|\.\.\.)·sheetcode", text)
    assert len(footers) == pages
    assert word in text and math in text and "T" * 150 + "ENDTITLE" in text


@needs_tex
@pytest.mark.parametrize(
    "prompt",
    ["'" + "\\" * 3000 + "'", "'$" + "\\" * 3000 + "$'", "'$x " + "\\\\ " * 1000 + "$'"],
    ids=["text", "math", "math-rows"],
)
def test_a_prompt_of_thousands_of_backslashes_builds(prompt, tmp_path, runner) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        f"questions:\n  - id: q1\n    family: scaling\n    prompt: {prompt}\n", encoding="utf-8"
    )
    result = runner.invoke(
        main, ["build", "--seed", "1", "--bank", str(bank), "-q", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output


@needs_tex
def test_a_tex_error_inside_a_question_names_the_question_and_sheet(
    tmp_path, runner, monkeypatch
) -> None:
    """The last line of defence behind the load-time math checks: TeX's error line is
    translated to the question (and sheet) it is in."""
    import worksheetgen.render.markup as render

    monkeypatch.setattr(render, "_tex_problems", lambda math: [])
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        "questions:\n  - id: q1\n    family: scaling\n  - id: q2\n"
        "    family: scaling\n    prompt: 'See $a^b^c$.'\n",
        encoding="utf-8",
    )
    roster = tmp_path / "roster.csv"
    roster.write_text("name,id\nAda Lovelace,s1\n", encoding="utf-8")
    result = runner.invoke(
        main,
        [
            "build",
            "--seed",
            "1",
            "--bank",
            str(bank),
            "-q",
            "--roster",
            str(roster),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 1
    assert ': Double superscript (question 2 of "Ada Lovelace' in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_paths_echoed_after_a_build_show_control_characters_escaped(tmp_path, runner) -> None:
    out = tmp_path / "out\x1b]0;pwned\x07"
    result = runner.invoke(main, ["build", "--seed", "1", "--no-pdf", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]0;pwned\\x07" in result.output


def test_a_heavy_prompt_stays_interruptible(tmp_path) -> None:
    """With the budgets lifted, a prompt that works for ever still ends at once on SIGTERM:
    no single operation runs long enough in C to hold the signal back."""
    import signal
    import subprocess
    import sys
    import time

    bank = tmp_path / "bank.yaml"
    body = (
        "{% for i in range(100000) %}{% for j in range(100000) %}"
        "{{ (range(1000)|list)|sum }}{% endfor %}{% endfor %}"
    )
    bank.write_text(
        f"questions:\n  - id: q1\n    family: scaling\n    prompt: '{body}'\n", encoding="utf-8"
    )
    started = time.monotonic()
    lifted = (
        "import sys, worksheetgen.render.prompts as r; r.MAX_WORK = r.MAX_LOOP_STEPS = "
        "r.MAX_PROMPT_CHARS = 10**15; from worksheetgen.cli import main; "
        "sys.argv[0] = 'worksheetgen'; main()"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            lifted,
            "build",
            "--seed",
            "1",
            "--no-pdf",
            "--bank",
            str(bank),
            "--out",
            str(tmp_path / "o"),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert time.monotonic() - started < 15
    assert proc.returncode == 130, err
    assert err.strip() == "worksheetgen: interrupted"
