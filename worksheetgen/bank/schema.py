"""The bank schema: the ``sheet:`` and ``questions:`` fields, checked into SheetInfo and
QuestionSpecs (a family checks its own ``params``; a prompt is checked against sample draws).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from worksheetgen.bank.yamldoc import Doc, path_text
from worksheetgen.errors import describe, did_you_mean
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.families.base import Family, param_text
from worksheetgen.families.common import param_values
from worksheetgen.model import Location, ParamValue, Pinned, Pool, QuestionSpec, Space
from worksheetgen.render.prompts import check_instructions, check_markup, check_prompt_template
from worksheetgen.solve.draw import sample_contexts, sample_parts

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: no newline after it

QUESTION_FIELDS = (
    "id",
    "family",
    "points",
    "decimals",
    "params",
    "prompt",
    "format",
    "title",
    "space",
    "carry",
)
SHEET_FIELDS = (
    "id",
    "title",
    "course",
    "instructions",
    "decimals",
    "kind",
    "space",
    "shuffle",
    "carry",
)
SHEET_KINDS = ("worksheet", "quiz")
POOL_FIELDS = ("pool", "pick", "from")
TOP_FIELDS = ("sheet", "questions")
#: the most points a question (or one of its parts) can have
MAX_POINTS = 1000
#: part letters as the sheet prints them: (a), (b), ...
PART_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def check_fields(doc: Doc, mapping: dict, path: tuple, allowed: Iterable[str]) -> None:
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


def sheet_info(doc: Doc) -> dict[str, Any]:
    sheet = doc.data.get("sheet")
    if sheet is None:
        return {}
    if not isinstance(sheet, dict):
        raise doc.error(("sheet",), f"expected a mapping, got {describe(sheet)}")
    check_fields(doc, sheet, ("sheet",), SHEET_FIELDS)
    info: dict[str, Any] = {}
    for key in ("title", "course", "instructions"):
        if key in sheet:
            info[key] = _text_field(doc, sheet[key], ("sheet", key))
    for key in ("title", "course"):  # markup: their $math$ prints as a prompt's would
        if key in info:
            check_markup(info[key], doc.file, doc.text_line(("sheet", key)), f"sheet.{key}")
    if "instructions" in info:
        # any --decimals renders, and its $math$ prints as a prompt's would
        text = info["instructions"]
        check_instructions(text, doc.file, doc.text_line(("sheet", "instructions")))
        if "{" in text:
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
    if "kind" in sheet:
        if sheet["kind"] not in SHEET_KINDS:
            raise doc.error(
                ("sheet", "kind"), f"expected worksheet or quiz, got {describe(sheet['kind'])}"
            )
        info["kind"] = sheet["kind"]
    if "space" in sheet:
        info["space"] = space_field(doc, sheet["space"], ("sheet", "space"))
    if "shuffle" in sheet:
        if not isinstance(sheet["shuffle"], bool):
            raise doc.error(
                ("sheet", "shuffle"), f"expected true or false, got {describe(sheet['shuffle'])}"
            )
        info["shuffle"] = sheet["shuffle"]
    if "carry" in sheet:
        info["carry"] = carry_field(doc, sheet["carry"], ("sheet", "carry"))
    return info


def carry_field(doc: Doc, value: Any, path: tuple) -> bool:
    """A ``carry`` field: whether grading credits error carried forward (true or false)."""
    if not isinstance(value, bool):
        raise doc.error(path, f"expected true or false, got {describe(value)}")
    return value


def space_field(doc: Doc, value: Any, path: tuple) -> Space:
    """A ``space`` field: room to work (see ``model.Space.parse``)."""
    try:
        return Space.parse(value)
    except ValueError as exc:
        raise doc.error(path, str(exc)) from None


def _own_choice(
    doc: Doc,
    raw: dict[str, Any],
    params_raw: dict[str, Any],
    params: dict[str, ParamValue],
    path: tuple[Any, ...],
    own: str,
) -> tuple[dict[str, ParamValue], str]:
    """``format: choice`` for a family whose pick-one form is its own parameter (concept's
    ``multiple_choice``): the parameter set true, and the item's format left open (its
    options are per answer, not slips). The parameter alone is the older spelling and still
    works; the two may not disagree."""
    fmt = raw.get("format", "open")
    asked = param_values(params[own])
    if fmt == "choice":
        if own in params_raw and asked != [True]:
            raise doc.error(
                path + ("params", own),
                f"expected no {own} with format: choice (format: choice asks every question "
                f"pick-one), got {own}: {param_text(params[own])}",
            )
        return {**params, own: Pinned(True)}, "open"
    if "format" in raw and True in asked:
        raise doc.error(
            path + ("format",),
            f"expected format: choice for {own}: {param_text(params[own])} (write format: "
            f"choice alone), got format: open",
        )
    return params, "open"


def is_pool(raw: Any) -> bool:
    """True for a ``questions:`` entry that is a pool (it has a ``pool:`` field)."""
    return isinstance(raw, dict) and "pool" in raw


def pool_entry(
    doc: Doc, raw: dict, index: int, sheet_decimals: int, sheet_space: Space | None = None
) -> tuple[Pool, list[QuestionSpec], dict[str, tuple]]:
    """A pool of ``questions:``: the Pool, its inline questions, and the YAML path of each
    alternative by id (for the checks that need every bank: unknown ids, two pools)."""
    path: tuple[Any, ...] = ("questions", index)
    check_fields(doc, raw, path, POOL_FIELDS)
    pid = raw["pool"]
    if not isinstance(pid, str | int) or isinstance(pid, bool) or not ID_RE.match(str(pid)):
        raise doc.error(
            path + ("pool",),
            f"expected a pool id of letters, digits, '-', '_' or '.' (at most 64), "
            f"got {describe(pid)}",
        )
    alternatives = raw.get("from")
    if not isinstance(alternatives, list) or not alternatives:
        raise doc.error(
            path + ("from",),
            "expected a non-empty list of question ids or questions, got "
            + ("nothing" if "from" not in raw else describe(alternatives)),
        )
    ids: list[str] = []
    inline: list[QuestionSpec] = []
    where: dict[str, tuple] = {}
    for j, alt in enumerate(alternatives):
        alt_path = path + ("from", j)
        if is_pool(alt):
            raise doc.error(
                alt_path + ("pool",),
                "expected a question id or a question, got a pool inside a pool",
            )
        if isinstance(alt, dict):
            spec = question_spec(doc, alt, index, sheet_decimals, sheet_space, path=alt_path)
            inline.append(spec)
            qid = spec.id
        elif isinstance(alt, str | int) and not isinstance(alt, bool) and ID_RE.match(str(alt)):
            qid = str(alt)
        else:
            raise doc.error(alt_path, f"expected a question id or a question, got {describe(alt)}")
        if qid in where:
            raise doc.error(
                alt_path,
                f"expected each alternative once, got {qid!r} again "
                f"(first at line {doc.line(where[qid])})",
            )
        where[qid] = alt_path
        ids.append(qid)
    pick = raw.get("pick", 1)
    if isinstance(pick, bool) or not isinstance(pick, int) or pick < 1:
        raise doc.error(
            path + ("pick",), f"expected a whole number of at least 1, got {describe(pick)}"
        )
    if pick > len(ids):
        raise doc.error(
            path + ("pick",),
            f"expected at most {len(ids)} (the pool has {len(ids)} alternative"
            f"{'' if len(ids) == 1 else 's'}), got {pick}",
        )
    pool = Pool(str(pid), pick, tuple(ids), Location(doc.file, doc.line(path)))
    return pool, inline, where


def question_spec(
    doc: Doc,
    raw: Any,
    index: int,
    sheet_decimals: int,
    sheet_space: Space | None = None,
    *,
    path: tuple[Any, ...] | None = None,
) -> QuestionSpec:
    """One question of ``questions:`` (or, at ``path``, a question written inside a pool)."""
    path = ("questions", index) if path is None else path
    if not isinstance(raw, dict):
        raise doc.error(path, f"expected a mapping with id and family, got {describe(raw)}")
    check_fields(doc, raw, path, QUESTION_FIELDS)
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
    decimals = sheet_decimals
    if "decimals" in raw:
        decimals = _int_field(doc, raw["decimals"], path + ("decimals",), 0, 6)
    prompt = None
    if "prompt" in raw:
        prompt = _text_field(doc, raw["prompt"], path + ("prompt",))
    title = _text_field(doc, raw["title"], path + ("title",), 200) if "title" in raw else None
    if title is not None:
        check_markup(
            title,
            doc.file,
            doc.text_line(path + ("title",)),
            path_text(path + ("title",)) or "title",
        )
    fmt = raw.get("format", "open")
    if fmt not in ("open", "choice"):
        raise doc.error(path + ("format",), f"expected 'open' or 'choice', got {describe(fmt)}")
    own = family.choice_param  # the family's own pick-one form (concept's multiple_choice)
    if fmt == "choice" and not family.supports_choice and own is None:
        raise doc.error(
            path + ("format",), f"family '{fam_name}' has no multiple-choice form; expected 'open'"
        )
    params_raw = raw.get("params", {})
    if params_raw is None:
        params_raw = {}
    if not isinstance(params_raw, dict):
        raise doc.error(path + ("params",), f"expected a mapping, got {describe(params_raw)}")
    params = family.validate(params_raw, doc, path + ("params",))
    if own is not None:
        params, fmt = _own_choice(doc, raw, params_raw, params, path, own)
    points, part_points = question_points(
        doc, raw.get("points", 1), path + ("points",), family, params, str(qid), decimals, fmt
    )
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
        points=points,
        decimals=decimals,
        params=params,
        prompt=prompt,
        format=fmt,
        title=title,
        location=Location(doc.file, doc.line(path)),
        param_lines=param_lines,
        prompt_line=doc.text_line(path + ("prompt",)) if prompt is not None else None,
        part_points=part_points,
        space=space_field(doc, raw["space"], path + ("space",)) if "space" in raw else sheet_space,
        carry=carry_field(doc, raw["carry"], path + ("carry",)) if "carry" in raw else None,
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


def _number(value: Fraction) -> float:
    """Points as a bank or key.json writes them: an int when whole, else a float."""
    return int(value) if value.denominator == 1 else float(value)


def _points_value(doc: Doc, value: Any, path: tuple, what: str) -> Fraction:
    """One number of points above 0 (at most ``MAX_POINTS``), exactly."""
    if not isinstance(value, bool) and isinstance(value, int | float) and 0 < value <= MAX_POINTS:
        return Fraction(str(value))
    raise doc.error(path, f"expected {what} above 0, got {describe(value)}")


def question_points(
    doc: Doc,
    raw: Any,
    path: tuple,
    family: Family,
    params: dict[str, ParamValue],
    qid: str,
    decimals: int,
    fmt: str,
) -> tuple[float, tuple[tuple[str, float], ...]]:
    """A question's ``points``: its total and, when given per part, each part's points.

    ``points: 6`` is split equally by the grader (no per-part points). A mapping names parts
    by letter (``a``) or answer name (``scaled``): without ``total`` every part must be named
    and the total is their sum; with ``total``, the parts not named share what is left
    equally (to the hundredth of a point) and named parts must not exceed it.
    """
    if not isinstance(raw, dict):
        return _number(_points_value(doc, raw, path, "a number of points")), ()
    if fmt == "choice":
        raise doc.error(
            path, "expected a number of points: a multiple-choice item has one part, got a mapping"
        )
    parts = sample_parts(family, params, qid, decimals)
    if not parts:
        raise doc.error(path, "expected a number of points: no sample draw of this question solves")
    names = parts[0]
    if any(p != names for p in parts[1:]):
        other = next(p for p in parts[1:] if p != names)
        raise doc.error(
            path,
            "expected a number of points: this question's parts depend on its drawn values "
            f"({', '.join(names)} or {', '.join(other)}), so they cannot be given points by "
            "name or letter",
        )
    letters = {PART_LETTERS[i]: n for i, n in enumerate(names) if i < len(PART_LETTERS)}
    total: Fraction | None = None
    given: dict[str, Fraction] = {}
    for key, value in raw.items():
        if key == "total":
            total = _points_value(doc, value, path + (key,), "a total of points")
            continue
        name = letters.get(key) if isinstance(key, str) else None
        if isinstance(key, str) and key in names:
            if name is not None and name != key:
                raise doc.error(
                    path + (key,),
                    f"expected a part letter or an answer name, got {key!r}, which is both "
                    f"part ({key})'s letter and another part's answer",
                )
            name = key
        if name is None:
            options = [*letters, *names]
            listed = ", ".join(f"{letter} ({n})" for letter, n in letters.items())
            raise doc.error(
                path + (key,),
                f"unknown part {describe(key)}{did_you_mean(str(key), options)}; expected a "
                f"part letter or answer name: {listed}, or total",
            )
        if name in given:
            raise doc.error(path + (key,), f"expected each part once, got part {name!r} twice")
        given[name] = _points_value(doc, value, path + (key,), "a number of points")
    named = sum(given.values(), Fraction(0))
    rest = [n for n in names if n not in given]
    if total is None:
        if rest:
            missing = ", ".join(f"{PART_LETTERS[names.index(n)]} ({n})" for n in rest)
            raise doc.error(
                path,
                f"expected points for every part (or a total to share among the rest), "
                f"got none for {missing}",
            )
        total = named
        if total <= 0 or total > MAX_POINTS:
            raise doc.error(
                path,
                f"expected parts adding up to more than 0 and at most {MAX_POINTS}, "
                f"got {_number(total):g}",
            )
    elif named > total or (not rest and named != total):
        raise doc.error(
            path,
            f"expected the parts to add up to the total {_number(total):g}, got {_number(named):g}",
        )
    share = (total - named) / len(rest) if rest else Fraction(0)
    if rest and share <= 0:
        left = ", ".join(f"{PART_LETTERS[names.index(n)]} ({n})" for n in rest)
        raise doc.error(
            path,
            f"expected points above 0 for every part, got 0 left of the total "
            f"{_number(total):g} for {left}; give the named parts less or raise the total",
        )
    if (share * 100).denominator != 1:
        raise doc.error(
            path,
            f"expected the {_number(total - named):g} points left to split over "
            f"{len(rest)} parts in hundredths of a point, got {float(share):.4f} each; "
            "give those parts their points",
        )
    return _number(total), tuple((n, _number(given.get(n, share))) for n in names)
