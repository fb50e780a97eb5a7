"""Exporters: key.json -> LMS files (Moodle XML, GIFT, Canvas QTI, and any a plugin adds).

An exporter is an object with the ``Exporter`` shape, found through the
``worksheetgen.exporters`` entry points (the bundled three are registered the same way).
``export_bytes(data, fmt)`` turns a key.json document into the bytes of one format;
``export_file(path, fmt, out)`` reads a key.json and writes the file atomically. Every format
is built from the same checked view of the key (``worksheetgen.keyjson.read``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

from worksheetgen import plugins
from worksheetgen.errors import ExportError
from worksheetgen.export.privacy import lms_doc
from worksheetgen.export.route import named_by
from worksheetgen.files import (
    STDOUT,
    check_replaceable,
    write_failure,
    write_file,
    write_stream,
)
from worksheetgen.inputs import check_json_tree
from worksheetgen.keyjson.read import ExpectedSecret, load_key, parse_key
from worksheetgen.keyjson.records import KeyDoc
from worksheetgen.language import using


@runtime_checkable
class Exporter(Protocol):
    """What an LMS format provides: its name (``--to``), the file it writes by default (beside
    key.json unless ``--out`` says otherwise), whether it writes bytes or UTF-8 text, and
    ``write``, which writes a checked key to a stream of that kind (a question at a time).
    A binary stream is seekable (a zip needs that)."""

    name: str
    file_name: str
    binary: bool

    def write(self, doc: KeyDoc, stream: Any) -> None: ...


def adopt_exporter(obj: Any, name: str) -> Exporter:
    """The exporter an entry point names (a class, made once, or an object), checked; raises
    ``plugins.Unfit`` saying what is wrong."""
    try:
        exporter = obj() if isinstance(obj, type) else obj
    except Exception as exc:  # a plugin's constructor: reported on one line
        raise plugins.Unfit(
            f"cannot make an exporter from it: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(exporter, Exporter):
        raise plugins.Unfit(
            "expected an Exporter (name, file_name, binary and write), got " + repr(obj)
        )
    if exporter.name != name:
        raise plugins.Unfit(
            f"expected its name to be {name!r} (its entry point), got {exporter.name!r}"
        )
    fname = exporter.file_name
    if not isinstance(fname, str) or not fname or fname != os.path.basename(fname):
        raise plugins.Unfit(f"expected file_name to be a plain file name, got {fname!r}")
    if not isinstance(exporter.binary, bool):
        raise plugins.Unfit(f"expected binary to be true or false, got {exporter.binary!r}")
    return exporter


_EXPORTERS: dict[str, Exporter] | None = None


def exporter_names() -> list[str]:
    """The formats ``--to`` and ``--export`` accept (entry point names: nothing imported)."""
    return plugins.names(plugins.EXPORTERS)


def exporters() -> dict[str, Exporter]:
    """Every exporter by name, imported and checked once."""
    global _EXPORTERS
    if _EXPORTERS is None:
        _EXPORTERS = plugins.load(plugins.EXPORTERS, adopt_exporter)
    return _EXPORTERS


def get_exporter(fmt: str) -> Exporter:
    """The exporter of format ``fmt``; an ExportError names the formats there are."""
    found = exporters()
    if fmt not in found:
        raise ExportError(f"--to: expected one of {', '.join(found)}, got {fmt!r}")
    return found[fmt]


def _write(doc: Any, fmt: str, out: BinaryIO) -> None:
    """Write the export of a checked key to a binary stream, a question variant at a time (a
    class of 1,000 students is never held whole)."""
    exporter = get_exporter(fmt)
    doc = lms_doc(doc)  # no export, a plugin's included, names a student
    with using(doc.language):  # the export's own words in the language of the key's sheets
        if exporter.binary:
            exporter.write(doc, out)
            return
        text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=False)
        try:
            exporter.write(doc, text)
            text.flush()
        finally:
            text.detach()


def _render(doc: Any, fmt: str) -> bytes:
    buf = io.BytesIO()
    _write(doc, fmt, buf)
    return buf.getvalue()


def export_bytes(data: Any, fmt: str, source: str = "key.json") -> bytes:
    """The file of format ``fmt`` for a key.json document (already parsed JSON)."""

    get_exporter(fmt)  # an unknown format is reported before the key is looked at
    check_json_tree(data, source, ExportError)  # as a key.json file is checked when read
    return _render(parse_key(data, source), fmt)


def output_path(key_path: str | Path, fmt: str, out: str | Path | None = None) -> Path:
    """Where an export goes: ``out`` (a file, or a folder to put the default name in), else
    beside the key."""
    name = get_exporter(fmt).file_name
    if out is None:
        return Path(key_path).parent / name
    p = Path(out)
    folder = p.is_dir() or str(out).endswith(("/", os.sep))
    return p / name if folder else p


def write_atomically(path: Path, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write a file so that it is either complete or not there (no half-written export);
    ``data`` is the bytes, or a function that writes them to a binary stream. Only a
    regular file (or nothing) is replaced: see outfiles.write_file."""
    write_file(path, data)


def export_file(
    key_path: str | Path,
    fmt: str,
    out: str | Path | None = None,
    stdout: BinaryIO | None = None,
    secret: ExpectedSecret | None = None,
) -> Path | None:
    """Read a key.json, export it to ``fmt`` and write the file; returns where. ``out``
    ``-`` writes to ``stdout`` instead (the whole export is made first, so a failure writes
    nothing) and returns None. ``secret``: the course secret the key must have been built
    with, if any."""

    get_exporter(fmt)
    if out is not None and str(out) == STDOUT:
        if stdout is None:
            raise ExportError("--out -: expected a stream to write to, got none")
        write_stream(stdout, _render(load_key(key_path, secret=secret), fmt))
        return None
    target = output_path(key_path, fmt, out)
    check_replaceable(target)  # before the key is read and exported
    doc = load_key(key_path, secret=secret)
    try:
        write_atomically(target, lambda fh: _write(doc, fmt, fh))
    except OSError as exc:
        error = write_failure(exc, target)
        if error is None:
            raise
        raise error from None
    return target


def bank_source(banks: Sequence[str | Path]) -> str:
    """What a build's export names as the file of a refusal: the bank file(s) the key came
    from (the refused slot is theirs; the key.json is not written when an export fails)."""
    return ", ".join(str(b) for b in banks)


def _exports(
    key_json: bytes | str, formats: tuple[str, ...] | list[str], source: str = "key.json"
) -> Iterator[tuple[str, Callable[[BinaryIO], None]]]:
    """Each format's default file name and its writer, for a build's key.json text (parsed
    and checked once); ``source`` is what an error names (a build: its banks)."""

    # the key.json this build has just written (no limit or tree walk to guard against;
    # the contract is still checked, as for any key)
    doc = parse_key(json.loads(key_json), source)
    for fmt in dict.fromkeys(formats):
        yield get_exporter(fmt).file_name, partial(_write, doc, fmt)


def export_files(
    key_json: bytes | str, formats: tuple[str, ...] | list[str], source: str = "key.json"
) -> dict[str, bytes]:
    """Exports of a build's key.json text, by default file name (for ``build --export``).

    Reading the key.json text (not the in-memory build) means a build's exports say exactly
    what its key.json says.
    """
    files = {}
    with named_by("--export"):  # a refusal names build's option
        for name, write in _exports(key_json, formats, source):
            buf = io.BytesIO()
            write(buf)
            files[name] = buf.getvalue()
    return files


def export_into(
    key_json: bytes | str,
    formats: tuple[str, ...] | list[str],
    folder: Path,
    source: str = "key.json",
) -> list[str]:
    """Write a build's exports into ``folder`` (a class build's temporary folder), each
    streamed to its file; returns the file names."""
    names = []
    with named_by("--export"):  # a refusal names build's option
        for name, write in _exports(key_json, formats, source):
            with open(folder / name, "wb") as fh:
                write(fh)
            names.append(name)
    return names
