"""Load question banks: safe YAML with line numbers, validated into QuestionSpecs.

No randomness here. Every problem is reported as a BankError naming file, line and field,
for example ``banks/x.yaml:14: questions[2].params.T: expected an integer from 2 to 4, got 12``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from worksheetgen.errors import BankError, describe, did_you_mean
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.families.common import param_values
from worksheetgen.inputs import read_limited
from worksheetgen.model import Bank, BankFile, Location, QuestionSpec, SheetInfo
from worksheetgen.render.documents import check_prompt_template, sheet_instructions
from worksheetgen.resources import data_dir
from worksheetgen.solve.draw import sample_contexts
from worksheetgen.textrules import problem as text_problem

MAX_BANK_BYTES = 2_000_000
MAX_QUESTIONS = 200
MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 40
_CORE = "tag:yaml.org,2002:"
SAFE_TAGS = frozenset(
    _CORE + t for t in ("null", "bool", "int", "float", "str", "seq", "map", "timestamp")
)
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: no newline after it

QUESTION_FIELDS = ("id", "family", "points", "decimals", "params", "prompt", "format", "title")
SHEET_FIELDS = ("id", "title", "course", "instructions", "decimals")
TOP_FIELDS = ("sheet", "questions")


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


def read_bank_bytes(path: Path, shown: str) -> bytes:
    """A bank file's bytes: a regular file of at most MAX_BANK_BYTES, never read past that
    (``--bank /dev/zero`` is refused from what it is, not read until memory runs out)."""
    return read_limited(path, MAX_BANK_BYTES, what="a bank", error=BankError, shown=shown)


def read_text(path: Path, shown: str) -> str:
    """Read a bank file as UTF-8 text, refusing binary or huge files with a clear error."""
    raw = read_bank_bytes(path, shown)
    if b"\x00" in raw:
        raise BankError("expected a UTF-8 YAML text file, got a binary file", file=shown)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BankError(
            f"expected UTF-8 text (save the file as UTF-8), got the byte 0x{raw[exc.start]:02x}",
            file=shown,
            line=line,
        ) from None


def _folder_banks(folder: Path, shown: str) -> list[Path]:
    """The *.yaml / *.yml banks of a folder, sorted. A link is followed only when it stays
    inside the folder: a link that leads out of it (to a system file, say), a link to
    nothing and a bank that is not a regular file are errors, never skipped in silence (a
    folder would otherwise build without that bank's questions)."""
    inside = folder.resolve()
    found = []
    for x in sorted(folder.iterdir()):
        if x.suffix not in (".yaml", ".yml"):
            continue
        if x.is_symlink():
            target = x.resolve()
            if not target.exists():
                raise BankError(
                    "expected a bank, got a link to nothing (a dangling symlink)", file=str(x)
                )
            if not target.is_relative_to(inside):
                raise BankError(
                    "expected a bank inside the folder, got a link that leads out "
                    "of it (give that file as --bank itself if it is meant)",
                    file=str(x),
                )
        if x.is_dir():
            continue  # a folder named like a bank is not one (folders are not searched)
        if not x.is_file():
            raise BankError("expected a bank, got a special file (not a regular file)", file=str(x))
        found.append(x)
    return found


def bank_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand bank arguments (files or folders of *.yaml / *.yml) into files, in order."""
    out: list[Path] = []
    seen: dict[Path, str] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = _folder_banks(p, str(raw))
            if not found:
                raise BankError("expected a folder with *.yaml banks, got none", file=str(raw))
        elif p.is_file():
            found = [p]
        elif p.exists():
            raise BankError(
                "expected a YAML file or a folder of banks, got a special file", file=str(raw)
            )
        else:
            raise BankError(
                "expected a YAML file or a folder of banks, got no such file or folder",
                file=str(raw),
            )
        for f in found:
            key = f.resolve()
            if key in seen:
                raise BankError(
                    f"expected each bank once, got it again (first as {seen[key]})", file=str(f)
                )
            seen[key] = str(f)
            out.append(f)
    return out


def _check_fields(doc: Doc, mapping: dict, path: tuple, allowed: Iterable[str]) -> None:
    allowed = tuple(allowed)
    for key in mapping:
        if key not in allowed:
            raise doc.error(
                path + (key,),
                f"unknown field{did_you_mean(str(key), allowed)}; expected one of: "
                + ", ".join(allowed),
            )


def _int_field(doc: Doc, value: Any, path: tuple, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise doc.error(path, f"expected an integer from {lo} to {hi}, got {describe(value)}")
    return value


def _text_field(doc: Doc, value: Any, path: tuple, max_len: int = 4000) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise doc.error(path, f"expected text, got {describe(value)}")
    text = str(value)
    if len(text) > max_len:
        raise doc.error(path, f"expected at most {max_len} characters, got {len(text)}")
    return text


def slugify(text: str) -> str:
    """A file-name-safe slug: lowercase letters, digits and single hyphens."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].strip("-") or "worksheet"


def _sheet_info(doc: Doc) -> dict[str, Any]:
    sheet = doc.data.get("sheet")
    if sheet is None:
        return {}
    if not isinstance(sheet, dict):
        raise doc.error(("sheet",), f"expected a mapping, got {describe(sheet)}")
    _check_fields(doc, sheet, ("sheet",), SHEET_FIELDS)
    info: dict[str, Any] = {}
    for key in ("title", "course", "instructions"):
        if key in sheet:
            info[key] = _text_field(doc, sheet[key], ("sheet", key))
    if "{" in info.get("instructions", ""):
        text = info["instructions"]
        line = doc.text_line(("sheet", "instructions"))
        for decimals in range(7):  # any --decimals renders, so the build cannot fail on it
            sheet_instructions(text, decimals, file=doc.file, line=line)
        info["instructions_template"] = text
    if "id" in sheet:
        sid = _text_field(doc, sheet["id"], ("sheet", "id"), 60)
        if not ID_RE.match(sid):
            raise doc.error(
                ("sheet", "id"), f"expected letters, digits, '-', '_' or '.', got {describe(sid)}"
            )
        info["slug"] = sid
    if "decimals" in sheet:
        info["decimals"] = _int_field(doc, sheet["decimals"], ("sheet", "decimals"), 0, 6)
    return info


def _question(doc: Doc, raw: Any, index: int, sheet_decimals: int) -> QuestionSpec:

    path: tuple[Any, ...] = ("questions", index)
    if not isinstance(raw, dict):
        raise doc.error(path, f"expected a mapping with id and family, got {describe(raw)}")
    _check_fields(doc, raw, path, QUESTION_FIELDS)
    for required, what in (("id", "a question id"), ("family", "a family name")):
        if required not in raw:
            raise doc.error(path + (required,), f"expected {what} (required), got nothing")
    qid = raw["id"]
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not ID_RE.match(str(qid)):
        raise doc.error(
            path + ("id",),
            f"expected an id of letters, digits, '-', '_' or '.' (at most 64), got {describe(qid)}",
        )
    fam_name = raw["family"]
    if not isinstance(fam_name, str) or fam_name not in FAMILIES:
        hint = did_you_mean(str(fam_name), FAMILIES) if isinstance(fam_name, str) else ""
        raise doc.error(
            path + ("family",),
            f"unknown family {describe(fam_name)}{hint}; "
            "expected one of: " + ", ".join(sorted(FAMILIES)),
        )
    family = get_family(fam_name)
    points_raw = raw.get("points", 1)
    if (
        isinstance(points_raw, bool)
        or not isinstance(points_raw, int | float)
        or not 0 < points_raw <= 1000
    ):
        raise doc.error(
            path + ("points",), f"expected a number of points above 0, got {describe(points_raw)}"
        )
    decimals = sheet_decimals
    if "decimals" in raw:
        decimals = _int_field(doc, raw["decimals"], path + ("decimals",), 0, 6)
    prompt = None
    if "prompt" in raw:
        prompt = _text_field(doc, raw["prompt"], path + ("prompt",))
    title = _text_field(doc, raw["title"], path + ("title",), 200) if "title" in raw else None
    fmt = raw.get("format", "open")
    if fmt not in ("open", "choice"):
        raise doc.error(path + ("format",), f"expected 'open' or 'choice', got {describe(fmt)}")
    if fmt == "choice" and not family.supports_choice:
        raise doc.error(
            path + ("format",), f"family '{fam_name}' has no multiple-choice form; expected 'open'"
        )
    params_raw = raw.get("params", {})
    if params_raw is None:
        params_raw = {}
    if not isinstance(params_raw, dict):
        raise doc.error(path + ("params",), f"expected a mapping, got {describe(params_raw)}")
    params = family.validate(params_raw, doc, path + ("params",))
    needs = family.choice_needs
    if fmt == "choice" and needs:
        # one of them always true: a draw without it would have no distractors
        if not any(param_values(params[n]) == [True] for n in needs):
            written = [n for n in needs if n in params_raw]
            wanted = " or ".join(f"{n}: true" for n in needs)
            got = ", ".join(
                f"{n}: " + " or ".join(str(v).lower() for v in param_values(params[n]))
                for n in needs
            )
            raise doc.error(
                path + ("params", written[0]) if written else path + ("format",),
                f"expected {wanted} for multiple choice (only then do the slips "
                f"that make its distractors show), got {got}"
                + ("" if written else " (the default)" if len(needs) == 1 else " (the defaults)"),
            )
    param_lines = {str(k): doc.line(path + ("params", k)) or 0 for k in params_raw}
    spec = QuestionSpec(
        id=str(qid),
        family=fam_name,
        points=float(points_raw) if isinstance(points_raw, float) else int(points_raw),
        decimals=decimals,
        params=params,
        prompt=prompt,
        format=fmt,
        title=title,
        location=Location(doc.file, doc.line(path)),
        param_lines=param_lines,
        prompt_line=doc.text_line(path + ("prompt",)) if prompt is not None else None,
    )
    if prompt is not None:
        check_prompt_template(
            prompt,
            doc.file,
            doc.text_line(path + ("prompt",)),
            path_text(path + ("prompt",)) or "prompt",
            family,
            sample_contexts(family, params, str(qid)),
        )
    return spec


def load_doc(path: Path, shown: str) -> Doc:
    """Read and parse one bank file, checking its top-level shape."""
    doc = parse_yaml(read_text(path, shown), shown)
    # a file that is not a bank at all (a mistyped path, a link to a system file) is named,
    # never quoted: its content may be anything
    if not isinstance(doc.data, dict):
        raise doc.error(
            (), "expected a mapping with a 'questions' list, got " + _not_a_bank(doc.data)
        )
    if not any(k in TOP_FIELDS or did_you_mean(str(k), TOP_FIELDS) for k in doc.data):
        raise doc.error(
            (), "expected a mapping with a 'questions' list, got " + _not_a_bank(doc.data)
        )
    _check_fields(doc, doc.data, (), TOP_FIELDS)
    if "questions" not in doc.data:
        raise doc.error(("questions",), "expected a list of questions (required), got nothing")
    qs = doc.data["questions"]
    if not isinstance(qs, list) or not qs:
        raise doc.error(("questions",), f"expected a non-empty list, got {describe(qs)}")
    if len(qs) > MAX_QUESTIONS:
        raise doc.error(
            ("questions",), f"expected at most {MAX_QUESTIONS} questions, got {len(qs)}"
        )
    return doc


def _not_a_bank(data: Any) -> str:
    """What a file that is no bank holds, in words that quote none of it."""
    if isinstance(data, dict):
        return f"a mapping of {len(data)} other field(s)" if data else "an empty mapping"
    if isinstance(data, list):
        return f"a list of {len(data)}" if data else "an empty list"
    if isinstance(data, str):
        return f"a text of {len(data)} characters (is this a bank file?)"
    return "a single value" if data is not None else "nothing"


def load_banks(paths: Iterable[str | Path]) -> Bank:
    """Load and validate bank files (or folders) into one Bank, in the order given."""
    files = bank_files(paths)
    info: dict[str, Any] = {}
    specs: list[QuestionSpec] = []
    seen: dict[str, Location] = {}
    bank_records: list[BankFile] = []
    for f in files:
        shown = display_path(f)
        doc = load_doc(f, shown)
        bank_records.append(BankFile(shown, hashlib.sha256(read_bank_bytes(f, shown)).hexdigest()))
        file_info = _sheet_info(doc)
        for k, v in file_info.items():
            info.setdefault(k, v)
        decimals = file_info.get("decimals", info.get("decimals", 2))
        for i, raw in enumerate(doc.data["questions"]):
            spec = _question(doc, raw, i, decimals)
            if spec.id in seen:
                first = seen[spec.id]
                raise doc.error(
                    ("questions", i, "id"),
                    f"expected a unique id, got {spec.id!r} again "
                    f"(first at {first.file}:{first.line})",
                )
            seen[spec.id] = spec.location
            specs.append(spec)
    if len(specs) > MAX_QUESTIONS:
        raise BankError(
            f"expected at most {MAX_QUESTIONS} questions in one sheet (all banks "
            f"together), got {len(specs)}",
            file=display_path(files[-1]),
        )
    title = info.get("title", "Self-Attention Worksheet")
    sheet = SheetInfo(
        slug=info.get("slug", slugify(title)),
        title=title,
        course=info.get("course", ""),
        instructions=info.get("instructions", ""),
        decimals=info.get("decimals", 2),
        instructions_template=info.get("instructions_template", ""),
    )
    if sheet.instructions_template:
        sheet = with_decimals(sheet, sheet.decimals)
    return Bank(sheet, tuple(specs), tuple(bank_records))


def with_decimals(info: SheetInfo, decimals: int) -> SheetInfo:
    """The sheet header for answers rounded to ``decimals``: instructions that say how many
    places are written again for them."""

    instructions = info.instructions
    if info.instructions_template:
        instructions = sheet_instructions(info.instructions_template, decimals)
    return replace(info, decimals=decimals, instructions=instructions)


def display_path(path: Path) -> str:
    """A path as the user would write it: relative to the working folder where possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def default_bank_path() -> Path:
    """The bundled default bank (the worksheet ``build --seed 42`` makes)."""

    return data_dir("banks") / "default.yaml"
