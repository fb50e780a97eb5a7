"""Markup: plain text with ``$...$`` math, escaped for LaTeX and for Markdown.

Everything a user supplies is escaped here (special characters, ligatures, long unspaced runs),
and math keeps only a list of safe commands that TeX can set.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from worksheetgen.render import scripts

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


def escape_tex_breaking(text: str, breaks: tuple[int, ...]) -> str:
    """``escape_tex(text)`` with a line break allowed before each position in ``breaks``
    (between two CJK characters of a name in a narrow column, say)."""
    if not breaks:
        return escape_tex(text)
    s = _plain(text)
    if not s.isascii() and scripts.needs_fonts(s) and "\n" not in s:
        return _marked(s, breaks)
    cuts = [0, *breaks, len(s)]
    pieces = (_escape_tex(s[a:b]) for a, b in zip(cuts, cuts[1:], strict=False))
    return r"\allowbreak{}".join(pieces)


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
    if not s.isascii() and scripts.needs_fonts(s):
        return r"\par ".join(_marked(p.replace("\n", " ")) for p in re.split(r"\n\s*\n", s))
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
    """A long run without spaces escaped with a break allowed where ``_run_breaks`` allows
    one: it wraps, never runs off the page."""
    cuts = [0, *_run_breaks(run), len(run)]
    pieces = (_escape_tex_run(run[a:b]) for a, b in zip(cuts, cuts[1:], strict=False))
    return r"\allowbreak{}".join(pieces)


def _run_breaks(run: str) -> list[int]:
    """Where a long run without spaces may break: after each hyphen, and inside a part
    between hyphens that is itself long (a name of 200 letters, a URL) after any character
    but before a combining accent or next to letters a font shapes together; never inside a
    part of a hyphenated compound ("Württemberg-Hohenlohe-Langenburg")."""
    parts = re.split(f"([{_HYPHENS}])", run)  # a part, a hyphen, a part, ...
    out = []
    at = 0
    for part in parts:
        if part in _HYPHENS:  # a break after it, before a letter
            at += len(part)
            if at < len(run) and run[at] not in _HYPHENS and not unicodedata.combining(run[at]):
                out.append(at)
            continue
        if len(part) >= LONG_RUN:
            for k in range(at + 1, at + len(part)):
                before, c = run[k - 1], run[k]
                if not (unicodedata.combining(c) or _shaped(c) or _shaped(before)):
                    out.append(k)
        at += len(part)
    return out


_HYPHENS = "-\u2010"


# a word's font (worksheetgen.render.scripts), as the LuaLaTeX preamble names it
_FONT_SWITCH = {
    scripts.SERIF: r"\wsserif",
    scripts.ARAB: r"\wsarab",
    scripts.HEBR: r"\wshebr",
    scripts.CJK: r"\wscjk",
}


def _marked(s: str, extra: tuple[int, ...] = ()) -> str:
    """One paragraph escaped, each word of a script Pagella lacks (or lacks in part) in its
    script's font as a whole, and its right-to-left runs in their direction (LuaLaTeX's
    \\textdir, by the levels of the Unicode bidirectional algorithm); a long run without
    spaces breakable as ``_breakable`` makes it, and a break allowed before each position
    in ``extra``."""
    fonts = scripts.fonts(s)
    breaks = set(extra)
    for m in _LONG_RUN_RE.finditer(s):
        breaks.update(m.start() + k for k in _run_breaks(m.group()))
    if not scripts.has_rtl(s):
        return _fonted(s, 0, len(s), fonts, breaks)
    levels = scripts.levels(s)
    base = scripts.base_level(s)
    if base:
        return _group(s, 0, len(s), base, levels, fonts, breaks)
    return _nested(s, 0, len(s), base, levels, fonts, breaks)


def _nested(
    s: str,
    start: int,
    end: int,
    level: int,
    levels: list[int],
    fonts: list[str | None],
    breaks: set[int],
) -> str:
    """``s[start:end]``, whose levels are ``level`` or more, with each run of a higher level
    in a group of its direction."""
    out = []
    k = start
    while k < end:
        m = k
        if levels[k] == level:
            while m < end and levels[m] == level:
                m += 1
            out.append(_fonted(s, k, m, fonts, breaks, rtl=level % 2 == 1))
        else:
            while m < end and levels[m] > level:
                m += 1
            out.append(_group(s, k, m, level + 1, levels, fonts, breaks))
        k = m
    return "".join(out)


def _group(
    s: str,
    start: int,
    end: int,
    level: int,
    levels: list[int],
    fonts: list[str | None],
    breaks: set[int],
) -> str:
    """``s[start:end]`` in a group of ``level``'s direction (a run of one level and font:
    the group selects the font too)."""
    if all(levels[k] == level for k in range(start, end)):
        inner = _fonted(s, start, end, fonts, breaks, bare=True, rtl=level % 2 == 1)
    else:
        inner = _nested(s, start, end, level, levels, fonts, breaks)
    return rf"\wsrtl{{{inner}}}" if level % 2 else rf"\wsltr{{{inner}}}"


def _fonted(
    s: str,
    start: int,
    end: int,
    fonts: list[str | None],
    breaks: set[int],
    bare: bool = False,
    rtl: bool = False,
) -> str:
    """``s[start:end]`` escaped, each run of one font in a group that selects it (``bare``:
    a run that is the whole of it selects its font without a group of its own, the caller's
    group ends it); ``rtl``: set right to left, its brackets in the text's font mirrored
    (LuaTeX mirrors none; HarfBuzz mirrors those in the Arabic and Hebrew fonts)."""
    out = []
    k = start
    while k < end:
        m = k
        while m < end and fonts[m] == fonts[k]:
            m += 1
        cuts = [k, *sorted(b for b in breaks if k < b < m), m]
        font = fonts[k]
        mirror = rtl and font is None
        pieces = (
            _escape_tex_run(_mirrored(s[a:b]) if mirror else s[a:b])
            for a, b in zip(cuts, cuts[1:], strict=False)
        )
        text = r"\allowbreak{}".join(pieces)
        if font is None:
            out.append(text)
        elif bare and k == start and m == end:
            out.append(f"{_FONT_SWITCH[font]} {text}")
        else:
            out.append(f"{{{_FONT_SWITCH[font]} {text}}}")
        if m in breaks:
            out.append(r"\allowbreak{}")
        k = m
    return "".join(out)


def _mirrored(s: str) -> str:
    return "".join(scripts.MIRRORED.get(c, c) for c in s)


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
    return _escape_md_line(" ".join(_plain(str(text)).split()))


def _escape_md_line(text: str) -> str:
    return _MD_RE.sub(r"\\\1", text).replace("&", "&amp;")


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


@lru_cache(maxsize=16384)
def markup_md_inline(markup: str) -> str:
    """Markup inside a line of Markdown (a heading, a table cell, a sentence of grade's
    report.md): text as :func:`escape_md_inline` escapes it, math as ``$…$``."""
    one_line = " ".join(_plain(markup).split())
    return "".join(
        f"${md_math(t)}$" if m else _escape_md_line(t) for m, t in split_markup(one_line)
    )


@lru_cache(maxsize=8192)  # a class's export sets the same cells' math again and again
def lms_math(math: str) -> str:
    """Inline math for an LMS (Moodle's MathJax filter, Canvas): ``\\( … \\)``, sanitized."""
    return r"\(" + sanitize_math(math).strip() + r"\)"


@lru_cache(maxsize=16384)
def markup_lms(markup: str) -> str:
    """Markup as the LMS exports write it: plain text (their writers escape it for HTML or
    their format) with ``\\( … \\)`` math, on one line."""
    return " ".join("".join(lms_math(t) if m else t for m, t in split_markup(markup)).split())
