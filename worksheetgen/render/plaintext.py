"""A bank's markup as plain text, for the places that show text untypeset.

Moodle's question bank lists category names as text, and Canvas its quiz title, without
MathJax: ``\\(QK^\\top/\\sqrt{d_k}\\)`` would show as those characters; a Moodle download
states a chosen option as the export wrote it, which report.md would show escaped. There the
math is written as Unicode a reader takes in at a glance: "QKᵀ/√dₖ", "−∞" (a script Unicode
has no letter for stays as ``_x``). The rules of the class report's plain text
(``report.classreport.plain_math``), here below both exports and grading, which use it.
"""

from __future__ import annotations

import re

from worksheetgen.render.markup import split_markup

_SUB_FROM = "0123456789aehijklmnoprstuvx+-=()"
_SUB_TO = "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₊₋₌₍₎"
_SUB = str.maketrans(_SUB_FROM, _SUB_TO)
_SUP = str.maketrans("0123456789+-=()nijkmtx", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵐᵗˣ")
_SCRIPTS = set(_SUB_TO) | set("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵐᵗˣᵀ")
_SYMBOLS = {
    r"\infty": "∞",
    r"\times": "×",
    r"\cdot": "·",
    r"\top": "T",
    r"\lt": "<",
    r"\gt": ">",
    r"\le": "≤",
    r"\ge": "≥",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\ne": "≠",
    r"\neq": "≠",
    r"\to": "→",
    r"\sum": "Σ",
    r"\ldots": "…",
    r"\dots": "…",
    r"\approx": "≈",
    r"\in": "∈",
    r"\mathbb": "",
    r"\quad": " ",
    r"\,": " ",
    r"\;": " ",
    r"\ ": " ",
    r"\{": "{",
    r"\}": "}",
    r"\%": "%",
    r"\$": "$",
    r"\&": "&",
    r"\#": "#",
    r"\_": "_",
}
_WRAPPERS = (r"\mathrm", r"\text", r"\mathbf", r"\mathit", r"\operatorname", r"\boldsymbol")


def _group(tex: str, i: int) -> tuple[str, int]:
    """The braced group or single token at ``tex[i]``, and where it ends."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i < len(tex) and tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1 : j], j + 1
        return tex[i + 1 :], len(tex)
    if i < len(tex) and tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
        if m:
            return m.group(0), i + len(m.group(0))
    return tex[i : i + 1], i + 1


def _script(ch: str, body: str) -> str:
    text = _math(body)
    if ch == "^" and body.strip() == r"\top":
        return "ᵀ"
    script = text.translate(_SUB if ch == "_" else _SUP)
    if all(c in _SCRIPTS for c in script):
        return script
    return ch + (text if len(text) == 1 else f"{{{text}}}")


def _math(tex: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch in "_^":
            body, i = _group(tex, i + 1)
            out.append(_script(ch, body))
            continue
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            word = m.group(0) if m else "\\"
            i += len(word)
            if word == r"\sqrt":
                body, i = _group(tex, i)
                inner = _math(body)
                single = len(inner.rstrip("".join(_SCRIPTS))) == 1  # √2, √dₖ
                out.append("√" + (inner if single else f"({inner})"))
            elif word in _WRAPPERS:
                body, i = _group(tex, i)
                out.append(_math(body))
            elif word in (r"\frac", r"\tfrac", r"\dfrac"):
                a, i = _group(tex, i)
                b, i = _group(tex, i)
                out.append(f"({_math(a)})/({_math(b)})")
            elif word in (r"\left", r"\right"):
                continue
            else:
                out.append(_SYMBOLS.get(word, word.lstrip("\\")))
            continue
        if ch in "{}":
            i += 1
            continue
        out.append("−" if ch == "-" else ch)
        i += 1
    return "".join(out)


def plain_text(markup: str) -> str:
    """Markup (text with ``$…$`` math) as plain Unicode text on one line: "QKᵀ/√dₖ"."""
    text = "".join(_math(t) if m else t for m, t in split_markup(markup))
    return " ".join(text.split())
