"""Load question banks: safe YAML with line numbers, validated into QuestionSpecs.

No randomness here. Every problem is reported as a BankError naming file, line and field,
for example ``banks/x.yaml:14: questions[2].params.T: expected an integer from 2 to 4, got 12``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from worksheetgen.bank.schema import (
    TOP_FIELDS,
    check_fields,
    is_pool,
    pool_entry,
    question_spec,
    sheet_info,
    slugify,
)
from worksheetgen.bank.yamldoc import Doc, parse_yaml
from worksheetgen.errors import BankError, describe, did_you_mean
from worksheetgen.inputs import read_limited
from worksheetgen.model import Bank, BankFile, Location, Pool, QuestionSpec, SheetInfo
from worksheetgen.render.prompts import sheet_instructions
from worksheetgen.resources import data_dir

MAX_BANK_BYTES = 2_000_000
MAX_QUESTIONS = 200


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
    check_fields(doc, doc.data, (), TOP_FIELDS)
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
    # the sheet's entries (ids placed on their own, pools), and where each was written
    layout: list[str | Pool] = []
    placed: dict[str, tuple[Doc, tuple]] = {}
    pools: list[tuple[Doc, int, Pool, dict[str, tuple]]] = []
    for f in files:
        shown = display_path(f)
        doc = load_doc(f, shown)
        bank_records.append(BankFile(shown, hashlib.sha256(read_bank_bytes(f, shown)).hexdigest()))
        file_info = sheet_info(doc)
        for k, v in file_info.items():
            info.setdefault(k, v)
        decimals = file_info.get("decimals", info.get("decimals", 2))
        space = file_info.get("space")  # this file's questions' room to work
        carry = file_info.get("carry")  # this file's questions' carried credit
        for i, raw in enumerate(doc.data["questions"]):
            if is_pool(raw):
                pool, inline, where = pool_entry(doc, raw, i, decimals, space)
                for n, spec in enumerate(inline):
                    if spec.carry is None and carry is not None:
                        inline[n] = spec = replace(spec, carry=carry)
                    _check_unique(doc, where[spec.id] + ("id",), spec, seen, placed)
                    seen[spec.id] = spec.location
                    specs.append(spec)
                pools.append((doc, i, pool, where))
                layout.append(pool)
                continue
            spec = question_spec(doc, raw, i, decimals, space)
            if spec.carry is None and carry is not None:
                spec = replace(spec, carry=carry)
            _check_unique(doc, ("questions", i, "id"), spec, seen, placed)
            seen[spec.id] = spec.location
            placed[spec.id] = (doc, ("questions", i, "id"))
            specs.append(spec)
            layout.append(spec.id)
    if len(specs) > MAX_QUESTIONS:
        raise BankError(
            f"expected at most {MAX_QUESTIONS} questions in one sheet (all banks "
            f"together), got {len(specs)}",
            file=display_path(files[-1]),
        )
    if pools:
        layout = _pooled_layout(layout, pools, seen, placed)
    title = info.get("title", "Self-Attention Worksheet")
    sheet = SheetInfo(
        slug=info.get("slug", slugify(title)),
        title=title,
        course=info.get("course", ""),
        instructions=info.get("instructions", ""),
        decimals=info.get("decimals", 2),
        instructions_template=info.get("instructions_template", ""),
        kind=info.get("kind", ""),
        shuffle=info.get("shuffle", False),
    )
    if sheet.instructions_template:
        sheet = with_decimals(sheet, sheet.decimals)
    return Bank(sheet, tuple(specs), tuple(bank_records), tuple(layout) if pools else ())


def _check_unique(
    doc: Doc,
    path: tuple,
    spec: QuestionSpec,
    seen: dict[str, Location],
    placed: dict[str, tuple[Doc, tuple]],
) -> None:
    """Refuse a question id written before (a pool's question placed on its own too)."""
    if spec.id not in seen:
        return
    first = seen[spec.id]
    if len(path) > 3 and spec.id in placed:  # a pool's inline question, placed on its own
        raise doc.error(
            path,
            f"expected a question placed only through its pool, got {spec.id!r}, also "
            f"placed on its own at {first.file}:{first.line}",
        )
    if len(path) <= 3 and spec.id not in placed:  # placed on its own, a pool's before
        raise doc.error(
            path,
            f"expected a question placed only through its pool, got {spec.id!r} on its own, "
            f"already an alternative of a pool at {first.file}:{first.line}",
        )
    raise doc.error(
        path, f"expected a unique id, got {spec.id!r} again (first at {first.file}:{first.line})"
    )


def _pooled_layout(
    layout: list[str | Pool],
    pools: list[tuple[Doc, int, Pool, dict[str, tuple]]],
    seen: dict[str, Location],
    placed: dict[str, tuple[Doc, tuple]],
) -> list[str | Pool]:
    """The sheet's entries once every bank is read: each pool's alternatives checked against
    the questions of all banks, and a question a pool names by id placed only through it."""
    owner: dict[str, tuple[Pool, Location]] = {}
    pool_ids: dict[str, Location] = {}
    for doc, i, pool, _where in pools:
        if pool.id in pool_ids:
            first = pool_ids[pool.id]
            raise doc.error(
                ("questions", i, "pool"),
                f"expected a unique pool id, got {pool.id!r} again "
                f"(first at {first.file}:{first.line})",
            )
        if pool.id in seen:
            first = seen[pool.id]
            raise doc.error(
                ("questions", i, "pool"),
                f"expected a pool id that is no question's id, got {pool.id!r}, the id of "
                f"the question at {first.file}:{first.line}",
            )
        pool_ids[pool.id] = pool.location
    for doc, _i, pool, where in pools:
        for qid in pool.alternatives:
            path = where[qid]
            if qid in pool_ids:
                raise doc.error(
                    path, f"expected a question id, got {qid!r}, a pool (a pool inside a pool)"
                )
            if qid not in seen:
                raise doc.error(
                    path,
                    f"expected the id of a question in the banks, got {qid!r}"
                    + did_you_mean(qid, list(seen)),
                )
            if qid in owner:
                other, at = owner[qid]
                raise doc.error(
                    path,
                    f"expected a question named by one pool only, got {qid!r}, already in "
                    f"pool {other.id!r} at {at.file}:{at.line}",
                )
            owner[qid] = (pool, Location(doc.file, doc.line(path)))
    return [e for e in layout if not (isinstance(e, str) and e in owner)]


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
