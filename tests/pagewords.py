"""Words as printed on a PDF's pages (``pdftotext -bbox``), and the two faults a reader sees at
once: two words printed over each other, and a word in the outer 1.2 cm of a page (off the
page, or where a printer or a scanner cuts it)."""

from __future__ import annotations

import html
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

EDGE_PT = 1.2 / 2.54 * 72  # 1.2 cm
_PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)
_WORD = re.compile(
    r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)</word>'
)
# symbols TeX builds from pieces that overlap on purpose (a radical's sign and its bar)
_PIECES = set("√∑∏⎡⎢⎣⎤⎥⎦[]")


@dataclass(frozen=True)
class Word:
    page: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str


def pages(pdf: Path) -> list[tuple[float, float, list[Word]]]:
    """Each page's width, height and words."""
    out = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    result = []
    for number, (width, height, body) in enumerate(_PAGE.findall(out), start=1):
        words = [
            Word(number, float(a), float(b), float(c), float(d), html.unescape(t))
            for a, b, c, d, t in _WORD.findall(body)
        ]
        result.append((float(width), float(height), words))
    return result


def faults(pdf: Path) -> list[str]:
    """Words printed over each other, and words within 1.2 cm of a page's left or right edge."""
    found = []
    for width, _height, words in pages(pdf):
        ws = sorted(words, key=lambda w: w.x0)
        for i, a in enumerate(ws):
            if a.x0 < EDGE_PT or a.x1 > width - EDGE_PT:
                found.append(f"{pdf.name} p{a.page}: {a.text!r} within 1.2 cm of the edge")
            for b in ws[i + 1 :]:
                if b.x0 >= a.x1:
                    break
                ox = min(a.x1, b.x1) - max(a.x0, b.x0)
                oy = min(a.y1, b.y1) - max(a.y0, b.y0)
                small = min((a.x1 - a.x0) * (a.y1 - a.y0), (b.x1 - b.x0) * (b.y1 - b.y0))
                if ox > 1.5 and oy > 3.5 and small > 0 and ox * oy / small > 0.3:
                    if not _PIECES & set(a.text + b.text):
                        found.append(f"{pdf.name} p{a.page}: {a.text!r} over {b.text!r}")
    return found
