"""Issue 14 (banks, prompts and printed text): hostile text in banks, on the command line and
in error messages; links in bank folders; YAML 1.2 numbers; the prompt sandbox's bounds.

A behaviour across modules, not one module's tests (bank.load, bank.roster, bank.yamldoc,
errors, render.markup, render.prompts, textrules)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from worksheetgen.bank.load import load_banks
from worksheetgen.errors import BankError, WorksheetgenError
from worksheetgen.textrules import first_refused, problem


def test_the_rule_covers_prompts_ids_and_keys_of_a_bank_too(tmp_path) -> None:
    for text in (
        'questions:\n  - id: q1\n    family: scaling\n    prompt: "a\\eb"\n',
        'questions:\n  - id: q1\n    family: scaling\n    title: "\\u202eab"\n',
        'questions:\n  - id: q1\n    family: scaling\n    params: {"\\x01": 1}\n',
    ):
        bank = tmp_path / "bank.yaml"
        bank.write_text(text, encoding="ascii")
        with pytest.raises(BankError, match="expected printable text"):
            load_banks([bank])


def test_tabs_newlines_joiners_and_any_script_stay_allowed() -> None:
    assert first_refused("Zoë Ωmega 日本 \u200d\u200c tab\tline\n", lines=True) is None
    assert first_refused("a\tb") == "\t"  # one-line text has no tab
    assert "U+202E (RIGHT-TO-LEFT OVERRIDE)" in problem("x\u202e")


def test_the_roster_refuses_what_the_bank_refuses(tmp_path) -> None:
    from worksheetgen.bank.roster import parse_roster

    for bad in ("\ufffe", "\u202e", "\x1b", "\U000e0001"):
        with pytest.raises(WorksheetgenError, match="printable characters only"):
            parse_roster(f"name,id\nAda,a{bad}b\n")


GOOD = "questions:\n  - id: {qid}\n    family: scaling\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "banks"
    folder.mkdir()
    (folder / "a.yaml").write_text(GOOD.format(qid="a1"), encoding="utf-8")
    return folder


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


@pytest.mark.parametrize(
    "content",
    [
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin\n",
        "password: hunter2\nuser: root\n",
        "- secret-token-123\n- other\n",
        "12345678\n",
    ],
)
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


CONTEXT = {"S": [[1, 2], [3, 4]], "T": 2, "d_k": 4, "causal": False}


LIST = "(range(100000)|list)"


HEAVY = {
    "sequence-multiplication": "{{ ([" + LIST + "]*10000)|sum(start=[])|length }}",
    "sum-of-listed-lists": "{{ [" + ",".join([LIST] * 20) + "]|sum(start=[])|length }}",
    "join": "{{ (['x'*10000]*10000)|join|length }}",
    "sort": "{{ [" + ",".join([LIST] * 40) + "]|sort|length }}",
    "unique": "{{ (" + LIST + "+" + LIST + ")|unique|list|length }}",
    "list-of-lists": "{{ [" + ",".join([LIST] * 40) + "]|list|length }}",
    "concatenation": "{{ (" + " ~ ".join(["('x'*10000)"] * 300) + ")|length }}",
    "plus-on-lists": "{{ (" + "+".join([LIST] * 30) + ")|length }}",
    "nested-loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
    "{% endfor %}",
    "work-in-a-loop": "{% for i in range(1000) %}{{ " + LIST + "|sum }}{% endfor %}",
    "range-products": "{% for i in range(300) %}{% for j in range(300) %}{{ i*j }}"
    "{% endfor %}{% endfor %}",
    "power-then-product": "{{ ((2**5000)*(2**5000)*(2**5000))|string|length }}",
    "printing-a-huge-list": "{{ [" + ",".join([LIST] * 10) + "] }}",
    "comparing-huge-lists": "{{ ["
    + ",".join([LIST] * 30)
    + "] == ["
    + ",".join([LIST] * 30)
    + "] }}",
    "string-of-a-huge-list": "{{ [" + ",".join([LIST] * 10) + "]|string|length }}",
}


@pytest.mark.parametrize("template", HEAVY.values(), ids=HEAVY)
def test_heavy_prompts_within_the_documented_limits_stop_at_once(template) -> None:
    import time

    from worksheetgen.errors import TemplateError
    from worksheetgen.render.prompts import render_prompt

    started = time.monotonic()
    with pytest.raises(TemplateError, match="template not allowed: expected") as err:
        render_prompt(template, CONTEXT, file="bank.yaml", line=7, field="questions[0].prompt")
    assert time.monotonic() - started < 5
    assert str(err.value).startswith("bank.yaml:7: questions[0].prompt: ")


def test_ordinary_prompts_render_as_before() -> None:
    from worksheetgen.render.prompts import render_prompt

    text = (
        "{% for x in S %}{{ x|join(', ') }}; {% endfor %}{{ S|reverse|list }} "
        "{{ (range(5)|list)|sum }} {{ 'ab' ~ 3 }} {{ [1, 2] + [3] }} {{ S[0]|max }} "
        "{{ (2 ** 10) * 3 }} {{ 'x' * 3 }} {{ none }} {{ S|length }} {{ 1 in S[0] }}"
    )
    assert render_prompt(text, CONTEXT) == (
        "1, 2; 3, 4; [[3, 4], [1, 2]] 10 ab3 [1, 2, 3] 2 3072 xxx None 2 True"
    )


@pytest.mark.parametrize(
    "template",
    [
        "{{ " + "(" * 300 + "1" + ")" * 300 + " }}",
        "{{ " + "[" * 300 + "1" + "]" * 300 + " }}",
        "{{ " + "-(" * 300 + "1" + ")" * 300 + " }}",
        "{{ " + "- " * 500 + "1 }}",
        "{{ " + "not " * 500 + "1 }}",
        "{{ " + "+".join(["1"] * 1500) + " }}",
        "{{ 1" + "|abs" * 800 + " }}",
        "{{ S" + ".x" * 900 + " }}",
        "$" + "{" * 300 + "x" + "}" * 300 + "$",
    ],
    ids=[
        "parens",
        "brackets",
        "negations",
        "signs",
        "nots",
        "sum-chain",
        "filter-chain",
        "attribute-chain",
        "braces",
    ],
)
def test_deep_nesting_in_a_prompt_is_one_line_with_file_and_line(template, tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        "questions:\n  - id: q1\n    family: scaling\n    prompt: |\n      text\n"
        f"      {template}\n",
        encoding="utf-8",
    )
    with pytest.raises(WorksheetgenError, match="nested") as err:
        load_banks([bank])
    assert str(err.value).startswith(
        f"{bank}:6: questions[0].prompt: prompt line 2: "
    ) or ":6: questions[0].prompt: prompt line 2: " in str(err.value)


@pytest.mark.parametrize(
    "template,words",
    [
        ("{{ row.count }}", "a function or method"),
        ("{{ row.index|string }}", "a function or method"),
        ("{{ range }}", "a function or method"),
        ("{{ range(3) }}", "a range"),
        ("{% for x in row %}{{ loop }}{% endfor %}", "the loop object"),
        ("{{ [row.count] }}", "a function or method"),
        ("{{ row.count ~ '' }}", "a function or method"),
        ("{{ loop.cycle }}", None),  # loop outside a loop is undefined
        ("{{ row.count|join }}", "a function or method"),
        ("{{ '\\x1b[2J' }}", "U+001B"),
        ("{{ '\\u202e' ~ 'x' }}", "U+202E"),
    ],
    ids=lambda x: str(x)[:20],
)
def test_only_data_values_print_and_the_rest_is_refused_at_load(template, words, tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    quoted = template.replace("'", "''")
    bank.write_text(
        f"questions:\n  - id: q1\n    family: scaling\n    prompt: '{quoted}'\n", encoding="utf-8"
    )
    with pytest.raises(WorksheetgenError) as err:
        load_banks([bank])
    assert ":4: questions[0].prompt: prompt line 1: " in str(err.value)
    if words:
        assert words in str(err.value)
    assert "0x" not in str(err.value)


@pytest.mark.parametrize(
    "math", ["{ " * 300 + "x" + " }" * 300, r"\left(" * 200 + "x" + r"\right)" * 200]
)
def test_math_nested_hundreds_deep_is_refused_at_load(math, tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        f"questions:\n  - id: q1\n    family: scaling\n    prompt: 'See ${math}$.'\n",
        encoding="utf-8",
    )
    with pytest.raises(WorksheetgenError, match="nested more than 50 levels deep") as err:
        load_banks([bank])
    assert ":4: questions[0].prompt: " in str(err.value)


@pytest.mark.parametrize(
    "written,value",
    [
        ("1e3", 1000.0),
        ("1.5e-1", 0.15),
        (".5", 0.5),
        ("0x1F", 31),
        ("0o17", 15),
        ("+3", 3),
        ("0", 0),
        ("1:30", "1:30"),
        ("1_000", "1_000"),
        ("0b11", "0b11"),
        ("yes", "yes"),
        ("off", "off"),
        ("True", True),
        ("false", False),
        ("-.inf", float("-inf")),
    ],
)
def test_banks_read_numbers_and_booleans_the_yaml_1_2_way(written, value) -> None:
    from worksheetgen.bank.yamldoc import parse_yaml

    got = parse_yaml(f"a: {written}\nb: '{written}'\n", "bank.yaml").data
    assert got["a"] == value and type(got["a"]) is type(value)
    assert got["b"] == written  # quoted: always text


@pytest.mark.parametrize(
    "written,words",
    [
        ("010", "octal 8, YAML 1.2 as 10): write 10"),
        ("09", "text, YAML 1.2 as 9"),
        ("-007", "octal 7"),
    ],
)
def test_a_number_with_a_leading_zero_is_refused_saying_why(written, words) -> None:
    from worksheetgen.bank.yamldoc import parse_yaml

    with pytest.raises(BankError, match="expected a number without a leading 0") as err:
        parse_yaml(f"x: 1\na: {written}\n", "bank.yaml")
    assert err.value.line == 2 and words in err.value.message


def test_sexagesimal_points_and_octal_d_k_are_no_longer_read_as_numbers(tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        "questions:\n  - id: q1\n    family: scaling\n    points: 1:30\n", encoding="utf-8"
    )
    with pytest.raises(
        BankError,
        match=r"points: expected a number of points above 0, got "
        r"'1:30'",
    ):
        load_banks([bank])
    bank.write_text(
        "questions:\n  - id: q1\n    family: scaling\n    points: 1e1\n", encoding="utf-8"
    )
    assert load_banks([bank]).questions[0].points == 10.0


@pytest.mark.parametrize(
    "math,words",
    [
        ("x^", "a ^ with nothing after it"),
        ("x_", "a _ with nothing after it"),
        ("a^b^c", "a double superscript"),
        ("{}^{}^{}", "a double superscript"),
        ("x_1_2", "a double subscript"),
        ("x^{a}^{b}", "a double superscript"),
        (r"\text{a_b}", r"_ inside \text{…}"),
        (r"\textbf{a^b}", r"^ inside \text{…}"),
        (r"\begin{matrix}a \\[1000000pt] b\end{matrix}", "a row space beyond 2cm"),
        (r"\begin{matrix}a \\[abc] b\end{matrix}", "which is no length"),
    ],
)
def test_math_tex_cannot_set_is_refused_at_load_with_file_line_and_field(
    math, words, tmp_path
) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        "questions:\n  - id: q1\n    family: scaling\n    prompt: |\n      See\n"
        f"      ${math}$ here.\n",
        encoding="utf-8",
    )
    with pytest.raises(WorksheetgenError) as err:
        load_banks([bank])
    assert f"{bank}:5: questions[0].prompt: expected math TeX can set, got " in str(err.value)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "math",
    [
        "x^2_i",
        "x_i^2",
        r"\sum\limits_{i=1}^{n} x_i^2",
        r"A^\top",
        r"A^\mathrm{T}_1",
        "e^{x^2}",
        r"\text{row } i",
        r"\left(x\right)^2",
        r"\frac{1}{2}^2",
        r"S_{1,2}^{(h)}",
        r"q_i^\top k_j",
        r"\begin{bmatrix} 1 \\[4pt] 2 \end{bmatrix}",
        r"\text{a\_b}",
        r"\hat{x}^2",
    ],
)
def test_math_tex_can_set_still_loads(math) -> None:
    from worksheetgen.render.markup import math_problems

    assert math_problems(math) == []


def test_long_runs_break_between_letters_but_never_inside_shaped_scripts() -> None:
    from worksheetgen.render.markup import escape_tex

    assert escape_tex("ab" * 15).count(r"\allowbreak{}") == 29
    assert escape_tex("short words stay as written") == "short words stay as written"
    for word in ("नमस्ते" * 6, "مرحبا" * 7, "\U0001f1e9\U0001f1ea" * 20):
        assert r"\allowbreak" not in escape_tex(word)
    accented = escape_tex("e\u0301" * 20)  # a break between letters, not before an accent
    assert accented.count(r"\allowbreak{}") == 19 and "{}\u0301" not in accented


def test_both_yaml_parsers_read_numbers_the_same_yaml_1_2_way() -> None:
    """libyaml reads most banks, PyYAML's own parser those with a tab: one set of rules."""
    from worksheetgen.bank.yamldoc import parse_yaml

    text = "a: 1e3\nb: yes\nc: 0x10\nd: 1:30\n"
    fast = parse_yaml(text, "bank.yaml").data
    slow = parse_yaml(text + 'e: "a\tb"\n', "bank.yaml").data
    assert (
        fast
        == {k: v for k, v in slow.items() if k != "e"}
        == {"a": 1000.0, "b": "yes", "c": 16, "d": "1:30"}
    )


def test_markdown_paragraphs_after_unicode_spaces_cannot_start_a_list_or_heading() -> None:
    from worksheetgen.render.markup import escape_md

    assert escape_md("\xa0=") == "\xa0\\="
    assert escape_md("a\n\n\u2003- item") == "a\n\n\u2003\\- item"


def test_a_bank_saved_with_windows_line_ends_still_loads(tmp_path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_bytes(
        b"sheet:\r\n  title: Week 3\r\nquestions:\r\n  - id: q1\r\n"
        b"    family: scaling\r\n    prompt: |\r\n      Two\r\n      lines.\r\n"
    )
    loaded = load_banks([bank])
    assert loaded.info.title == "Week 3" and loaded.questions[0].prompt == "Two\nlines.\n"


def test_the_math_sanitizer_prints_braces_beyond_the_nesting_limit() -> None:
    """Math that reaches TeX without the load-time check (a key's text in an export, say)
    never opens more groups than TeX has room for."""
    from worksheetgen.render.markup import MAX_MATH_NESTING, sanitize_math

    out = sanitize_math("{" * 300 + "x" + "}" * 300)
    assert out == "{" * MAX_MATH_NESTING + r"\{" * 250 + "x" + r"\}" * 250 + "}" * MAX_MATH_NESTING
    assert sanitize_math("{a}{{b}") == "{a}{{b}}"


@pytest.mark.parametrize("where", ["question", "sheet"])
@pytest.mark.parametrize("end", ["\\n", "\\r\\n"])
def test_a_bank_id_ending_in_a_line_break_is_refused(where, end, tmp_path) -> None:
    qid = f'"q1{end}"' if where == "question" else "q1"
    sid = f'"s1{end}"' if where == "sheet" else "s1"
    bank = tmp_path / "bank.yaml"
    bank.write_text(
        f"sheet:\n  id: {sid}\nquestions:\n  - id: {qid}\n    family: heads\n", encoding="utf-8"
    )
    with pytest.raises(BankError) as err:
        load_banks([bank])
    assert err.value.field == ("questions[0].id" if where == "question" else "sheet.id")
    # \r is refused by the text rule already, \n (which that rule allows in text that may
    # span lines) by the id rule itself
    assert (
        "letters, digits" in err.value.message
        or "got U+000D, a control character" in err.value.message
    )
