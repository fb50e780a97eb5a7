"""The geometry and codes of a scannable sheet, shared by the build (which prints them
through ``templates/latex/scan.tex.j2``) and the reader: corner marks, the page code, the
boxes' size, and which points a TA's score boxes give. Standard library only."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

#: paper sizes in mm (width, height), as the templates' geometry sets them
PAPER_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: a corner mark: a filled square MARK_MM wide, its outer corner MARK_INSET_MM from the edges
MARK_MM = 6.0
MARK_INSET_MM = 7.0
#: the page code: CODE_CELLS cells CELL_MM square in a column centred on the page's height,
#: in the left margin, centred CODE_X_MM from the left edge (under the corner marks)
CELL_MM = 2.2
CODE_X_MM = 10.0
CODE_CELLS = 58
#: a box to mark (outer size, frame included)
BOX_MM = 4.0
BUILD_BITS, SHEET_BITS, PAGE_BITS, CRC_BITS = 16, 12, 6, 16
MAX_SHEETS = 2**SHEET_BITS
MAX_PAGES = 2**PAGE_BITS - 1
SP_PER_MM = 65536 * 72.27 / 25.4  # TeX's scaled points in a millimetre
#: what scan.json's ``document`` says of a build whose boxes are on separate answer sheets
ANSWERS = "answers"


def mark_centres(paper: str) -> list[tuple[float, float]]:
    """The corner marks' centres in mm from the page's top left: top left, top right,
    bottom left, bottom right."""
    w, h = PAPER_MM[paper]
    c = MARK_INSET_MM + MARK_MM / 2
    return [(c, c), (w - c, c), (c, h - c), (w - c, h - c)]


def cell_centres(paper: str) -> list[tuple[float, float]]:
    """The page code's cell centres in mm from the page's top left."""
    _, h = PAPER_MM[paper]
    y0 = h / 2 - CODE_CELLS / 2 * CELL_MM
    return [(CODE_X_MM, y0 + (i + 0.5) * CELL_MM) for i in range(CODE_CELLS)]


def crc16(bits: str) -> int:
    """CRC-16/CCITT of a string of 0s and 1s."""
    crc = 0xFFFF
    for b in bits:
        top = (crc >> 15) & 1
        crc = (crc << 1) & 0xFFFF
        if top ^ (b == "1"):
            crc ^= 0x1021
    return crc


def _bits(value: int, n: int) -> str:
    return format(value, f"0{n}b")


def code_parts(build: int, sheet: int) -> tuple[str, str]:
    """What the sheet template prints before the page's bits (the start cell, the build's
    and the sheet's bits) and after them (the CRC of build and sheet)."""
    data = _bits(build, BUILD_BITS) + _bits(sheet, SHEET_BITS)
    return "1" + data, _bits(crc16(data), CRC_BITS)


def page_cells(build: int, sheet: int, page: int) -> str:
    """Every cell of a page's code (1 filled), as TeX prints it."""
    prefix, crc = code_parts(build, sheet)
    p = _bits(page, PAGE_BITS)
    return prefix + p + "".join("1" if c == "0" else "0" for c in p) + crc + "0"


def decode_cells(cells: str) -> tuple[int, int, int] | None:
    """(build, sheet, page) from a page code's cells, or None when they are not one
    (wrong start or end cell, page bits and complement disagree, CRC wrong)."""
    if len(cells) != CODE_CELLS or cells[0] != "1" or cells[-1] != "0":
        return None
    data = cells[1 : 1 + BUILD_BITS + SHEET_BITS]
    at = 1 + BUILD_BITS + SHEET_BITS
    p, q = cells[at : at + PAGE_BITS], cells[at + PAGE_BITS : at + 2 * PAGE_BITS]
    crc = cells[at + 2 * PAGE_BITS : at + 2 * PAGE_BITS + CRC_BITS]
    if any(a == b for a, b in zip(p, q, strict=True)) or int(crc, 2) != crc16(data):
        return None
    page = int(p, 2)
    if page == 0:
        return None
    return int(data[:BUILD_BITS], 2), int(data[BUILD_BITS:], 2), page


#: the steps a part worth up to HALVES_UP_TO points is marked in, the first that divides its
#: points into STEPS_FROM to STEPS_UP_TO equal steps (½ where it can, so 1, 2.5, 4 keep their
#: halves; ¼ for 0.75; 0.2 for 1.4; 0.1 for 0.3)
STEPS = (Fraction(1, 2), Fraction(1, 4), Fraction(1, 5), Fraction(1, 10))
STEPS_FROM, STEPS_UP_TO = 2, 8
HALVES_UP_TO = 4


def score_values(points: Fraction, legacy: bool = False) -> list[Fraction]:
    """The points a part's score boxes give, 0 up to ``points`` in equal steps: for a part
    worth at most HALVES_UP_TO, the first of STEPS that divides its points into 2 to 8
    steps (1: 0, 0.5, 1; 0.75: 0, 0.25, 0.5, 0.75; 1.4: 0, 0.2, ..., 1.4); where none does,
    halves and the part's own points last (1.8: 0, 0.5, 1, 1.5, 1.8); above HALVES_UP_TO,
    whole points and the part's own points last when they are not whole (4.5: 0, 1, ..., 4,
    4.5). The scanning guide states the same rule. ``legacy``: the boxes sheets printed
    before this rule (scan.json version 1), halves only where halves divide the points,
    else whole points: so a class printed then is still read as printed."""
    if points <= 0:
        return [Fraction(0)]
    if legacy:
        step = Fraction(1, 2) if points <= 4 and (2 * points).denominator == 1 else Fraction(1)
    elif points > HALVES_UP_TO:
        step = Fraction(1)
    else:
        fits = [s for s in STEPS if (points / s).denominator == 1]
        fits = [s for s in fits if STEPS_FROM <= points / s <= STEPS_UP_TO]
        step = fits[0] if fits else Fraction(1, 2)
    out: list[Fraction] = []
    v = Fraction(0)
    while v <= points:
        out.append(v)
        v += step
    if out[-1] != points:
        out.append(points)
    return out


def value_text(v: Fraction) -> str:
    """A score box's printed label, as the sheet prints the part's points: 0, 0.5, 1, 1.8
    (a decimal wherever one writes the value exactly), else a fraction (5/3)."""
    if v.denominator == 1:
        return str(v.numerator)
    d = v.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:  # only 2s and 5s: a terminating decimal, exact
        return format(Decimal(v.numerator) / Decimal(v.denominator), "f")
    return f"{v.numerator}/{v.denominator}"
