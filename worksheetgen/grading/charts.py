"""The class report's pictures, drawn with matplotlib's Agg-family backends (no display).

Each chart is drawn once and saved twice: as SVG text to put inline in the HTML report (text
drawn as paths, so it needs no font and no network), and as a page of the PDF report.
matplotlib is imported only here, and this module only when grade writes its report, so
``--help`` and builds never load it. Text from the key or the students is drawn with
``parse_math=False``: a ``$`` in a name is a dollar (the report writes math as plain Unicode).
"""

from __future__ import annotations

import io
import logging
import os
import textwrap
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402  (the backend is chosen before pyplot is loaded)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from worksheetgen.grading.analysis import BINS, CellMap, ClassStats  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: same bytes for the same numbers: no dates, a fixed id salt
matplotlib.rcParams["svg.hashsalt"] = "worksheetgen"
#: SVG text stays text (the browser sets it with its own fonts: nothing is fetched), which is
#: several times faster to write than outlines; the PDF embeds its fonts, cut to the glyphs
#: used, with a CJK font after DejaVu for names in other scripts where one is installed
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["pdf.fonttype"] = 42
# a library never prints: font look-ups (a family without an AFM for the core fonts, a
# missing bold) and glyphs a font lacks are matplotlib's log lines and warnings, not ours
logging.getLogger("matplotlib").setLevel(logging.ERROR)
_INSTALLED = {f.name for f in font_manager.fontManager.ttflist}
matplotlib.rcParams["font.family"] = [
    f for f in ("DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK JP") if f in _INSTALLED
] or ["sans-serif"]
matplotlib.rcParams["font.size"] = 9
#: an ASCII minus on the axes keeps a chart's text in the PDF core fonts' character set
matplotlib.rcParams["axes.unicode_minus"] = False
SVG_META = {"Date": None}
PDF_META = {"CreationDate": None, "ModDate": None, "Producer": "worksheetgen"}
A4 = (8.27, 11.69)
BLUE, RED, GREY = "#3b6ea8", "#c0504d", "#9a9a9a"


@contextmanager
def _quiet() -> Iterator[None]:
    """matplotlib's warnings (a glyph no installed font has) kept from being printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _core_text(text: str) -> bool:
    """Can the PDF core fonts (WinAnsi) set ``text``?"""
    try:
        text.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def _short(text: str, n: int = 28) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class Canvas:
    """Charts drawn as SVG strings, each also kept as a page of one PDF."""

    def __init__(self) -> None:
        self._pdf_buf = io.BytesIO()
        self._pdf = PdfPages(self._pdf_buf, metadata=PDF_META)

    def add(self, fig: Figure, pdf: bool = True) -> str:
        """``fig`` as SVG text (and a PDF page, unless ``pdf`` is false); the figure is closed."""
        buf = io.StringIO()
        with _quiet():
            fig.savefig(buf, format="svg", metadata=SVG_META)
        if pdf:
            self._save(fig)
        plt.close(fig)
        text = buf.getvalue()
        return text[text.index("<svg") :]  # inline: no XML declaration or DOCTYPE

    def page(self, fig: Figure) -> None:
        """``fig`` as a PDF page only."""
        self._save(fig)
        plt.close(fig)

    def _save(self, fig: Figure) -> None:
        """A PDF page set in the PDF's own core fonts (nothing to embed: several times
        faster) when all its text is in their character set, else in embedded fonts."""
        core = all(_core_text(t.get_text()) for t in fig.findobj(Text))
        with matplotlib.rc_context({"pdf.use14corefonts": core}), _quiet():
            self._pdf.savefig(fig)

    def __len__(self) -> int:
        """Pages so far."""
        return int(self._pdf.get_pagecount())

    def pdf(self) -> bytes:
        with _quiet():
            self._pdf.close()
        return self._pdf_buf.getvalue()


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    fig = plt.figure(figsize=(width, height))
    return fig, fig.add_subplot(1, 1, 1)


def _margins(fig: Figure, left: float) -> None:
    """Room for the labels at the left, and half an inch above and below the bars."""
    height = fig.get_figheight()
    fig.subplots_adjust(left=left, right=0.97, bottom=0.5 / height, top=1 - 0.4 / height)


def histogram(stats: ClassStats) -> Figure:
    fig, ax = _figure(6.5, 3.2)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.16, top=0.9)
    width = 100 / BINS
    lefts = [i * width for i in range(BINS)]
    ax.bar(lefts, stats.histogram, width=width * 0.92, align="edge", color=BLUE)
    ax.set_xlim(0, 100)
    ax.set_xticks([i * width for i in range(BINS + 1)])
    ax.set_xlabel("score (% of the points)")
    ax.set_ylabel("students")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if stats.mean is not None:
        ax.axvline(stats.mean, color=RED, linestyle="--", linewidth=1)
        ax.text(stats.mean, ax.get_ylim()[1] * 0.95, f" mean {stats.mean:.0f} %", color=RED)
    ax.set_title(f"Scores of {stats.students} students", parse_math=False)
    return fig


def questions(stats: ClassStats, titles: Mapping[str, str] | None = None) -> Figure:
    """Facility and discrimination per question, each named "Q2 its title" (``titles``:
    the question's title as text, by question id; else its id)."""
    qs = stats.questions
    titles = titles or {}
    fig = plt.figure(figsize=(6.5, 1.2 + 0.32 * max(len(qs), 1) * 2))
    ax1 = fig.add_subplot(1, 2, 1)
    ax2 = fig.add_subplot(1, 2, 2, sharey=ax1)
    height = fig.get_figheight()
    fig.subplots_adjust(
        left=0.3, right=0.97, wspace=0.08, bottom=0.55 / height, top=1 - 0.45 / height
    )
    labels = [f"Q{q.number} {_short(titles.get(q.id, q.id), 26)}" for q in qs]
    ys = list(range(len(qs)))[::-1]
    ax1.barh(ys, [q.facility or 0.0 for q in qs], color=BLUE)
    ax1.set_xlim(0, 1)
    ax1.set_yticks(ys, labels=labels)
    for label in ax1.get_yticklabels():
        label.set_parse_math(False)
    ax1.set_xlabel("facility (mean share of points)")
    disc = [q.discrimination for q in qs]
    ax2.barh(ys, [d or 0.0 for d in disc], color=[RED if (d or 0) < 0.2 else BLUE for d in disc])
    for y, d in zip(ys, disc, strict=True):
        if d is None:
            ax2.text(0.02, y, "n/a", va="center", color=GREY)
    ax2.set_xlim(-1, 1)
    ax2.axvline(0, color=GREY, linewidth=0.8)
    ax2.axvline(0.2, color=GREY, linewidth=0.8, linestyle=":")
    ax2.set_xlabel("discrimination (point-biserial)")
    ax2.tick_params(labelleft=False)
    fig.suptitle("Per question")
    return fig


def parts(stats: ClassStats, names: Mapping[tuple[str, str], str] | None = None) -> Figure:
    """Success per part, each named as the sheet does ("Q2 (c) What is the shape…", from
    ``names``: by (question id, answer name), the question's number and the part's name)."""
    names = names or {}
    ps = [p for p in stats.parts if p.success is not None]
    fig, ax = _figure(6.5, 1.0 + 0.22 * max(len(ps), 1))
    _margins(fig, 0.5)
    ys = list(range(len(ps)))[::-1]
    labels = [_short(names.get((p.question, p.answer), f"{p.question} {p.part}"), 40) for p in ps]
    ax.barh(ys, [p.success or 0.0 for p in ps], color=BLUE)
    ax.set_yticks(ys, labels=labels)
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    ax.set_xlim(0, 1)
    ax.set_xlabel("success (mean share of the part's points)")
    ax.set_title("Per part")
    return fig


def slips(stats: ClassStats, titles: Mapping[str, str] | None = None) -> Figure:
    """Students per slip, each named by its title (``titles``, by slip id; else its id)."""
    titles = titles or {}
    ss = stats.slips
    fig, ax = _figure(6.5, 1.2 + 0.3 * max(len(ss), 1))
    _margins(fig, 0.3)
    ys = list(range(len(ss)))[::-1]
    ax.barh(ys, [s.students for s in ss], color=RED)
    ax.set_yticks(ys, labels=[_short(titles.get(s.misconception, s.misconception), 34) for s in ss])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("students who made it")
    if not ss:
        ax.text(0.5, 0.5, "no slip reproduced a wrong answer", ha="center", transform=ax.transAxes)
        ax.set_yticks([])
    ax.set_title("Slips")
    return fig


def heatmap(m: CellMap, name: str | None = None) -> Figure:
    """Which cells of a table answer were missed; ``name``: the part as the sheet names it."""
    size = min(5.0, 1.4 + 0.45 * max(m.rows, m.cols))
    fig, ax = _figure(size + 0.4, size + 0.4)
    fig.subplots_adjust(left=0.14, right=0.95, bottom=0.17, top=0.84)
    shares = [[n / m.students if m.students else 0.0 for n in row] for row in m.missed]
    ax.imshow(shares, cmap="Reds", vmin=0, vmax=1)
    for r in range(m.rows):
        for c in range(m.cols):
            ax.text(
                c,
                r,
                str(m.missed[r][c]),
                ha="center",
                va="center",
                color="white" if shares[r][c] > 0.6 else "black",
            )
    ax.set_xticks(range(m.cols), labels=[str(c + 1) for c in range(m.cols)])
    ax.set_yticks(range(m.rows), labels=[str(r + 1) for r in range(m.rows)])
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(
        f"{_short(name or f'{m.question} {m.part}', 48)}\nmissed by how many of {m.students}",
        parse_math=False,
        fontsize=8,
    )
    return fig


def text_page(lines: Sequence[tuple[str, str]], size: float = 9.0) -> list[Figure]:
    """A4 pages of text lines, each ``(style, text)``: ``h1``, ``h2`` or plain; long lines
    wrap; nothing is read as math or markup."""
    figs: list[Figure] = []
    fig: Figure | None = None
    y = 0.0
    step = size / 72 / A4[1] * 1.45
    for style, text in lines:
        scale = {"h1": 1.5, "h2": 1.15}.get(style, 1.0)
        width = int(100 / scale)
        for piece in textwrap.wrap(text, width) or [""]:
            if fig is None or y < 0.06:
                fig = plt.figure(figsize=A4)
                figs.append(fig)
                y = 0.95
            fig.text(
                0.07,
                y,
                piece,
                fontsize=size * scale,
                weight="bold" if style in ("h1", "h2") else "normal",
                parse_math=False,
                va="top",
            )
            y -= step * scale
        if style in ("h1", "h2"):
            y -= step * 0.5
    return figs
