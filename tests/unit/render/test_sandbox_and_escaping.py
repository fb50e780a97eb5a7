"""Nothing executed that should not be: the prompt sandbox, escaping, TeX's limits, safe YAML.

Covers issue 5 section 3. Prompts run in Jinja2's immutable sandbox with extra limits; every
user text is escaped for LaTeX and Markdown; bank math keeps only safe commands; TeX runs
without shell escape and cannot read or write outside its folder; YAML builds no objects.

A behaviour across modules, not one module's tests (bank.load, errors, pipeline.build,
render.markup, render.prompts, tex).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import needs_tex
from worksheetgen.bank.load import load_banks
from worksheetgen.errors import BankError, CompileError, TemplateError
from worksheetgen.render.markup import (
    MATH_COMMANDS,
    MATH_ENVIRONMENTS,
    escape_md,
    escape_tex,
    markup_md,
    markup_tex,
    math_problems,
    sanitize_math,
)
from worksheetgen.render.prompts import render_prompt
from worksheetgen.tex import run as tex

CONTEXT = {"T": 3, "d_k": 4, "S": [[1, 2, 0], [0, 1, 3], [2, 2, 1]], "causal": False}


# known sandbox escapes and resource abuse: (template, words the one-line error must contain)
ESCAPES = [
    ("{{ ''.__class__.__mro__ }}", "attribute without '_' in front, got '__mro__'"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "not allowed"),
    ("{{ cycler.__init__.__globals__ }}", "attribute without '_' in front, got '__globals__'"),
    ("{{ cycler.__init__.__globals__.os.popen('id').read() }}", "not allowed"),
    ("{{ joiner.__init__.__globals__ }}", "attribute without '_' in front"),
    ("{{ lipsum.__globals__['os'] }}", "not allowed"),
    ("{{ self._TemplateReference__context }}", "'_TemplateReference__context'"),
    ("{{ self }}", "expected a variable, got 'self'"),
    ("{{ S.__class__.__base__ }}", "attribute without '_' in front"),
    ("{{ S['__class__'] }}", "item without '_' in front, got '__class__'"),
    ("{{ S|attr('__class__') }}", "got 'attr'"),
    ("{{ range.__globals__ }}", "attribute without '_' in front, got '__globals__'"),
    ("{{ T.__init__.__globals__['__builtins__']['open']('/etc/passwd').read() }}", "not allowed"),
    ("{{ config }}", "'config' is undefined"),
    ("{{ request.environ }}", "'request' is undefined"),
    ("{% include '/etc/passwd' %}", "got {% include %}"),
    ("{% import 'os' as os %}", "got {% import %}"),
    ("{% extends '/etc/passwd' %}", "got {% extends %}"),
    ("{% set x = S.append(1) %}", "got {% set %}"),
    ("{{ S.append(1) }}", "no calls other than range(...)"),
    ("{{ 'x'.ljust(10**9) }}", "no calls other than range(...)"),
    ("{{ namespace(a=1) }}", "no calls other than range(...)"),
    ("{% macro f(s) %}{{ f(s ~ s) }}{% endmacro %}{{ f('a') }}", "got {% macro %}"),
    ("{% for x in S recursive %}{{ loop(x) }}{% endfor %}", "recursive loop"),
    ("{{ range(10**9)|list }}", "Range too big"),
    ("{{ 'a' * 10**9 }}", "at most 10000 items, got 1000000000"),
    ("{{ [0] * 10**8 }}", "at most 10000 items"),
    ("{{ 7 ** 999999 }}", "powers of at most 10000 bits"),
    ("{{ 10**100000 }}", "powers of at most 10000 bits"),
    ("{{ '%0999999999d' % 1 }}", "no '%' text formatting"),
    ("{{ 'x'|center(999999999) }}", "got 'center'"),
    ("{{ 'x'|indent(999999999) }}", "got 'indent'"),
    ("{{ 'x'|format }}", "got 'format'"),
    (
        "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
        "at most 100000 loop steps",
    ),
    ("{% for i in range(99999) %}{{ S }}{% endfor %}", "at most 20000 characters"),
    ("{{ 1 / 0 }}", "ZeroDivisionError"),
]


@pytest.mark.parametrize("template,words", ESCAPES, ids=[t for t, _ in ESCAPES])
def test_sandbox_escape_is_a_clean_one_line_error(template, words) -> None:
    started = time.monotonic()
    with pytest.raises(TemplateError) as err:
        render_prompt(template, CONTEXT, file="bank.yaml", line=7, field="questions[0].prompt")
    message = str(err.value)
    assert words in message
    assert message.startswith("bank.yaml:7: questions[0].prompt: ")
    assert "\n" not in message
    assert time.monotonic() - started < 5


def test_plain_prompts_still_render_with_loops_filters_and_tests() -> None:
    text = (
        "{{ T }} tokens{% if d_k is defined %}, d_k = {{ d_k }}{% endif %}: "
        "{% for row in S %}[{{ row|join(', ') }}]{% if not loop.last %} {% endif %}"
        "{% endfor %}; max {{ S|map('max')|list|max if false else S[0]|max }}, "
        "{{ (2 ** 10) }} {{ 'ab' * 2 }} {{ (d_k / 3)|round(2) }}"
    )
    # map is not among the filters a prompt may use
    with pytest.raises(TemplateError):
        render_prompt(text, CONTEXT)
    text = text.replace("S|map('max')|list|max if false else ", "")
    assert render_prompt(text, CONTEXT) == (
        "3 tokens, d_k = 4: [1, 2, 0] [0, 1, 3] [2, 2, 1]; max 2, 1024 abab 1.33"
    )


def test_a_bank_prompt_may_use_its_loop_variables(tmp_path) -> None:
    # the loop's own names are not the bank's variables: they were refused as unknown
    bank = tmp_path / "loops.yaml"
    bank.write_text(
        'questions:\n  - id: t\n    family: softmax\n    prompt: "Tokens '
        "{% for i in range(T) %}{{ i + 1 }} {% endfor %}of {% for a, b in "
        '[(1, 2)] %}{{ a + b }}{% endfor %} with d_k = {{ d_k }}."\n',
        encoding="utf-8",
    )
    from worksheetgen.pipeline.build import BuildOptions, build

    result = build(BuildOptions(seed=1, banks=(str(bank),), out=str(tmp_path / "out"), pdf=False))
    sheet = (result.folder / "sheet.md").read_text("utf-8")
    assert "Tokens 1 2 " in sheet and " of 3 with d" in sheet


TEX_OUTPUT_COMMANDS = {
    "textbackslash",
    "textasciitilde",
    "textasciicircum",
    "textless",
    "textgreater",
    "textbar",
    "textquotedbl",
    "textquotesingle",
    "textasciigrave",
    "par",
}


def assert_inert_tex(out: str) -> None:
    """Text mode LaTeX that runs nothing: only the escapes escape_tex writes."""
    # a zero kern keeps a ligature from forming, a break is allowed in a long run
    rest = out.replace("\\kern0pt ", "").replace("\\allowbreak{}", "")
    for cmd in sorted(TEX_OUTPUT_COMMANDS, key=len, reverse=True):
        rest = rest.replace("\\" + cmd + "{}", "").replace("\\" + cmd + " ", "")
    rest = re.sub(r"\\[&%$#_{}]", "", rest)
    # a word in its script's font, a run in its direction: groups that open as LuaLaTeX's
    # preamble defines them and close in order
    rest, runs = re.subn(r"\\ws(?:rtl|ltr)\{(?:\\ws(?:serif|arab|hebr|cjk) )?", "", rest)
    rest, fonts = re.subn(r"\{\\ws(?:serif|arab|hebr|cjk) ", "", rest)
    assert rest.count("}") == fonts + runs, out
    rest = rest.replace("}", "")
    for special in "\\{}%$#&^_~":
        assert special not in rest, (special, out)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out)


HOSTILE = [
    r"\input{/etc/passwd}",
    r"\write18{touch pwned}",
    r"\immediate\write18{id}",
    r"\catcode`\^=7",
    "^^5cinput{/etc/passwd}",
    "^^5c^^5c",
    "100% sure # 1 & 2 $x$ _y_ ~z~",
    "{unbalanced",
    "}closing",
    r"\def\x{\x}\x",
    r"\csname input\endcsname",
    "a\x00b\x0cc\x1bd",
    "line\rbreak",
    "par\n\nagain",
    "Zoë O'Brien-Łukasz 王 Ωmega",
    "<script>alert(1)</script>",
    "[link](javascript:alert(1))",
    "*bold* `code` | table |",
    "- list item",
    "1. item",
    "&lt;b&gt;",
    "\\",
    "\\\\",
    "$$",
    "a\\$b",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_tex_leaves_nothing_tex_would_run(text) -> None:
    assert_inert_tex(escape_tex(text))


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_escape_tex_is_inert_for_any_text(text) -> None:
    assert_inert_tex(escape_tex(text))


def assert_inert_md(out: str) -> None:
    """Markdown that opens no HTML tag, link, emphasis or math."""
    unescaped = re.sub(r"\\.", "", out, flags=re.S)
    for special in "<>[]`*_$|":
        assert special not in unescaped, (special, out)
    assert not re.search(r"&(?!amp;)", out)
    for line in out.split("\n"):
        assert not re.match(r"\s*([-+=]|\d+[.)])", line), line


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_md_leaves_no_markup(text) -> None:
    assert_inert_md(escape_md(text))


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_escape_md_is_inert_for_any_text(text) -> None:
    assert_inert_md(escape_md(text))


SAFE_SYMBOLS = set(",;:!{}|%#&$_ \\")


def assert_safe_math(out: str) -> None:
    """Math mode LaTeX with safe commands only, balanced groups, no ^^, %, #, $ or controls."""
    assert "^^" not in out
    assert not re.search(r"[\x00-\x1f\x7f]", out)
    depth = 0
    envs: list[str] = []
    i = 0
    while i < len(out):
        c = out[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+)", out[i:])
            if m:
                name = m.group(1)
                if name in ("begin", "end"):
                    env = re.match(r"\\(?:begin|end)\{([A-Za-z]+)\}", out[i:])
                    assert env and env.group(1) in MATH_ENVIRONMENTS, out
                    if name == "begin":
                        envs.append(env.group(1))
                    else:
                        assert envs.pop() == env.group(1), out
                    i += len(env.group(0))
                    continue
                assert name in MATH_COMMANDS or name in ("backslash",), (name, out)
                i += len(m.group(0))
                continue
            assert i + 1 < len(out) and out[i + 1] in SAFE_SYMBOLS, out
            if out[i + 1] == "\\":
                assert envs, out  # a row break only inside a matrix
            i += 2
            continue
        assert c not in "%#$", out
        if c == "&":
            assert envs, out
        if c == "{":
            depth += 1
        if c == "}":
            depth -= 1
            assert depth >= 0, out
        i += 1
    assert depth == 0 and envs == [], out


MATH_ATTACKS = [
    r"\input{/etc/passwd}",
    r"\include{x}",
    r"\write18{rm -rf ~}",
    r"\immediate\write18{id}",
    r"\openin5=/etc/passwd",
    r"\read5 to\x",
    r"\catcode`\^=7",
    r"\csname input\endcsname",
    r"\def\x{1}",
    r"\let\a\input",
    r"\expandafter\input",
    "^^5cinput{/etc/passwd}",
    "^^^^005c",
    r"\^^5c",
    "x % the rest is a comment $",
    "a # b",
    "} \\input{x} {",
    "{{{",
    "}}}",
    r"\begin{verbatim}\end{verbatim}",
    r"\begin {filecontents}{x}",
    r"\begin{bmatrix}1 & 2",
    r"\end{bmatrix}",
    r"{\begin{pmatrix}a}\end{pmatrix}",
    r"\left( x",
    r"x \right)",
    "a & b",
    r"a \\ b",
    "\x00\x0c\r\n\x1b",
    r"\(x\)",
    r"\[x\]",
    r"\href{javascript:alert(1)}{x}",
    r"\url{x}",
    r"\class{x}{y}",
    r"\unicode{x}",
    r"\require{x}",
    r"\sqrt{2} \cdot \frac{1}{2}",
    "\\",
    r"\text{\input{x}}",
]


@pytest.mark.parametrize("math", MATH_ATTACKS)
def test_sanitize_math_keeps_only_safe_commands(math) -> None:
    assert_safe_math(sanitize_math(math))


@given(
    st.lists(
        st.sampled_from(
            [
                "\\",
                "{",
                "}",
                "^",
                "^^",
                "5c",
                "%",
                "#",
                "&",
                "$",
                "\n",
                "\r",
                "\x00",
                " ",
                "x",
                "2",
                r"\input",
                r"\sqrt",
                r"\frac",
                r"\begin",
                r"\end",
                "{bmatrix}",
                "{verbatim}",
                r"\left",
                r"\right",
                "(",
                ")",
                r"\\",
                r"\text",
                r"\catcode",
                "`",
                "=",
                "~",
                "<",
                "_",
            ]
        ),
        max_size=25,
    ).map("".join)
)
@settings(max_examples=400, deadline=None)
def test_sanitize_math_is_safe_for_any_mix_of_dangerous_pieces(math) -> None:
    assert_safe_math(sanitize_math(math))


def test_safe_math_is_left_as_written() -> None:
    for math in (
        r"\frac{QK^\top}{\sqrt{d_k}}",
        r"A = \mathrm{softmax}(S)",
        r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}",
        r"e^{-\infty} = 0",
        r"\left( x_1, \ldots, x_T \right)",
        r"50\%",
        r"a \le b, \; c \neq d",
    ):
        assert sanitize_math(math) == math
        assert math_problems(math) == []


def test_markup_md_math_cannot_open_html() -> None:
    out = markup_md("see $a<script>alert(1)</script>b$ and <b>bold</b>")
    assert "<" not in out.replace("\\<", "")
    assert r"\lt" in out and r"\gt" in out


def test_markup_tex_escapes_text_and_sanitizes_math() -> None:
    out = markup_tex(r"Run \input{x} 100% now: $\input{/etc/passwd} % x$ ^^5c")
    assert out == (
        r"Run \textbackslash{}input\{x\} 100\% now: "
        r"$\backslash\mathrm{input}{/etc/passwd} \% x$ "
        r"\textasciicircum{}\textasciicircum{}5c"
    )


def test_python_tags_are_refused_and_never_run(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for n, text in enumerate(
        [
            "questions: !!python/object/apply:os.system ['touch pwned']\n",
            "questions:\n  - !!python/object/apply:os.system ['touch pwned']\n",
            "questions:\n  - id: !!python/name:os.system a\n    family: heads\n",
            "questions:\n  - id: a\n    family: !!python/object/new:os.system ['touch pwned']\n",
            "sheet: !!python/object:builtins.dict {}\nquestions: []\n",
            "questions: !custom\n  - id: a\n    family: heads\n",
            "questions: !!set {a: null}\n",
        ]
    ):
        path = tmp_path / f"b{n}.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(BankError) as err:
            load_banks([path])
        assert "expected plain YAML values (no tags)" in str(err.value)
    assert not (tmp_path / "pwned").exists()


def test_alias_bomb_and_deep_nesting_are_refused_quickly(tmp_path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\nquestions: *a8\n", encoding="utf-8")
    deep = tmp_path / "deep.yaml"
    deep.write_text("questions: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    for path, words in (
        (bomb, "expected at most 100000 YAML values"),
        (deep, "nested at most 40 levels deep"),
    ):
        started = time.monotonic()
        with pytest.raises(BankError) as err:
            load_banks([path])
        assert words in str(err.value)
        assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    "text",
    [
        "questions: " + "[" * 900_000 + "]" * 900_000 + "\n",
        "questions: " + "{a: " * 300_000 + "1" + "}" * 300_000 + "\n",
        "questions:\n" + "".join(" " * i + "- \n" for i in range(0, 40_000, 2)),
        "questions:\n" + "- " * 400_000 + "x\n",
    ],
    ids=["flow-lists", "flow-mappings", "block-indented", "block-one-line"],
)
def test_nesting_hundreds_of_thousands_of_levels_deep_is_one_error_line_not_a_crash(
    tmp_path, text
) -> None:
    # libyaml's composer recurses in C and would crash the process; such files are read by
    # PyYAML, which stops with an error (run apart: a crash must fail, not end, the tests)
    deep = tmp_path / "deep.yaml"
    deep.write_text(text, encoding="utf-8")
    code = (
        "import sys\n"
        "from worksheetgen.bank.load import load_banks\n"
        "from worksheetgen.errors import BankError\n"
        "try:\n"
        f"    load_banks([{str(deep)!r}])\n"
        "except BankError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(str(deep)) and done.stdout.count("\n") == 1


def pdf_text(pdf: bytes, tmp_path: Path) -> str:
    path = tmp_path / "x.pdf"
    path.write_bytes(pdf)
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


@needs_tex
def test_tex_cannot_run_commands_or_touch_files_outside_its_folder(tmp_path) -> None:
    marker = tmp_path / "pwned"
    docs = {
        "shell": "\\documentclass{article}\\begin{document}\\immediate\\write18{touch "
        f"{marker}}}ran\\end{{document}}",
        "read": "\\documentclass{article}\\begin{document}\\input{/etc/passwd}\\end{document}",
        "parent": "\\documentclass{article}\\begin{document}\\input{../../../etc/hostname}"
        "\\end{document}",
        "write": "\\documentclass{article}\\newwrite\\w\\begin{document}\\immediate\\openout\\w="
        f"{tmp_path}/written.txt \\immediate\\write\\w{{x}}x\\end{{document}}",
    }
    outcomes = {}
    for name, source in docs.items():
        try:
            pdf = tex.compile_all([tex.TexJob(name, source)], tmp_path / "kept")[name]
            outcomes[name] = pdf_text(pdf, tmp_path)
        except CompileError as exc:
            outcomes[name] = str(exc)
    assert not marker.exists()  # -no-shell-escape: \write18 wrote to the log only
    assert "ran" in outcomes["shell"]
    assert "/etc/passwd.tex' not found" in outcomes["read"]
    assert "not found" in outcomes["parent"]
    assert "I can't write on file" in outcomes["write"]
    assert not (tmp_path / "written.txt").exists()
    root_line = Path("/etc/passwd").read_text().splitlines()[0]
    assert all(root_line not in text for text in outcomes.values())


def test_escape_md_leaves_parentheses_alone_so_mathjax_sees_no_inline_math() -> None:
    # "\(row by row\)" is inline math to MathJax's default delimiters
    assert escape_md("softmax (row by row) of [x](y)") == r"softmax (row by row) of \[x\](y)"
