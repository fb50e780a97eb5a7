"""Read a file a person names (a roster, a responses CSV, a key.json) within its size limit.

Every such input goes through ``read_limited``: only a regular file is read (a device such as
``/dev/zero``, a FIFO, a socket or a folder is refused by its kind before a byte is read), a
file larger than its limit is refused from its size, and never more than limit + 1 bytes are
read (a file that grows while it is read is refused too). ``load_json`` parses JSON within a
nesting bound, with every number one a float can hold (no NaN, Infinity, 1e999 or integers of
hundreds of digits), and refuses strings that are not text (a lone surrogate such as
``"\\ud800"``), naming the field.

Errors are the caller's own ``WorksheetgenError`` class, so each command keeps its wording.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from typing import Any

from worksheetgen.errors import WorksheetgenError, file_kind, keep_secret, shorten
from worksheetgen.textrules import problem as text_problem
from worksheetgen.textrules import refused

#: how deep a JSON document may nest (a key.json nests about ten levels; bank values that
#: reach it are bounded by the bank's 40)
MAX_JSON_DEPTH = 64

_CHUNK = 1 << 20

#: the files the course secret was read from, by (device, inode): no other reader reads them
_SECRET_FILES: set[tuple[int, int]] = set()
#: a private file (mode 0600) of one word of this many bytes looks like a secret file
_SECRET_SHAPE = (16, 4096)


def forget_secret_file() -> None:
    """A new command starts: the secret file read by the one before is no longer refused
    (``read_limited`` with ``secret`` names the current one)."""
    _SECRET_FILES.clear()


def _private(mode: int) -> bool:
    """Readable by its owner only: the secret file's mode (never so on Windows)."""
    return os.name == "posix" and not mode & 0o077


def _looks_secret(data: bytes) -> bool:
    """One line of one word, of a secret's length (``init`` writes 64 hex digits)."""
    word = data.strip()
    return _SECRET_SHAPE[0] <= len(word) <= _SECRET_SHAPE[1] and len(word.split()) == 1


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    return None if stat.S_ISREG(mode) else file_kind(mode)


def read_limited(
    path: str | os.PathLike[str],
    limit: int,
    *,
    what: str,
    error: type[WorksheetgenError],
    field: str | None = None,
    shown: str | None = None,
    check: Callable[[os.stat_result], str | None] | None = None,
    secret: bool = False,
    head: int | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; with ``head``,
    only its first ``head`` bytes (its kind and size are checked all the same: a file
    read later a piece at a time, such as a scan of many pages).

    ``what`` names the expected file in messages ("a CSV file"); every problem is one
    ``error`` naming the file (as ``shown``, by default the path): missing, not a regular
    file, larger than ``limit``, unreadable. ``check`` sees the opened file's ``fstat``
    before a byte is read and returns a problem to refuse it with (or None).

    Secrets stay secret: the course secret's file (read with ``secret``) is refused by every
    other reader before a byte is read, and a private file (mode 0600) that holds one word
    of a secret's length is kept as a secret (``errors.keep_secret``): no error shows it.
    """
    shown = str(path) if shown is None else shown

    def fail(message: str) -> WorksheetgenError:
        return error(message, file=shown, field=field)

    def refuse_kind(mode: int) -> None:
        kind = _kind_of(mode)
        if kind is not None:
            raise fail(f"expected {what}, got {kind}")

    def refuse_size(size: int) -> None:
        if size > limit:
            raise fail(f"expected {what} of at most {limit} bytes, got {size}")

    try:
        before = os.stat(path)  # a device is refused before it is opened
        refuse_kind(before.st_mode)
        refuse_size(before.st_size)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise fail(f"expected {what}, got no such file") from None
    except IsADirectoryError:
        raise fail(f"expected {what}, got a folder") from None
    except OSError as exc:
        raise fail(f"expected a readable file, got {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)  # what was opened (the path may have been swapped since)
        refuse_kind(st.st_mode)
        refuse_size(st.st_size)
        if not secret and (st.st_dev, st.st_ino) in _SECRET_FILES:
            raise fail(f"expected {what}, got the course secret's file (not read, never shown)")
        problem = None if check is None else check(st)
        if problem is not None:
            raise fail(problem)
        chunks: list[bytes] = []
        total = 0
        while head is None or total < head:
            want = min(_CHUNK, limit + 1 - total)
            chunk = os.read(fd, want if head is None else min(want, head - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise fail(f"expected {what} of at most {limit} bytes, got more while reading it")
        data = b"".join(chunks)
        whole = head is None or total < head or total >= st.st_size  # read to its end
        if secret:
            _SECRET_FILES.clear()
            _SECRET_FILES.add((st.st_dev, st.st_ino))
        private = not secret and _private(st.st_mode)
        if private and whole and total <= 8192 and _looks_secret(data):
            keep_secret(data.strip())
        return data
    except OSError as exc:
        raise fail(f"expected a readable file, got {exc.strerror or exc}") from None
    finally:
        os.close(fd)


class _BadNumber:
    """Stands in for a number JSON's grammar allows but no float holds, until the value's
    field is found for the message."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


#: the most digits an integer may have: every such integer converts to a float
_MAX_INT_DIGITS = 308


class _Numbers:
    """``json.loads`` hooks that turn a number no float holds, and the value of a key an
    object holds twice (which ``json`` would let the later one win silently), into a
    ``_BadNumber``."""

    def __init__(self) -> None:
        self.bad = False

    def constant(self, name: str) -> Any:
        self.bad = True
        return _BadNumber(f"expected finite numbers, got {name} (JSON has no NaN or Infinity)")

    def integer(self, text: str) -> Any:
        digits = len(text.lstrip("-"))
        if digits > _MAX_INT_DIGITS:
            self.bad = True
            return _BadNumber(
                f"expected numbers a float can hold, got an integer of {digits} digits"
            )
        return int(text)

    def pairs(self, items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):  # a key twice: the one it names is refused
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    self.bad = True
                    out[key] = _BadNumber("expected each key of an object once, got it twice")
                    break
                seen.add(key)
        return out

    def decimal(self, text: str) -> Any:
        x = float(text)
        if not math.isfinite(x):
            self.bad = True
            return _BadNumber(
                f"expected finite numbers, got {shorten(text, 20)} (too large for a float)"
            )
        return x


_SUSPECT = re.compile(r"[^\x00-\x7e]+|\\u")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _path_text(path: tuple[Any, ...] | None) -> str:
    """'sheets[0].questions[2].title' from the linked (parent, key) path of a value."""
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    out = ""
    for key in reversed(keys):
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            shown = key if key.isidentifier() else ascii(key)
            out += f".{shown}" if out else shown
    return shorten(out, 80) or "(top)"


def _deeper_than(data: Any, max_depth: int) -> bool:
    """True when a list or object nests more than ``max_depth`` levels (level by level, no
    recursion: the fast test, without paths)."""
    level = [data] if isinstance(data, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        below: list[Any] = []
        for value in level:
            children = value.values() if isinstance(value, dict) else value
            below.extend(v for v in children if isinstance(v, dict | list))
        level = below
    return False


def _walk(data: Any) -> Any:
    """Every value with its depth and linked path, depth first (for the slower checks)."""
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(data, 1, None)]
    while stack:
        value, depth, path = stack.pop()
        yield value, depth, path
        if isinstance(value, dict):
            stack.extend((v, depth + 1, (path, k)) for k, v in value.items())
            stack.extend((k, depth + 1, path) for k in value)  # keys are checked as text too
        elif isinstance(value, list):
            stack.extend((v, depth + 1, (path, i)) for i, v in enumerate(value))


def check_json_tree(
    data: Any,
    shown: str,
    error: type[WorksheetgenError],
    max_depth: int = MAX_JSON_DEPTH,
    strings: bool = True,
    numbers: bool = False,
) -> None:
    """Refuse a parsed JSON value nested deeper than ``max_depth``, (with ``strings``) holding
    a string that is not text (a lone surrogate cannot be written as UTF-8) or (with
    ``numbers``) a number ``load_json`` found no float holds; each names its field."""
    deep = _deeper_than(data, max_depth)
    if not (deep or strings or numbers):
        return
    for value, depth, path in _walk(data):
        if deep and depth > max_depth:
            raise error(
                f"expected JSON nested at most {max_depth} levels deep, got deeper",
                file=shown,
                field=_path_text(path),
            )
        if numbers and isinstance(value, _BadNumber):
            raise error(value.problem, file=shown, field=_path_text(path))
        if strings and isinstance(value, str) and not (value.isascii() and value.isprintable()):
            bad = _SURROGATE.search(value)
            if bad is not None:
                raise error(
                    f"expected text, got a lone surrogate U+{ord(bad.group()):04X} "
                    "(a \\u escape of half a character)",
                    file=shown,
                    field=_path_text(path),
                )
            # the same rule as for bank text: no control or invisible formatting characters
            # (an ESC or a bidi override would reach the exports and the terminal)
            problem = text_problem(value, lines=True)
            if problem is not None:
                raise error(problem, file=shown, field=_path_text(path))


def utf8_text(data: bytes, shown: str, error: type[WorksheetgenError], bom: bool = True) -> str:
    """UTF-8 bytes as text (a leading BOM dropped when ``bom``), or one ``error`` naming the
    file, the line and the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"expected UTF-8 text, got the byte 0x{data[exc.start]:02X}", file=shown, line=line
        ) from None


def load_json(
    data: bytes,
    shown: str,
    error: type[WorksheetgenError],
    max_depth: int = MAX_JSON_DEPTH,
    shape: Callable[[Any], None] | None = None,
) -> Any:
    """Parse UTF-8 JSON bytes (a BOM is allowed) within the bounds above; one ``error``
    naming the file (and the line or the field) for anything else. ``shape`` sees the parsed
    value first, before the walks over every value, to refuse a document too large for its
    kind at once (it must look only near the top: the value may nest deeper than allowed)."""
    text = utf8_text(data, shown, error)
    try:
        numbers = _Numbers()
        value = json.loads(
            text,
            parse_constant=numbers.constant,
            object_pairs_hook=numbers.pairs,
            parse_int=numbers.integer,
            parse_float=numbers.decimal,
        )
    except json.JSONDecodeError as exc:
        raise error(f"expected JSON, got {exc.msg}", file=shown, line=exc.lineno) from None
    except RecursionError:
        raise error(
            f"expected JSON nested at most {max_depth} levels deep, got far deeper", file=shown
        ) from None
    if shape is not None:
        shape(value)
    # walk the strings only when the text may hold one the text rule refuses: a \u escape
    # (a lone surrogate or a control character can only be written so) or a raw character
    # outside printable ASCII that the rule refuses (DEL, C1 controls, bidi overrides ...)
    strings = any(
        m.group() == "\\u" or any(refused(c) for c in m.group()) for m in _SUSPECT.finditer(text)
    )
    check_json_tree(value, shown, error, max_depth, strings=strings, numbers=numbers.bad)
    return value
