"""Cut page ranges out of a PDF into separate PDFs (the per-student files of a class build).

The whole class is compiled as one TeX run; this module then copies each student's pages,
with every object they use (content, resources, fonts), into a small PDF of its own. It reads
PDFs whose objects are all top-level (a classic cross-reference table, no object streams):
the compile step asks TeX for exactly that (``objcompresslevel=0``). Page streams are copied
byte for byte; only dictionaries are rewritten (renumbered references, a new page tree).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from worksheetgen.errors import CompileError

_INHERITED = (b"Resources", b"MediaBox", b"CropBox", b"Rotate")
# whitespace or a comment (which runs to the end of its line, so no token is found inside
# one); a regular character (neither whitespace nor a delimiter)
_SKIPPED = rb"(?:[\x00\t\n\x0c\r ]|%[^\r\n]*(?![^\r\n]))"
_REG = rb"[^\x00\t\n\x0c\r ()<>\[\]{}/%]"
_SKIP = re.compile(_SKIPPED + rb"*")
# the next token after whitespace and comments; the group that matched is its kind ("num gen
# R" is one token)
_TOKEN = re.compile(
    _SKIPPED
    + rb"*(?:(<<)|(>>)|(\[)|(\])|/("
    + _REG
    + rb"*)|([0-9]+)"
    + _SKIPPED
    + rb"+([0-9]+)"
    + _SKIPPED
    + rb"+R(?!"
    + _REG
    + rb")|(\()"
    rb"|(<[^>]*>)|(" + _REG + rb"+))"
)
_OPEN_DICT, _CLOSE_DICT, _OPEN_ARRAY, _CLOSE_ARRAY, _NAME, _NUM, _REF, _STRING, _HEX, _WORD = range(
    1, 11
)
# an array of plain numbers, whitespace between them (no NUL: bytes.split keeps it)
_NUMBER_ARRAY = re.compile(
    rb"\[[\t\n\x0c\r ]*((?:[-+]?[0-9.]+(?:[\t\n\x0c\r ]+[-+]?[0-9.]+)*)?)"
    rb"[\t\n\x0c\r ]*\]"
)


class PdfFormatError(CompileError):
    """A PDF this module cannot take apart."""


@dataclass(frozen=True)
class Ref:
    """An indirect reference ``num gen R``."""

    num: int
    gen: int = 0


@dataclass(frozen=True)
class Name:
    """A PDF name such as ``/Type`` (raw bytes, without the slash)."""

    raw: bytes


@dataclass(frozen=True)
class Raw:
    """A number, string, boolean or null, kept as the bytes it was written as."""

    raw: bytes


@dataclass
class Obj:
    """A parsed object: its value, and the raw data of its stream if it has one."""

    value: Any
    stream: bytes | memoryview | None = None  # a view into the PDF's data, not a copy


class _Parser:
    """A small reader of PDF values (dictionaries, arrays, names, references, atoms)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def skip(self, i: int) -> int:
        """The index of the next token at or after ``i`` (past whitespace and comments)."""
        return _SKIP.match(self.data, i).end()  # type: ignore[union-attr]  # matches always

    def value(self, i: int) -> tuple[Any, int]:
        """The value starting at ``i`` (after whitespace) and the index after it."""
        d = self.data
        # the dictionaries and arrays being read, innermost last, each with the key whose
        # value comes next (None: a key comes next, or the container is an array)
        open_: list[list[Any]] = []
        while True:
            m = _TOKEN.match(d, i)
            kind = None if m is None else m.lastindex
            if m is None or kind is None:
                at = self.skip(i)
                raise PdfFormatError(f"unexpected byte {d[at : at + 1]!r} in PDF at {at}")
            i = m.end()
            value: Any
            if kind == _NAME:
                value = Name(m.group(_NAME))
            elif kind == _WORD:
                value = Raw(m.group(_WORD))
            elif kind == _REF:
                value = Ref(int(m.group(_NUM)), int(m.group(_REF)))
            elif kind == _OPEN_DICT:
                open_.append([{}, None])
                continue
            elif kind == _OPEN_ARRAY:
                plain = _NUMBER_ARRAY.match(d, m.start(_OPEN_ARRAY))
                if not plain:
                    open_.append([[], None])
                    continue
                # only numbers (such as a font's widths): one step, the same values
                value, i = [Raw(w) for w in plain.group(1).split()], plain.end()
            elif kind == _STRING:
                value, i = self._string(m.start(_STRING))
            elif kind == _HEX:
                value = Raw(m.group(_HEX))
            else:  # the end of a dictionary or an array
                closes = dict if kind == _CLOSE_DICT else list
                if not open_ or type(open_[-1][0]) is not closes or open_[-1][1] is not None:
                    at = m.start(kind)
                    raise PdfFormatError(f"unexpected byte {d[at : at + 1]!r} in PDF at {at}")
                value = open_.pop()[0]
            if not open_:
                return value, i
            inner = open_[-1]
            if type(inner[0]) is list:
                inner[0].append(value)
            elif inner[1] is None:
                if not isinstance(value, Name):
                    raise PdfFormatError(f"PDF dictionary key expected at byte {i}")
                inner[1] = value.raw
            else:
                inner[0][inner[1]] = value
                inner[1] = None

    def _string(self, i: int) -> tuple[Raw, int]:
        d = self.data
        depth, j = 0, i
        while True:
            c = d[j]
            if c == 0x5C:  # backslash escapes the next byte
                j += 2
                continue
            if c == 0x28:
                depth += 1
            elif c == 0x29:
                depth -= 1
                if depth == 0:
                    return Raw(d[i : j + 1]), j + 1
            j += 1


class PdfReader:
    """The objects of a PDF with a classic cross-reference table."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.view = memoryview(data)
        self.parser = _Parser(data)
        self.offsets: dict[int, int] = {}
        self.cache: dict[int, Obj] = {}
        self.templates: dict[tuple[int, bool], tuple[list[bytes | int], list[int]]] = {}
        self.trailer = self._read_xref()

    def _read_xref(self) -> dict[bytes, Any]:
        d = self.data
        at = d.rfind(b"startxref")
        if at < 0:
            raise PdfFormatError("not a PDF: no startxref")
        m = re.match(rb"startxref\s+(\d+)", d[at : at + 40])
        if not m:
            raise PdfFormatError("not a PDF: unreadable startxref")
        i = int(m.group(1))
        if not d.startswith(b"xref", i):
            raise PdfFormatError(
                "the PDF uses a cross-reference stream; compile it with "
                "objcompresslevel=0 so its pages can be cut out"
            )
        i += 4
        while True:
            i = self.parser.skip(i)
            if d.startswith(b"trailer", i):
                break
            m = re.compile(rb"(\d+)\s+(\d+)").match(d, i)
            if not m:
                raise PdfFormatError("unreadable cross-reference table")
            first, count = int(m.group(1)), int(m.group(2))
            i = m.end()
            for k in range(count):
                i = self.parser.skip(i)
                entry = d[i : i + 18].split()
                if len(entry) != 3:
                    raise PdfFormatError("unreadable cross-reference entry")
                if entry[2] == b"n":
                    self.offsets[first + k] = int(entry[0])
                i += 18
        trailer, _ = self.parser.value(i + len(b"trailer"))
        if b"Prev" in trailer:
            raise PdfFormatError("incrementally updated PDFs are not supported")
        return trailer

    def get(self, num: int) -> Obj:
        """Object ``num``, parsed once."""
        if num in self.cache:
            return self.cache[num]
        if num not in self.offsets:
            obj = Obj(Raw(b"null"))
        else:
            d = self.data
            m = re.compile(rb"\d+\s+\d+\s+obj").match(d, self.offsets[num])
            if not m:
                raise PdfFormatError(f"object {num} is not where the table says")
            value, i = self.parser.value(m.end())
            stream = None
            j = self.parser.skip(i)
            if d.startswith(b"stream", j):
                j += 6
                if d.startswith(b"\r\n", j):
                    j += 2
                elif d.startswith(b"\n", j) or d.startswith(b"\r", j):
                    j += 1
                length = self.resolve(value.get(b"Length"))
                if not isinstance(length, Raw) or not length.raw.isdigit():
                    raise PdfFormatError(f"object {num} has a stream without a length")
                stream = self.view[j : j + int(length.raw)]
            obj = Obj(value, stream)
        self.cache[num] = obj
        return obj

    def template(
        self, num: int, stream_length: bool = False
    ) -> tuple[list[bytes | int], list[int]]:
        """Object ``num`` as written, in pieces (see :func:`_template`), made once; with
        ``stream_length`` a stream's /Length is its real length, not a reference."""
        key = (num, stream_length)
        found = self.templates.get(key)
        if found is None:
            obj = self.get(num)
            value = obj.value
            if stream_length and obj.stream is not None and isinstance(value, dict):
                value = dict(value)
                value[b"Length"] = Raw(b"%d" % len(obj.stream))
            found = self.templates[key] = _template(value)
        return found

    def resolve(self, value: Any) -> Any:
        """Follow a reference to its value."""
        while isinstance(value, Ref):
            value = self.get(value.num).value
        return value

    def pages(self) -> list[tuple[int, dict[bytes, Any]]]:
        """Every page in order: its object number and its dictionary with inherited keys."""
        root = self.resolve(self.trailer.get(b"Root"))
        top = root.get(b"Pages") if isinstance(root, dict) else None
        if not isinstance(top, Ref):
            raise PdfFormatError("the PDF has no page tree")
        out: list[tuple[int, dict[bytes, Any]]] = []
        self._walk(top.num, {}, out, set())
        return out

    def _walk(
        self,
        num: int,
        inherited: dict[bytes, Any],
        out: list[tuple[int, dict[bytes, Any]]],
        seen: set[int],
    ) -> None:
        if num in seen:
            raise PdfFormatError("the page tree has a cycle")
        seen.add(num)
        node = self.get(num).value
        if not isinstance(node, dict):
            raise PdfFormatError(f"page tree node {num} is not a dictionary")
        here = dict(inherited)
        here.update({k: node[k] for k in _INHERITED if k in node})
        kind = node.get(b"Type")
        if kind == Name(b"Pages"):
            for kid in self.resolve(node.get(b"Kids", [])):
                if isinstance(kid, Ref):
                    self._walk(kid.num, here, out, seen)
        else:
            page = dict(node)
            for k in _INHERITED:
                if k not in page and k in here:
                    page[k] = here[k]
            out.append((num, page))


def _pieces(value: Any, out: list[bytes | int]) -> None:
    """The value as written, in pieces: bytes, and the number of each object it refers to
    (the one part that changes from one cut-out PDF to the next)."""
    if isinstance(value, dict):
        out.append(b"<<")
        for k, v in value.items():
            out.append(b"/" + k + b" ")
            _pieces(v, out)
            out.append(b"\n")
        out.append(b">>")
    elif isinstance(value, list):
        out.append(b"[")
        for i, v in enumerate(value):
            if i:
                out.append(b" ")
            _pieces(v, out)
        out.append(b"]")
    elif isinstance(value, Ref):
        out.append(value.num)
    elif isinstance(value, Name):
        out.append(b"/" + value.raw)
    else:
        out.append(value.raw)


def _template(value: Any) -> tuple[list[bytes | int], list[int]]:
    """The pieces of a value with neighbouring bytes joined, and the objects it refers to."""
    pieces: list[bytes | int] = []
    _pieces(value, pieces)
    joined: list[bytes | int] = []
    run: list[bytes] = []
    for p in pieces:
        if isinstance(p, bytes):
            run.append(p)
        else:
            if run:
                joined.append(b"".join(run))
                run = []
            joined.append(p)
    if run:
        joined.append(b"".join(run))
    return joined, [p for p in joined if isinstance(p, int)]


def _written(template: list[bytes | int], renumber: dict[int, int]) -> bytes:
    """A value's pieces with its references renumbered (null for an object left out)."""
    out = []
    for p in template:
        if isinstance(p, bytes):
            out.append(p)
        else:
            new = renumber.get(p)
            out.append(b"null" if new is None else b"%d 0 R" % new)
    return b"".join(out)


def _is_page_node(value: Any) -> bool:
    return isinstance(value, dict) and value.get(b"Type") in (Name(b"Page"), Name(b"Pages"))


def extract(reader: PdfReader, pages: Sequence[tuple[int, dict[bytes, Any]]]) -> bytes:
    """A new PDF with just ``pages`` (from ``reader.pages()``) and everything they use."""
    chosen = {num for num, _ in pages}
    renumber: dict[int, int] = {num: i + 3 for i, (num, _) in enumerate(pages)}
    order: list[int] = [num for num, _ in pages]
    bodies: dict[int, Any] = {}
    for num, page in pages:
        page = {k: v for k, v in page.items() if k != b"Parent"}
        page[b"Parent"] = Ref(-2)
        bodies[num] = page
    templates = {num: _template(body) for num, body in bodies.items()}
    queue = list(order)
    while queue:
        num = queue.pop(0)
        found = (templates[num] if num in templates else reader.template(num))[1]
        for ref in found:
            if ref in renumber or ref < 0:
                continue
            target = reader.get(ref)
            if _is_page_node(target.value) and ref not in chosen:
                continue  # a link to another student's page: dropped (serialized as null)
            renumber[ref] = len(renumber) + 3
            order.append(ref)
            queue.append(ref)
    renumber[-2] = 2
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []

    def emit(number: int, body: bytes, stream: bytes | memoryview | None = None) -> None:
        offsets.append(len(out))
        out.extend(b"%d 0 obj\n" % number)
        out.extend(body)
        if stream is not None:
            out.extend(b"\nstream\n")
            out.extend(stream)
            out.extend(b"\nendstream")
        out.extend(b"\nendobj\n")

    emit(1, b"<</Type /Catalog /Pages 2 0 R>>")
    kids = b" ".join(b"%d 0 R" % renumber[num] for num, _ in pages)
    emit(2, b"<</Type /Pages /Kids [" + kids + b"] /Count %d>>" % len(pages))
    for num in order:
        obj = reader.get(num)
        if num in templates:
            template = templates[num][0]
        elif obj.stream is not None and isinstance(obj.value, dict):
            template = reader.template(num, stream_length=True)[0]
        else:
            template = reader.template(num)[0]
        emit(renumber[num], _written(template, renumber), obj.stream)
    xref = len(out)
    out.extend(b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1))
    for off in offsets:
        out.extend(b"%010d 00000 n \n" % off)
    out.extend(
        b"trailer\n<</Size %d /Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets) + 1, xref)
    )
    return bytes(out)


def iter_split_pages(data: bytes, ranges: Sequence[tuple[int, int]]) -> Iterator[bytes]:
    """One PDF per (first, last) page range, 1-based and inclusive, made as it is asked for
    (a class's per-student PDFs are written one at a time, never all held); bad ranges are
    refused here, before any is made."""
    reader = PdfReader(data)
    pages = reader.pages()
    for first, last in ranges:
        if not 1 <= first <= last <= len(pages):
            raise PdfFormatError(
                f"page range {first}-{last} is outside the PDF's {len(pages)} pages"
            )
    return (extract(reader, pages[first - 1 : last]) for first, last in ranges)


def split_pages(data: bytes, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
    """One PDF per (first, last) page range, 1-based and inclusive."""
    return list(iter_split_pages(data, ranges))


def page_count(data: bytes) -> int:
    """The number of pages of a PDF this module can read."""
    return len(PdfReader(data).pages())
