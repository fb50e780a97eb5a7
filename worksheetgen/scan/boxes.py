"""``scan``'s boxes: each read as empty, marked, taken back or unclear from its ink
(``box_state``), and each part's answer from its boxes (``read_boxes``): its one marked box,
or an issue for a person with a cropped picture, never a guess; a mark-all part's every
marked box, as one set ("A;C")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from worksheetgen.language import decimal, gettext
from worksheetgen.scan.identify import Identified
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.layout import value_text
from worksheetgen.scan.setup import ScanSetup

#: How a box is read, from its ink share (samples darker than the ink level), its faint ink
#: (the share of it in pieces bigger than a speck: a light pencil's stroke counts), its
#: spread and its depth (how far its strokes reach across the box together, the larger and
#: the smaller of their width and height as a share of the box's; pages.box_measures), in
#: this order: ink share TAKEN_BACK and more: filled in completely (a mark taken back); from
#: FULL to TAKEN_BACK: unclear; faint ink under EMPTY (nothing but specks): empty; spread
#: SPREAD and more and depth DEPTH and more: marked (a tick, a cross, a scribble reach
#: across the box); anything else unclear, for a person: a stray dot (compact, however
#: dark, with a speck beside it or not), a pencil's stroke too faint to be sure of, one line
#: along the box's side or a single dash (thin one way).
EMPTY = 0.005


SPREAD = 0.75


DEPTH = 0.25


FULL = 0.80


TAKEN_BACK = 0.92


#: between the options of a mark-all part's answer in responses.csv ("A;C"), as grade reads it
SET_SEPARATOR = ";"

#: the mark of a part whose boxes a person has to look at: graded as still to mark, not
#: as blank, until a correction settles it
PENDING = "?"


@dataclass(frozen=True)
class BoxReading:
    """One box as read: its state (empty, marked, taken-back, unclear), ink share and
    spread."""

    state: str
    ratio: float
    spread: float = 0.0


def box_state(ratio: float, faint: float, spread: float, depth: float) -> str:
    """empty, marked, taken-back or unclear, from a box's ink share, faint ink share,
    spread and depth (the rules above EMPTY)."""
    if ratio >= TAKEN_BACK:
        return "taken-back"
    if ratio >= FULL:
        return "unclear"
    if faint < EMPTY:
        return "empty"
    if spread >= SPREAD and depth >= DEPTH:
        return "marked"
    return "unclear"


@dataclass(frozen=True)
class ScannedAnswer:
    """One part of a sheet as its boxes say: its sheet, question and answer, the entry its
    boxes make ("mark": score boxes; "value": options) and the mark or option read (PENDING
    while a person has to look); ``issue``: what the person has to look at, or None;
    ``allowed``: the option letters or the points its boxes offer."""

    sheet: str
    question: str
    answer: str
    entry: str
    value: str
    kind: str
    allowed: tuple[str, ...]
    issue: Issue | None = None
    #: a mark-all part: its value is a set of options ("A;C"), several marks no issue
    multi: bool = False

    @property
    def id(self) -> str:
        """The part's id, as issues.csv and a corrections file name it."""
        return f"{self.sheet}/{self.question}/{self.answer}"


@dataclass(frozen=True)
class BoxAnswers:
    """Every part of the sheets scanned, in responses.csv's order, and the pictures of the
    boxes a person has to look at."""

    answers: tuple[ScannedAnswer, ...]
    crops: dict[str, bytes]


def read_boxes(setup: ScanSetup, found: Identified) -> BoxAnswers:
    """Each part's answer from its boxes: its one marked box (a mark-all part: every marked
    box, none an issue); unclear boxes, several marks,
    a box only taken back and a score row nobody marked are for a person (with a cropped
    picture); a part whose boxes are all on a missing page is a mark still to give."""
    # the image machinery only when scanning
    from worksheetgen.scan.images import crop_png

    key_sheets, sheets, box_mm = setup.key.sheets, setup.sheets, setup.box_mm
    readings: dict[tuple[int, str, str], list[tuple[Any, dict[str, Any], BoxReading]]] = {}
    for seen_page in found.found:  # every page's boxes into their parts' groups
        page, ratios, where = seen_page.page, seen_page.ratios, seen_page.where
        boxes = sheets[page.sheet][page.page]
        for box, (ratio, faint, spread, depth) in zip(
            boxes, ratios if ratios is not None else (), strict=True
        ):
            reading = BoxReading(
                box_state(float(ratio), float(faint), float(spread), float(depth)),
                float(ratio),
                float(spread),
            )
            group = readings.setdefault((page.sheet, box["question"], box["answer"]), [])
            group.append((page, {**box, "where": where}, reading))
    out: list[ScannedAnswer] = []
    crops: dict[str, bytes] = {}
    numbered = len(found.crops)  # the boxes' pictures are numbered after the pages'
    for (s, question, answer), group in sorted(readings.items(), key=lambda kv: (kv[0][0],)):
        sid = key_sheets[s].id
        gid = f"{sid}/{question}/{answer}"
        is_mark = "mark" in group[0][1]
        problem, value, pg = _decide(gid, group)
        if problem is not None:
            name = f"box-{numbered + len(crops) + 1:04d}.png"
            xs = [g[1]["x"] for g in group if g[0] is pg]  # its boxes on that page
            ys = [g[1]["y"] for g in group if g[0] is pg]
            aligned = pg.aligned()
            rect = aligned.pixel_box(min(xs), min(ys), max(xs) + box_mm, max(ys) + box_mm, 3.0)
            crops[name] = crop_png(aligned.image, rect)
            problem = replace(problem, crop=name)
        kind = "mark" if is_mark else "value"
        allowed = tuple(b["mark"] if is_mark else b["option"] for _, b, _ in group)
        # for a person to settle: graded as still to mark, not blank
        entry, shown_value = ("mark", PENDING) if problem is not None else (kind, value or "")
        multi = bool(group[0][1].get("multi"))
        out.append(
            ScannedAnswer(sid, question, answer, entry, shown_value, kind, allowed, problem, multi)
        )
    # the parts of a scanned sheet whose boxes are all on a missing page: nobody has seen
    # them, so each is a mark still to give (its page is listed as missing-page)
    scanned = {s for s, _ in found.seen}
    lost = sorted((k, p) for k in scanned for p in sheets[k] if (k, p) not in found.seen)
    unseen: dict[str, tuple[str, str, str, str, list[str]]] = {}
    for s, p in lost:
        sid = key_sheets[s].id
        for box in sheets[s][p]:
            gid = f"{sid}/{box['question']}/{box['answer']}"
            if (s, box["question"], box["answer"]) in readings:
                continue
            if gid not in unseen:
                kind = "mark" if "mark" in box else "value"
                unseen[gid] = (sid, box["question"], box["answer"], kind, [])
            unseen[gid][4].append(box["mark"] if "mark" in box else box["option"])
    for sid, question, answer, kind, offered in unseen.values():
        out.append(
            ScannedAnswer(sid, question, answer, "mark", PENDING, kind, tuple(offered), None)
        )
    return BoxAnswers(tuple(out), crops)


def _decide(
    gid: str, group: list[tuple[Any, dict[str, Any], BoxReading]]
) -> tuple[Issue | None, str | None, Any]:
    """A part's answer from its boxes as read (``group``: page, box, reading): the issue a
    person has to look at (or None), the mark or option its one marked box gives, and the
    page whose boxes the issue's picture shows."""
    marked = [b for _, b, r in group if r.state == "marked"]
    unclear = [(pg, b, r) for pg, b, r in group if r.state == "unclear"]
    is_mark = "mark" in group[0][1]
    pg = group[0][0]
    value: str | None = None
    problem = None
    if unclear:
        problem = Issue(
            "unclear-box",
            gid,
            group[0][1]["where"],
            "; ".join(
                gettext(
                    "{box}: ink {ink}, spread {spread}",
                    box=_box_name(b),
                    ink=decimal(f"{r.ratio:.2f}"),
                    spread=decimal(f"{r.spread:.2f}"),
                )
                for _, b, r in unclear
            ),
        )
        pg = unclear[0][0]
    elif marked and group[0][1].get("multi"):  # mark all that apply: every marked box
        value = SET_SEPARATOR.join(b["option"] for b in marked)
    elif len(marked) > 1:
        problem = Issue(
            "several-marked",
            gid,
            group[0][1]["where"],
            gettext("marked: {boxes}", boxes=", ".join(_box_name(b) for b in marked)),
        )
        pg = group[0][0]
    elif marked:
        value = marked[0]["mark"] if is_mark else marked[0]["option"]
    elif any(r.state == "taken-back" for _, _, r in group):
        # a box filled in and nothing else marked: the rule says "taken back", but a
        # student who read "fill in" may have meant it as the answer; a person decides
        problem = Issue(
            "only-taken-back",
            gid,
            group[0][1]["where"],
            gettext(
                "filled in completely (a mark taken back) and nothing else marked: {boxes}",
                boxes=", ".join(_box_name(b) for _, b, r in group if r.state == "taken-back"),
            ),
        )
        pg = next(g for g, _, r in group if r.state == "taken-back")
    elif is_mark:
        # a score row with no box marked: the TA has not marked this part yet, which is
        # a mark still to give, never a blank answer worth 0
        problem = Issue(
            "unmarked",
            gid,
            group[0][1]["where"],
            gettext("no score box marked: a mark still to give (not a 0)"),
        )
        pg = group[0][0]
    return problem, value, pg


def _box_name(box: dict[str, Any]) -> str:
    """A box as the sheet labels it: "box 2.5" (a score box), "option B"."""
    if "mark" in box:
        return gettext("box {mark}", mark=decimal(value_text(Fraction(box["mark"]))))
    return gettext("option {letter}", letter=box["option"])
