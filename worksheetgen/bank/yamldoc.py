"""Safe, line-numbered YAML for banks: YAML 1.2 numbers, plain values only, no tags.

``parse_yaml`` turns a bank's text into a ``Doc`` that remembers the line of every value, so
that every later problem can name file, line and field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from worksheetgen.errors import BankError, describe
from worksheetgen.textrules import problem as text_problem

MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 40
_CORE = "tag:yaml.org,2002:"
SAFE_TAGS = frozenset(
    _CORE + t for t in ("null", "bool", "int", "float", "str", "seq", "map", "timestamp")
)


@dataclass(frozen=True)
class Doc:
    """A YAML document as plain data plus the line of every path in it."""

    data: Any
    lines: dict[tuple[Any, ...], int]
    file: str
    #: where each text value starts: path -> (line of its first character, block style |/>)
    starts: dict[tuple[Any, ...], tuple[int, bool]] = field(default_factory=dict)

    def line(self, path: tuple[Any, ...]) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def text_line(self, path: tuple[Any, ...]) -> int | None:
        """The file line of the first line of the text value at ``path`` (for templates)."""
        if path in self.starts:
            line, block = self.starts[path]
            return line + 1 if block else line
        return self.line(path)

    def error(self, path: tuple[Any, ...], message: str) -> BankError:
        """A BankError located at ``path``."""
        return BankError(message, file=self.file, line=self.line(path), field=path_text(path))


def path_text(path: Iterable[Any]) -> str | None:
    """``("questions", 2, "params", "T")`` -> ``questions[2].params.T``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or None


_YAML_TOKENS = {
    "'<stream end>'": "the end of the file",
    "<block end>": "the end of the block",
    "'<block mapping start>'": "a field indented differently",
    "'<block sequence start>'": "a list item indented differently",
    "'<scalar>'": "a value",
    "'<document start>'": "'---'",
}


# what YAML's reader refuses: C0 controls but tab and line ends, DEL, C1 controls but NEL,
# surrogates and the two non-characters U+FFFE/U+FFFF
_UNPRINTABLE_RE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
)


# YAML 1.2 (core schema) numbers and booleans, in place of PyYAML's YAML 1.1 rules, which
# read `010` as 8, `1:30` as 90, `1_000` as 1000, `yes`/`on` as true and `1e3` as text
_INT12 = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT12 = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_BOOL12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_RESOLVED_ELSEWHERE = {_CORE + t for t in ("bool", "int", "float")}


def _yaml12_resolvers() -> dict[str | None, list[tuple[str, re.Pattern[str]]]]:
    """PyYAML's implicit resolvers with YAML 1.2's int, float and bool in place of 1.1's."""
    table: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items():
        kept = [(tag, rx) for tag, rx in rules if tag not in _RESOLVED_ELSEWHERE]
        if kept:
            table[first] = kept
    for tag, rx, firsts in (
        (_CORE + "bool", _BOOL12, "tTfF"),
        (_CORE + "int", _INT12, "-+0123456789"),
        (_CORE + "float", _FLOAT12, "-+.0123456789"),
    ):
        for first in firsts:
            table.setdefault(first, []).append((tag, rx))
    return table


def _construct_int12(loader: Any, node: yaml.ScalarNode) -> int:
    value = loader.construct_scalar(node)
    if value[:2] in ("0o", "0x"):
        return int(value[2:], 8 if value[1] == "o" else 16)
    digits = value.lstrip("+-")
    if len(digits) > 1 and digits.startswith("0"):
        octal = f"octal {int(digits, 8)}, " if not set(digits) & set("89") else ""
        raise ValueError(
            f"expected a number without a leading 0, got {value} (YAML 1.1 "
            f"reads it as {octal or 'text, '}YAML 1.2 as {int(value)}): write "
            f"{int(value)}, 0o… for an octal number, or quote it for text"
        )
    return int(value)


def _construct_float12(loader: Any, node: yaml.ScalarNode) -> float:
    value = loader.construct_scalar(node)
    if value.lstrip("+-").lower() == ".inf":
        return -float("inf") if value.startswith("-") else float("inf")
    if value.lower() == ".nan":
        return float("nan")
    return float(value)


def _constructors12(base: type[yaml.constructor.SafeConstructor]) -> dict[str | None, Any]:
    """``base``'s constructors, with numbers read the YAML 1.2 way."""
    constructors = dict(base.yaml_constructors)
    constructors[_CORE + "int"] = _construct_int12
    constructors[_CORE + "float"] = _construct_float12
    return constructors


class _SafeLoader12(yaml.SafeLoader):
    """PyYAML's safe loader reading numbers and booleans the YAML 1.2 way."""

    yaml_implicit_resolvers = _yaml12_resolvers()
    yaml_constructors = _constructors12(yaml.SafeLoader)


_CSafeLoader12: type[yaml.CSafeLoader] | None = None
if hasattr(yaml, "CSafeLoader"):  # libyaml is optional in PyYAML builds

    class _CLoader12(yaml.CSafeLoader):
        """libyaml's safe loader reading numbers and booleans the YAML 1.2 way."""

        yaml_implicit_resolvers = _yaml12_resolvers()
        yaml_constructors = _constructors12(yaml.CSafeLoader)

    _CSafeLoader12 = _CLoader12


def _tag_text(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


class _Reader:
    """Turn a composed YAML node tree into plain data, recording lines, refusing tags.

    Counting every value visited stops alias bombs ("billion laughs") and depth is capped,
    so a small hostile file cannot make the load hang or blow the stack.
    """

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.lines: dict[tuple[Any, ...], int] = {}
        self.starts: dict[tuple[Any, ...], tuple[int, bool]] = {}
        self.count = 0

    def fail(self, node: yaml.Node, path: tuple[Any, ...], message: str) -> BankError:
        return BankError(message, line=node.start_mark.line + 1, field=path_text(path))

    def key(self, node: yaml.Node, path: tuple[Any, ...]) -> Any:
        """A mapping key: a plain scalar (text or a number), never recorded as a value."""
        if not isinstance(node, yaml.ScalarNode):
            got = "a mapping" if isinstance(node, yaml.MappingNode) else "a list"
            raise self.fail(node, path, f"expected a plain key, got {got}")
        self.check(node, path)
        return self.scalar(node, path)

    def check(self, node: yaml.Node, path: tuple[Any, ...]) -> None:
        """Count the value and refuse tags that are not plain YAML."""
        self.count += 1
        if self.count > MAX_YAML_VALUES:
            raise self.fail(
                node,
                path,
                f"expected at most {MAX_YAML_VALUES} YAML values, got "
                "more (do aliases expand too far?)",
            )
        if node.tag not in SAFE_TAGS:
            what = (
                "a merge key '<<'"
                if node.tag == _CORE + "merge"
                else f"the tag {_tag_text(node.tag)!r}"
            )
            raise self.fail(node, path, f"expected plain YAML values (no tags), got {what}")

    def scalar(self, node: yaml.Node, path: tuple[Any, ...]) -> Any:
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, OverflowError) as exc:
            if str(exc).startswith("expected "):
                raise self.fail(node, path, str(exc)) from None
            raise self.fail(
                node, path, f"expected a valid value, got {describe(node.value)} ({exc})"
            ) from None
        if isinstance(value, str):
            # escapes such as "\e", "\x01" or "\u202e" decode to what the file itself may
            # not hold: every text, once decoded, meets the one rule for user text
            bad = text_problem(value, lines=True)
            if bad:
                raise self.fail(node, path, bad)
        return value

    def read(self, node: yaml.Node, path: tuple[Any, ...], depth: int = 0) -> Any:
        """Plain data for ``node``, recording the line of ``path``."""
        self.check(node, path)
        if depth > MAX_YAML_DEPTH:
            raise self.fail(
                node,
                path,
                f"expected values nested at most {MAX_YAML_DEPTH} levels deep, got deeper",
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.key(key_node, path)
                if key in out:
                    raise self.fail(
                        key_node, path + (key,), f"expected each key once, got {key!r} again"
                    )
                self.lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.read(value_node, path + (key,), depth + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.read(v, path + (i,), depth + 1) for i, v in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)  # a composer makes only these three kinds
        self.starts[path] = (node.start_mark.line + 1, node.style in ("|", ">"))
        return self.scalar(node, path)


# libyaml's composer recurses in C: nesting tens of thousands of levels deep would overflow
# the stack and crash the process, where PyYAML's raises RecursionError (a clear error).
_FAST_MAX_BRACKETS = 1000
_FAST_MAX_LINE = 1000


def _shallow(text: str) -> bool:
    """True when ``text`` cannot nest more than a few thousand levels deep: block nesting
    needs indentation or indicators on one line (so at most a line's length of levels),
    flow nesting one bracket per level."""
    if text.count("[") + text.count("{") > _FAST_MAX_BRACKETS:
        return False
    return max(map(len, text.splitlines()), default=0) <= _FAST_MAX_LINE


def _compose_fast(text: str) -> tuple[Any, yaml.Node | None] | None:
    """The YAML node tree from libyaml (ten times faster than PyYAML's own parser), with
    its loader; None when libyaml is not available or finds a problem, so that PyYAML's
    parser reads the file again and says what is wrong in its usual words."""
    fast = _CSafeLoader12
    # libyaml takes tabs where PyYAML refuses them (such as after "key:"): a file with a tab
    # is read by PyYAML alone, so that every file is accepted or refused as before
    if fast is None or "\t" in text or not _shallow(text):
        return None
    try:
        loader = fast(text)
    except (yaml.YAMLError, ValueError, TypeError):
        return None
    try:
        return loader, loader.get_single_node()
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        loader.dispose()
        return None


def parse_yaml(text: str, file: str) -> Doc:
    """Parse YAML safely (plain values only, no tags), keeping line numbers."""
    bad = _UNPRINTABLE_RE.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise BankError(
            text_problem(bad.group()) or "expected printable text", file=file, line=line
        )
    fast = _compose_fast(text)
    if fast is not None:
        loader: Any = fast[0]
    else:
        try:
            loader = _SafeLoader12(text)
        except yaml.YAMLError as exc:
            raise BankError(f"YAML error: {exc}", file=file) from None
    reader = _Reader(loader)
    try:
        node = fast[1] if fast is not None else loader.get_single_node()
        if node is None:
            raise BankError(
                "expected a mapping with a 'questions' list, got an empty file", file=file
            )
        data = reader.read(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = mark.line + 1 if mark else None
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        for token, words in _YAML_TOKENS.items():
            problem = problem.replace(token, words)
        if "block" in problem or "indent" in problem:
            problem += " (check the indentation)"
        raise BankError(f"YAML syntax error: {problem}", file=file, line=at) from None
    except yaml.YAMLError as exc:
        raise BankError(f"YAML error: {exc}", file=file) from None
    except RecursionError:
        raise BankError(
            f"expected values nested at most {MAX_YAML_DEPTH} levels deep, got deeper", file=file
        ) from None
    except BankError as exc:
        exc.file = file
        raise
    finally:
        loader.dispose()
    return Doc(data, reader.lines, file, reader.starts)
