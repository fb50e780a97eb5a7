"""The class report's pictures, drawn with matplotlib's SVG and PDF backends (no display).

Each chart is drawn once per output: as SVG text to put inline in the HTML report (text kept
as text, set by the browser with its own fonts: nothing is fetched), and as a page of the
PDF report. matplotlib is imported only here, without pyplot (figures are ``Figure`` objects
saved by the backends directly), and this module only when grade writes its report, so
``--help``, builds and ``grade --no-report`` never load it. Text from the key or the
students is drawn with ``parse_math=False``: a ``$`` in a name is a dollar (the report
writes math as plain Unicode).

What makes it fast enough (a class of 30 took seconds of CPU): DejaVu Sans alone unless a
text needs a CJK fallback, titles at a fixed height, the PDF's fonts as Type 3 (written by
matplotlib from the glyph outlines, where Type 42 ran fontTools' subsetter over DejaVu's
layout tables) or the core fonts where the page's text allows, and all the tables' heatmaps
in one axes without ticks (an axes each cost more than everything drawn in it).
"""

from __future__ import annotations

import io
import logging
import math
import re
import textwrap
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

# matplotlib without pyplot: figures are made as Figure objects and saved by the SVG and PDF
# backends directly, so no GUI backend is looked for and no figure manager kept
import matplotlib
from matplotlib import font_manager
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from worksheetgen.language import gettext
from worksheetgen.report.analysis import BINS, CellMap, ClassStats
from worksheetgen.report.marks import MARKS, SCRIPT, SUB, balanced, no_marks

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: same bytes for the same numbers: no dates, a fixed id salt
matplotlib.rcParams["svg.hashsalt"] = "worksheetgen"
#: SVG text stays text (the browser sets it with its own fonts: nothing is fetched), which is
#: several times faster to write than outlines; the PDF embeds its fonts as Type 3, cut to
#: the glyphs used (``use_fonts``: a CJK font after DejaVu for text in other scripts)
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["pdf.fonttype"] = 3
# a library never prints: font look-ups (a family without an AFM for the core fonts, a
# missing bold) and glyphs a font lacks are matplotlib's log lines and warnings, not ours
logging.getLogger("matplotlib").setLevel(logging.ERROR)
matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
matplotlib.rcParams["font.size"] = 9
#: an ASCII minus on the axes keeps a chart's text in the PDF core fonts' character set
matplotlib.rcParams["axes.unicode_minus"] = False
#: titles at a fixed height over the axes: matplotlib otherwise measures every tick label
#: of every axes to place them (a tenth of the drawing time), and no chart has labels on top
matplotlib.rcParams["axes.titley"] = 1.0
SVG_META = {"Date": None}
PDF_META = {"CreationDate": None, "ModDate": None, "Producer": "worksheetgen"}
A4 = (8.27, 11.69)
#: the PDF report's pages (inches), as the build printed
PAPERS = {"a4": A4, "letter": (8.5, 11.0)}
#: the white band above a chart placed on a page (inches)
PAGE_MARGIN = 0.6
BLUE, RED, GREY = "#3b6ea8", "#c0504d", "#9a9a9a"
#: installed fonts tried, in order, for a character DejaVu Sans does not have
FALLBACKS = ("WenQuanYi Micro Hei", "Noto Sans CJK JP")
#: heatmaps in one picture (three a row): a PDF page each
HEATMAPS_PER_FIGURE = 9
#: a question answered by fewer students than this has a discrimination too noisy to judge:
#: drawn in grey with its number of students, never in the alarm red
FEW_STUDENTS = 10


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


@cache
def _dejavu() -> frozenset[int]:
    """The characters DejaVu Sans (shipped with matplotlib) has."""
    path = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))
    return frozenset(FT2Font(path).get_charmap())


def use_fonts(texts: Iterable[str]) -> None:
    """DejaVu Sans alone, or followed by the installed CJK fonts when one of ``texts`` has
    a character DejaVu lacks (each font in the list costs time in every text drawn)."""
    have = _dejavu()
    families = ["DejaVu Sans"]
    if any(ord(ch) not in have and ch not in MARKS for text in texts for ch in text):
        installed = {f.name for f in font_manager.fontManager.ttflist}
        families += [f for f in FALLBACKS if f in installed]
    matplotlib.rcParams["font.family"] = families


def _short(text: str, n: int = 28) -> str:
    # a script cut open is closed before the ellipsis
    return text if len(text) <= n else balanced(text[: n - 1]) + "…"


_PLAIN_SCRIPT = re.compile(r"[A-Za-z0-9()+\-=]+")


def _mathtext(text: str) -> tuple[str, bool]:
    """Text for matplotlib, and whether it is to be parsed as math: plain text as it is
    (a ``$`` is a dollar), or, where the text holds a script no Unicode character writes
    (``W_Q``, marked by ``plain_math(..., rich=True)``), the rest with its dollars escaped
    and each script as mathtext (set small, lowered or raised)."""
    if not any(ch in MARKS for ch in text):
        return text, False
    out, last = [], 0
    for m in SCRIPT.finditer(text):
        out.append(text[last : m.start()].replace("$", r"\$"))
        body, sign = m.group(2), "_" if m.group(1) == SUB else "^"
        if _PLAIN_SCRIPT.fullmatch(body):
            out.append(f"${sign}{{\\mathregular{{{body}}}}}$")
        else:  # anything else reads as plain text
            out.append(sign + (body if len(body) == 1 else f"({body})"))
        last = m.end()
    out.append(text[last:].replace("$", r"\$"))
    return no_marks("".join(out)), True


def _set_labels(ax: Axes, ys: Sequence[int], texts: Sequence[str]) -> None:
    """The y ticks at ``ys`` labelled ``texts`` (see :func:`_mathtext`): the axis's
    formatter gives the labels their text when drawn, each label keeps whether it is math."""
    shown = [_mathtext(t) for t in texts]
    ax.set_yticks(ys, labels=[t for t, _ in shown])
    for label, (_, math_) in zip(ax.get_yticklabels(), shown, strict=True):
        label.set_parse_math(math_)


class Canvas:
    """Charts drawn as SVG strings, each also kept as a page of one PDF, on ``paper`` (a4
    or letter): a chart is set at the top of a page of that size, centred."""

    def __init__(self, paper: str = "a4") -> None:
        self.paper = PAPERS[paper]
        self._pdf_buf = io.BytesIO()
        self._pdf = PdfPages(self._pdf_buf, metadata=PDF_META)

    def add(self, fig: Figure, pdf: bool = True) -> str:
        """``fig`` as SVG text (and a PDF page, unless ``pdf`` is false)."""
        buf = io.StringIO()
        with _quiet():
            fig.savefig(buf, format="svg", metadata=SVG_META)
        if pdf:
            self._save(fig)
        text = buf.getvalue()
        return text[text.index("<svg") :]  # inline: no XML declaration or DOCTYPE

    def page(self, fig: Figure) -> None:
        """``fig`` as a PDF page only."""
        self._save(fig)

    def _save(self, fig: Figure) -> None:
        """A PDF page set in the PDF's own core fonts (nothing to embed: several times
        faster) when all its text is in their character set, else in embedded fonts."""
        _on_page(fig, self.paper)
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


def _on_page(fig: Figure, paper: tuple[float, float]) -> None:
    """``fig`` grown to a page of ``paper``, its drawing unchanged in size at the top,
    centred (every axes and every text placed on the figure moved to match). A chart taller
    than the page keeps its own size (a printer fits it to the paper)."""
    width, height = (float(v) for v in fig.get_size_inches())
    page_w, page_h = paper
    if (width, height) == paper or width > page_w or height > page_h - 2 * PAGE_MARGIN:
        return
    left, bottom = (page_w - width) / 2, page_h - PAGE_MARGIN - height

    def x(f: float) -> float:
        return (left + f * width) / page_w

    def y(f: float) -> float:
        return (bottom + f * height) / page_h

    for ax in fig.axes:
        x0, y0, w, h = ax.get_position().bounds
        ax.set_position((x(x0), y(y0), w * width / page_w, h * height / page_h))
    for text in fig.texts:  # fig.text and fig.suptitle
        tx, ty = text.get_position()
        text.set_position((x(tx), y(ty)))
    fig.set_size_inches(page_w, page_h)


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(width, height))
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
    ax.set_xlabel(gettext("score ({percent} of the points)", percent="%"))
    ax.set_ylabel(gettext("students"))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if stats.mean is not None:
        ax.axvline(stats.mean, color=RED, linestyle="--", linewidth=1)
        ax.text(
            stats.mean,
            ax.get_ylim()[1] * 0.95,
            gettext(" mean {mean}", mean=f"{stats.mean:.0f} %"),
            color=RED,
        )
    ax.set_title(gettext("Scores of {n} students", n=stats.students), parse_math=False)
    return fig


def questions(stats: ClassStats, titles: Mapping[str, str] | None = None) -> Figure:
    """Facility and discrimination per question, each named "Q2 its title" (``titles``:
    the question's title as text, by question id; else its id)."""
    qs = stats.questions
    titles = titles or {}
    fig = Figure(figsize=(6.5, 1.2 + 0.32 * max(len(qs), 1) * 2))
    ax1 = fig.add_subplot(1, 2, 1)
    ax2 = fig.add_subplot(1, 2, 2, sharey=ax1)
    height = fig.get_figheight()
    # room at the left for 28 characters ("Q2 its title", or "[its-id] its title"), wide ones
    fig.subplots_adjust(
        left=0.4, right=0.97, wspace=0.12, bottom=0.55 / height, top=1 - 0.45 / height
    )
    labels = [_short(f"{q.label} {titles.get(q.id, q.id)}", 28) for q in qs]
    ys = list(range(len(qs)))[::-1]
    ax1.barh(ys, [q.facility or 0.0 for q in qs], color=BLUE)
    ax1.set_xlim(0, 1)
    # the two axes meet: labels as short as they go ("1", "-1"), so none runs into the other's
    ax1.set_xticks([0, 0.5, 1], labels=["0", "0.5", "1"])
    _set_labels(ax1, ys, labels)
    ax1.set_xlabel(gettext("facility (mean share of points)"))
    disc = [q.discrimination for q in qs]
    few = [q.students < FEW_STUDENTS for q in qs]
    ax2.barh(
        ys,
        [d or 0.0 for d in disc],
        color=[
            GREY if f else RED if (d or 0) < 0.2 else BLUE for d, f in zip(disc, few, strict=True)
        ],
    )
    for y, d, q in zip(ys, disc, qs, strict=True):
        if d is None:
            ax2.text(0.02, y, gettext("n/a"), va="center", color=GREY)
        if q.students < FEW_STUDENTS:  # too few to judge: said, and not drawn in red
            # on the side its bar does not reach
            right = d is not None and d < 0
            ax2.text(
                0.97 if right else -0.97,
                y,
                gettext("n = {n}, too few", n=q.students),
                ha="right" if right else "left",
                va="center",
                color=GREY,
                fontsize=7,
            )
    ax2.set_xlim(-1, 1)
    ax2.set_xticks([-1, -0.5, 0, 0.5, 1], labels=["-1", "-0.5", "0", "0.5", "1"])
    ax2.axvline(0, color=GREY, linewidth=0.8)
    ax2.axvline(0.2, color=GREY, linewidth=0.8, linestyle=":")
    ax2.set_xlabel(gettext("discrimination (point-biserial)"))
    ax2.tick_params(labelleft=False)
    fig.suptitle(gettext("Per question"))
    return fig


def parts(stats: ClassStats, names: Mapping[tuple[str, str], str] | None = None) -> Figure:
    """Success per part, each named as the sheet does ("Q2 (c) What is the shape…", from
    ``names``: by (question id, answer name), the question's number and the part's name)."""
    names = names or {}
    ps = [p for p in stats.parts if p.success is not None]
    fig, ax = _figure(6.5, 1.0 + 0.22 * max(len(ps), 1))
    _margins(fig, 0.52)  # 38 characters, wide ones
    ys = list(range(len(ps)))[::-1]
    labels = [_short(names.get((p.question, p.answer), f"{p.question} {p.part}"), 38) for p in ps]
    ax.barh(ys, [p.success or 0.0 for p in ps], color=BLUE)
    _set_labels(ax, ys, labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel(gettext("success (mean share of the part's points)"))
    ax.set_title(gettext("Per part"))
    return fig


def slips(stats: ClassStats, titles: Mapping[str, str] | None = None) -> Figure:
    """Students per slip, each named by its title (``titles``, by slip id; else its id)."""
    titles = titles or {}
    ss = stats.slips
    fig, ax = _figure(6.5, 1.2 + 0.3 * max(len(ss), 1))
    _margins(fig, 0.45)  # 34 characters, wide ones
    ys = list(range(len(ss)))[::-1]
    ax.barh(ys, [s.students for s in ss], color=RED)
    labels = [_short(titles.get(s.misconception, s.misconception), 34) for s in ss]
    _set_labels(ax, ys, labels)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(gettext("students who made it"))
    if not ss:
        ax.text(
            0.5,
            0.5,
            gettext("no slip reproduced a wrong answer"),
            ha="center",
            transform=ax.transAxes,
        )
        ax.set_yticks([])
    ax.set_title(gettext("Slips"))
    return fig


def heatmaps(maps: Sequence[CellMap], names: Mapping[tuple[str, str], str]) -> list[Figure]:
    """Which cells of each table answer were missed, three tables a row, at most
    ``HEATMAPS_PER_FIGURE`` a picture; each table titled by its part as the sheet names it
    (``names``, by (question id, answer name)) and how many students it counts."""
    return [
        _heatmaps(maps[i : i + HEATMAPS_PER_FIGURE], names)
        for i in range(0, len(maps), HEATMAPS_PER_FIGURE)
    ]


def _heatmaps(maps: Sequence[CellMap], names: Mapping[tuple[str, str], str]) -> Figure:
    """The tables side by side in one axes without axes lines (one collection of cells,
    not an axes with its ticks each: several times faster to draw), each cell shaded by the
    share of students who missed it and showing their number."""
    # laid out in inches (the axes fill the figure, one data unit an inch): three slots a
    # row, each a table (its longer side TABLE inches, so cells are square and a small
    # table's cells large) under its two title lines, row numbers left, column numbers below
    width, top, slot_w, slot_h, table = 6.5, 0.45, 2.1, 2.55, 1.6
    rows = math.ceil(len(maps) / 3)
    height = top + slot_h * rows
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    fig.suptitle(gettext("Table cells missed: how many students left each cell wrong or blank"))
    cmap = matplotlib.colormaps["Reds"]
    cells, colours = [], []
    for k, m in enumerate(maps):
        size = table / max(m.rows, m.cols)  # a cell's side
        x0 = 0.2 + (k % 3) * slot_w + (slot_w - size * m.cols) / 2
        y0 = top + (k // 3) * slot_h + 0.45
        name = names.get((m.question, m.answer), f"{m.question} {m.part}")
        # a part marked by hand holds points, not cells: said, not counted as missed
        missed = (
            gettext(
                "missed by how many of {n} ({hand} marked by hand)", n=m.students, hand=m.by_hand
            )
            if m.by_hand
            else gettext("missed by how many of {n}", n=m.students)
        )
        title, math_ = _mathtext(f"{_short(name, 34)}\n{missed}")
        ax.text(
            x0 + size * m.cols / 2,
            y0 - 0.08,
            title,
            ha="center",
            va="bottom",
            fontsize=7,
            parse_math=math_,
        )
        for r in range(m.rows):
            ax.text(
                x0 - 0.05,
                y0 + (r + 0.5) * size,
                str(r + 1),
                ha="right",
                va="center",
                fontsize=6,
                color=GREY,
            )
            for c in range(m.cols):
                share = m.missed[r][c] / m.students if m.students else 0.0
                x, y = x0 + c * size, y0 + r * size
                cells.append([(x, y), (x + size, y), (x + size, y + size), (x, y + size)])
                colours.append(cmap(share))
                ax.text(
                    x + size / 2,
                    y + size / 2,
                    str(m.missed[r][c]),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if share > 0.6 else "black",
                )
        for c in range(m.cols):
            ax.text(
                x0 + (c + 0.5) * size,
                y0 + m.rows * size + 0.04,
                str(c + 1),
                ha="center",
                va="top",
                fontsize=6,
                color=GREY,
            )
    ax.add_collection(
        PolyCollection(cells, facecolors=colours, edgecolors="white", linewidths=0.8),
        autolim=False,
    )
    return fig


def text_page(
    lines: Sequence[tuple[str, str]], size: float = 9.0, paper: str = "a4"
) -> list[Figure]:
    """Pages (``paper``: a4 or letter) of text lines, each ``(style, text)``: ``h1``, ``h2``
    or plain; long lines wrap; nothing is read as math or markup but the scripts ``rich``
    text marks (:func:`_mathtext`)."""
    figs: list[Figure] = []
    fig: Figure | None = None
    y = 0.0
    page = PAPERS[paper]
    step = size / 72 / page[1] * 1.45
    for style, text in lines:
        scale = {"h1": 1.5, "h2": 1.15}.get(style, 1.0)
        width = int(100 / scale)
        for piece in textwrap.wrap(text, width) or [""]:
            if fig is None or y < 0.06:
                fig = Figure(figsize=page)
                figs.append(fig)
                y = 0.95
            shown, math_ = _mathtext(piece)
            fig.text(
                0.07,
                y,
                shown,
                fontsize=size * scale,
                weight="bold" if style in ("h1", "h2") else "normal",
                parse_math=math_,
                va="top",
            )
            y -= step * scale
        if style in ("h1", "h2"):
            y -= step * 0.5
    return figs
