"""One scanned page: find its corner marks (three are enough: the fourth is inferred), fit
the homography from the printed page (mm) to the image, read its page code in either of its
two upright orientations (a landscape image is turned a quarter first, so all four are
tried), and measure the ink in boxes.
NumPy only; nothing here guesses: a page whose marks or code do not read is None."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from worksheetgen.scan.layout import (
    CELL_MM,
    MARK_MM,
    PAPER_MM,
    cell_centres,
    decode_cells,
    mark_centres,
)

#: a pixel is ink when darker than this share of the paper's white
INK_LEVEL = 0.55
#: a box's darkness, each sample averaged with its neighbours this wide (mm): about a pen's
#: stroke, so a dithered scan's dots and a pencil's grain read as their grey
SMOOTH_MM = 0.3
#: on a 1-bit scan (dithered: its paper has black dots, its greys are dots apart) the window
#: is wider
SMOOTH_1BIT_MM = 0.5
#: faint ink: darker than this (1 - a share of the paper's white, after smoothing): a light
#: pencil's stroke; a box with any, beyond specks, is not empty
FAINT_LEVEL = 0.1
#: a stroke: darker than half the box's darkest ink after smoothing, and than STROKE_FLOOR,
#: or than STROKE_LEVEL (a light pencil's stroke is as much a stroke as a pen's)
STROKE_LEVEL = 0.3
STROKE_FLOOR = 0.15
#: a piece of a stroke reaches at least this share of the box across or down (a dot less)
STROKE_SPAN = 0.5
#: a connected piece of faint ink with less ink than this (mm^2 of black) is a speck ...
SPECK_MM2 = 0.05
#: ... and one with less than DOT_MM2 counts only when it reaches FAINT_SPAN of the box
#: (a light stroke; clustered dots of a 1-bit scan's dithering do not)
DOT_MM2 = 0.1
FAINT_SPAN = 0.4
#: how far into a box its frame and misalignment reach (mm): the rest is read
BOX_INSET_MM = 0.75
#: where the corner marks are looked for: this share of the page's width and height
SEARCH_SHARE = 0.2


@dataclass(frozen=True)
class Aligned:
    """A page identified and aligned: its code, the homography (mm -> pixels), its ink
    mask and the image it was read from (turned upright, a quarter at a time)."""

    build: int
    sheet: int
    page: int
    homography: np.ndarray
    ink: np.ndarray
    image: np.ndarray

    def to_pixels(self, points: np.ndarray) -> np.ndarray:
        """Points in mm from the printed page's top left -> (x, y) pixels of the image."""
        p = np.column_stack([points, np.ones(len(points))]) @ self.homography.T
        return p[:, :2] / p[:, 2:3]

    def pixel_box(
        self, left: float, top: float, right: float, bottom: float, margin_mm: float
    ) -> tuple[int, int, int, int]:
        """The image's pixel rectangle (left, top, right, bottom) around a part of the
        printed page (in mm), ``margin_mm`` more on every side."""
        a, b = left - margin_mm, right + margin_mm
        c, d = top - margin_mm, bottom + margin_mm
        corners = np.array([[a, c], [b, c], [a, d], [b, d]])
        p = self.to_pixels(corners)
        return (
            int(p[:, 0].min()),
            int(p[:, 1].min()),
            int(np.ceil(p[:, 0].max())),
            int(np.ceil(p[:, 1].max())),
        )


def ink_ratios(
    page: Aligned, corners: np.ndarray, size_mm: float, inset_mm: float, n: int = 12
) -> np.ndarray:
    """The share of ink inside each box whose top left corner (mm) is a row of ``corners``,
    ``inset_mm`` in from its sides, sampled on an n x n grid: all boxes at once."""
    steps = np.linspace(inset_mm, size_mm - inset_mm, n)
    gx, gy = np.meshgrid(steps, steps)
    grid = np.column_stack([gx.ravel(), gy.ravel()])  # n*n offsets
    points = (corners[:, None, :] + grid[None, :, :]).reshape(-1, 2)
    px = page.to_pixels(points)
    h, w = page.ink.shape
    ix = np.clip(np.rint(px[:, 0]).astype(np.intp), 0, w - 1)
    iy = np.clip(np.rint(px[:, 1]).astype(np.intp), 0, h - 1)
    return page.ink[iy, ix].reshape(len(corners), n * n).mean(axis=1)


def box_measures(
    page: Aligned, corners: np.ndarray, size_mm: float, inset_mm: float, n: int = 24
) -> np.ndarray:
    """What each box holds (its top left corner (mm) a row of ``corners``), read ``inset_mm``
    in from its sides (its printed frame left out), one row each. The box is sampled on an
    n x n grid and each sample's darkness (1 - its grey over the paper's white) averaged
    with its neighbours' (SMOOTH_MM wide, SMOOTH_1BIT_MM on a 1-bit scan: a dithered scan's
    dots, a pencil's grain and JPEG's noise become the grey they stand for); the grid is
    then read in cells of 2 x 2 samples, connected where they touch (8 ways):

    - its ink share: the share of the samples darker than INK_LEVEL of the paper's white
      (filled in: 92 % and more);
    - its faint ink: the share of the cells darker than FAINT_LEVEL in connected pieces
      holding more than SPECK_MM2 of ink that reach FAINT_SPAN of the box or hold more
      than DOT_MM2 (a speck of dust, clustered dots of dithering or noise are neither; a
      light pencil's stroke and a stray dot are);
    - its spread and depth: how far the pieces darker than half the box's darkest ink
      (between STROKE_FLOOR and STROKE_LEVEL) that reach STROKE_SPAN across the box
      (strokes, not dots) reach across it together, the larger and the smaller of their
      width and height as a share of the box's. A tick, a cross or a scribble reaches
      across the box; a stray dot with a speck beside it does not, nor one line along the
      box's side (its frame, a scan a little off) or a single dash.

    A page with no boxes is not measured (``corners`` has a row at least)."""
    steps = np.linspace(inset_mm, size_mm - inset_mm, n)
    gx, gy = np.meshgrid(steps, steps)
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    points = (corners[:, None, :] + grid[None, :, :]).reshape(-1, 2)
    px = page.to_pixels(points)
    h, w = page.image.shape
    ix = np.clip(np.rint(px[:, 0]).astype(np.intp), 0, w - 1)
    iy = np.clip(np.rint(px[:, 1]).astype(np.intp), 0, h - 1)
    white = paper_white(page.image)
    grey = page.image[iy, ix]
    # a 1-bit scan (every sample black or white): its dithering read over a wider window
    bilevel = bool(((grey == grey.min()) | (grey == grey.max())).all())
    dark = np.clip(1.0 - grey.astype(np.float32) / white, 0.0, 1.0)
    dark = dark.reshape(len(corners), n, n)
    # each sample with its neighbours within SMOOTH_MM: a window of k x k samples
    pitch = (size_mm - 2 * inset_mm) / (n - 1)
    k = max(1, int(round((SMOOTH_1BIT_MM if bilevel else SMOOTH_MM) / pitch)) | 1)
    pad = np.pad(dark, ((0, 0), (k // 2, k // 2), (k // 2, k // 2)), mode="edge")
    sums = pad.cumsum(axis=1).cumsum(axis=2)
    sums = np.pad(sums, ((0, 0), (1, 0), (1, 0)))
    smooth = (sums[:, k:, k:] - sums[:, :-k, k:] - sums[:, k:, :-k] + sums[:, :-k, :-k]) / (k * k)
    ink = (smooth > 1 - INK_LEVEL).mean(axis=(1, 2))
    # cells of 2 x 2 samples: the darkest of them for the shape, their mean for the ink
    m = n // 2
    quad = smooth[:, : 2 * m, : 2 * m].reshape(len(corners), m, 2, m, 2)
    peak, mass = quad.max(axis=(2, 4)), quad.mean(axis=(2, 4)) * (2 * pitch) ** 2
    # the shapes only of the boxes with any faint ink (most boxes of a page are empty)
    live = np.flatnonzero(peak.max(axis=(1, 2)) > FAINT_LEVEL)
    out = np.zeros((len(corners), 4))
    out[:, 0] = ink
    if len(live):
        out[live, 1:] = _shapes(peak[live], mass[live])
    return out


def _shapes(peak: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Each box's faint ink, spread and depth (``box_measures``) from its cells' darkest
    sample (``peak``) and ink (``mass``, mm^2 of black)."""
    m = peak.shape[1]
    faint = _pieces(peak > FAINT_LEVEL)
    # a piece of faint ink counts when it holds more than a speck's ink and is either long
    # (a stroke, however light) or holds a dot's ink (dithering's dots, clustered, are
    # neither)
    held, span = _piece_stats(faint, mass)
    kept = (faint < m * m) & (held > SPECK_MM2) & ((span >= FAINT_SPAN) | (held > DOT_MM2))
    # a stroke is as dark as half the box's darkest ink (a light pencil's too), within limits
    level = np.clip(0.5 * peak.max(axis=(1, 2)), STROKE_FLOOR, STROKE_LEVEL)
    strokes = _pieces(peak > level.reshape(-1, 1, 1))
    _, stroke_span = _piece_stats(strokes, mass)
    has = (strokes < m * m) & (stroke_span >= STROKE_SPAN)  # strokes, not dots
    index = np.arange(m)

    def reach(cols: np.ndarray) -> np.ndarray:  # (boxes, m) -> first to last, as a share
        first = np.where(cols, index, m).min(axis=1)
        last = np.where(cols, index, -1).max(axis=1)
        return np.clip(last - first + 1, 0, m) / m

    across, down = reach(has.any(axis=1)), reach(has.any(axis=2))
    return np.column_stack(
        [kept.mean(axis=(1, 2)), np.maximum(across, down), np.minimum(across, down)]
    )


def _pieces(mask: np.ndarray) -> np.ndarray:
    """Each cell's connected piece (8 ways) in each box of ``mask`` (boxes, m, m): its
    label, the smallest index of its cells; m * m where the cell is not in the mask."""
    b, m, _ = mask.shape
    none = m * m
    labels = np.where(mask, np.arange(none).reshape(1, m, m), none)
    live = mask.reshape(b, -1).any(axis=1)
    if not live.any():
        return labels
    sub = labels[live]
    inside = mask[live]
    pad = np.full((len(sub), m + 2, m + 2), none, dtype=sub.dtype)  # a frame of none
    middle = pad[:, 1:-1, 1:-1]
    for _ in range(none):  # a piece's label spreads one cell a round
        # the smallest label of each cell's 3 x 3 neighbourhood: along the rows, then down
        middle[...] = sub
        middle[...] = np.minimum(np.minimum(pad[:, 1:-1, :-2], middle), pad[:, 1:-1, 2:])
        low = np.minimum(np.minimum(pad[:, :-2, 1:-1], middle), pad[:, 2:, 1:-1])
        low[~inside] = none
        if np.array_equal(low, sub):
            break
        sub = low
    labels[live] = sub
    return labels


def _piece_stats(labels: np.ndarray, mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each cell of ``labels`` (boxes, m, m: ``_pieces``'), its piece's ink (the sum
    of ``mass`` over the piece) and how far the piece reaches across or down the box, the
    larger, as a share of the box."""
    b, m, _ = labels.shape
    size = m * m + 1
    piece = (labels + size * np.arange(b).reshape(b, 1, 1)).ravel()
    held = np.bincount(piece, weights=mass.ravel(), minlength=b * size)
    reach = np.zeros(b * size)
    for pos in (
        np.broadcast_to(np.arange(m).reshape(1, 1, m), labels.shape).ravel(),
        np.broadcast_to(np.arange(m).reshape(1, m, 1), labels.shape).ravel(),
    ):
        order = np.lexsort((pos, piece))  # by piece, then by place
        p, at = piece[order], pos[order]
        starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        ends = np.r_[starts[1:], len(p)] - 1
        reach[p[starts]] = np.maximum(reach[p[starts]], (at[ends] - at[starts] + 1) / m)
    return held[piece].reshape(labels.shape), reach[piece].reshape(labels.shape)


def paper_white(image: np.ndarray) -> float:
    """The paper's white: the 90th percentile of a sample (so a grey scanner lid around
    the page is not taken for it), at least a fifth of full white."""
    white = float(np.percentile(image[::7, ::7], 90))
    scale = 255.0 if image.dtype == np.uint8 else 1.0
    return max(white, 0.2 * scale)


def ink_mask(image: np.ndarray) -> np.ndarray:
    """Where the page has ink: darker than INK_LEVEL of its paper's white."""
    return image < INK_LEVEL * paper_white(image)


#: a blank page (the back of a sheet printed on one side) is told from a page with print
#: on a grid of cells this wide (mm): a cell is print when this share of it is ink
BLANK_CELL_MM = 2.0
BLANK_CELL_INK = 0.05
#: print is more than this many cells each beside another (64 mm²: a single line of text
#: has some 60, a corner mark alone 9): fewer, and scattered, are dust and specks
BLANK_CELLS = 16
#: a 1-bit (dithered) scan is read as the grey of squares this wide (mm) first: dithered
#: noise on a grey or dirty page is not ink, a pen's or a printer's stroke stays
DITHER_MM = 0.75
#: a scanner's edge (its lid, a shadow, the glass beyond the page) is what is darker than
#: EDGE_LEVEL of the paper's white from the image's border in, at most this share of its
#: width or height
EDGE_LEVEL = 0.8
EDGE_SHARE = 0.1


def _cell_means(image: np.ndarray, size: int) -> np.ndarray:
    """The mean of every ``size`` x ``size`` square of ``image`` (its last part left out)."""
    h, w = image.shape[0] // size, image.shape[1] // size
    return image[: h * size, : w * size].reshape(h, size, w, size).mean(axis=(1, 3))


def is_blank(image: np.ndarray, paper: str) -> bool:
    """True when a page has no print: nothing but dust and specks, a scanner's dark edge,
    1-bit dithering of a grey or slightly dirty page. Read on cells of BLANK_CELL_MM: a cell
    is print when BLANK_CELL_INK of it is ink, and not within (or next to) the dark run of
    cells from the image's border in (EDGE_SHARE); a page is blank with fewer than
    BLANK_CELLS print cells that each have another beside them (a speck of dust is alone)."""
    if image.shape[1] > image.shape[0]:
        image = np.rot90(image)
    w_mm, h_mm = PAPER_MM[paper]
    px_per_mm = min(image.shape[0] / h_mm, image.shape[1] / w_mm)
    sample = image[::7, ::7]
    grey = image.astype(np.float32)
    if not ((sample > 0) & (sample < 255)).any():  # 1-bit: read its dithering as grey
        size = max(2, int(round(px_per_mm * DITHER_MM)))
        grey, px_per_mm = _cell_means(grey, size), px_per_mm / size
    white = paper_white(grey)
    size = max(2, int(round(px_per_mm * BLANK_CELL_MM)))
    share = _cell_means((grey < INK_LEVEL * white).astype(np.float32), size)
    dark = _cell_means(grey, size) < EDGE_LEVEL * white
    edge = np.zeros_like(dark)
    for cells, out in ((dark, edge), (dark.T, edge.T)):
        for run, into in ((cells, out), (cells[:, ::-1], out[:, ::-1])):
            depth = max(1, int(run.shape[1] * EDGE_SHARE))
            into[:, :depth] |= np.logical_and.accumulate(run[:, :depth], axis=1)
    # and the cell beyond the run, which the edge's own border may share
    edge[1:] |= edge[:-1].copy()
    edge[:-1] |= edge[1:].copy()
    edge[:, 1:] |= edge[:, :-1].copy()
    edge[:, :-1] |= edge[:, 1:].copy()
    ink = (share >= BLANK_CELL_INK) & ~edge
    padded = np.pad(ink, 1).astype(np.int8)
    h, w = ink.shape
    around = sum(
        padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if dy or dx
    )
    return int((ink & (around > 0)).sum()) < BLANK_CELLS


def _window_sums(integral: np.ndarray, k: int) -> np.ndarray:
    """Sums of every k x k window of the image whose integral image is given."""
    return integral[k:, k:] - integral[:-k, k:] - integral[k:, :-k] + integral[:-k, :-k]


def _find_mark(ink: np.ndarray, px_per_mm: float) -> tuple[float, float] | None:
    """The centre of the corner mark in this corner region of the ink mask (pixels), or
    None: the square window darkest inside with the least ink around it."""
    k = max(3, int(round(MARK_MM * px_per_mm)))
    r = max(2, int(round(1.5 * px_per_mm)))
    big = k + 2 * r
    if ink.shape[0] <= big or ink.shape[1] <= big:
        return None
    integral = np.zeros((ink.shape[0] + 1, ink.shape[1] + 1), dtype=np.int32)
    integral[1:, 1:] = ink.astype(np.int32).cumsum(0).cumsum(1)
    inner = _window_sums(integral, k)[
        r : r + ink.shape[0] - big + 1, r : r + ink.shape[1] - big + 1
    ]
    outer = _window_sums(integral, big) - inner
    score = inner - 2 * outer
    y, x = np.unravel_index(int(np.argmax(score)), score.shape)
    if inner[y, x] < 0.6 * k * k or outer[y, x] > 0.25 * (big * big - k * k):
        return None
    # the ink's centroid in the window found (its corner at (x + r, y + r))
    top, left = y + r, x + r
    patch = ink[top : top + k, left : left + k]
    ys, xs = np.nonzero(patch)
    return float(left + xs.mean()), float(top + ys.mean())


def _refine(
    region: np.ndarray, x: float, y: float, px_per_mm: float, left: int, top: int
) -> tuple[float, float]:
    """A mark's centre at full resolution: the centroid of the ink within a mark's width
    around where the coarse search found it (image coordinates)."""
    r = int(MARK_MM * px_per_mm * 0.75)
    x0, y0 = max(0, int(x) - r), max(0, int(y) - r)
    patch = region[y0 : int(y) + r, x0 : int(x) + r]
    ys, xs = np.nonzero(patch)
    if len(xs) == 0:
        return x + left, y + top
    return float(x0 + xs.mean() + left), float(y0 + ys.mean() + top)


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The projective map taking 4 points ``src`` to ``dst`` (3 x 3)."""
    rows = []
    rhs = []
    for (x, y), (u, v) in zip(src, dst, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    h = np.linalg.solve(np.array(rows, dtype=float), np.array(rhs, dtype=float))
    return np.append(h, 1.0).reshape(3, 3)


#: how far (a share of the page's size) three corner marks may lie from where the printed
#: page puts them relative to each other, for the fourth to be inferred from them
THREE_MARKS_TOLERANCE = 0.02


def _four_corners(
    found: list[tuple[float, float] | None], printed: np.ndarray
) -> np.ndarray | None:
    """The four corner marks' centres (image pixels): as found, or with one of them
    missing (a corner cut off, torn, stapled or off the scanner's glass) where the other
    three make it: a scan is a rotation, a scale and a shift of the printed page, so the
    corners make a parallelogram and the fourth is the sum of its neighbours less the
    opposite one. None when two are missing, or three do not lie as the printed page puts
    them (THREE_MARKS_TOLERANCE)."""
    missing = [i for i, point in enumerate(found) if point is None]
    if not missing:
        return np.array(found, dtype=float)
    if len(missing) > 1:
        return None
    gone = missing[0]
    # corners 0 1 / 2 3: each one's neighbours and its opposite
    first, second = {0: (1, 2), 1: (0, 3), 2: (0, 3), 3: (1, 2)}[gone]
    opposite = 3 - gone
    seen = np.array([(0.0, 0.0) if p is None else p for p in found], dtype=float)
    seen[gone] = seen[first] + seen[second] - seen[opposite]
    # the three marks found must lie as a turned and scaled page puts them: the two sides
    # meeting at the corner opposite the missing one scaled alike and at a right angle
    a = seen[first] - seen[opposite]
    b = seen[second] - seen[opposite]
    pa = printed[first] - printed[opposite]
    pb = printed[second] - printed[opposite]
    scale_a = np.hypot(*a) / np.hypot(*pa)
    scale_b = np.hypot(*b) / np.hypot(*pb)
    if min(scale_a, scale_b) <= 0:
        return None
    cosine = abs(float(a @ b)) / (np.hypot(*a) * np.hypot(*b))
    if abs(scale_a / scale_b - 1) > THREE_MARKS_TOLERANCE or cosine > THREE_MARKS_TOLERANCE:
        return None
    return seen


def _orientations(image: np.ndarray, paper: str) -> list[tuple[Aligned, str]] | None:
    """The page's two upright readings (as scanned, and turned half a turn), each with the
    page code's cells as read, or None when its corner marks are not found."""
    if image.shape[1] > image.shape[0]:
        image = np.rot90(image)  # a landscape page: turned upright, a quarter at a time
    w_mm, h_mm = PAPER_MM[paper]
    ink = ink_mask(image)
    h, w = ink.shape
    px_per_mm = min(h / h_mm, w / w_mm)
    sh, sw = int(h * SEARCH_SHARE), int(w * SEARCH_SHARE)
    step = 2 if px_per_mm > 4 else 1  # the marks are looked for at half the resolution
    found: list[tuple[float, float] | None] = []
    for top, left in ((0, 0), (0, w - sw), (h - sh, 0), (h - sh, w - sw)):
        region = ink[top : top + sh, left : left + sw]
        mark = _find_mark(region[::step, ::step], px_per_mm / step)
        found.append(
            None
            if mark is None
            else _refine(region, mark[0] * step, mark[1] * step, px_per_mm, left, top)
        )
    printed = np.array(mark_centres(paper))
    seen = _four_corners(found, printed)  # top left, top right, bottom left, bottom right
    if seen is None:
        return None
    cells = np.array(cell_centres(paper))
    out = []
    for turned in (False, True):
        targets = seen[::-1] if turned else seen  # upside down: the corners swap
        page = Aligned(0, 0, 0, homography(printed, targets), ink, image)
        ratios = ink_ratios(page, cells - CELL_MM / 2, CELL_MM, 0.5, 4)
        out.append((page, "".join("1" if r > 0.5 else "0" for r in ratios)))
    return out


def align(image: np.ndarray, paper: str) -> Aligned | None:
    """Identify and align one scanned page, or None when its marks or code do not read."""
    for page, bits in _orientations(image, paper) or []:
        code = decode_cells(bits)
        if code is not None:
            return replace(page, build=code[0], sheet=code[1], page=code[2])
    return None


def align_as(image: np.ndarray, paper: str, cells: str) -> Aligned | None:
    """Align a page a person has named (its code did not read) by its corner marks, the
    way up in which its code's cells are nearest to ``cells`` (the code it should carry);
    None when the marks are not found or neither way up is nearer."""
    readings = _orientations(image, paper)
    if readings is None:
        return None
    distance = [sum(a != b for a, b in zip(bits, cells, strict=True)) for _, bits in readings]
    if distance[0] == distance[1]:
        return None
    return readings[0][0] if distance[0] < distance[1] else readings[1][0]
