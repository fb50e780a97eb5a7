"""The one strict reader of key.json: ``load_key`` for a file, ``parse_key`` for parsed JSON.

``export`` and ``grade`` both read a key here, so a key one command refuses, the other refuses
with the same line. The file is read as a regular file of at most ``MAX_KEY_BYTES``, JSON
within ``inputs.MAX_JSON_DEPTH`` levels and text without lone surrogates; then ``format`` and
``version`` are checked before anything else (``key.json: version: expected 2 (or 1, a key of
an older build), got 7``), then every field the commands use. A key that does not fit the
contract is refused with one ``KeyFileError`` naming the field, whichever command reads it
(the message, not the class, tells a person what to fix).

A key of the current version (``KEY_VERSION``) states everything ``grade`` and ``export`` use
(each question's title and carried-forward steps included), and is read from the file alone:
nothing here asks the installed families, so a key grades and exports without the plugin
that made it. Only a key of version 1 (``keyjson.legacy``) may leave a title or the steps to
its family's code.

The result is frozen records: a ``KeyDoc`` with its ``KeySheet``s in key order (each with its
``Variant``s, one per question), and the same variants grouped by question id as
``KeyQuestion``s (in the order of the first sheet). Each numeric answer is split into
``Cell``s (the numbers a student types) carrying the value at full precision, the printed
string and the tolerance. docs/reference/key.schema.json describes the same contract.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from worksheetgen.bank.roster import MAX_STUDENTS
from worksheetgen.errors import KeyFileError, shorten
from worksheetgen.inputs import load_json, read_limited
from worksheetgen.keyjson.answers import read_answer, read_choices, read_distractor, read_grid
from worksheetgen.keyjson.fields import FieldReader, kind_of
from worksheetgen.keyjson.legacy import LEGACY_VERSION, family_carries, family_title
from worksheetgen.keyjson.records import (
    CARRY_STEPS,
    KINDS,
    MAX_POINTS,
    CarryStep,
    Cell,
    Choice,
    Distractor,
    KeyAnswer,
    KeyDoc,
    KeyPart,
    KeyQuestion,
    KeySheet,
    Shown,
    ShownStep,
    Slip,
    Student,
    Variant,
)
from worksheetgen.keyjson.views import (
    LMS_MARK_PLACES,
    category_name,
    choice_feedback,
    gradable_parts,
    graded_points,
    is_finite_number,
    is_masked_text,
    number_text,
    parts_points,
    slip_sentence,
    variant_name,
    written_parts,
    written_points,
)
from worksheetgen.keyjson.write import KEY_FORMAT, KEY_VERSION
from worksheetgen.language import DEFAULT as DEFAULT_LANGUAGE
from worksheetgen.language import LANGUAGES
from worksheetgen.textrules import char_problem

#: what ``from worksheetgen.keyjson.read import X`` gives: the reader, and (for the callers
#: written before the records and views had modules of their own) the records and views
__all__ = [
    "CARRY_STEPS",
    "KEY_VERSIONS",
    "KINDS",
    "LMS_MARK_PLACES",
    "MAX_KEY_BYTES",
    "MAX_KEY_QUESTIONS",
    "MAX_KEY_SHEETS",
    "MAX_POINTS",
    "CarryStep",
    "Cell",
    "Choice",
    "Distractor",
    "KeyAnswer",
    "KeyDoc",
    "KeyPart",
    "KeyQuestion",
    "KeySheet",
    "Shown",
    "ShownStep",
    "Slip",
    "Student",
    "Variant",
    "category_name",
    "ExpectedSecret",
    "check_format",
    "choice_feedback",
    "gradable_parts",
    "graded_points",
    "is_finite_number",
    "is_masked_text",
    "load_key",
    "load_key_document",
    "number_text",
    "parse_key",
    "parts_points",
    "read_key_data",
    "slip_sentence",
    "variant_name",
    "written_parts",
    "written_points",
]

#: the largest key.json read: well above the key of the largest class build (40,000
#: questions), far below what would exhaust memory before it is refused
MAX_KEY_BYTES = 1_000_000_000

#: the most sheets a key holds: a class build has one per student of a roster (at most
#: bank.roster.MAX_STUDENTS) or one per version (at most 702)
MAX_KEY_SHEETS = MAX_STUDENTS
#: the most questions a key holds, all sheets together (pipeline.plan.MAX_CLASS_ITEMS)
MAX_KEY_QUESTIONS = 40_000
#: the versions of key.json this release reads: the one it writes, and 1 (keys of older builds,
#: whose titles and carried steps may be left to the families: ``keyjson.legacy``)
KEY_VERSIONS = (LEGACY_VERSION, KEY_VERSION)


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class ExpectedSecret:
    """The course secret a command runs with, as a key read must match it: its fingerprint
    (what key.json holds) and where the secret came from (for the message). A key built with
    another secret is refused (``KeyFileError``) in the one read, after the key's gate (kind,
    size, read limit, nesting) and before anything else is checked; a key built without a
    secret is left to the contract's checks."""

    fingerprint: str
    source: str


def load_key(path: str | os.PathLike[str], secret: ExpectedSecret | None = None) -> KeyDoc:
    """Read and check a key.json file; a bad one raises ``KeyFileError`` naming file and
    field (``secret``: the course secret it must have been built with, if any)."""

    return parse_key(read_key_data(path, secret), str(path))


def load_key_document(
    path: str | os.PathLike[str], secret: ExpectedSecret | None = None
) -> tuple[KeyDoc, dict[str, Any]]:
    """A key.json file read once and checked (as ``load_key``): its records, and the parsed
    document they were checked from, for what is a digest of the document as written
    (``scan``'s page codes); nothing in the document is used before the contract passed."""
    data = read_key_data(path, secret)
    return parse_key(data, str(path)), data


_SECRET_LINE = re.compile(rb'^\s*"secret"\s*:', re.M)


def _check_secret(doc: Any, data: bytes, shown: str, expected: ExpectedSecret | None) -> None:
    """Refuse a key built with another course secret than the one expected (a key built
    without one, or that is not an object, is left to the contract's checks)."""
    found = doc.get("secret") if isinstance(doc, dict) else None
    if expected is None or found is None or found == expected.fingerprint:
        return
    wanted, source = expected.fingerprint, expected.source
    at = _SECRET_LINE.search(data)
    line = 1 if at is None else data.count(b"\n", 0, at.start()) + 1
    raise KeyFileError(
        f"expected a key built with the configured course secret ({source}, {wanted}), "
        f"got one built with another ({shorten(str(found), 80)})",
        file=shown,
        line=line,
        field="secret",
    )


def _shape(shown: str) -> Any:
    """A check of a parsed key's size, before any walk over its values: no more sheets and
    questions than the largest class build writes (the contract's checks take time in
    proportion, about a millisecond a sheet; a key of 28,000 sheets is refused at once)."""

    def check(doc: Any) -> None:
        sheets = doc.get("sheets") if isinstance(doc, dict) else None
        if not isinstance(sheets, list):
            return  # the contract's checks say what is wrong
        if len(sheets) > MAX_KEY_SHEETS:
            raise KeyFileError(
                f"expected at most {MAX_KEY_SHEETS} sheets (the largest class build), "
                f"got {len(sheets)}",
                file=shown,
                field="sheets",
            )
        count = sum(
            len(q) if isinstance(q, list) else 0
            for q in (s.get("questions") if isinstance(s, dict) else None for s in sheets)
        )
        if count > MAX_KEY_QUESTIONS:
            raise KeyFileError(
                f"expected at most {MAX_KEY_QUESTIONS} questions in all sheets together "
                f"(the largest class build), got {count}",
                file=shown,
                field="sheets",
            )

    return check


def read_key_data(path: str | os.PathLike[str], secret: ExpectedSecret | None = None) -> Any:
    """The parsed JSON of a key.json file (not yet checked against the contract), read once
    through the one gate; a key of another course secret than ``secret`` is refused here."""
    data = read_limited(path, MAX_KEY_BYTES, what="a key.json file", error=KeyFileError)
    doc = load_json(data, str(path), KeyFileError, shape=_shape(str(path)))
    _check_secret(doc, data, str(path), secret)
    return doc


def _described(x: Any) -> str:
    """A value of the top of a document, as the format and version messages show it."""
    if x is None:
        return "nothing"
    if isinstance(x, str):
        return repr(shorten(x))
    if isinstance(x, bool | int | float):
        return repr(x)
    return "a list" if isinstance(x, list) else "an object"


def check_format(data: Any, source: str) -> int:
    """Refuse a document that is not a worksheetgen key of a version this release reads;
    the key's version."""
    if not isinstance(data, dict):
        raise KeyFileError(
            f"expected a worksheetgen key.json (a JSON object), got {_described(data)}",
            file=source,
        )
    fmt = data.get("format")
    if fmt != KEY_FORMAT:
        raise KeyFileError(
            f"expected {KEY_FORMAT!r} (a key.json written by worksheetgen build), got "
            f"{_described(fmt)}",
            file=source,
            field="format",
        )
    version = data.get("version")
    if type(version) is not int or version not in KEY_VERSIONS:  # not true, not 2.0
        raise KeyFileError(
            f"expected {KEY_VERSION} (or {LEGACY_VERSION}, a key of an older build), "
            f"got {_described(version)}",
            file=source,
            field="version",
        )
    return version


def parse_key(data: Any, source: str = "key.json") -> KeyDoc:
    """Check a parsed key.json document and turn it into sheets and questions with their
    variants (``KeyFileError`` for a document that does not fit the contract)."""

    legacy = check_format(data, source) == LEGACY_VERSION
    r = FieldReader(source)
    doc = r.obj(data, "(top)")
    seed = r.get(doc, "seed", "(top)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise r.fail("seed", f"expected a non-negative integer, got {kind_of(seed)}")
    title = r.text(doc.get("title") or "Worksheet", "title")
    course = r.text(doc.get("course") or "", "course")
    secret = doc.get("secret")
    if secret is not None:
        secret = r.text(secret, "secret", empty=False)
    language = doc.get("language", DEFAULT_LANGUAGE)
    if not isinstance(language, str) or language not in LANGUAGES:
        shipped = ", ".join(LANGUAGES)
        raise r.fail("language", f"expected one of {shipped}, got {kind_of(language)}")
    decimal = doc.get("decimal", ".")  # missing: the point, as every key before it
    if decimal not in (".", ","):
        raise r.fail("decimal", f"expected '.' or ',', got {kind_of(decimal)}")
    sheets = r.lst(r.get(doc, "sheets", "(top)"), "sheets")
    if not sheets:
        raise r.fail("sheets", "expected at least one sheet, got an empty list")
    by_id: dict[str, list[Variant]] = {}
    sheets_out: list[KeySheet] = []
    seen_sheets: set[str] = set()
    slug = ""
    for si, raw_sheet in enumerate(sheets):
        sw = f"sheets[{si}]"
        sheet = r.obj(raw_sheet, sw)
        sid = r.ident(r.get(sheet, "id", sw), f"{sw}.id")
        if sid in seen_sheets:
            raise r.fail(f"{sw}.id", f"expected a unique sheet id, got {sid!r} twice")
        seen_sheets.add(sid)
        slug = slug or sid
        label = r.text(sheet.get("label") or sid, f"{sw}.label")
        student = _student(r, sheet.get("student"), f"{sw}.student")
        code = r.text(sheet.get("code") or "", f"{sw}.code")
        questions = r.lst(r.get(sheet, "questions", sw), f"{sw}.questions")
        seen_q: set[str] = set()
        on_sheet: list[Variant] = []
        for qi, raw_q in enumerate(questions):
            v = _variant(r, raw_q, f"{sw}.questions[{qi}]", sid, label, qi, legacy)
            if v.qid in seen_q:
                raise r.fail(
                    f"{sw}.questions[{qi}].id",
                    f"expected a unique question id, got {v.qid!r} twice",
                )
            seen_q.add(v.qid)
            by_id.setdefault(v.slot, []).append(v)
            on_sheet.append(v)
        sheets_out.append(KeySheet(sid, label, student, tuple(on_sheet), code))
    slots = _slots(r, doc, by_id)
    questions_out = []
    for position, (qid, variants) in enumerate(by_id.items(), 1):
        first = variants[0]
        titles = list(dict.fromkeys(v.title for v in variants))
        questions_out.append(
            KeyQuestion(
                qid=qid,
                # a sheet's own number; the place among the slots where sheets differ
                number=first.number if slots is None else position,
                title=_titles(titles),
                family=first.family,
                variants=tuple(variants),
                pick=1 if slots is None else slots[qid],
            )
        )
    return KeyDoc(
        title=title,
        course=course,
        seed=seed,
        slug=slug,
        questions=tuple(questions_out),
        source=source,
        sheets=tuple(sheets_out),
        secret=secret,
        language=language,
        decimal=decimal,
    )


def _titles(titles: Sequence[str]) -> str:
    """A slot's title: its question's, or a pool's alternatives' ("A, B or C")."""
    if len(titles) > 3:
        return f"{titles[0]}, {titles[1]} or {len(titles) - 2} other(s)"
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " or " + titles[-1]


def _slots(
    r: FieldReader, doc: Mapping[str, Any], by_slot: dict[str, list[Variant]]
) -> dict[str, int] | None:
    """A key's slots (a build with pools or shuffled order states them), each with how many
    questions a sheet gets from it; ``by_slot`` is put in their order. None: the key has no
    slots (each question id is one)."""
    if "shuffle" in doc and not isinstance(doc["shuffle"], bool):
        raise r.fail("shuffle", f"expected true or false, got {kind_of(doc['shuffle'])}")
    if "slots" not in doc:
        return None
    picks: dict[str, int] = {}
    for i, raw in enumerate(r.lst(doc["slots"], "slots")):
        w = f"slots[{i}]"
        slot = r.obj(raw, w)
        sid = r.ident(r.get(slot, "id", w), f"{w}.id")
        if sid in picks:
            raise r.fail(f"{w}.id", f"expected a unique slot id, got {sid!r} twice")
        names = r.lst(r.get(slot, "questions", w), f"{w}.questions")
        if not names:
            raise r.fail(f"{w}.questions", "expected at least one question id, got none")
        for j, name in enumerate(names):
            r.ident(name, f"{w}.questions[{j}]")
        pick = slot.get("pick", 1)
        if isinstance(pick, bool) or not isinstance(pick, int) or not 1 <= pick <= len(names):
            raise r.fail(
                f"{w}.pick", f"expected an integer from 1 to {len(names)}, got {kind_of(pick)}"
            )
        picks[sid] = pick
    for sid, variants in by_slot.items():
        if sid not in picks:
            raise r.fail(
                f"{variants[0].where}.slot",
                f"expected one of the key's slots ({', '.join(picks)}), got {sid!r}",
            )
    ordered = {sid: by_slot.pop(sid) for sid in picks if sid in by_slot}
    by_slot.update(ordered)
    return picks


def _variant(
    r: FieldReader, raw: Any, w: str, sheet_id: str, sheet_label: str, index: int, legacy: bool
) -> Variant:
    """One question of a sheet (``legacy``: of a version 1 key, whose title and carried steps
    may be left to the family's code)."""
    q = r.obj(raw, w)
    qid = r.ident(r.get(q, "id", w), f"{w}.id")
    slot = qid if q.get("slot") is None else r.ident(q["slot"], f"{w}.slot")
    family = r.text(r.get(q, "family", w), f"{w}.family", empty=False)
    number = q.get("number", index + 1)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise r.fail(f"{w}.number", f"expected a positive integer, got {kind_of(number)}")
    if legacy:  # a version 1 build wrote null for a question titled by its family
        stated = q.get("title")
        title = family_title(family) if stated is None else r.text(stated, f"{w}.title")
    else:
        title = r.text(r.get(q, "title", w), f"{w}.title")
    points = r.num(q.get("points", 1), f"{w}.points")
    if not 0 <= points <= MAX_POINTS:
        raise r.fail(f"{w}.points", f"expected a number from 0 to {MAX_POINTS}, got {points:g}")
    decimals = q.get("decimals", 2)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 12:
        raise r.fail(f"{w}.decimals", f"expected an integer from 0 to 12, got {kind_of(decimals)}")
    prompt = r.text(q.get("prompt", ""), f"{w}.prompt")
    shown = tuple(
        _shown(r, s, f"{w}.shown[{i}]")
        for i, s in enumerate(r.lst(q.get("shown", []), f"{w}.shown"))
    )
    given = r.obj(q.get("given", {}), f"{w}.given")  # grade works from it: always checked
    _check_given(r, given, f"{w}.given")
    if "shown" not in q:
        shown = _shown_from_given(given)
    steps = _shown_steps(r, q, w)
    parts, distractors = _answers_and_parts(r, q, w)
    descriptions = {d.misconception: d.description for d in distractors}

    if "choices" in q:
        parts = _attach_choices(r, w, q, parts, descriptions)
    fmt = q.get("format")
    if fmt is not None:
        fmt = r.text(fmt, f"{w}.format")
    target = q.get("choice_answer")
    carry = q.get("carry", True)
    if not isinstance(carry, bool):
        raise r.fail(f"{w}.carry", f"expected true or false, got {kind_of(carry)}")
    part_points = None
    if "part_points" in q:
        part_points = _part_points(r, q["part_points"], f"{w}.part_points", points, parts)
    return Variant(
        sheet_id=sheet_id,
        sheet_label=sheet_label,
        qid=qid,
        number=number,
        family=family,
        title=title,
        points=points,
        decimals=decimals,
        prompt=prompt,
        shown=shown,
        parts=tuple(parts),
        distractors=distractors,
        where=w,
        shown_steps=steps,
        given=given,
        carries=_carries(r, _stated_carries(r, q, w, legacy, family, given, parts), f"{w}.carries"),
        format=fmt,
        choice_answer=target if isinstance(target, str) else None,
        part_points=part_points,
        slot=slot,
        carry=carry,
    )


def _shown_steps(r: FieldReader, q: Mapping[str, Any], w: str) -> tuple[ShownStep, ...]:
    """The worked solution printed with a question (spot the bug), step by step."""
    steps = []
    for i, raw_step in enumerate(r.lst(q.get("shown_steps", []), f"{w}.shown_steps")):
        sw = f"{w}.shown_steps[{i}]"
        st = r.obj(raw_step, sw)
        steps.append(
            ShownStep(
                title=r.text(st.get("title", ""), f"{sw}.title"),
                text=r.text(st.get("text", ""), f"{sw}.text"),
                math=r.text(st.get("math", ""), f"{sw}.math"),
            )
        )
    return tuple(steps)


def _answers_and_parts(
    r: FieldReader, q: Mapping[str, Any], w: str
) -> tuple[list[KeyPart], tuple[Distractor, ...]]:
    """A question's parts, each with its answer checked (into cells for a numeric one, with
    the slips of the question's distractors), and the distractors."""
    answers = r.obj(r.get(q, "answer", w), f"{w}.answer")
    rounded = r.obj(r.get(q, "rounded", w), f"{w}.rounded")
    kinds = r.obj(r.get(q, "kinds", w), f"{w}.kinds")
    tolerances = r.obj(q.get("tolerance", {}), f"{w}.tolerance")
    exacts = r.obj(q.get("exact", {}), f"{w}.exact")
    options = r.obj(q.get("options", {}), f"{w}.options")
    labels = r.obj(q.get("labels", {}), f"{w}.labels")
    explanations = r.obj(q.get("explanations", {}), f"{w}.explanations")
    whole_only = {
        r.ident(x, f"{w}.all_or_nothing[{i}]")
        for i, x in enumerate(r.lst(q.get("all_or_nothing", []), f"{w}.all_or_nothing"))
    }
    for x in sorted(whole_only - set(answers)):
        raise r.fail(f"{w}.all_or_nothing", f"expected names of answers, got {x!r}")
    distractors = tuple(
        read_distractor(r, d, f"{w}.distractors[{i}]")
        for i, d in enumerate(r.lst(q.get("distractors", []), f"{w}.distractors"))
    )

    raw_parts = r.lst(q.get("parts", []), f"{w}.parts")
    if not raw_parts:  # a key without parts: every answer, in key order
        raw_parts = [{"prompt": "", "answer": name} for name in answers]
    parts: list[KeyPart] = []
    built: dict[str, KeyAnswer] = {}
    for pi, raw_part in enumerate(raw_parts):
        pw = f"{w}.parts[{pi}]"
        part = r.obj(raw_part, pw)
        name = r.ident(r.get(part, "answer", pw), f"{pw}.answer")
        if name not in answers:
            raise r.fail(
                f"{pw}.answer", f"expected one of the answers ({', '.join(answers)}), got {name!r}"
            )
        row_label = r.text(part.get("row_label") or "", f"{pw}.row_label")
        col_label = r.text(part.get("col_label") or "", f"{pw}.col_label")
        if name not in built:
            built[name] = read_answer(
                r,
                w,
                name,
                answers,
                rounded,
                kinds,
                tolerances,
                exacts,
                options,
                labels,
                explanations,
                distractors,
                row_label,
                col_label,
                all_or_nothing=name in whole_only,
            )
        parts.append(
            KeyPart(
                prompt=r.text(part.get("prompt", ""), f"{pw}.prompt"),
                answer=built[name],
                row_label=row_label,
                col_label=col_label,
            )
        )
    return parts, distractors


def _part_points(
    r: FieldReader, raw: Any, w: str, points: float, parts: Sequence[KeyPart]
) -> dict[str, float]:
    """key.json's per-part points: one number above 0 (at most ``MAX_POINTS``) for every
    answer the parts ask (and no other), adding up to the question's points."""
    given = r.obj(raw, w)
    names = list(dict.fromkeys(p.answer.name for p in parts if p.answer is not None))
    out: dict[str, float] = {}
    for name in names:
        if name not in given:
            raise r.fail(w, f"expected points for every part's answer, got none for {name!r}")
        value = r.num(given[name], f"{w}.{name}")
        if not 0 < value <= MAX_POINTS:
            raise r.fail(
                f"{w}.{name}", f"expected a number above 0 and at most {MAX_POINTS}, got {value:g}"
            )
        out[name] = value
    extra = [k for k in given if k not in out]
    if extra:
        raise r.fail(
            f"{w}.{extra[0]}",
            f"expected one of the parts' answers ({', '.join(names)}), "
            f"got {shorten(repr(extra[0]))}",
        )
    total = sum((Fraction(str(v)) for v in out.values()), Fraction(0))
    if total != Fraction(str(points)):
        raise r.fail(
            w, f"expected part points adding up to the question's {points:g}, got {float(total):g}"
        )
    return out


def _stated_carries(
    r: FieldReader,
    q: Mapping[str, Any],
    w: str,
    legacy: bool,
    family: str,
    given: Mapping[str, Any],
    parts: Sequence[KeyPart],
) -> Any:
    """A question's "carries" as key.json states them (a key of the current version must). A
    version 1 key written before key.json had them gets its family's steps for the variant,
    as a build would write them (``keyjson.legacy``)."""
    if not legacy:
        return r.get(q, "carries", w)
    if q.get("carries") is not None:
        return q["carries"]
    names = list(dict.fromkeys(p.answer.name for p in parts if p.answer is not None))
    return family_carries(family, given, names)


def _carries(r: FieldReader, raw: Any, w: str) -> tuple[CarryStep, ...]:
    """A question's carried-forward steps, checked."""
    out = []
    for i, c in enumerate(r.lst(raw, w)):
        if _carry_fits(c):  # the usual case, checked at once (a build reads its own key)
            out.append(CarryStep(c["answer"], tuple(c["from"]), tuple(c["steps"]), c["args"]))
        else:
            out.append(_carry(r, c, f"{w}[{i}]"))
    return tuple(out)


def _is_name(x: Any) -> bool:
    return isinstance(x, str) and bool(x.strip())


def _carry_fits(c: Any) -> bool:
    """True for a carried step that every check of ``_carry`` passes, with its arguments."""
    return (
        isinstance(c, dict)
        and _is_name(c.get("answer"))
        and isinstance(c.get("from"), list)
        and all(_is_name(x) for x in c["from"])
        and isinstance(c.get("steps"), list)
        and all(isinstance(x, str) and x in CARRY_STEPS for x in c["steps"])
        and isinstance(c.get("args"), dict)
    )


def _carry(r: FieldReader, raw: Any, cw: str) -> CarryStep:
    """One carried step, field by field: the first field that does not fit is refused."""
    c = r.obj(raw, cw)
    answer = r.text(r.get(c, "answer", cw), f"{cw}.answer", empty=False)
    lists = []
    for name in ("from", "steps"):
        items = r.lst(r.get(c, name, cw), f"{cw}.{name}")
        lists.append(
            tuple(r.text(x, f"{cw}.{name}[{j}]", empty=False) for j, x in enumerate(items))
        )
    inputs, steps = lists
    for j, step in enumerate(steps):
        if step not in CARRY_STEPS:
            raise r.fail(
                f"{cw}.steps[{j}]",
                f"expected one of {', '.join(CARRY_STEPS)}, got {kind_of(step)}",
            )
    args = r.obj(c.get("args", {}), f"{cw}.args")
    return CarryStep(answer, inputs, steps, args)


def _attach_choices(
    r: FieldReader,
    w: str,
    q: Mapping[str, Any],
    parts: list[KeyPart],
    descriptions: Mapping[str, str],
) -> list[KeyPart]:
    """Give a multiple-choice item's options to the part they answer.

    ``choice_answer`` is the correct option's label (what the build writes) or the name of the
    answer the options are for. Labelled, the options answer the item's one part, or its last
    part (the target answer) when there are several; with no part they are a part of their own.
    """
    choices = read_choices(r, q["choices"], f"{w}.choices", descriptions)
    target = q.get("choice_answer")
    right = next(c for c in choices if c.correct)
    names = [p.answer.name if p.answer is not None else "" for p in parts]
    if isinstance(target, str) and target in names:
        i = names.index(target)
    elif target is None or target == right.label:
        i = len(parts) - 1
    else:
        raise r.fail(
            f"{w}.choice_answer",
            f"expected the correct choice's label "
            f"({right.label!r}) or an answer name, got {kind_of(target)}",
        )
    if i < 0:
        return [KeyPart(prompt="Which of these is right?", answer=None, choices=choices)]
    old = parts[i]
    parts[i] = KeyPart(
        prompt=old.prompt,
        answer=old.answer,
        row_label=old.row_label,
        col_label=old.col_label,
        choices=choices,
    )
    return parts


#: the inputs grade recomputes carried-forward answers from, and what each must be
GIVEN_MATRICES = ("Q", "K", "V")
GIVEN_SIZES = ("d_k", "d", "h", "T")
GIVEN_FLAGS = ("causal", "d_v_given")


def _check_given(r: FieldReader, given: Mapping[str, Any], w: str) -> None:
    """The given inputs grade computes with: tables of finite numbers, sizes above 0, flags
    true or false (a hand-edited key with d_k: "x" would fail in the middle of grading)."""
    for name in GIVEN_MATRICES:
        if name in given:
            rows = read_grid(r, given[name], "matrix", f"{w}.{name}")
            for i, row in enumerate(rows):
                for j, x in enumerate(row):
                    r.num(x, f"{w}.{name}[{i}][{j}]")
    if "row" in given:
        for j, x in enumerate(r.lst(given["row"], f"{w}.row")):
            r.num(x, f"{w}.row[{j}]")
    for name in GIVEN_SIZES:
        if name in given and r.num(given[name], f"{w}.{name}") <= 0:
            raise r.fail(f"{w}.{name}", f"expected a number above 0, got {kind_of(given[name])}")
    for name in GIVEN_FLAGS:
        if name in given and not isinstance(given[name], bool):
            raise r.fail(f"{w}.{name}", f"expected true or false, got {kind_of(given[name])}")


def _student(r: FieldReader, raw: Any, w: str) -> Student | None:
    """A roster sheet's student (null for a version): a printable name and id, and whether
    their sheet is in large print (absent: no)."""
    if raw is None:
        return None
    student = r.obj(raw, w)
    found = {"name": "", "id": ""}
    for name in found:
        value = student.get(name)
        if value is None:
            continue
        text = r.text(value, f"{w}.{name}")
        bad = char_problem(text)
        if bad is not None:
            raise r.fail(
                f"{w}.{name}", f"expected printable characters only, got {kind_of(text)} ({bad})"
            )
        found[name] = text
    large = student.get("large_print", False)
    if not isinstance(large, bool):
        raise r.fail(f"{w}.large_print", f"expected true or false, got {kind_of(large)}")
    return Student(name=found["name"], id=found["id"], large_print=large)


def _shown(r: FieldReader, raw: Any, w: str) -> Shown:
    s = r.obj(raw, w)
    return Shown(
        label=r.text(r.get(s, "label", w), f"{w}.label"),
        kind=r.text(s.get("kind", "scalar"), f"{w}.kind"),
        value=s.get("value"),
    )


def _shown_from_given(given: Mapping[str, Any]) -> tuple[Shown, ...]:
    """Shown values for a key without "shown": the given matrices and numbers by name."""
    out = []
    for name, value in given.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
            out.append(Shown(name, "matrix", [[str(x) for x in row] for row in value]))
        elif isinstance(value, list):
            out.append(Shown(name, "vector", [str(x) for x in value]))
        elif isinstance(value, int | float | str):
            out.append(Shown(name, "scalar", str(value)))
    return tuple(out)
