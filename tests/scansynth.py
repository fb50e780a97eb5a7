"""Synthetic scans of a --scannable build's sheet.pdf, for the scan tests and the bench:
pages rendered at a resolution, boxes filled as a pen would (uneven fills, ticks, crosses,
a mark taken back by filling its box in), then turned, scaled, shifted, blurred, noised,
JPEG-compressed, laid on a grey background."""

from __future__ import annotations

import io
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFilter

BOX_MM = 4.0


@dataclass
class Plan:
    """What a synthetic scan meant: every box's planted state by (sheet, page, box index)."""

    planted: dict[tuple[int, str], str] = field(default_factory=dict)  # (sheet, box id)


def render(pdf_path: Path, dpi: int) -> list[Image.Image]:
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return [
            pdf[i].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
            for i in range(len(pdf))
        ]
    finally:
        pdf.close()


def _pen(
    draw: ImageDraw.ImageDraw, kind: str, x: float, y: float, s: float, rng: random.Random
) -> None:
    """Draw ``kind`` in the box at (x, y) px, s px wide."""
    w = max(2, int(round(s * rng.uniform(0.1, 0.16))))  # a pen's stroke, 0.4-0.6 mm
    j = lambda: rng.uniform(-0.06, 0.06) * s  # noqa: E731
    if kind == "cross":
        draw.line(
            [(x + 0.15 * s + j(), y + 0.15 * s + j()), (x + 0.85 * s + j(), y + 0.85 * s + j())],
            fill=0,
            width=w,
        )
        draw.line(
            [(x + 0.85 * s + j(), y + 0.15 * s + j()), (x + 0.15 * s + j(), y + 0.85 * s + j())],
            fill=0,
            width=w,
        )
    elif kind == "tick":
        draw.line(
            [
                (x + 0.15 * s + j(), y + 0.55 * s + j()),
                (x + 0.4 * s + j(), y + 0.85 * s + j()),
                (x + 0.9 * s + j(), y + 0.1 * s + j()),
            ],
            fill=0,
            width=w + 1,
            joint="curve",
        )
    elif kind == "fill":  # uneven: a scribble over part of the box (as the sheet's rule
        # says, filling a box in completely takes its mark back)
        n = rng.randint(3, 4)
        for k in range(n):
            t = 0.3 + 0.4 * k / (n - 1)
            draw.line(
                [(x + 0.2 * s + j(), y + t * s + j()), (x + 0.8 * s + j(), y + t * s + j())],
                fill=rng.randint(0, 50),
                width=max(2, int(s * 0.1)),
            )
    elif kind == "blacken":  # a mark taken back: the box filled in completely
        draw.rectangle([x - 0.05 * s, y - 0.05 * s, x + 1.05 * s, y + 1.05 * s], fill=0)
    elif kind == "faint":  # a stray dot: unclear
        r = s * 0.11
        cx, cy = x + s * rng.uniform(0.4, 0.6), y + s * rng.uniform(0.4, 0.6)
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=0)


def fill(
    pages: list[Image.Image],
    scan: dict,
    sheet: int,
    dpi: int,
    plan_of,
    rng: random.Random,
    plan: Plan,
) -> None:
    """Mark the pages of sheet ``sheet`` (its pages in ``pages``, page 1 first) as
    ``plan_of(group boxes) -> [kind or None per box]`` says."""
    px = dpi / 25.4
    for pg in scan["sheets"][sheet]["pages"]:
        image = pages[pg["page"] - 1]
        draw = ImageDraw.Draw(image)
        groups: dict[str, list[int]] = {}
        for i, b in enumerate(pg["boxes"]):
            groups.setdefault(b["id"].rsplit(".", 1)[0], []).append(i)
        for members in groups.values():
            kinds = plan_of([pg["boxes"][i] for i in members], rng)
            for i, kind in zip(members, kinds, strict=True):
                b = pg["boxes"][i]
                plan.planted[(sheet, b["id"])] = kind or "empty"
                if kind:
                    _pen(draw, kind, b["x"] * px, b["y"] * px, BOX_MM * px, rng)


def smudge_code(image: Image.Image, dpi: int, cells: range, paper: str = "a4") -> None:
    """Paper over ``cells`` of the page code (white), as a label or correction fluid
    would: the code no longer checks, the rest of the page is as printed."""
    from worksheetgen.scan.layout import CELL_MM, cell_centres

    px = dpi / 25.4
    centres = cell_centres(paper)
    x, _ = centres[cells.start]
    top = centres[cells.start][1] - CELL_MM / 2 - 0.2
    bottom = centres[cells.stop - 1][1] + CELL_MM / 2 + 0.2
    ImageDraw.Draw(image).rectangle([(x - 2) * px, top * px, (x + 2) * px, bottom * px], fill=255)


def distort(
    image: Image.Image,
    rng: random.Random,
    *,
    upside_down: bool = False,
    jpeg: bool = True,
    grey: bool = True,
) -> bytes:
    """A copier's page: turned up to 3 degrees, scaled up to 3 %, shifted, blurred, noised,
    on a grey background, JPEG-compressed (or PNG)."""
    w, h = image.size
    angle = rng.uniform(-3, 3)
    scale = rng.uniform(0.97, 1.03)
    im = image.rotate(angle, resample=Image.BILINEAR, expand=False, fillcolor=255)
    im = im.resize((int(w * scale), int(h * scale)), Image.BILINEAR)
    back = Image.new("L", (int(w * 1.08), int(h * 1.08)), 170 if grey else 255)
    back.paste(
        im,
        (
            int(w * 0.03 + rng.uniform(-0.015, 0.015) * w),
            int(h * 0.03 + rng.uniform(-0.015, 0.015) * h),
        ),
    )
    im = back.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.0)))
    a = np.asarray(im, dtype=np.float32)
    a = a + np.random.default_rng(rng.randrange(2**32)).normal(0, 8, a.shape)
    im = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if upside_down:
        im = im.rotate(180)
    out = io.BytesIO()
    if jpeg:
        im.save(out, format="JPEG", quality=rng.randint(70, 90))
    else:
        im.save(out, format="PNG")
    return out.getvalue()


def load_scan(folder: Path) -> dict:
    return json.loads((folder / "scan.json").read_text())


def page_images(folder: Path, dpi: int) -> list[Image.Image]:
    return render(folder / "sheet.pdf", dpi)


def angle_ok(angle: float) -> bool:
    return abs(angle) <= 3 and not math.isnan(angle)


def box_sheet(
    dpi: int, kinds: list[str | None], rng: random.Random, cols: int = 20
) -> tuple[bytes, list[tuple[float, float]]]:
    """A JPEG of printed 4 mm boxes 8 mm apart (a frame each, as the sheets print them),
    marked with ``kinds`` as a pen would, then blurred, noised and JPEG-compressed but not
    moved: with each box's top left corner (mm), the image's mm -> pixels is a scale."""
    px = dpi / 25.4
    rows = (len(kinds) + cols - 1) // cols
    image = Image.new("L", (int((cols * 8 + 10) * px), int((rows * 8 + 10) * px)), 255)
    draw = ImageDraw.Draw(image)
    corners = []
    for i, kind in enumerate(kinds):
        x, y = 5 + (i % cols) * 8, 5 + (i // cols) * 8
        corners.append((float(x), float(y)))
        frame = [x * px, y * px, (x + BOX_MM) * px, (y + BOX_MM) * px]
        draw.rectangle(frame, outline=0, width=max(1, int(0.3 * px)))
        if kind:
            _pen(draw, kind, x * px, y * px, BOX_MM * px, rng)
    image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.0)))
    a = np.asarray(image, dtype=np.float32)
    a = a + np.random.default_rng(rng.randrange(2**32)).normal(0, 8, a.shape)
    out = io.BytesIO()
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(
        out, format="JPEG", quality=rng.randint(70, 90)
    )
    return out.getvalue(), corners


def blank_back(dpi: int, kind: str, rng: random.Random, paper_mm=(210, 297)) -> Image.Image:
    """The back of a sheet printed on one side, as a scanner gives it: ``dust`` (20-300
    specks of 0.1-0.7 mm and a hair or two), ``dirty`` (dust and light grey smudges),
    ``grey`` (dust on a paper up to 30 levels greyer, noised: what 1-bit dithering turns
    into scattered dots), ``edge`` (dust and a dark band of the scanner's lid along one
    or two sides). Not yet moved nor encoded (``distort``, ``encoded``)."""
    px = dpi / 25.4
    w, h = int(paper_mm[0] * px), int(paper_mm[1] * px)
    im = Image.new("L", (w, h), rng.randint(235, 255))
    draw = ImageDraw.Draw(im)
    for _ in range(rng.randint(20, 300)):
        r = rng.uniform(0.05, 0.35) * px
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        draw.ellipse([x - r, y - r * rng.uniform(0.5, 1.5), x + r, y + r], fill=rng.randint(0, 90))
    for _ in range(rng.randint(0, 2)):  # a hair
        x, y, length, a = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(4, 15) * px, 6.28
        a *= rng.random()
        end = (x + length * math.cos(a), y + length * math.sin(a))
        draw.line([(x, y), end], fill=rng.randint(30, 110), width=max(1, int(0.08 * px)))
    grey = np.asarray(im, dtype=np.float32)
    if kind == "dirty":
        yy, xx = np.ogrid[:h, :w]
        for _ in range(rng.randint(2, 6)):
            cx, cy, s = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(10, 50) * px
            grey = grey - rng.uniform(15, 45) * np.exp(
                -((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s * s)
            )
    if kind == "grey":
        grey = grey - rng.uniform(0, 30)
        grey = grey + np.random.default_rng(rng.randrange(2**32)).normal(0, 10, grey.shape)
    im = Image.fromarray(np.clip(grey, 0, 255).astype(np.uint8))
    return im


def dark_edge(im: Image.Image, dpi: int, rng: random.Random) -> Image.Image:
    """A scanner's dark edge along one or two sides, 1-8 mm wide."""
    px = dpi / 25.4
    w, h = im.size
    draw = ImageDraw.Draw(im)
    for side in rng.sample("lrtb", rng.randint(1, 2)):
        b = rng.uniform(1, 8) * px
        box = {"l": [0, 0, b, h], "r": [w - b, 0, w, h], "t": [0, 0, w, b], "b": [0, h - b, w, h]}
        draw.rectangle(box[side], fill=rng.randint(30, 150))
    return im


def encoded(im: Image.Image, fmt: str, rng: random.Random) -> bytes:
    """``im`` as a scanner writes it: ``jpeg`` (quality 40-90), ``png``, ``1bit`` (a PNG
    dithered to black and white) or ``1bit-tiff`` (CCITT group 4)."""
    out = io.BytesIO()
    if fmt == "jpeg":
        im.save(out, format="JPEG", quality=rng.randint(40, 90))
    elif fmt == "1bit":
        im.convert("1").save(out, format="PNG")
    elif fmt == "1bit-tiff":
        im.convert("1").save(out, format="TIFF", compression="group4")
    else:
        im.save(out, format="PNG")
    return out.getvalue()
