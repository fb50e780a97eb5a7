"""A pen model for the scan tests, apart from tests/scansynth.py's: what people put in a
box of a rendered scannable page, and the copier that scans it.

The pens (each drawn anti-aliased on a 4x supersampled patch, darkening the page as ink
does, with wobbling strokes, seeded):

- ``ballpoint-cross``, ``ballpoint-tick``: a 0.3-0.5 mm dark stroke;
- ``felt-tip``: a 0.5-0.7 mm black stroke, a tick, a cross or two or three passes of a
  scribble (a partial fill, gaps between its passes);
- ``pencil``: a light grainy stroke (0.2-0.4 mm, a grey of 100-180 of 255 where it covers
  the paper, each grain of the paper taking 40-100 % of it), a cross or a tick;
- ``dot``: a stray dot of a pen's tip (0.4-0.7 mm across); ``speck``: a speck of dust
  or toner (0.08-0.2 mm); ``dot+speck``: both in one box;
- ``correction``: the box filled in completely (dense hatching over its frame), the sheet's
  way of taking a mark back.

The copier (``scan_page``): 150, 200 or 300 dpi (the page rendered at it), turned up to
2.5 degrees, scaled by up to 4 %, shifted, blurred, noised, then one of JPEG quality 40,
JPEG 75-90, PNG, or 1-bit (Floyd-Steinberg dithering, Pillow's ``convert("1")``).

A part (the boxes of one question's part on one page) gets one ``CASES`` entry; what it
should read as is ``expected``: the box meant, blank, or a flag for a person.
"""

from __future__ import annotations

import io
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

BOX_MM = 4.0
SUPER = 4  # the patches are drawn at 4x the page's resolution, then averaged down

#: the ordinary pens: at most 3 % of their parts may be flagged
ORDINARY = ("ballpoint-cross", "ballpoint-tick", "felt-tip")
#: how a part is marked, and how often (weights)
CASES = {
    "ballpoint-cross": 5,
    "ballpoint-tick": 5,
    "felt-tip": 4,
    "pencil": 5,
    "dot": 1,
    "speck": 1,
    "dot+speck": 2,
    "correction": 2,  # one box filled in (taken back), another marked with a ballpoint
    "correction-alone": 1,  # one box filled in and nothing else: for a person
    "blank": 2,
}
FORMATS = ("jpeg40", "jpeg", "png", "1bit")
DPIS = (150, 200, 300)


@dataclass
class Planted:
    """What was planted on a sheet's pages: by part id (question, answer), its case and
    the box id it means (None: blank), or "flag" (a person has to look)."""

    cases: dict[tuple[str, str], str] = field(default_factory=dict)
    expected: dict[tuple[str, str], str | None] = field(default_factory=dict)
    page_of: dict[tuple[str, str], int] = field(default_factory=dict)


def _wobbly(points: list[tuple[float, float]], rng: random.Random, amount: float) -> list:
    """A stroke through ``points`` with a hand's wobble: a point between each two, moved
    sideways by up to ``amount``."""
    out = [points[0]]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        off = rng.uniform(-amount, amount)
        out += [(mx - (y1 - y0) / length * off, my + (x1 - x0) / length * off), (x1, y1)]
    return out


def _strokes(kind: str, rng: random.Random) -> list[list[tuple[float, float]]]:
    """The strokes of a mark, in mm from the box's top left (the box is BOX_MM wide)."""
    s = BOX_MM
    j = lambda: rng.uniform(-0.05, 0.05) * s  # noqa: E731
    if kind == "cross":
        a, b = rng.uniform(0.08, 0.25) * s, rng.uniform(0.75, 0.95) * s
        return [
            [(a + j(), a + j()), (b + j(), b + j())],
            [(b + j(), a + j()), (a + j(), b + j())],
        ]
    if kind == "tick":
        return [
            [
                (rng.uniform(0.08, 0.25) * s, rng.uniform(0.45, 0.6) * s),
                (rng.uniform(0.35, 0.48) * s, rng.uniform(0.75, 0.92) * s),
                (rng.uniform(0.8, 0.97) * s, rng.uniform(0.03, 0.2) * s),
            ]
        ]
    if kind == "scribble":  # two or three passes across, gaps between them
        n = rng.randint(2, 3)
        rows = [0.3, 0.7] if n == 2 else [0.22, 0.5, 0.78]
        pts = []
        for k, t in enumerate(rows):
            left, right = rng.uniform(0.12, 0.25) * s, rng.uniform(0.75, 0.88) * s
            pts += [(left, t * s + j()), (right, t * s + j())][:: 1 if k % 2 == 0 else -1]
        return [pts]
    if kind == "hatch":  # the box filled in completely, over its frame
        pts = []
        y = -0.15
        k = 0
        while y <= s + 0.15:
            pts += [(-0.2, y), (s + 0.2, y + 0.1)][:: 1 if k % 2 == 0 else -1]
            y += 0.18
            k += 1
        return [pts]
    raise ValueError(kind)


def _patch(dpi: int, strokes, width_mm: float, rng: random.Random, wobble: float) -> Image.Image:
    """Coverage (0-255) of the strokes on a patch of the box and 1 mm around it, SUPER
    times the page's resolution."""
    px = dpi / 25.4 * SUPER
    size = int(round((BOX_MM + 2) * px))
    im = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(im)
    for stroke in strokes:
        pts = _wobbly(stroke, rng, wobble)
        xy = [((x + 1) * px, (y + 1) * px) for x, y in pts]
        draw.line(xy, fill=255, width=max(1, int(round(width_mm * px))), joint="curve")
    return im


def _blob(dpi: int, cx: float, cy: float, d_mm: float) -> Image.Image:
    px = dpi / 25.4 * SUPER
    size = int(round((BOX_MM + 2) * px))
    im = Image.new("L", (size, size), 0)
    r = max(d_mm * px / 2, 1.0)
    x, y = (cx + 1) * px, (cy + 1) * px
    ImageDraw.Draw(im).ellipse([x - r, y - r, x + r, y + r], fill=255)
    return im


def _lay(
    page: np.ndarray, cover: Image.Image, x_mm: float, y_mm: float, dpi: int, tone: float
) -> None:
    """Darken ``page`` (float, 0-255) where ``cover`` covers, as ink of grey ``tone`` does
    (multiplied: ink over the printed frame stays dark)."""
    px = dpi / 25.4
    n = cover.size[0] // SUPER
    small = np.asarray(cover.resize((n, n), Image.BOX), dtype=np.float64) / 255.0
    left, top = int(round((x_mm - 1) * px)), int(round((y_mm - 1) * px))
    h, w = page.shape
    region = page[max(top, 0) : min(top + n, h), max(left, 0) : min(left + n, w)]
    c = small[max(-top, 0) : max(-top, 0) + region.shape[0], max(-left, 0) :][:, : region.shape[1]]
    region *= 1 - c * (1 - tone / 255.0)


def draw_case(
    page: np.ndarray, case: str, box: tuple[float, float], dpi: int, rng: random.Random
) -> None:
    """Draw one pen's mark ``case`` in the box whose top left corner is ``box`` (mm)."""
    x, y = box
    s = BOX_MM
    if case in ("ballpoint-cross", "ballpoint-tick"):
        shape = "cross" if case.endswith("cross") else "tick"
        cover = _patch(dpi, _strokes(shape, rng), rng.uniform(0.3, 0.5), rng, 0.15)
        _lay(page, cover, x, y, dpi, rng.uniform(10, 60))
    elif case == "felt-tip":
        shape = rng.choice(["cross", "tick", "scribble"])
        cover = _patch(dpi, _strokes(shape, rng), rng.uniform(0.5, 0.7), rng, 0.1)
        _lay(page, cover, x, y, dpi, rng.uniform(0, 30))
    elif case == "pencil":
        shape = rng.choice(["cross", "tick"])
        cover = _patch(dpi, _strokes(shape, rng), rng.uniform(0.2, 0.4), rng, 0.15)
        grain = np.random.default_rng(rng.randrange(2**32)).uniform(0.4, 1.0, cover.size[::-1])
        cover = Image.fromarray((np.asarray(cover, dtype=np.float64) * grain).astype(np.uint8))
        _lay(page, cover, x, y, dpi, rng.uniform(100, 180))
    elif case in ("dot", "speck"):
        d = rng.uniform(0.4, 0.7) if case == "dot" else rng.uniform(0.08, 0.2)
        lo, hi = (0.3, 0.7) if case == "dot" else (0.15, 0.85)
        cover = _blob(dpi, rng.uniform(lo, hi) * s, rng.uniform(lo, hi) * s, d)
        _lay(page, cover, x, y, dpi, rng.uniform(0, 60))
    elif case == "dot+speck":
        draw_case(page, "dot", box, dpi, rng)
        draw_case(page, "speck", box, dpi, rng)
    elif case == "correction":
        cover = _patch(dpi, _strokes("hatch", rng), rng.uniform(0.35, 0.6), rng, 0.05)
        _lay(page, cover, x, y, dpi, rng.uniform(0, 40))
    else:
        raise ValueError(case)


def mark_sheet(
    images: list[Image.Image], pages: dict[int, list[dict]], dpi: int, rng: random.Random
) -> tuple[list[Image.Image], Planted]:
    """Mark every part of one sheet's rendered pages (``pages``: its boxes by page, with
    what each means, as scan/setup.py's ``_meanings`` gives them) with a case each, drawn
    by its pen: the marked pages (in ``images``' order) and what was planted."""
    planted = Planted()
    names, weights = list(CASES), list(CASES.values())
    out = []
    for number, image in enumerate(images, start=1):
        page = np.asarray(image, dtype=np.float64).copy()
        groups: dict[tuple[str, str], list[dict]] = {}
        for b in pages.get(number, []):
            groups.setdefault((b["question"], b["answer"]), []).append(b)
        for part, boxes in groups.items():
            case = rng.choices(names, weights)[0]
            if len(boxes) < 2 and case == "correction":
                case = "ballpoint-cross"
            picks = rng.sample(range(len(boxes)), min(2, len(boxes)))
            target = boxes[picks[0]]
            corner = (target["x"], target["y"])
            expected: str | None = None
            if case in ORDINARY or case == "pencil":
                draw_case(page, case, corner, dpi, rng)
                expected = target["id"]
            elif case in ("dot", "dot+speck"):
                draw_case(page, case, corner, dpi, rng)
                expected = "flag"
            elif case == "correction-alone":
                draw_case(page, "correction", corner, dpi, rng)
                expected = "flag"
            elif case == "speck":
                draw_case(page, case, corner, dpi, rng)
            elif case == "correction":
                draw_case(page, "correction", corner, dpi, rng)
                other = boxes[picks[1]]
                pen = rng.choice(["ballpoint-cross", "ballpoint-tick"])
                draw_case(page, pen, (other["x"], other["y"]), dpi, rng)
                expected = other["id"]
            planted.cases[part] = case
            planted.expected[part] = expected
            planted.page_of[part] = number
        out.append(Image.fromarray(np.clip(page, 0, 255).astype(np.uint8)))
    return out, planted


def scan_page(image: Image.Image, fmt: str, rng: random.Random) -> bytes:
    """A copier's page of ``image``: turned, scaled, shifted, blurred, noised, and saved as
    ``fmt`` (FORMATS)."""
    w, h = image.size
    im = image.rotate(rng.uniform(-2.5, 2.5), resample=Image.BILINEAR, fillcolor=255)
    scale = rng.uniform(0.96, 1.04)
    im = im.resize((int(w * scale), int(h * scale)), Image.BILINEAR)
    back = Image.new("L", (int(w * 1.06), int(h * 1.06)), 255 if fmt == "1bit" else 200)
    back.paste(im, (int(w * rng.uniform(0.01, 0.04)), int(h * rng.uniform(0.01, 0.04))))
    im = back.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.9)))
    a = np.asarray(im, dtype=np.float32)
    if fmt != "1bit":  # a greyer paper (a 1-bit scanner sets its white to the paper's)
        a *= rng.uniform(0.9, 1.0)
    a += np.random.default_rng(rng.randrange(2**32)).normal(0, rng.uniform(3, 8), a.shape)
    im = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    out = io.BytesIO()
    if fmt == "jpeg40":
        im.save(out, format="JPEG", quality=40)
    elif fmt == "jpeg":
        im.save(out, format="JPEG", quality=rng.randint(75, 90))
    elif fmt == "png":
        im.save(out, format="PNG")
    else:
        im.convert("1").save(out, format="PNG")  # Floyd-Steinberg dithering
    return out.getvalue()


@dataclass
class Tally:
    """Parts by (case, dpi, format): read right, flagged for a person, misread (silently)."""

    counts: Counter = field(default_factory=Counter)
    boxes: int = 0
    misreads: list = field(default_factory=list)

    def add(self, case: str, dpi: int, fmt: str, outcome: str, what: tuple = ()) -> None:
        self.counts[(case, dpi, fmt, outcome)] += 1
        if outcome == "misread":
            self.misreads.append((case, dpi, fmt, *what))

    def total(self, outcome: str, cases=None) -> int:
        return sum(
            n
            for (c, _, _, o), n in self.counts.items()
            if o == outcome and (cases is None or c in cases)
        )

    def parts(self, cases=None) -> int:
        return sum(n for (c, *_), n in self.counts.items() if cases is None or c in cases)

    def table(self, by: str = "dpi") -> str:
        """A Markdown table: pen kind x resolution (or format) -> right / flagged / misread."""
        keys = sorted({k[1] if by == "dpi" else k[2] for k in self.counts}, key=str)
        head = "| pen | " + " | ".join(f"{k} dpi" if by == "dpi" else str(k) for k in keys) + " |"
        lines = [head, "| --- |" + " --- |" * len(keys)]
        for case in CASES:
            cells = []
            for k in keys:
                got = Counter()
                for (c, d, f, o), n in self.counts.items():
                    if c == case and (d if by == "dpi" else f) == k:
                        got[o] += n
                cells.append(f"{got['right']} / {got['flagged']} / {got['misread']}")
            lines.append(f"| {case} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def run_mix(folder: Path, work: Path, seed: int, sheets: list[int], jobs: int = 0) -> Tally:
    """Mark ``sheets`` of the scannable build in ``folder`` (each sheet's own PDF: its
    answer sheet where the build has them) with the pens, scan every page as one copier
    setting (a resolution per sheet, a format per page), read them with ``scan`` and tally
    every part: read right, flagged for a person, or misread."""
    import csv
    import json

    from tests.scansynth import render
    from worksheetgen.bank.roster import file_stems
    from worksheetgen.grading.key import grade_key
    from worksheetgen.keyjson.read import load_key
    from worksheetgen.scan.contract import parse_positions
    from worksheetgen.scan.positions import SCAN_FORMAT, SCAN_VERSIONS
    from worksheetgen.scan.run import scan_files
    from worksheetgen.scan.setup import _meanings

    rng = random.Random(seed)
    records = load_key(folder / "key.json")
    doc = json.loads((folder / "scan.json").read_text("utf-8"))
    positions = parse_positions(doc, "scan.json", len(records.sheets), SCAN_FORMAT, SCAN_VERSIONS)
    meanings = _meanings(positions, records.sheets, grade_key(records), "scan.json")
    ids = [s.id for s in records.sheets]
    stems = dict(zip(ids, file_stems(ids), strict=True))
    each = next(folder / d for d in ("versions", "students") if (folder / d).exists())
    document = "answers" if doc.get("document") == "answers" else "sheet"
    files: list[str] = []
    plans: dict[int, tuple[Planted, int, dict[int, str]]] = {}
    work.mkdir(parents=True, exist_ok=True)
    for s in sheets:
        dpi = rng.choice(DPIS)
        images = render(each / f"{stems[ids[s]]}-{document}.pdf", dpi)
        marked, planted = mark_sheet(images, meanings[s], dpi, rng)
        formats = {}
        for p, image in enumerate(marked, start=1):
            fmt = formats[p] = rng.choice(FORMATS)
            path = work / f"s{s}-p{p}.{'jpg' if fmt.startswith('jpeg') else 'png'}"
            path.write_bytes(scan_page(image, fmt, rng))
            files.append(str(path))
        plans[s] = (planted, dpi, formats)
    out = work / "out"
    scan_files(files, folder / "key.json", out, jobs=jobs)
    with open(out / "responses.csv", encoding="utf-8", newline="") as f:
        rows = {
            (r["student"], r["question"], r["answer"]): r["value"] or r["mark"]
            for r in csv.DictReader(f)
        }
    with open(out / "issues.csv", encoding="utf-8", newline="") as f:
        flagged = {
            r["id"]: r["detail"]
            for r in csv.DictReader(f)
            if r["kind"] in ("unclear-box", "several-marked", "only-taken-back", "unmarked")
        }
    tally = Tally()
    for s, (planted, dpi, formats) in plans.items():
        sid = ids[s]
        boxes = {b["id"]: b for page in meanings[s].values() for b in page}
        tally.boxes += len(boxes)
        for (question, answer), case in planted.cases.items():
            gid = f"{sid}/{question}/{answer}"
            want = planted.expected[(question, answer)]
            fmt = formats[planted.page_of[(question, answer)]]
            value = rows.get((sid, question, answer), "")
            is_mark = any(
                "mark" in b
                for b in boxes.values()
                if (b["question"], b["answer"]) == (question, answer)
            )
            if want is None and is_mark:
                want = "flag"  # a score row nobody ticked: a mark still to give, listed
            if gid in flagged and value == "?":
                outcome = "flagged"
            elif want == "flag":
                outcome = "misread"
            elif want is None:
                outcome = "right" if value == "" and gid not in flagged else "misread"
            else:
                box = boxes[want]
                meant = box["mark"] if "mark" in box else box["option"]
                ok = value.casefold() == str(meant).casefold() and gid not in flagged
                outcome = "right" if ok else "misread"
            tally.add(case, dpi, fmt, outcome, (gid, want, value, flagged.get(gid, "")))
    return tally
