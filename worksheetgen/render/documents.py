"""Render a Build into documents: one Jinja2 template set per format (LaTeX, Markdown).

Document templates live in ``templates/<format>/`` and extend a base template; LaTeX templates
use LaTeX-safe delimiters ``((* block *))``, ``((( var )))`` and ``((= comment =))``. Every
environment is strict (an undefined name is an error). Bank prompt text is rendered in Jinja2's
immutable sandbox into *markup*: plain text with ``$...$`` math, which each format then escapes.
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer

from worksheetgen.errors import TemplateError, did_you_mean, shorten
from worksheetgen.exact import mathtex
from worksheetgen.exact.kinds import TOLERANT_KINDS
from worksheetgen.exact.masked import MASKED_TEXT, has_masked, is_masked_text
from worksheetgen.exact.rounding import SLACK, half_unit
from worksheetgen.resources import data_dir
from worksheetgen.speed.cache import cache_root, private_cache_folder, store  # noqa: F401
from worksheetgen.textrules import problem

FORMATS = {"latex": ".tex", "markdown": ".md"}

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': r"\textquotedbl{}",
    "'": r"\textquotesingle{}",
    "`": r"\textasciigrave{}",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def _plain(text: Any) -> str:
    """Text with Windows/Mac line ends as \n and control characters as spaces."""
    s = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_RE.sub(" ", s)


def escape_tex(text: Any) -> str:
    """Text that prints exactly as written in LaTeX (no command, comment or math can start).

    Every letter is kept as written (names are data): a document with letters beyond
    pdfLaTeX's T1 fonts (Greek, Cyrillic, CJK, ...) is compiled with LuaLaTeX instead
    (worksheetgen.tex.engines.choose_engine), never printed with "?" in their place.
    """
    return _escape_tex(str(text))


# TeX's font ligatures that change what a text says: "--" and "---" print as dashes, ",,"
# as a low double quote, and with LuaLaTeX's TeX ligatures "<<" and ">>" as guillemets. A
# zero kern between the two characters keeps each as written in both engines (an empty
# group does in pdfTeX only); the quote characters are commands that form no ligature.
_LIGATURE_RE = re.compile(
    r"(?<=-)(?=-)|(?<=,)(?=,)|(?<=\\textless\{\})(?=\\textless\{\})"
    r"|(?<=\\textgreater\{\})(?=\\textgreater\{\})"
)


# a run of this many characters without a space may break after any of them, so that a long
# name, word or URL wraps inside the text's width instead of running off the page
LONG_RUN = 30
_LONG_RUN_RE = re.compile(rf"\S{{{LONG_RUN},}}")


@lru_cache(maxsize=16384)  # the same titles, labels and names recur on every sheet of a class
def _escape_tex(text: str) -> str:
    s = _plain(text)
    if len(s) >= LONG_RUN and _LONG_RUN_RE.search(s):
        pieces = []
        pos = 0
        for m in _LONG_RUN_RE.finditer(s):
            pieces.append(_escape_tex_run(s[pos : m.start()]))
            pieces.append(_breakable(m.group()))
            pos = m.end()
        pieces.append(_escape_tex_run(s[pos:]))
        s = "".join(pieces)
    else:
        s = _escape_tex_run(s)
    return re.sub(r"\n\s*\n", r"\\par ", s).replace("\n", " ")


# scripts whose letters a font shapes together (joining, conjuncts) and the characters that
# join what is around them: a break (a penalty node) between two of them would change how the
# word looks, so none is put there
_SHAPED = (
    (0x0590, 0x08FF),
    (0x0900, 0x0DFF),
    (0x0E00, 0x0FFF),
    (0x1000, 0x109F),
    (0x1780, 0x18AF),
    (0x200C, 0x200D),
    (0xA800, 0xABFF),
    (0xFB1D, 0xFDFF),
    (0xFE00, 0xFE0F),
    (0xFE70, 0xFEFF),
    (0x1F1E6, 0x1F1FF),
    (0x1F3FB, 0x1F3FF),
    (0xE0100, 0xE01EF),
)


def _shaped(c: str) -> bool:
    n = ord(c)
    return n >= 0x0590 and any(a <= n <= b for a, b in _SHAPED)


def _breakable(run: str) -> str:
    """A long run without spaces escaped with a break allowed after every character (not
    before a combining accent, nor next to letters a font shapes together): it wraps, never
    runs off the page."""

    out = [_escape_tex_run(run[0])]
    for before, c in zip(run, run[1:], strict=False):
        if not (unicodedata.combining(c) or _shaped(c) or _shaped(before)):
            out.append(r"\allowbreak{}")
        out.append(_escape_tex_run(c))
    return "".join(out)


def _escape_tex_run(s: str) -> str:
    """Text without long runs escaped for LaTeX, ligatures kept from forming."""
    ligatures = "--" in s or ",," in s or "<<" in s or ">>" in s
    s = _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group()], s)
    return _LIGATURE_RE.sub(r"\\kern0pt ", s) if ligatures else s


_MD_RE = re.compile(r"([\\`*_{}\[\]<>#+!|~$])")
_MD_LINE_START_RE = re.compile(r"(^|\n)([^\S\n]*)(-|=|\d+(?=[.)]))")


def escape_md(text: Any) -> str:
    """Text that prints as written in Markdown (no emphasis, links, HTML, lists or math)."""
    return _escape_md(str(text))


@lru_cache(maxsize=16384)
def _escape_md(text: str) -> str:
    s = _MD_RE.sub(r"\\\1", _plain(text).replace("\t", " "))
    s = s.replace("&", "&amp;")
    s = re.sub(r"\n\s*\n", "\n\n", s).replace("\n\n", "\x00").replace("\n", " ")
    s = s.replace("\x00", "\n\n")
    # a paragraph starting "- ", "=" or "1." would become a list or a heading
    return _MD_LINE_START_RE.sub(
        lambda m: (
            m.group(1)
            + m.group(2)
            + ("\\" + m.group(3) if not m.group(3).isdigit() else m.group(3) + "\\")
        ),
        s,
    )


def escape_md_inline(text: Any) -> str:
    """``escape_md``'s escaping for text inside a line (a name in a heading, a value in a
    sentence, as grade's report.md prints them): the same characters escaped (emphasis,
    links, HTML, math), on one line, without the rule for the start of a paragraph."""
    one_line = " ".join(_plain(str(text)).split())
    return _MD_RE.sub(r"\\\1", one_line).replace("&", "&amp;")


# Math in bank prompts may use only these commands: enough for attention arithmetic, and
# nothing that reads or writes files, defines macros, changes catcodes or links anywhere.
MATH_COMMANDS = frozenset(
    """
sqrt frac dfrac tfrac top intercal times cdot cdots ldots dots vdots ddots infty le leq ge geq ne
neq approx equiv sim simeq propto sum prod exp log ln max min arg det dim sin cos tanh left right
mathrm mathbf mathit mathbb mathcal mathsf mathtt boldsymbol text textbf textit textrm
operatorname displaystyle textstyle scriptstyle
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi
rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega
in notin mid subset subseteq cup cap setminus emptyset forall exists partial nabla ell prime
pm mp div ast star circ bullet odot oplus otimes wedge vee neg lnot
quad qquad to rightarrow leftarrow Rightarrow leftrightarrow mapsto implies iff uparrow downarrow
hat tilde bar vec dot ddot overline underline widehat widetilde underbrace overbrace
langle rangle lfloor rfloor lceil rceil lvert rvert lVert rVert vert Vert backslash
big Big bigg Bigg bigl bigr Bigl Bigr limits nolimits
""".split()
)
MATH_ENVIRONMENTS = frozenset(
    "matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases".split()
)
# control symbols that only space, escape or align: \, \; \: \! \{ \} \| \% \# \& \$ \_ \ \\
_MATH_SYMBOLS = frozenset(",;:!{}|%#&$_ \\")
_MATH_TOKEN_RE = re.compile(
    r"\\(?P<be>begin|end)(?![A-Za-z])(?P<env>\s*\{[^{}]*\})?|\\(?P<cmd>[A-Za-z]+)"
    r"|\\(?P<sym>.?)|(?P<hats>\^\^)|(?P<char>[{}%#&$\x00-\x1f\x7f])",
    re.S,
)
_CLOSERS = {"{": "}", "left": r"\right.", "lit{": r"\}"}


MAX_MATH_NESTING = 50  # groups ({...}, \left...\right, environments) inside one another


def math_problems(math: str) -> list[str]:
    """What :func:`sanitize_math` would have to change in ``math``, else what TeX could not
    set (:func:`tex_math_problems`); empty when the math is clean."""
    return unsafe_math_problems(math) or tex_math_problems(math)


def unsafe_math_problems(math: str) -> list[str]:
    """What :func:`sanitize_math` would have to change in ``math`` (empty when it is clean)."""
    problems: list[str] = []
    stack: list[str] = []
    for m in _MATH_TOKEN_RE.finditer(math):
        cmd, env, sym, char = m.group("cmd"), m.group("env"), m.group("sym"), m.group("char")
        if m.group("be"):
            cmd = m.group("be")
            name = env.strip()[1:-1].strip() if env else ""
            if name not in MATH_ENVIRONMENTS:
                problems.append(f"\\{cmd}{{{name}}} (only matrix environments)")
            elif cmd == "begin":
                stack.append(name)
            elif stack and stack[-1] == name:
                stack.pop()
            else:
                problems.append(f"\\end{{{name}}} without its \\begin")
        elif cmd is not None and cmd not in MATH_COMMANDS:
            problems.append(f"\\{cmd}")
        elif cmd == "left":
            stack.append("left")
        elif cmd == "right":
            if stack and stack[-1] == "left":
                stack.pop()
            else:
                problems.append("\\right without \\left")
        elif sym is not None and sym not in _MATH_SYMBOLS:
            problems.append("\\" + sym if sym else "a lone \\ at the end")
        elif m.group("hats"):
            problems.append("^^")
        elif char == "{":
            stack.append("{")
        elif char == "}":
            if stack and stack[-1] == "{":
                stack.pop()
            else:
                problems.append("an unmatched }")
        elif char in ("&",) and not any(x in MATH_ENVIRONMENTS for x in stack):
            problems.append("& outside a matrix")
    problems += [
        "an unclosed " + ("{" if x == "{" else "\\left" if x == "left" else f"\\begin{{{x}}}")
        for x in reversed(stack)
    ]
    return problems


def tex_math_problems(math: str) -> list[str]:
    """What TeX would stop at in safe math: groups nested deeper than
    :data:`MAX_MATH_NESTING` (TeX has room for few), and :func:`_tex_problems`."""
    depth = 0
    for m in _MATH_TOKEN_RE.finditer(math):
        if m.group("char") == "{" or m.group("cmd") == "left" or m.group("be") == "begin":
            depth += 1
            if depth > MAX_MATH_NESTING:
                return [f"groups nested more than {MAX_MATH_NESTING} levels deep"]
        elif m.group("char") == "}" or m.group("cmd") == "right" or m.group("be") == "end":
            depth -= 1
    return _tex_problems(math)


# what TeX cannot set although every command in it is safe (found at load, so the error
# names the bank's file, line and field, not a line of sheet.tex)
_MATH_PIECE_RE = re.compile(r"\\(?P<cmd>[A-Za-z]+)|\\(?P<sym>.)|(?P<char>\S)", re.S)
_TEXT_COMMANDS = frozenset(("text", "textbf", "textit", "textrm"))
_NO_NUCLEUS = frozenset(("limits", "nolimits", "displaystyle", "textstyle", "scriptstyle"))
_UNITS_PT = {
    "pt": 1.0,
    "mm": 2.84528,
    "cm": 28.4528,
    "in": 72.27,
    "bp": 1.00375,
    "pc": 12.0,
    "dd": 1.07,
    "cc": 12.84,
    "sp": 1 / 65536,
    "em": 10.0,
    "ex": 4.3,
    "mu": 0.56,
}
MAX_ROW_SKIP_PT = 56.0  # a \\[…] space between rows: at most about 2 cm
_ROW_SKIP_RE = re.compile(r"\\\\\s*\[([^\]]*)\]")
_LENGTH_RE = re.compile(r"^\s*([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))\s*([a-z]{2})\s*$")


def _tex_problems(math: str) -> list[str]:
    """What TeX would stop at in math whose commands and braces are fine: a ``^`` or ``_``
    with nothing after it, a second superscript or subscript on one base (``a^b^c``), a
    ``_`` or ``^`` inside ``\\text{…}`` and a row space ``\\\\[…]`` that is no length or
    is beyond :data:`MAX_ROW_SKIP_PT`."""
    for m in _ROW_SKIP_RE.finditer(math):
        length = _LENGTH_RE.match(m.group(1))
        if not length or length.group(2) not in _UNITS_PT:
            return [f"\\\\[{m.group(1)}], which is no length (write a length such as \\\\[4pt])"]
        if abs(float(length.group(1)) * _UNITS_PT[length.group(2)]) > MAX_ROW_SKIP_PT:
            return [f"\\\\[{m.group(1)}], a row space beyond 2cm"]
    pieces = [
        (m.group("cmd"), m.group("sym"), m.group("char")) for m in _MATH_PIECE_RE.finditer(math)
    ]
    # per open group: (superscript seen, subscript seen) on the current base
    scripts: list[list[bool]] = [[False, False]]
    text_depth: int | None = None  # the group depth where a \text{...} started
    i = 0
    while i < len(pieces):
        cmd, sym, char = pieces[i]
        i += 1
        if char == "{":
            scripts.append([False, False])
            continue
        if char == "}":
            if len(scripts) > 1:
                scripts.pop()
            if text_depth is not None and len(scripts) <= text_depth:
                text_depth = None
            scripts[-1] = [False, False]  # a group is a base
            continue
        if text_depth is not None:
            if char in ("_", "^"):
                return [
                    f"{char} inside \\text{{…}} (text has no scripts: write "
                    f"\\{char} or put it after the }})"
                    if char == "_"
                    else "^ inside \\text{…} (text has no scripts: put it after the })"
                ]
            continue
        if cmd in _TEXT_COMMANDS and i < len(pieces) and pieces[i][2] == "{":
            text_depth = len(scripts)
            scripts.append([False, False])
            i += 1
            continue
        if char in ("^", "_"):
            which = 0 if char == "^" else 1
            name = "superscript" if char == "^" else "subscript"
            if i >= len(pieces) or pieces[i][2] in ("}", "^", "_", "&") or pieces[i][1] == "\\":
                return [f"a {char} with nothing after it (write {char}{{}} or remove it)"]
            if scripts[-1][which]:
                return [
                    f"a double {name} (write a{char}{{bc}} for one {name}, or {{a{char}b}}{char}c)"
                ]
            scripts[-1][which] = True
            nxt = pieces[i]
            if nxt[2] == "{":  # the script is a group: skip to its end
                depth, i = 1, i + 1
                while i < len(pieces) and depth:
                    depth += {"{": 1, "}": -1}.get(pieces[i][2] or "", 0)
                    i += 1
            else:
                i += 1
                if nxt[0] is not None:  # a command: its braced arguments go with it
                    while i < len(pieces) and pieces[i][2] == "{":
                        depth, i = 1, i + 1
                        while i < len(pieces) and depth:
                            depth += {"{": 1, "}": -1}.get(pieces[i][2] or "", 0)
                            i += 1
            continue
        if cmd in _NO_NUCLEUS or char == "'":
            continue
        scripts[-1] = [False, False]  # anything else is a new base
    return []


def sanitize_math(math: str) -> str:
    """Math from a bank made safe for TeX, MathJax and KaTeX.

    Commands outside :data:`MATH_COMMANDS` print literally instead of running; ``^^`` (TeX's
    way to write any character, a backslash included) cannot form; ``%`` and ``#`` print;
    control characters become spaces; braces, ``\\left``/``\\right`` and matrix environments
    are balanced so the math cannot close a group it did not open; braces nested deeper than
    :data:`MAX_MATH_NESTING` print as braces (TeX has room for few levels of groups).
    """
    out: list[str] = []
    stack: list[str] = []  # "{", "left" or an environment name

    def close_to(opener: str) -> bool:
        if opener not in stack:
            return False
        while stack[-1] != opener:
            top = stack.pop()
            out.append(_CLOSERS.get(top, rf"\end{{{top}}}"))
        stack.pop()
        return True

    pos = 0
    for m in _MATH_TOKEN_RE.finditer(math):
        out.append(math[pos : m.start()])
        pos = m.end()
        cmd, env, sym, char = m.group("cmd"), m.group("env"), m.group("sym"), m.group("char")
        if m.group("be"):
            cmd = m.group("be")
            name = env.strip()[1:-1].strip() if env else ""
            if name in MATH_ENVIRONMENTS and cmd == "begin":
                stack.append(name)
                out.append(rf"\begin{{{name}}}")
            elif name in MATH_ENVIRONMENTS and close_to(name):
                out.append(rf"\end{{{name}}}")
            else:
                out.append(r"\backslash\mathrm{" + cmd + "}")
                if env:
                    out.append(r"\{\mathrm{" + re.sub(r"[^A-Za-z*]", "", name) + r"}\}")
        elif cmd is not None:
            if cmd not in MATH_COMMANDS:
                out.append(r"\backslash\mathrm{" + cmd + "}")
            elif cmd == "left":
                stack.append("left")
                out.append(r"\left")
            elif cmd == "right":
                out.append(r"\right" if close_to("left") else " ")
            else:
                out.append("\\" + cmd)
        elif sym is not None:
            if sym == "\\":
                in_env = any(x in MATH_ENVIRONMENTS for x in stack)
                out.append(r"\\" if in_env else " ")
            elif sym in _MATH_SYMBOLS:
                out.append("\\" + sym)
            elif sym in "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r" or not sym:
                out.append(r"\backslash ")
            else:
                out.append(r"\backslash " + _math_char(sym))
        elif m.group("hats"):
            out.append(r"\hat{}\hat{}")
        elif char == "{" and len(stack) >= MAX_MATH_NESTING:
            stack.append("lit{")  # deeper than TeX has room for: prints as a brace
            out.append(r"\{")
        elif char == "{":
            stack.append("{")
            out.append("{")
        elif char == "}" and stack and stack[-1] == "lit{":
            stack.pop()
            out.append(r"\}")
        elif char == "}":
            out.append("}" if close_to("{") else r"\}")
        elif char == "&":
            out.append("&" if any(x in MATH_ENVIRONMENTS for x in stack) else r"\&")
        elif char in "%#$":
            out.append("\\" + char)
        else:  # a control character
            out.append(" ")
    out.append(math[pos:])
    while stack:
        top = stack.pop()
        out.append(_CLOSERS.get(top, rf"\end{{{top}}}"))
    return "".join(out)


def _math_char(c: str) -> str:
    """One character after a refused backslash, printable in math mode."""
    if c == "^":
        return r"\hat{}"
    if c.isalnum() and c.isascii() or c in "()[]+-=.,;:!?/*<>'@`\"~|":
        return c
    return " "


def split_markup(markup: str) -> list[tuple[bool, str]]:
    """Split markup into (is_math, text) segments on unescaped single dollars."""
    parts: list[tuple[bool, str]] = []
    buf, math, i = "", False, 0
    while i < len(markup):
        c = markup[i]
        if c == "\\" and i + 1 < len(markup) and markup[i + 1] == "$":
            buf += "$" if not math else "\\$"
            i += 2
            continue
        if c == "$":
            parts.append((math, buf))
            buf, math = "", not math
        else:
            buf += c
        i += 1
    if math:  # an unclosed $ is text
        parts.append((False, "$" + buf))
    else:
        parts.append((False, buf))
    return [(m, t) for m, t in parts if t]


# in math, a run of letters and digits (not a command's name) as long as a text's long run
_LONG_MATH_RUN_RE = re.compile(rf"(?<![\\A-Za-z])[A-Za-z0-9]{{{LONG_RUN},}}")


def _breakable_math(math: str) -> str:
    """Math whose long runs of letters and digits may break after any character (a long
    number or name in a prompt's $…$ wraps like a long word of text)."""
    if len(math) < LONG_RUN:
        return math
    return _LONG_MATH_RUN_RE.sub(lambda m: r"\allowbreak ".join(m.group()), math)


@lru_cache(maxsize=16384)  # prompts and step titles recur on every sheet of a class
def markup_tex(markup: str) -> str:
    """Prompt markup as LaTeX: text escaped, math sanitized."""
    return "".join(
        f"${_breakable_math(sanitize_math(t))}$" if m else escape_tex(t)
        for m, t in split_markup(markup)
    )


def md_math(math: str) -> str:
    """Sanitized math for a Markdown file: no raw ``<`` or ``>`` an HTML viewer could parse."""
    return sanitize_math(math).strip().replace("<", r"\lt ").replace(">", r"\gt ")


@lru_cache(maxsize=16384)
def markup_md(markup: str) -> str:
    """Prompt markup as Markdown with $math$ for MathJax/KaTeX."""
    return "".join(f"${md_math(t)}$" if m else escape_md(t) for m, t in split_markup(markup))


# ---------------------------------------------------------------- prompt templates (sandbox)

MAX_PROMPT_CHARS = 20_000  # a rendered prompt
MAX_LOOP_STEPS = 100_000  # loop iterations in one prompt rendering
MAX_SEQUENCE = 10_000  # the longest text or list a prompt may build with *
MAX_POWER_BITS = 10_000  # the largest integer a prompt may build with ** or *
MAX_VALUE = 100_000  # the size of any value a prompt builds (items of lists, nested ones
#                      included, and characters of texts): as long as range(...) may be
MAX_WORK = 1_000_000  # work in one rendering: loop steps plus the size of every value a
#                       filter, operator, comparison or output handles
MAX_NESTING = 20  # brackets (and unary operators in a row) in one prompt expression
MAX_TREE_DEPTH = 100  # levels of the parsed prompt (chains of 1+1+... or |abs|abs... too)
PROMPT_FILTERS = frozenset(
    """
abs round int float string length count first last join list lower upper capitalize title trim
default d min max sum sort reverse unique
""".split()
)
_STATEMENTS = {
    "Macro": "{% macro %}",
    "CallBlock": "{% call %}",
    "Assign": "{% set %}",
    "AssignBlock": "{% set %}",
    "Include": "{% include %}",
    "Import": "{% import %}",
    "FromImport": "{% from ... import %}",
    "Extends": "{% extends %}",
    "Block": "{% block %}",
    "With": "{% with %}",
    "FilterBlock": "{% filter %}",
    "ExprStmt": "{% do %}",
    "Continue": "{% continue %}",
    "Break": "{% break %}",
    "Scope": "a scope",
    "EvalContextModifier": "{% autoescape %}",
    "ScopedEvalContextModifier": "{% autoescape %}",
}
_ALLOWED_NODES = (
    nodes.Template,
    nodes.Output,
    nodes.TemplateData,
    nodes.If,
    nodes.For,
    nodes.Name,
    nodes.Const,
    nodes.Getattr,
    nodes.Getitem,
    nodes.Slice,
    nodes.Filter,
    nodes.Test,
    nodes.Compare,
    nodes.Operand,
    nodes.And,
    nodes.Or,
    nodes.Not,
    nodes.Neg,
    nodes.Pos,
    nodes.Add,
    nodes.Sub,
    nodes.Mul,
    nodes.Div,
    nodes.FloorDiv,
    nodes.Mod,
    nodes.Pow,
    nodes.Concat,
    nodes.CondExpr,
    nodes.List,
    nodes.Tuple,
    nodes.Dict,
    nodes.Pair,
    nodes.Keyword,
    nodes.Call,
)
_STEPS: ContextVar[list[int] | None] = ContextVar("worksheetgen_prompt_steps", default=None)


class PromptError(Exception):
    """A prompt template that may not run, with the template line (internal to render)."""

    def __init__(self, message: str, lineno: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.lineno = lineno


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _counted(iterable: Any) -> Iterator[Any]:
    """Iterate, charging each step to the current rendering's loop and work budgets."""
    steps = _STEPS.get()
    _guard(iterable)
    for x in iterable:
        if steps is not None:
            steps[0] += 1
            if steps[0] > MAX_LOOP_STEPS:
                raise SecurityError(
                    f"expected at most {MAX_LOOP_STEPS} loop steps in a prompt, got more"
                )
            _charge(1)
        yield x


def _charge(units: int) -> None:
    """Charge ``units`` of work to the current rendering (none outside a rendering)."""
    steps = _STEPS.get()
    if steps is not None:
        steps[1] += units
        if steps[1] > MAX_WORK:
            raise SecurityError(
                f"expected a prompt that does at most {MAX_WORK:,} steps of "
                "work (loop steps and the sizes of the values its filters and "
                "operators handle), got more"
            )


def _size(value: Any, limit: int = MAX_VALUE) -> int:
    """The size of a value: 1 for a number, the length of a text, the sizes of the items of
    a list added up (a list repeating a long list counts it each time; an empty one is 1).
    Counting stops a little past ``limit``, so measuring a huge value costs no more than a
    small one."""
    total = 0
    todo = [value]
    while todo:
        x = todo.pop()
        if isinstance(x, str):
            total += max(len(x), 1)
        elif isinstance(x, list | tuple | dict):
            if not x:
                total += 1
            elif len(x) > limit - total:
                return limit + 1
            todo.extend(x.keys() if isinstance(x, dict) else x)
            if isinstance(x, dict):
                todo.extend(x.values())
        elif isinstance(x, range):
            total += len(x)
        elif _is_int(x):
            total += 1 + x.bit_length() // 64
        else:
            total += 1
        if total > limit:
            return total
    return total


def _guard(value: Any) -> Any:
    """``value`` if it is small enough to handle, charging its size as work."""
    size = _size(value)
    if size > MAX_VALUE:
        raise SecurityError(
            f"expected values of at most {MAX_VALUE:,} items or characters "
            "(lists within lists counted in full), got more"
        )
    _charge(size)
    return value


def _not_data(value: Any, ranges: bool) -> Any:
    """The first part of ``value`` that is not data (a number, text, true/false, none, or a
    list of them), else None. ``ranges``: a range counts as data (a filter may read it)."""
    todo = [value]
    while todo:
        x = todo.pop()
        if isinstance(x, list | tuple):
            todo.extend(x)
        elif isinstance(x, jinja2.Undefined):
            str(x)  # raises the usual "is undefined" error
        elif not (
            x is None or isinstance(x, str | int | float) or (ranges and isinstance(x, range))
        ):
            return x
    return None


def _what(x: Any) -> str:
    """A value that is not data, in words (its repr would differ between runs)."""
    if isinstance(x, range):
        return "a range (write it as range(...)|list, or loop over it)"
    if isinstance(x, jinja2.runtime.LoopContext):
        return "the loop object (print loop.index or another of its numbers)"
    if callable(x):
        return "a function or method (its text holds a memory address)"
    return f"a {type(x).__name__} object"


def _data(value: Any, ranges: bool = True) -> Any:
    """``value`` if it is data of a handleable size, else a SecurityError."""
    _guard(value)
    bad = _not_data(value, ranges)
    if bad is not None:
        raise SecurityError(
            "expected data (numbers, text, true/false, lists of them), got " + _what(bad)
        )
    return value


def _printable(value: Any) -> Any:
    """The finalize hook of the prompt sandbox: only data is printed, in text that meets
    the text rule (a "\\x1b" written in a template string decodes to ESC)."""
    _data(value, ranges=False)
    if isinstance(value, str):
        bad = problem(value, lines=True)
        if bad:
            raise SecurityError(bad)
    return value


# filters that read any value: they print nothing of it (only its length, or an element
# that is checked when printed) or fill in for a missing one
_ANY_VALUE_FILTERS = frozenset(("length", "count", "first", "last", "default", "d"))


def _bounded_filter(name: str, func: Any) -> Any:
    """A prompt filter that first checks its value and arguments (data, of a handleable
    size), and whose result is a list when Jinja's is an iterator (so it prints as one and is
    measured), checked in turn."""
    skip = 0 if getattr(func, "jinja_pass_arg", None) is None else 1
    check = _guard if name in _ANY_VALUE_FILTERS else _data

    def bounded(*args: Any, **kwargs: Any) -> Any:
        if not (name in ("default", "d") and isinstance(args[skip], jinja2.Undefined)):
            check(args[skip])
        for arg in (*args[skip + 1 :], *kwargs.values()):
            _data(arg)
        result = func(*args, **kwargs)
        if hasattr(result, "__next__"):  # reverse, unique: a list, never an address
            result = list(itertools.islice(result, MAX_VALUE + 1))
        return _guard(result)

    if skip:
        bounded.jinja_pass_arg = func.jinja_pass_arg  # type: ignore[attr-defined]
    return bounded


class PromptSandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox with resource limits for bank prompts.

    Only a few filters and ``range`` are available; ``*``, ``**`` and ``%`` are checked so a
    short template cannot build a huge text or number; loops share a step budget.
    """

    intercepted_binops = frozenset({"*", "**", "%", "+", "-", "/", "//"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _guard(left)
        _guard(right)
        if (
            operator == "**"
            and _is_int(left)
            and _is_int(right)
            and right > 0
            and abs(left) > 1
            and abs(left).bit_length() * right > MAX_POWER_BITS
        ):
            raise SecurityError(f"expected powers of at most {MAX_POWER_BITS} bits, got more")
        if operator == "*":
            if (
                _is_int(left)
                and _is_int(right)
                and left.bit_length() + right.bit_length() > MAX_POWER_BITS + 1
            ):
                raise SecurityError(f"expected products of at most {MAX_POWER_BITS} bits, got more")
            for seq, n in ((left, right), (right, left)):
                if (
                    isinstance(seq, str | list | tuple)
                    and _is_int(n)
                    and _size(seq) * n > MAX_SEQUENCE
                ):
                    raise SecurityError(
                        f"expected texts and lists of at most {MAX_SEQUENCE} "
                        f"items, got {_size(seq) * n}"
                    )
        if (
            operator == "+"
            and isinstance(left, str | list | tuple)
            and _size(left) + _size(right) > MAX_VALUE
        ):
            raise SecurityError(
                f"expected values of at most {MAX_VALUE:,} items or characters, got more"
            )
        if operator == "%" and isinstance(left, str):
            raise SecurityError(
                "expected no '%' text formatting (use the round filter), got '%' after a text"
            )
        return super().call_binop(context, operator, left, right)


def _check_node(node: nodes.Node, loop_names: set[str], names: list[tuple[str, int]]) -> None:
    """Refuse what a prompt may not use; collect the variables it reads."""
    kind = type(node).__name__
    if not isinstance(node, _ALLOWED_NODES):
        what = _STATEMENTS.get(kind, kind)
        raise PromptError(
            f"expected text, {{{{ variables }}}}, {{% if %}} and {{% for %}}, got {what}",
            node.lineno,
        )
    if isinstance(node, nodes.For):
        if node.recursive:
            raise PromptError("expected a plain {% for %}, got a recursive loop", node.lineno)
        target = node.target  # a name, or a tuple of names (for a, b in ...)
        for name in [target] if isinstance(target, nodes.Name) else target.find_all(nodes.Name):
            loop_names.add(name.name)
    elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
        raise PromptError(
            f"expected an attribute without '_' in front, got {node.attr!r}", node.lineno
        )
    elif (
        isinstance(node, nodes.Getitem)
        and isinstance(node.arg, nodes.Const)
        and isinstance(node.arg.value, str)
        and node.arg.value.startswith("_")
    ):
        raise PromptError(
            f"expected an item without '_' in front, got {node.arg.value!r}", node.lineno
        )
    elif isinstance(node, nodes.Filter) and node.name not in PROMPT_FILTERS:
        raise PromptError(
            f"expected a filter from: {', '.join(sorted(PROMPT_FILTERS))}; got {node.name!r}",
            node.lineno,
        )
    elif isinstance(node, nodes.Call):
        callee = node.node
        ok = (isinstance(callee, nodes.Name) and callee.name == "range") or (
            isinstance(callee, nodes.Getattr)
            and callee.attr == "cycle"
            and isinstance(callee.node, nodes.Name)
            and callee.node.name == "loop"
        )
        if not ok:
            raise PromptError(
                "expected no calls other than range(...) and loop.cycle(...), got a call",
                node.lineno,
            )
    elif isinstance(node, nodes.Name) and node.ctx == "load":
        if node.name == "self":
            raise PromptError("expected a variable, got 'self'", node.lineno)
        names.append((node.name, node.lineno))
    for child in node.iter_child_nodes():
        _check_node(child, loop_names, names)


@lru_cache(maxsize=1)
def _prompt_env() -> PromptSandbox:
    env = PromptSandbox(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        finalize=_printable,
    )
    env.filters = {k: _bounded_filter(k, v) for k, v in env.filters.items() if k in PROMPT_FILTERS}
    env.filters["wsg_counted"] = _counted
    env.filters["wsg_value"] = _guard
    env.filters["wsg_data"] = _data
    env.globals = {"range": env.globals["range"]}
    return env


@dataclass(frozen=True)
class PromptTemplate:
    """A checked, compiled prompt and the variables it reads (name, template line)."""

    template: jinja2.Template
    names: tuple[tuple[str, int], ...]


@lru_cache(maxsize=512)
def compile_prompt(text: str) -> PromptTemplate:
    """Parse, check and compile a prompt; raises TemplateSyntaxError or PromptError.

    A prompt that passed the checks before is loaded compiled from the cache folder (see
    :func:`_prompt_cache_file`), which saves a few milliseconds per prompt and command.
    """
    env = _prompt_env()
    cached = _prompt_cache_file(text)
    if cached is not None:
        try:
            names, code = marshal.loads(cached.read_bytes())
            template = env.template_class.from_code(env, code, env.make_globals(None), None)
            return PromptTemplate(template, tuple((str(n), int(line)) for n, line in names))
        except (OSError, EOFError, ValueError, TypeError):
            pass  # missing or unreadable: compiled (and saved) again below
    compiled = _compile_checked(env, text)
    if cached is not None:
        store(cached, marshal.dumps((compiled[1], compiled[0])))
    return PromptTemplate(
        env.template_class.from_code(env, compiled[0], env.make_globals(None), None), compiled[1]
    )


@lru_cache(maxsize=1)
def _prompt_cache_dir() -> Path | None:
    """The private folder of compiled prompts, named by everything their code depends on:
    Python's and Jinja2's versions and this module's source (the checks and rewrites)."""

    folder = private_cache_folder(
        "prompts",
        "|".join(
            (
                sys.version,
                jinja2.__version__,
                hashlib.blake2b(Path(__file__).read_bytes(), digest_size=16).hexdigest(),
            )
        ),
    )
    return folder


def _prompt_cache_file(text: str) -> Path | None:
    folder = _prompt_cache_dir()
    if folder is None:
        return None
    return folder / (
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        + ".prompt"
    )


def _compile_checked(env: PromptSandbox, text: str) -> tuple[Any, tuple[tuple[str, int], ...]]:
    """The code of a prompt that passed the checks, and the variables it reads."""
    _check_nesting(env, text)
    tree = env.parse(text)
    _check_depth(tree)
    loop_names: set[str] = set()
    names: list[tuple[str, int]] = []
    _check_node(tree, loop_names, names)
    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, "wsg_counted", [], [], None, None, lineno=loop.lineno)
    tree = _Guards().visit(tree)
    tree.set_environment(env)
    free = tuple(
        (n, line) for n, line in names if n not in loop_names and n not in ("loop", "range")
    )
    return env.compile(tree), free


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_UNARY = frozenset(("-", "+"))


def _check_nesting(env: PromptSandbox, text: str) -> None:
    """Refuse a prompt whose expressions nest deeper than :data:`MAX_NESTING` (brackets, or
    unary operators in a row), read from its tokens: Jinja's parser would recurse once per
    level and end in RecursionError."""
    depth = run = 0
    for lineno, kind, value in env.lex(text):  # raw tokens: ("operator", "("), ...
        if kind == "operator" and value in _OPENERS:
            depth += 1
        elif kind == "operator" and value in _OPENERS.values():
            depth -= 1
        if (kind == "operator" and value in _UNARY) or (kind == "name" and value == "not"):
            run += 1
        elif kind != "whitespace":
            run = 0
        if depth > MAX_NESTING or run > MAX_NESTING:
            raise PromptError(
                f"expected expressions nested at most {MAX_NESTING} levels deep "
                "(brackets, or signs and 'not' in a row), got deeper",
                lineno,
            )


def _check_depth(tree: nodes.Node) -> None:
    """Refuse a parsed prompt deeper than :data:`MAX_TREE_DEPTH` levels (a chain of
    thousands of ``+`` or filters), which compiling would recurse through."""
    todo = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_TREE_DEPTH:
            raise PromptError(
                f"expected an expression of at most {MAX_TREE_DEPTH} nested "
                "operations (a shorter chain of operators or filters), got more",
                node.lineno,
            )
        todo.extend((child, depth + 1) for child in node.iter_child_nodes())


def _filtered(node: nodes.Expr, name: str) -> nodes.Filter:
    return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)


class _Guards(NodeTransformer):
    """Check the values a prompt builds where the sandbox has no hook: list, tuple and dict
    literals and comparisons are measured (``wsg_value``); what ``~`` turns into text must
    be data (``wsg_data``), so that no method or huge value becomes text."""

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [_filtered(n, "wsg_data") for n in node.nodes]
        return _filtered(node, "wsg_value")

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        self.generic_visit(node)
        node.expr = _filtered(node.expr, "wsg_value")
        for op in node.ops:
            op.expr = _filtered(op.expr, "wsg_value")
        return node

    def _literal(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        if getattr(node, "ctx", "load") != "load":  # a loop's target (for a, b in ...)
            return node
        return _filtered(node, "wsg_value")

    visit_List = visit_Tuple = visit_Dict = _literal


def _syntax_message(exc: jinja2.TemplateSyntaxError) -> str:
    """Jinja's syntax message, with an unclosed block said the same way on every run."""
    block = re.search(r"innermost block that needs to be closed is '(\w+)'", exc.message or "")
    if block:
        name = block.group(1)
        return (
            f"template syntax error: expected {{% end{name} %}} to close {{% {name} %}}, "
            "got the end of the prompt"
        )
    return f"template syntax error: {exc.message}"


def _template_line(exc: BaseException) -> int | None:
    """The template line a rendering error happened on, from Jinja's rewritten traceback."""
    line = getattr(exc, "lineno", None)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _fail(
    message: str,
    lineno: int | None,
    file: str,
    line: int | None,
    field: str,
    first_line: int | None = None,
) -> TemplateError:
    """A TemplateError at the file line of template line ``lineno`` when it is known."""
    where = line
    if first_line is not None:
        where = first_line + max((lineno or 1) - 1, 0)
    note = f"prompt line {lineno}: " if lineno else ""
    return TemplateError(note + message, file=file, line=where, field=field)


def _render(template: PromptTemplate, context: Mapping[str, Any]) -> str:
    token = _STEPS.set([0, 0])  # loop steps, work
    try:
        out: list[str] = []
        size = 0
        for chunk in template.template.generate(**context):
            size += len(chunk)
            if size > MAX_PROMPT_CHARS:
                raise SecurityError(
                    f"expected a prompt of at most {MAX_PROMPT_CHARS} characters, got more"
                )
            out.append(chunk)
        return "".join(out).strip()
    finally:
        _STEPS.reset(token)


def render_prompt(
    text: str,
    context: Mapping[str, Any],
    *,
    file: str = "<prompt>",
    line: int | None = None,
    field: str = "prompt",
    first_line: int | None = None,
) -> str:
    """Render a prompt template (bank or family default) in the sandbox into markup.

    Errors name ``file``, ``line`` (or, with ``first_line``, the file line of the template
    line that failed) and the template line. Every failure of the template is a
    TemplateError: whatever a bank writes, the build answers with one line.
    """

    def fail(message: str, lineno: int | None) -> TemplateError:
        return _fail(message, lineno, file, line, field, first_line)

    try:
        template = compile_prompt(text)
    except jinja2.TemplateSyntaxError as exc:
        raise fail(_syntax_message(exc), exc.lineno) from None
    except PromptError as exc:
        raise fail(f"template not allowed: {exc.message}", exc.lineno) from None
    except RecursionError:  # pragma: no cover - the nesting checks refuse such prompts first
        raise fail(
            f"template not allowed: expected expressions nested at most {MAX_NESTING} "
            "levels deep, got deeper",
            None,
        ) from None
    try:
        return _render(template, context)
    except jinja2.UndefinedError as exc:
        raise fail(
            f"template error: {exc.message}; expected one of: " + ", ".join(sorted(context)),
            _template_line(exc),
        ) from None
    except SecurityError as exc:
        raise fail(f"template not allowed: {exc}", _template_line(exc)) from None
    except (jinja2.TemplateError, RecursionError, MemoryError) as exc:
        raise fail(f"template error: {exc}", _template_line(exc)) from None
    except Exception as exc:  # anything a template expression raises (1/0, 'a' + 1, ...)
        raise fail(f"template error: {type(exc).__name__}: {exc}", _template_line(exc)) from None


PLACES = (
    "whole numbers",
    "one decimal",
    "two decimals",
    "three decimals",
    "four decimals",
    "five decimals",
    "six decimals",
)


def places(decimals: int) -> str:
    """How answers rounded to ``decimals`` are named: "two decimals", "whole numbers", ..."""
    return PLACES[decimals] if decimals < len(PLACES) else f"{decimals} decimals"


def sheet_instructions(
    text: str, decimals: int, *, file: str = "<bank>", line: int | None = None
) -> str:
    """The sheet's instructions for answers rounded to ``decimals``: ``{{ places }}`` is
    "two decimals" (or "whole numbers", "one decimal", ...), ``{{ decimals }}`` the count."""
    context = {"places": places(decimals), "decimals": decimals}
    return render_prompt(text, context, file=file, line=line, field="sheet.instructions")


def check_prompt_template(
    text: str,
    file: str,
    line: int | None,
    field: str,
    family: Any = None,
    contexts: Iterable[Mapping[str, Any]] = (),
) -> None:
    """Fail at bank load on a prompt that would fail at build time.

    ``line`` is the file line of the template's first line. Checks the syntax and what the
    template uses; with ``contexts`` (the variables of sample draws) every variable must
    exist in one of them, each sample must render, and its math must need no sanitizing.
    """
    contexts = list(contexts)

    def fail(message: str, lineno: int | None) -> TemplateError:
        return _fail(message, lineno, file, line, field, line)

    try:
        template = compile_prompt(text)
    except jinja2.TemplateSyntaxError as exc:
        raise fail(_syntax_message(exc), exc.lineno) from None
    except PromptError as exc:
        raise fail(f"template not allowed: {exc.message}", exc.lineno) from None
    except RecursionError:  # pragma: no cover - the nesting checks refuse such prompts first
        raise fail(
            f"template not allowed: expected expressions nested at most {MAX_NESTING} "
            "levels deep, got deeper",
            None,
        ) from None
    if not contexts:
        return
    known = sorted(set().union(*contexts))
    for name, lineno in template.names:
        if name not in known:
            raise fail(
                f"unknown variable {name!r}{did_you_mean(name, known)}; expected one "
                f"of: {', '.join(known)}",
                lineno,
            )
    for context in contexts:
        markup = render_prompt(text, context, file=file, line=line, field=field, first_line=line)
        for is_math, math in split_markup(markup):
            if not is_math:
                continue
            problems = unsafe_math_problems(math)
            expected = "math with safe commands only"
            if not problems:
                problems, expected = tex_math_problems(math), "math TeX can set"
            if problems:
                raise fail(f"expected {expected}, got {problems[0]} in ${shorten(math)}$", None)


# ---------------------------------------------------------------- document templates


def _finite(x: Any) -> bool:
    return not is_masked_text(x)


def _cells(value: Any) -> Iterator[Any]:
    """The entries of a printed or JSON answer (a matrix, vector or single value) in order."""
    for row in value if isinstance(value, list | tuple) else [value]:
        if isinstance(row, list | tuple):
            yield from row
        else:
            yield row


def relation(printed: Any, value: Any = None) -> str:
    """'=' when every printed entry is exact, else '\\approx': given the ``value`` it was
    rounded from, when each entry prints as its value (0.50 for a half; at 0 decimals 0.73
    printed as 1 is not); without it, when each is a whole number or −∞."""
    if value is None:
        exact = all(is_masked_text(c) or str(c).lstrip("-").isdigit() for c in _cells(printed))
        return "=" if exact else r"\approx"
    # stops at the first rounded entry (strict: a printed answer has its value's shape)
    if isinstance(printed, list | tuple) and isinstance(value, list | tuple):
        rows = (
            zip(printed, value, strict=True)
            if printed and isinstance(printed[0], list | tuple)
            else [(printed, value)]
        )
        for row, row_value in rows:
            if not _prints_exactly(row, row_value):
                return r"\approx"
        return "="
    return "=" if _prints_exactly([printed], [value]) else r"\approx"


def _prints_exactly(row: Sequence[Any], values: Sequence[Any]) -> bool:
    """True when every printed entry of a row of a table equals its value."""
    if len(row) == len(values) and not has_masked(values) and not has_masked(row):
        try:  # a row of plain numbers, compared in one step
            return list(map(float, row)) == list(map(float, values))
        except (TypeError, ValueError):
            pass  # text or nested lists among the entries: entry by entry
    for c, v in zip(_cells(row), _cells(values), strict=True):
        c = str(c)
        if c in MASKED_TEXT:
            if v not in MASKED_TEXT:
                return False
        elif v in MASKED_TEXT or not _is_number(c) or float(v) != float(c):
            return False
    return True


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def margin(answer: Any) -> str:
    """An answer's accepted margin ("0.023") when it is wider than half a unit of its printed
    digits (a value worked from rounded earlier answers), else "": the key prints it so that a
    TA marking by hand accepts what ``grade`` and the LMS exports accept."""
    tol = getattr(answer, "tolerance", None)
    if not tol or answer.kind not in TOLERANT_KINDS:
        return ""
    decimals = mathtex.decimals_in(answer.rounded)
    if tol <= half_unit(decimals) * (1 + SLACK):
        return ""
    return f"{tol:.{decimals + 1}f}".rstrip("0").rstrip(".")


def blank_width(answer: Any) -> str:
    """The width of a cell to fill in, for the digits the key prints: 1.7 cm (1.45 cm in a
    table of more than 3 columns) at up to 2 decimals, 0.25 cm more for each further digit."""
    rows = answer.rounded if answer.kind == "matrix" else [answer.rounded]
    base = 1.45 if len(rows[0]) > 3 else 1.7
    # a table prints every entry to the same digits (whole-number tables none); the first row
    # has a number that is not -inf (the diagonal is never masked)
    decimals = max((mathtex.decimals_of(str(c)) for c in rows[0]), default=0)
    return f"{round(base + 0.25 * max(0, decimals - 2), 2):g}cm"


def _md_matrix(rows: Iterable[Iterable[Any]]) -> str:
    return "$$" + mathtex.bmatrix([list(r) for r in rows]) + "$$"


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's on-disk cache of compiled templates that never fails a build: a file it
    cannot read or write is simply compiled again."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache(settings: str) -> jinja2.BytecodeCache | None:
    """A compiled-template cache for one environment's settings, or None when there is no
    private, writable cache folder.

    Jinja2 keys each entry by the template's name and checks its source and Python's
    version; the folder name adds everything else the compiled code depends on (Jinja2's
    version and the environment's settings), so a changed setting never loads stale code.
    """
    path = private_cache_folder("templates", f"{jinja2.__version__}|{settings}")
    return None if path is None else _TemplateCache(str(path), "%s.cache")


def environment(fmt: str, extra_dir: str | None = None) -> jinja2.Environment:
    """The strict Jinja2 environment of a document format.

    With ``extra_dir`` (``--templates``: templates someone may have shared) it is Jinja2's
    immutable sandbox, so a template cannot reach Python internals, files or the environment.
    Environments are kept per folder (an absolute path: the same relative name from another
    working directory is another folder).
    """
    where = os.path.abspath(extra_dir) if extra_dir else None
    return _environment(fmt, extra_dir, where)


@lru_cache(maxsize=8)
def _environment(fmt: str, extra_dir: str | None, where: str | None) -> jinja2.Environment:
    dirs = [str(Path(extra_dir) / fmt)] if extra_dir else []
    dirs.append(str(data_dir("templates") / fmt))
    kwargs: dict[str, Any] = {}
    if fmt == "latex":
        kwargs = dict(
            block_start_string="((*",
            block_end_string="*))",
            variable_start_string="(((",
            variable_end_string=")))",
            comment_start_string="((=",
            comment_end_string="=))",
            line_statement_prefix=None,
            line_comment_prefix=None,
        )
    kind = ImmutableSandboxedEnvironment if extra_dir else jinja2.Environment
    kwargs.update(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    settings = f"{kind.__name__}|{fmt}|{sorted((k, repr(v)) for k, v in kwargs.items())}"
    # the bundled templates do not change while we run: no stat() before each use; a user's
    # folder may be edited between two builds of one process, so it is checked
    env = kind(
        loader=jinja2.FileSystemLoader(dirs),
        auto_reload=bool(extra_dir),
        bytecode_cache=_bytecode_cache(settings),
        **kwargs,
    )
    env.filters.update(
        tex=escape_tex,
        md=escape_md,
        markup_tex=markup_tex,
        markup_md=markup_md,
        bmatrix=mathtex.bmatrix,
        vector=mathtex.vector,
        shape=mathtex.shape,
        cell=mathtex.cell,
        md_matrix=_md_matrix,
        math_value=mathtex.value_math,
        finite=_finite,
        relation=relation,
        margin=margin,
    )
    env.globals.update(letters="abcdefghijklmnopqrstuvwxyz", places=places, blank_width=blank_width)
    ext = FORMATS[fmt]

    def display_kind(kind: str) -> Any:
        """The partial ``shown/<kind>`` of this format, as a module whose ``show(g)`` macro
        draws a shown value of that kind (loaded once per environment)."""
        return env.get_template(f"shown/{kind}{ext}.j2").module

    env.globals["display_kind"] = display_kind
    return env


def render_document(
    fmt: str, kind: str, context: Mapping[str, Any], template_dir: str | None = None
) -> str:
    """Render ``<fmt>/<kind>`` (kind: sheet or key) with a build's context.

    Any failure of a ``--templates`` template is a TemplateError naming its file and line;
    a failure of a bundled template is a bug and keeps its traceback.
    """
    env = environment(fmt, template_dir)
    name = f"{kind}{FORMATS[fmt]}.j2"
    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateError as exc:
        where, line = _template_frame(exc)
        where = getattr(exc, "filename", None) or where or name
        line = getattr(exc, "lineno", None) or line
        raise TemplateError(
            f"template error: {exc.message if hasattr(exc, 'message') else exc}",
            file=where,
            line=line,
        ) from None
    except Exception as exc:
        if template_dir is None:
            raise
        where, line = _template_frame(exc)
        raise TemplateError(
            f"template error: {type(exc).__name__}: {exc}", file=where or name, line=line
        ) from None


def _template_frame(exc: BaseException) -> tuple[str | None, int | None]:
    """The template file and line where ``exc`` was raised (from Jinja's traceback)."""
    found: tuple[str | None, int | None] = (None, None)
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(".j2"):
            found = (filename, tb.tb_lineno)
        tb = tb.tb_next
    return found
