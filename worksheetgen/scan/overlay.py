"""``scan``'s verification view: each scanned page, upright and scaled to VIEW_DPI, with
every box outlined by what was read (read as marked, taken back, for a person, empty: each
a colour of the Okabe-Ito palette and a line of its own, so that the kinds differ without
colour), each part's question and letter beside its boxes and a legend under the page, as
auto-multiple-choice shows its scans. Drawn only for the pages that need it (``which``:
every page read, the pages with an issue, or none): a pile with nothing to look at costs
nothing here. The same drawing, smaller, of each student's pages goes on their feedback
pages on request (``student_scans``).

NumPy and Pillow, loaded only when ``scan`` draws."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from worksheetgen.language import NP_, gettext, pgettext
from worksheetgen.scan.boxes import box_state
from worksheetgen.scan.identify import FoundPage, Identified
from worksheetgen.scan.issues import Issue
from worksheetgen.scan.layout import PAPER_MM
from worksheetgen.scan.setup import VIEWS, ScanSetup

#: the views' resolution and JPEG quality: a page of A4 is some 830 x 1170 pixels, 140 to
#: 200 kB
VIEW_DPI = 100
VIEW_QUALITY = 85
#: the band under the page for its name and the legend (pixels at VIEW_DPI)
LEGEND_PX = 64

#: what a box was read as -> (its name in the legend, colour, line): Okabe-Ito's blue,
#: bluish green, vermillion and a grey, told apart by their lines too (solid and thick,
#: doubled, dashed with a corner flag, thin); the names are said in the view's language where
#: drawn (pgettext "scan view")
STYLES: dict[str, tuple[str, tuple[int, int, int], str]] = {
    "marked": (NP_("scan view", "read as marked"), (0, 114, 178), "solid"),
    "taken-back": (NP_("scan view", "taken back (filled in)"), (0, 158, 115), "double"),
    "flagged": (NP_("scan view", "for a person (see issues.csv)"), (213, 94, 0), "dashed"),
    "empty": (NP_("scan view", "empty"), (140, 140, 140), "thin"),
}
#: the scans on a student's feedback page (``--feedback-scans``): smaller (A4: 661 x 935
#: pixels, some 40 to 75 kB), the flagged boxes named for the student
FEEDBACK_DPI = 80
FEEDBACK_QUALITY = 70
STUDENT_WORDS = {"flagged": NP_("scan view", "looked at by hand")}
#: the issues whose id is a part's (sheet/question/answer): its boxes are for a person
BOX_ISSUES = frozenset({"unclear-box", "several-marked", "only-taken-back", "unmarked"})


@dataclass(frozen=True)
class Views:
    """The pictures drawn (file name -> JPEG bytes) and each issue's picture (issue id ->
    file name, relative to the output folder)."""

    pictures: dict[str, bytes]
    of_issue: dict[str, str]


@dataclass(frozen=True)
class ViewBox:
    """One box on a page: its top left corner (mm), its part's label ("3(a)"), its part's
    id (sheet/question/answer) and how it is drawn (a key of STYLES)."""

    x: float
    y: float
    label: str
    part: str
    style: str


def page_boxes(
    setup: ScanSetup, found: FoundPage, flagged: frozenset[str] | set[str]
) -> list[ViewBox]:
    """The boxes of one page read, each with the style of what was read: a box of a part in
    ``flagged`` (a part's id with an issue) that is not empty is for a person; otherwise as
    its ink was read (marked, taken back, empty; an unclear box is for a person)."""
    sheet, number = found.page.sheet, found.page.page
    sid = setup.key.sheets[sheet].id
    boxes = setup.sheets[sheet][number]
    out = []
    for box, measures in zip(boxes, found.ratios if found.ratios is not None else (), strict=True):
        state = box_state(*(float(m) for m in measures))
        part = f"{sid}/{box['question']}/{box['answer']}"
        style = "flagged" if state == "unclear" else state
        if part in flagged and state != "empty":
            style = "flagged"
        q, letter, _ = str(box["id"]).split(".")
        out.append(ViewBox(float(box["x"]), float(box["y"]), f"{q}({letter})", part, style))
    return out


def draw_views(setup: ScanSetup, found: Identified, issues: Sequence[Issue], which: str) -> Views:
    """The verification view of every page read (``which`` "all") or of every page with an
    issue ("issues": a box of its part on the page), none for "none"; each picture named
    ``verify/page-NNNN.jpg`` by the page's place among the pages read, the same whichever
    are drawn."""
    if which == "none" or not found.found:
        return Views({}, {})
    parts = {i.id: i for i in issues if i.kind in BOX_ISSUES}
    flagged = frozenset(parts)
    pictures: dict[str, bytes] = {}
    of_issue: dict[str, str] = {}
    for n, seen in enumerate(found.found, start=1):
        boxes = page_boxes(setup, seen, flagged)
        here = [b.part for b in boxes if b.part in flagged]
        if which != "all" and not here:
            continue
        name = f"page-{n:04d}.jpg"
        sid = setup.key.sheets[seen.page.sheet].id
        title = gettext(
            "sheet {sheet}, page {page}: {where}", sheet=sid, page=seen.page.page, where=seen.where
        )
        pictures[name] = render_view(
            seen.page.aligned().image,
            seen.page.homography,
            setup.paper,
            setup.box_mm,
            boxes,
            flagged,
            title,
        )
        for part in here:  # an issue's picture: the first page holding its part's boxes
            of_issue.setdefault(part, f"{VIEWS}/{name}")
    return Views(pictures, of_issue)


def student_scans(
    setup: ScanSetup, found: Identified, issues: Sequence[Issue]
) -> dict[str, list[tuple[bytes, int, int]]]:
    """Each sheet's pages read, drawn as the verification view at FEEDBACK_DPI (in page
    order, the legend in the student's words): (JPEG, width, height) by sheet id, the
    responses' student column, for the feedback pages."""
    flagged = frozenset(i.id for i in issues if i.kind in BOX_ISSUES)
    width, height = view_size(setup.paper, FEEDBACK_DPI)
    out: dict[str, list[tuple[bytes, int, int]]] = {}
    for seen in sorted(found.found, key=lambda f: (f.page.sheet, f.page.page)):
        sid = setup.key.sheets[seen.page.sheet].id
        jpeg = render_view(
            seen.page.aligned().image,
            seen.page.homography,
            setup.paper,
            setup.box_mm,
            page_boxes(setup, seen, flagged),
            flagged,
            gettext("sheet {sheet}, page {page}", sheet=sid, page=seen.page.page),
            dpi=FEEDBACK_DPI,
            quality=FEEDBACK_QUALITY,
            words=STUDENT_WORDS,
        )
        out.setdefault(sid, []).append((jpeg, width, height))
    return out


def view_size(paper: str, dpi: int = VIEW_DPI) -> tuple[int, int]:
    """A view's width and height in pixels: the printed page at ``dpi`` and the legend."""

    w_mm, h_mm = PAPER_MM[paper]
    scale = dpi / 25.4
    return int(round(w_mm * scale)), int(round(h_mm * scale)) + LEGEND_PX


def with_views(issues: Sequence[Issue], views: Views) -> list[Issue]:
    """The issues, each naming its page's picture (``Issue.view``) where one was drawn."""
    return [replace(i, view=views.of_issue[i.id]) if i.id in views.of_issue else i for i in issues]


def render_view(
    image: Any,
    homography: Any,
    paper: str,
    box_mm: float,
    boxes: Sequence[ViewBox],
    flagged: frozenset[str] | set[str],
    title: str,
    dpi: int = VIEW_DPI,
    quality: int = VIEW_QUALITY,
    words: dict[str, str] | None = None,
) -> bytes:
    """One page's view as JPEG: the scan (grey, ``image``: as read, its ``homography``
    taking the printed page's mm to its pixels) warped upright onto the printed page at
    ``dpi``, every box outlined in its style, each part's label beside its first box on the
    page (a part for a person, ``flagged``, in the flag's colour), and ``title`` and the
    legend in a band under the page (in STYLES' words, or ``words``' where given)."""
    w_mm, h_mm = PAPER_MM[paper]
    scale = dpi / 25.4  # pixels of the view a mm
    width, height = int(round(w_mm * scale)), int(round(h_mm * scale))
    # the view's pixel -> the scan's pixel: the homography after the view's scale
    to_scan = np.asarray(homography, dtype=float) @ np.diag([1 / scale, 1 / scale, 1.0])
    to_scan = to_scan / to_scan[2, 2]
    source = Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8))
    shrink = max(1, int(source.width / (w_mm * scale)))
    if shrink > 1:  # averaged down first: a warp samples, and would alias the strokes
        source = source.reduce(shrink)
        to_scan = np.diag([1 / shrink, 1 / shrink, 1.0]) @ to_scan
        to_scan = to_scan / to_scan[2, 2]
    page = source.transform(
        (width, height),
        Image.Transform.PERSPECTIVE,
        tuple(to_scan.ravel()[:8]),
        resample=Image.Resampling.BILINEAR,
        fillcolor=255,
    )
    view = Image.new("RGB", (width, height + LEGEND_PX), (255, 255, 255))
    view.paste(page.convert("RGB"), (0, 0))
    draw = ImageDraw.Draw(view)
    said = words or {}
    legend = [pgettext("scan view", said.get(k, named)) for k, (named, _, _) in STYLES.items()]
    font = _font(max(10, int(round(2.8 * scale))), [title, *legend, *(b.label for b in boxes)])
    labelled: set[str] = set()
    for box in boxes:
        left, top = box.x * scale, box.y * scale
        _outline(draw, (left, top, left + box_mm * scale, top + box_mm * scale), box.style)
    for box in boxes:  # the labels over the outlines, left of each part's first box
        if box.part in labelled:
            continue
        labelled.add(box.part)
        colour = STYLES["flagged"][1] if box.part in flagged else (0, 0, 0)
        text = ("! " if box.part in flagged else "") + box.label
        right, middle = box.x * scale - 8, (box.y + box_mm / 2) * scale  # clear of outlines
        x0, y0, x1, y1 = draw.textbbox((right, middle), text, font=font, anchor="rm")
        draw.rectangle((x0 - 2, y0 - 1, x1 + 1, y1 + 1), fill=(255, 255, 230))
        draw.text((right, middle), text, fill=colour, font=font, anchor="rm")
    _legend(draw, width, height, box_mm * scale, title, font, said)
    out = io.BytesIO()
    view.save(out, format="JPEG", quality=quality, optimize=True)
    return out.getvalue()


def _font(size: int, texts: Sequence[str]) -> Any:
    """The view's font: Pillow's own, which draws ASCII only, or, for a view whose words go
    beyond it (a German legend's "zurückgenommen", a file or student named "Müller"),
    matplotlib's DejaVu Sans, as the feedback PDF's text is set in."""
    if all(t.isascii() for t in texts):
        return ImageFont.load_default(size=size)
    # matplotlib only for such a view: its fonts are what a report is set in
    import matplotlib

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    return ImageFont.truetype(str(ttf), size=size)


def _dashes(
    draw: Any, start: tuple[float, float], end: tuple[float, float], fill: Any, width: int
) -> None:
    """A dashed line, dashes 4 px long with 3 px between."""
    (x0, y0), (x1, y1) = start, end
    length = max(abs(x1 - x0), abs(y1 - y0))
    at = 0.0
    while at < length:
        a, b = at / length, min(at + 4, length) / length
        draw.line(
            (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, x0 + (x1 - x0) * b, y0 + (y1 - y0) * b),
            fill=fill,
            width=width,
        )
        at += 7


def _outline(draw: Any, rect: tuple[float, float, float, float], style: str) -> None:
    """A box's outline in ``style`` (a key of STYLES), just outside its printed frame."""
    _, colour, line = STYLES[style]
    left, top, right, bottom = rect
    if line == "thin":
        draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), outline=colour, width=1)
    elif line == "solid":
        draw.rectangle((left - 3, top - 3, right + 3, bottom + 3), outline=colour, width=3)
    elif line == "double":
        draw.rectangle((left - 2, top - 2, right + 2, bottom + 2), outline=colour, width=2)
        draw.rectangle((left - 6, top - 6, right + 6, bottom + 6), outline=colour, width=2)
    else:  # dashed, and a flag at its top right corner
        x0, y0, x1, y1 = left - 3, top - 3, right + 3, bottom + 3
        corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
        for k in range(4):
            _dashes(draw, corners[k], corners[(k + 1) % 4], colour, 3)
        draw.polygon(((x1 - 1, y0 - 7), (x1 + 7, y0 - 7), (x1 + 7, y0 + 1)), fill=colour)


def _legend(
    draw: Any, width: int, top: int, box_px: float, title: str, font: Any, said: dict[str, str]
) -> None:
    """The band under the page: a rule, the page's name and what each outline means (in
    STYLES' words, or ``said``'s)."""
    draw.line((0, top, width, top), fill=(0, 0, 0), width=1)
    draw.text((10, top + 8), title, fill=(0, 0, 0), font=font)
    x, y = 18.0, top + 36.0
    for style, (named, _, _) in STYLES.items():
        words = pgettext("scan view", said.get(style, named))
        _outline(draw, (x, y, x + box_px, y + box_px), style)
        draw.text((x + box_px + 10, y + box_px / 2), words, fill=(0, 0, 0), font=font, anchor="lm")
        x += box_px + 24 + draw.textlength(words, font=font)
