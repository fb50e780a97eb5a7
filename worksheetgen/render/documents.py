"""Render a Build into documents: one Jinja2 template set per format (LaTeX, Markdown).

Document templates live in ``templates/<format>/`` and extend a base template; LaTeX templates
use LaTeX-safe delimiters ``((* block *))``, ``((( var )))`` and ``((= comment =))``. Every
environment is strict (an undefined name is an error). Bank prompt text is rendered in Jinja2's
immutable sandbox into *markup*: plain text with ``$...$`` math, which each format then escapes.
"""

from __future__ import annotations

import os
import stat
import time
import types
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from worksheetgen.errors import TemplateError, WorksheetgenError, file_kind
from worksheetgen.exact import mathtex
from worksheetgen.exact.kinds import TOLERANT_KINDS
from worksheetgen.exact.masked import MASKED_TEXT, has_masked, is_masked_text
from worksheetgen.exact.rounding import SLACK, half_unit
from worksheetgen.inputs import utf8_text
from worksheetgen.language import DEFAULT as DEFAULT_LANGUAGE
from worksheetgen.language import (
    decimal,
    decimal_html,
    decimal_markup,
    decimal_math,
    decimal_text,
    gettext,
    math_lists,
    ngettext,
    pgettext,
    table_label,
    using,
)
from worksheetgen.render import htmlmath, htmltables, htmlwords
from worksheetgen.render.markup import escape_md, escape_tex, markup_md, markup_tex
from worksheetgen.render.prompts import places
from worksheetgen.render.texlines import fold_long_lines
from worksheetgen.resources import data_dir
from worksheetgen.speed.cache import load, private_cache_folder, store

# ---------------------------------------------------------------- document templates

FORMATS = {"latex": ".tex", "markdown": ".md", "html": ".html"}


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


def shorten(text: str, columns: int) -> str:
    """``text`` cut to about ``columns`` columns of a Latin letter's width, with "…" where it is
    cut: a wide letter (CJK) counts two, so a name shortened for a footer fits its line in
    any script."""
    widths = [2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text]
    if sum(widths) <= columns:
        return text
    used = 0
    for index, width in enumerate(widths):
        used += width
        if used > columns - 1:
            return text[:index] + "…"
    return text


def html_filters() -> dict[str, Callable[..., Any]]:
    """The HTML documents' filters: markup and math as HTML (marked safe for autoescape); the
    numbers of math and of a table's cells with the separator being rendered with (MathML's
    ``<mn>0,25</mn>``, a list's entries then apart by semicolons)."""
    return {
        "mathml": lambda tex, display=False: Markup(
            decimal_html(htmlmath.math_html(math_lists(str(tex)), display)).replace(
                "<mi>;</mi>", '<mo separator="true">;</mo>'
            )
        ),
        "markup_html": lambda text: Markup(htmlmath.markup_html(str(text))),
        "paragraphs_html": lambda text: Markup(htmlmath.paragraphs_html(str(text))),
        "cell_text": lambda x: decimal_text(htmlmath.cell_text(x)),
        "given_tex": lambda g: htmlmath.given_tex(g.kind, g.value),
        "table_rows": htmlmath.table_rows,
        # a text the build wrote (a worked step's), its numbers as the build prints them
        "numbers": lambda html: Markup(decimal_html(str(html))),
    }


def _in_math(draw: Callable[..., str], fmt: str) -> Callable[..., str]:
    """A filter that draws printed numbers as math, its decimal points as the build prints
    them (the identity where that is a point; in HTML the math is TeX for the ``mathml``
    filter, which prints its numbers so)."""
    if fmt == "html":
        return draw

    def drawn(*args: Any, **kwargs: Any) -> str:
        return decimal_math(draw(*args, **kwargs))

    return drawn


def _md_matrix(rows: Iterable[Iterable[Any]]) -> str:
    return "$$" + mathtex.bmatrix([list(r) for r in rows]) + "$$"


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's on-disk cache of compiled templates that never fails a build and never runs
    what it cannot trust: an entry is read through the cache's gate (ours, writable by
    nobody else, whole: its digest checked before Jinja2 unpickles and unmarshals it), and
    anything else is simply compiled again."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = load(Path(self._get_cache_filename(bucket)))
        if data is None:
            return
        try:
            bucket.bytecode_from_string(data)
        except Exception:  # an entry of an older Jinja2 that passed its digest: made again
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        store(Path(self._get_cache_filename(bucket)), bucket.bytecode_to_string())


def _bytecode_cache(settings: str) -> jinja2.BytecodeCache | None:
    """A compiled-template cache for one environment's settings, or None when there is no
    private, writable cache folder.

    Jinja2 keys each entry by the template's name and checks its source and Python's
    version; the folder name adds everything else the compiled code depends on (Jinja2's
    version and the environment's settings), so a changed setting never loads stale code.
    """
    path = private_cache_folder("templates", f"{jinja2.__version__}|{settings}")
    return None if path is None else _TemplateCache(str(path), "%s.cache")


# ---------------------------------------------------------------- templates of one's own
#
# ``--templates`` names a folder someone may have shared: its templates run in Jinja2's
# immutable sandbox, may read no file outside their folder (a link that leads out of it is
# refused, as is anything but a regular file), and have bounded work, as prompts do.

MAX_TEMPLATE_BYTES = 1_000_000  # one template file of one's own
MAX_TEMPLATE_STEPS = 5_000_000  # loop steps in one document (a class of 702 uses ~1/10)
MAX_TEMPLATE_SECONDS = 60  # one document's rendering
MAX_TEMPLATE_ITEMS = 10_000_000  # the longest text or list a template may build with *
MAX_TEMPLATE_BITS = 100_000  # the largest integer a template may build with ** or *
_BUDGET: ContextVar[list[float] | None] = ContextVar("worksheetgen_template_steps", default=None)


def _counted(iterable: Any) -> Iterator[Any]:
    """Iterate, charging each step to the current document's step and time budget."""
    budget = _BUDGET.get()
    for x in iterable:
        if budget is not None:
            budget[0] += 1
            if budget[0] > MAX_TEMPLATE_STEPS:
                raise SecurityError(
                    f"expected at most {MAX_TEMPLATE_STEPS:,} loop steps in a document, got more"
                )
            if not int(budget[0]) % 4096 and time.monotonic() > budget[1]:
                raise SecurityError(
                    f"expected a document rendered within {MAX_TEMPLATE_SECONDS} seconds, "
                    "got one still running"
                )
        yield x


_PLAIN_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


class _BundledContext(jinja2.runtime.Context):
    """The bundled templates' context: ``Context.call`` as Jinja2 does it, with the two
    callables a class build makes most of its calls to (about 33,000: its macros and its
    helper functions) dispatched without looking each one's kind up again. A macro is
    called with the evaluation context first (its ``__call__`` asks for it); a plain
    function that asks Jinja2 for nothing is called as it is; anything else (a function
    marked ``pass_context``, a callable object) goes through Jinja2's own ``call``."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        kind = type(__obj)
        if kind is jinja2.runtime.Macro:
            kwargs.pop("_block_vars", None)
            kwargs.pop("_loop_vars", None)
            return __obj(__self.eval_ctx, *args, **kwargs)
        if kind in _PLAIN_CALLABLES and getattr(__obj, "jinja_pass_arg", None) is None:
            kwargs.pop("_block_vars", None)
            kwargs.pop("_loop_vars", None)
            try:
                return __obj(*args, **kwargs)
            except StopIteration:
                return __self.environment.undefined(
                    "value was undefined because a callable raised a StopIteration exception"
                )
        return super().call(__obj, *args, **kwargs)


class _OwnTemplates(ImmutableSandboxedEnvironment):
    """The sandbox of templates of one's own: every loop counted (see :func:`_counted`), and
    ``*`` and ``**`` cannot build a text, list or number too large to hold."""

    intercepted_binops = frozenset({"*", "**"})

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(
                loop.iter, "wsg_counted", [], [], None, None, lineno=loop.lineno
            )
        return tree

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        ints = all(isinstance(x, int) and not isinstance(x, bool) for x in (left, right))
        if operator == "**" and ints and right > 0 and abs(left) > 1:
            if abs(left).bit_length() * right > MAX_TEMPLATE_BITS:
                raise SecurityError(
                    f"expected powers of at most {MAX_TEMPLATE_BITS} bits, got more"
                )
        if operator == "*":
            if ints and left.bit_length() + right.bit_length() > MAX_TEMPLATE_BITS:
                raise SecurityError(
                    f"expected products of at most {MAX_TEMPLATE_BITS} bits, got more"
                )
            for seq, n in ((left, right), (right, left)):
                if (
                    isinstance(seq, str | list | tuple)
                    and isinstance(n, int)
                    and len(seq) * n > MAX_TEMPLATE_ITEMS
                ):
                    raise SecurityError(
                        f"expected texts and lists of at most {MAX_TEMPLATE_ITEMS:,} items, "
                        "got more"
                    )
        return super().call_binop(context, operator, left, right)


class _OwnFolderLoader(jinja2.BaseLoader):
    """Templates from a folder of one's own: only regular files inside the folder. A link
    that leads out of it (to /etc/passwd, say) is refused, never followed, and so are a
    FIFO, a device or a folder under a template's name."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = os.path.join(self.folder, *split_template_path(template))
        if not os.path.lexists(path):
            raise jinja2.TemplateNotFound(template)
        root = os.path.realpath(self.folder)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            raise TemplateError(
                f"expected a template inside the templates folder {root}, got a link to {real}",
                file=path,
            )
        try:
            info = os.stat(real)
            if not stat.S_ISREG(info.st_mode):
                raise TemplateError(
                    f"expected a template file, got {file_kind(info.st_mode)}", file=path
                )
            if info.st_size > MAX_TEMPLATE_BYTES:
                raise TemplateError(
                    f"expected a template of at most {MAX_TEMPLATE_BYTES} bytes, got "
                    f"{info.st_size}",
                    file=path,
                )
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                data = fh.read(MAX_TEMPLATE_BYTES + 1)
        except OSError as exc:
            raise TemplateError(
                f"expected a readable template, got {exc.strerror or exc}", file=path
            ) from None
        source = utf8_text(data, str(path), TemplateError, bom=False)
        mtime = info.st_mtime_ns

        def uptodate() -> bool:
            try:
                return os.stat(real).st_mtime_ns == mtime
            except OSError:
                return False

        return source, path, uptodate


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
    bundled = jinja2.FileSystemLoader(str(data_dir("templates") / fmt))
    loader: jinja2.BaseLoader = (
        jinja2.ChoiceLoader([_OwnFolderLoader(str(Path(extra_dir) / fmt)), bundled])
        if extra_dir
        else bundled
    )
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
    kind = _OwnTemplates if extra_dir else jinja2.Environment
    kwargs.update(
        undefined=jinja2.StrictUndefined,
        autoescape=fmt == "html",  # HTML: every value escaped unless it is markup already
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    settings = f"{kind.__name__}|{fmt}|{sorted((k, repr(v)) for k, v in kwargs.items())}"
    # the bundled templates do not change while we run: no stat() before each use; a user's
    # folder may be edited between two builds of one process, so it is checked
    env = kind(
        loader=loader,
        auto_reload=bool(extra_dir),
        bytecode_cache=_bytecode_cache(settings),
        **kwargs,
    )
    if not extra_dir:  # a folder of one's own keeps Jinja2's (and the sandbox's) own calls
        env.context_class = _BundledContext
    env.filters.update(
        tex=escape_tex,
        md=escape_md,
        markup_tex=markup_tex,
        markup_md=markup_md,
        # printed numbers with the build's decimal separator (a point: as they are)
        bmatrix=_in_math(mathtex.bmatrix, fmt),
        vector=_in_math(mathtex.vector, fmt),
        shape=mathtex.shape,
        cell=_in_math(mathtex.cell, fmt),
        md_matrix=_in_math(_md_matrix, fmt),
        math_value=_in_math(mathtex.value_math, fmt),
        # a text the build wrote (a worked step, a grid's cells), its numbers as printed
        numbers_math=decimal_math,
        numbers=decimal_markup if fmt != "html" else decimal_html,
        numbers_text=decimal_text,
        finite=_finite,
        relation=relation,
        margin=(lambda answer: decimal_math(margin(answer)))
        if fmt == "latex"
        else (lambda answer: decimal_text(margin(answer))),
        shorten=shorten,
    )
    if fmt == "html":
        env.filters.update(html_filters())
        env.globals.update(
            say=htmlwords.say,
            lang=htmlwords.LANGUAGE,
            dir=htmlwords.DIRECTION,
            input_table=htmltables.input_table,
            value_table=htmltables.value_table,
        )
    if extra_dir:
        env.filters["wsg_counted"] = _counted
    env.globals.update(letters="abcdefghijklmnopqrstuvwxyz", places=places, blank_width=blank_width)
    # the fixed words, in the language being rendered (worksheetgen.language)
    env.globals.update(_=gettext, ngettext=ngettext, pgettext=pgettext)
    env.filters["label"] = table_label
    env.filters["decimal"] = decimal  # a number in words' text: "2,5" in German
    ext = FORMATS[fmt]

    modules: dict[str, Any] = {}

    def display_kind(kind: str) -> Any:
        """The partial ``shown/<kind>`` of this format, as a module whose ``show(g)`` macro
        draws a shown value of that kind (loaded once per environment: asking Jinja2 for
        the template on every value would check its file each time)."""
        module = modules.get(kind)
        if module is None:
            module = modules[kind] = env.get_template(f"shown/{kind}{ext}.j2").module
        return module

    env.globals["display_kind"] = display_kind
    return env


def render_document(
    fmt: str, kind: str, context: Mapping[str, Any], template_dir: str | None = None
) -> str:
    """Render ``<fmt>/<kind>`` (kind: sheet or key) with a build's context, in its
    ``language`` (a shipped language's code; English by default).

    Any failure of a ``--templates`` template is a TemplateError naming its file and line;
    a failure of a bundled template is a bug and keeps its traceback.
    """
    env = environment(fmt, template_dir)
    name = f"{kind}{FORMATS[fmt]}.j2"
    budget = [0.0, time.monotonic() + MAX_TEMPLATE_SECONDS] if template_dir else None
    token = _BUDGET.set(budget)
    try:
        with using(context.get("language", DEFAULT_LANGUAGE), context.get("decimal")):
            text = env.get_template(name).render(**context)
        # no line longer than TeX's input buffer (a prompt of one long word makes one)
        return fold_long_lines(text) if fmt == "latex" else text
    except WorksheetgenError:
        raise
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
    finally:
        _BUDGET.reset(token)


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
