"""The prompt sandbox: a bank prompt is a Jinja2 template run with real bounds on work and size.

Prompts are checked when the bank is loaded (syntax, names, nesting, what may print) and
rendered into markup; see ``worksheetgen.render.markup`` for what happens to that markup.
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
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
from worksheetgen.language import N_, gettext
from worksheetgen.render import markup
from worksheetgen.render.markup import split_markup, tex_math_problems, unsafe_math_problems
from worksheetgen.speed.cache import load, private_cache_folder, store
from worksheetgen.textrules import problem

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
    data = None if cached is None else load(cached)  # ours, nobody else's to write, whole
    if data is not None:
        try:
            names, code = marshal.loads(data)
            template = env.template_class.from_code(env, code, env.make_globals(None), None)
            return PromptTemplate(template, tuple((str(n), int(line)) for n, line in names))
        except Exception:  # an entry of another Python that passed its digest: made again
            pass
    compiled = _compile_checked(env, text)
    if cached is not None:
        store(cached, marshal.dumps((compiled[1], compiled[0])))
    return PromptTemplate(
        env.template_class.from_code(env, compiled[0], env.make_globals(None), None), compiled[1]
    )


@lru_cache(maxsize=1)
def _prompt_cache_dir() -> Path | None:
    """The private folder of compiled prompts, named by everything their code depends on:
    Python's and Jinja2's versions and the source of this module and of the markup checks
    it runs (the checks and rewrites)."""

    folder = private_cache_folder(
        "prompts",
        "|".join(
            (
                sys.version,
                jinja2.__version__,
                hashlib.blake2b(
                    Path(__file__).read_bytes() + Path(markup.__file__).read_bytes(),
                    digest_size=16,
                ).hexdigest(),
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


def _compiled(text: str, fail: Callable[[str, int | None], TemplateError]) -> PromptTemplate:
    """The checked, compiled prompt; every refusal is ``fail(message, template line)``."""
    try:
        return compile_prompt(text)
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

    template = _compiled(text, fail)
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
    N_("whole numbers"),
    N_("one decimal"),
    N_("two decimals"),
    N_("three decimals"),
    N_("four decimals"),
    N_("five decimals"),
    N_("six decimals"),
)


def places(decimals: int) -> str:
    """How answers rounded to ``decimals`` are named: "two decimals", "whole numbers", ..."""
    if decimals < len(PLACES):
        return gettext(PLACES[decimals])
    return gettext("{count} decimals", count=decimals)


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

    template = _compiled(text, fail)
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
        problem = markup_math_problem(markup)
        if problem:
            raise fail(problem, None)


def markup_math_problem(markup: str) -> str | None:
    """What is wrong with the first ``$…$`` of ``markup`` that would need sanitizing (a
    command outside the safe list, math TeX cannot set), as ``expected …, got …``; None
    when every piece of math prints as written."""
    for is_math, math in split_markup(markup):
        if not is_math:
            continue
        problems = unsafe_math_problems(math)
        expected = "math with safe commands only"
        if not problems:
            problems, expected = tex_math_problems(math), "math TeX can set"
        if problems:
            return f"expected {expected}, got {problems[0]} in ${shorten(math)}$"
    return None


def check_instructions(text: str, file: str, line: int | None) -> None:
    """Fail at bank load on sheet instructions that would not print as written: a template
    that fails for some ``--decimals``, or math (``$-\\infty$``) a prompt could not have."""
    for decimals in range(7) if "{" in text else (None,):  # any --decimals must render
        markup = (
            text if decimals is None else sheet_instructions(text, decimals, file=file, line=line)
        )
        problem = markup_math_problem(markup)
        if problem:
            raise TemplateError(problem, file=file, line=line, field="sheet.instructions")


def check_markup(text: str, file: str, line: int | None, field: str) -> None:
    """Fail at bank load on a title or course whose ``$…$`` math would not print as written
    (the same rule as a prompt's math: safe commands, math TeX can set)."""
    problem = markup_math_problem(text)
    if problem:
        raise TemplateError(problem, file=file, line=line, field=field)
