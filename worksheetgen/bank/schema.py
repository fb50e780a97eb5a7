"""The bank schema: the ``sheet:`` and ``questions:`` fields, checked into SheetInfo and
QuestionSpecs (a family checks its own ``params``; a prompt is checked against sample draws).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from worksheetgen.bank.yamldoc import Doc, path_text
from worksheetgen.errors import describe, did_you_mean
from worksheetgen.families import FAMILIES, get_family
from worksheetgen.families.base import param_text
from worksheetgen.families.common import param_values
from worksheetgen.model import Location, ParamValue, Pinned, QuestionSpec
from worksheetgen.render.prompts import check_instructions, check_prompt_template
from worksheetgen.solve.draw import sample_contexts

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: no newline after it

QUESTION_FIELDS = ("id", "family", "points", "decimals", "params", "prompt", "format", "title")
SHEET_FIELDS = ("id", "title", "course", "instructions", "decimals")
TOP_FIELDS = ("sheet", "questions")


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
    return info


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


def question_spec(doc: Doc, raw: Any, index: int, sheet_decimals: int) -> QuestionSpec:

    path: tuple[Any, ...] = ("questions", index)
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
