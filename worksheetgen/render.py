"""Render a Build into documents: one Jinja2 template set per format (LaTeX, Markdown).

Document templates live in ``templates/<format>/`` and extend a base template; LaTeX templates
use LaTeX-safe delimiters ``((* block *))``, ``((( var )))`` and ``((= comment =))``. Every
environment is strict (an undefined name is an error). Bank prompt text is rendered in Jinja2's
immutable sandbox into *markup*: plain text with ``$...$`` math, which each format then escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from worksheetgen import mathtex
from worksheetgen.errors import TemplateError
from worksheetgen.resources import data_dir

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


def escape_tex(text: Any) -> str:
    """Text that prints exactly as written in LaTeX (no command, comment or math can start)."""
    s = _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group()], str(text))
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    return re.sub(r"\n\s*\n", r"\\par ", s).replace("\n", " ")


_MD_RE = re.compile(r"([\\`*_\[\]<>#|~$])")


def escape_md(text: Any) -> str:
    """Text that prints as written in Markdown (no emphasis, links, HTML or math)."""
    s = _MD_RE.sub(r"\\\1", str(text).replace("\r\n", "\n").replace("\r", "\n"))
    s = s.replace("&", "&amp;")
    return re.sub(r"\n\s*\n", "\n\n", s).replace("\n\n", "\x00").replace("\n", " ")\
        .replace("\x00", "\n\n")


# Math in bank prompts may use only these commands: enough for attention arithmetic, and
# nothing that reads files, defines macros or writes.
MATH_COMMANDS = frozenset("""
sqrt frac dfrac tfrac top intercal times cdot cdots ldots dots infty le leq ge geq ne neq approx
sum prod exp log max min left right mathrm mathbf mathit mathbb text textbf textit operatorname
alpha beta gamma delta epsilon varepsilon theta lambda mu pi sigma tau phi varphi omega
Delta Sigma Omega in notin mid quad qquad to rightarrow mapsto hat tilde bar vec overline
underline begin end bmatrix pmatrix matrix
""".split())
_MATH_CMD_RE = re.compile(r"\\([A-Za-z]+|.)")


def sanitize_math(math: str) -> str:
    """Math from a bank, with any command outside a safe list shown literally instead of run."""

    def keep(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in MATH_COMMANDS or (len(name) == 1 and not name.isalpha()
                                     and name not in "^_"):
            if name in ("begin", "end"):
                return m.group()
            return m.group()
        return r"\backslash\mathrm{" + name + "}"

    out = _MATH_CMD_RE.sub(keep, math)
    # environments other than matrices cannot be opened
    return re.sub(r"\\(begin|end)\{(?!(?:b|p)?matrix\})([^}]*)\}",
                  lambda m: r"\backslash\mathrm{" + m.group(1) + "}", out)


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


def markup_tex(markup: str) -> str:
    """Prompt markup as LaTeX: text escaped, math sanitized."""
    return "".join(f"${sanitize_math(t)}$" if m else escape_tex(t) for m, t in split_markup(markup))


def markup_md(markup: str) -> str:
    """Prompt markup as Markdown with $math$ for MathJax/KaTeX."""
    return "".join(f"${sanitize_math(t).strip()}$" if m else escape_md(t)
                   for m, t in split_markup(markup))


# ---------------------------------------------------------------- prompt templates (sandbox)

@lru_cache(maxsize=1)
def _prompt_env() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False,
                                        keep_trailing_newline=False)
    return env


@lru_cache(maxsize=512)
def _compile_prompt(text: str) -> jinja2.Template:
    return _prompt_env().from_string(text)


def prompt_variables(family: Any) -> list[str]:
    """Names a prompt of this family may use (for error messages)."""
    names = {p.name for p in family.params} | {"T", "d_k", "causal"}
    return sorted(names)


def check_prompt_template(text: str, file: str, line: int | None, field: str,
                          family: Any) -> None:
    """Fail early, at bank load, on a prompt with a Jinja syntax error."""
    try:
        _compile_prompt(text)
    except jinja2.TemplateSyntaxError as exc:
        at = None if line is None else line + max(exc.lineno - 1, 0)
        raise TemplateError(f"template syntax error: {exc.message}", file=file, line=at,
                            field=field) from None


def render_prompt(text: str, context: Mapping[str, Any], *, file: str = "<prompt>",
                  line: int | None = None, field: str = "prompt") -> str:
    """Render a prompt template (bank or family default) in the sandbox into markup."""
    try:
        return _compile_prompt(text).render(**context).strip()
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}", file=file, line=line,
                            field=field) from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"template error: {exc.message}; available: "
                            + ", ".join(sorted(context)), file=file, line=line,
                            field=field) from None
    except jinja2.exceptions.SecurityError as exc:
        raise TemplateError(f"template not allowed: {exc}", file=file, line=line,
                            field=field) from None
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise TemplateError(f"template error: {exc}", file=file, line=line,
                            field=field) from None


# ---------------------------------------------------------------- document templates

def _finite(x: Any) -> bool:
    return str(x) not in ("-inf", "-oo")


def relation(printed: Any) -> str:
    """'=' when every printed entry is exact (a whole number or −∞), else '\\approx'."""
    cells = printed if isinstance(printed, list) else [printed]
    flat = [c for row in cells for c in (row if isinstance(row, list) else [row])]
    exact = all(str(c) in ("-inf", "-oo") or str(c).lstrip("-").isdigit() for c in flat)
    return "=" if exact else r"\approx"


def _md_matrix(rows: Iterable[Iterable[Any]]) -> str:
    return "$$" + mathtex.bmatrix([list(r) for r in rows]) + "$$"


@lru_cache(maxsize=4)
def environment(fmt: str, extra_dir: str | None = None) -> jinja2.Environment:
    """The strict Jinja2 environment of a document format."""
    dirs = [str(Path(extra_dir) / fmt)] if extra_dir else []
    dirs.append(str(data_dir("templates") / fmt))
    kwargs: dict[str, Any] = {}
    if fmt == "latex":
        kwargs = dict(block_start_string="((*", block_end_string="*))",
                      variable_start_string="(((", variable_end_string=")))",
                      comment_start_string="((=", comment_end_string="=))",
                      line_statement_prefix=None, line_comment_prefix=None)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(dirs), undefined=jinja2.StrictUndefined,
                             autoescape=False, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, **kwargs)
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
        finite=_finite,
        relation=relation,
    )
    env.globals.update(letters="abcdefghijklmnopqrstuvwxyz")
    return env


def render_document(fmt: str, kind: str, context: Mapping[str, Any],
                    template_dir: str | None = None) -> str:
    """Render ``<fmt>/<kind>`` (kind: sheet or key) with a build's context."""
    env = environment(fmt, template_dir)
    name = f"{kind}{FORMATS[fmt]}.j2"
    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateError as exc:
        where = getattr(exc, "filename", None) or name
        line = getattr(exc, "lineno", None)
        raise TemplateError(f"template error: {exc.message if hasattr(exc, 'message') else exc}",
                            file=where, line=line) from None
