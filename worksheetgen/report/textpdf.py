"""Pages of plain text as a PDF, written directly: the feedback pages.

matplotlib drew each feedback line as a figure's text (laid out glyph by glyph, a savefig
per page): most of ``grade``'s time for a class. Text pages need none of that: each line is
one ``Tj`` in an embedded TrueType font (DejaVu Sans, which ships with matplotlib, cut to
the glyphs used; the text's CIDs are the font's glyph ids, a CIDToGIDMap maps them to the
cut font's), with a ToUnicode map so the text can be read back and searched. A character
DejaVu lacks (a CJK name) is set in the first installed TrueType fallback that has it; one
no font has is set as "?". A line with Arabic or Hebrew letters is set as it is seen: Arabic
letters in their joined forms (Unicode's presentation forms, which DejaVu Sans has) and every
run in its direction, by the Unicode bidirectional algorithm (worksheetgen.render.scripts);
other lines are set as they are written.

Each font is read once per document and cut once, for the glyphs of all its pages. Only
the tables the PDF needs are decoded, and of 'hmtx' and 'glyf' only the glyphs used (a
CJK fallback has ~50,000 glyphs: decoding them all took most of ``grade``'s time).
"""

from __future__ import annotations

import functools
import io
import logging
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fontTools import subset  # type: ignore[import-untyped]
from fontTools.ttLib import TTFont, newTable  # type: ignore[import-untyped]
from fontTools.ttLib.tables._c_m_a_p import CmapSubtable  # type: ignore[import-untyped]
from fontTools.ttLib.tables._g_l_y_f import Glyph  # type: ignore[import-untyped]

from worksheetgen.render import scripts
from worksheetgen.report.marks import END, SCRIPT_SIZE, SUB, SUP
from worksheetgen.report.marks import MARKS as _MARKS

# a library never prints: fontTools logs each table it drops
logging.getLogger("fontTools").setLevel(logging.ERROR)
#: page sizes in PostScript points (width, height), by the paper names builds take
PAPERS = {"a4": (595.28, 841.89), "letter": (612.0, 792.0)}
A4 = PAPERS["a4"]
MARGIN = 50.0
STYLES = {  # size, bold, colour (r g b)
    "h1": (13.5, True, "0 0 0"),
    "h2": (10.5, True, "0 0 0"),
    "plain": (9.0, False, "0 0 0"),
    "slip": (9.0, False, "0.545 0.114 0.102"),
    "avoid": (9.0, False, "0.137 0.388 0.169"),
}


#: ``add``'s scale for large print: the plain text's 9 pt set in 14 pt
LARGE_PRINT = 14.0 / 9.0


class _Font:
    def __init__(self, path: str, number: int = 0) -> None:
        self.path, self.number = path, number
        self.tt = _open(path, number)
        self.cmap = self.tt.getBestCmap() or {}
        self.scale = 1000 / self.tt["head"].unitsPerEm
        self.hmtx = _Metrics(self.tt)
        self.used: dict[int, str] = {}  # glyph id -> the character it sets
        self._advance: dict[str, float] = {}
        self._gid: dict[str, int] = {}
        self._program: tuple[frozenset[int], tuple[bytes, bytes]] | None = None

    def has(self, ch: str) -> bool:
        return ord(ch) in self.cmap

    def glyph(self, ch: str) -> int:
        """``ch``'s glyph id; the glyph is kept."""
        gid = self._gid.get(ch)
        if gid is None:
            found = _gid(self.cmap[ord(ch)])  # not fontTools' map of 50,000 names
            if found is None:
                raise KeyError(ch)  # a name not _open's: cannot happen
            gid = self._gid[ch] = found
            self.used.setdefault(gid, ch)
        return gid

    def advance(self, ch: str) -> float:
        a = self._advance.get(ch)
        if a is None:
            a = self._advance[ch] = float(self.hmtx[self.cmap[ord(ch)]][0] * self.scale)
        return a

    def program(self) -> tuple[bytes, bytes]:
        """The font cut to the glyphs used, and its CIDToGIDMap (the glyph ids in the text,
        the CIDs, to those in the cut font); made once per set of glyphs."""
        key = frozenset(self.used)
        if self._program is None or self._program[0] != key:
            prog, kept = _subset(self)
            cid_to_gid = bytearray(2 * (max(kept) + 1))
            for new, old in enumerate(kept):
                cid_to_gid[2 * old : 2 * old + 2] = new.to_bytes(2, "big")
            self._program = (key, (prog, bytes(cid_to_gid)))
        return self._program[1]


def _open(path: str, number: int) -> TTFont:
    """The font, read lazily, its glyphs named by id: the glyph names in 'post' (tens of
    thousands in a CJK font) are never decoded; the PDF sets glyphs by id."""
    tt = TTFont(path, fontNumber=number, lazy=True)
    tt.setGlyphOrder(list(_names(tt["maxp"].numGlyphs)))
    return tt


@functools.cache
def _names(count: int) -> tuple[str, ...]:
    """Glyph names by id, ``count`` of them (made once: each font is opened twice)."""
    return (".notdef", *(f"g{i}" for i in range(1, count)))


def _gid(name: object) -> int | None:
    """The glyph id in a glyph name of ``_open``'s, None for another name."""
    if name == ".notdef":
        return 0
    if isinstance(name, str) and name[:1] == "g" and name[1:].isdigit():
        return int(name[1:])
    return None


class _Lazy(dict[str, Any]):
    """A table's entries by glyph name, each read from the table's data when first asked
    for: the PDF needs a few of tens of thousands (fontTools decodes every one)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def __contains__(self, name: object) -> bool:
        gid = _gid(name)
        return gid is not None and gid < self.count

    def __missing__(self, name: str) -> Any:
        gid = _gid(name)
        if gid is None or gid >= self.count:
            raise KeyError(name)
        value = self[name] = self.read(gid)
        return value

    def read(self, gid: int) -> Any:
        raise NotImplementedError


class _Metrics(_Lazy):
    """hmtx's (advance, left side bearing) by glyph name."""

    def __init__(self, tt: TTFont) -> None:
        super().__init__(tt["maxp"].numGlyphs)
        self.data, self.long = tt.reader["hmtx"], tt["hhea"].numberOfHMetrics

    def read(self, gid: int) -> tuple[int, int]:
        if gid < self.long:
            adv, lsb = struct.unpack_from(">Hh", self.data, 4 * gid)
        else:
            (adv,) = struct.unpack_from(">H", self.data, 4 * (self.long - 1))
            (lsb,) = struct.unpack_from(">h", self.data, 4 * self.long + 2 * (gid - self.long))
        return adv, lsb


class _Glyphs(_Lazy):
    """glyf's glyphs by name, each cut from the table's data when first asked for."""

    def __init__(self, tt: TTFont) -> None:
        super().__init__(tt["maxp"].numGlyphs)
        self.data, self.loca = tt.reader["glyf"], tt["loca"]

    def read(self, gid: int) -> Glyph:
        return Glyph(self.data[int(self.loca[gid]) : int(self.loca[gid + 1])])


def _subset(source: _Font, fast: bool = True) -> tuple[bytes, list[int]]:
    """``source``'s font cut to the glyphs it used; its glyph ids are the CIDs (the
    CIDToGIDMap maps them). Its character map is made from the characters set, not decoded
    and cut (a CJK font maps ~30,000 characters); ``fast``: the glyphs and widths are
    taken as needed (what fontTools' subsetter would read, without decoding every glyph).
    Also the glyphs kept, by their ids in ``source``, in the cut font's order."""
    opts = subset.Options()
    opts.hinting = False
    opts.layout_features = []
    opts.font_number = source.number
    opts.notdef_outline = True
    opts.glyph_names = False
    # the text is set glyph by glyph: no layout tables (decoding them is most of the time),
    # nor vertical metrics (the text runs across)
    opts.drop_tables += ["GSUB", "GPOS", "GDEF", "kern", "FFTM", "hdmx", "VDMX", "LTSH"]
    opts.drop_tables += ["vhea", "vmtx"]
    font = _open(source.path, source.number)
    order = font.getGlyphOrder()
    post = newTable("post")
    post.decompile(b"\x00\x03\x00\x00" + font.reader["post"][4:32], font)
    font["post"] = post
    cmap = newTable("cmap")
    cmap.tableVersion = 0
    mapping = {ord(c): order[g] for g, c in source.used.items()}
    sub4 = CmapSubtable.newSubtable(4)
    sub4.platformID, sub4.platEncID, sub4.language = 3, 1, 0
    sub4.cmap = {u: n for u, n in mapping.items() if u <= 0xFFFF}
    cmap.tables = [sub4]
    if any(u > 0xFFFF for u in mapping):
        sub12 = CmapSubtable.newSubtable(12)
        sub12.platformID, sub12.platEncID, sub12.language = 3, 10, 0
        sub12.cmap = dict(mapping)
        cmap.tables.append(sub12)
    font["cmap"] = cmap
    if fast:
        hmtx = newTable("hmtx")
        hmtx.metrics = _Metrics(font)
        font["hmtx"] = hmtx
        glyf = newTable("glyf")
        glyf.glyphOrder, glyf._reverseGlyphOrder = order, {}
        glyf.glyphs = _Glyphs(font)
        font["glyf"] = glyf
    sub = subset.Subsetter(opts)
    sub.populate(gids=sorted({0, *source.used}))
    sub.subset(font)
    buf = io.BytesIO()
    # the cut font keeps the font's own date: fontTools stamps the time of saving in 'head'
    # by default, and two identical runs wrote different feedback PDFs
    font.recalcTimestamp = False
    font.save(buf)
    kept = [0 if name == ".notdef" else int(name[1:]) for name in font.getGlyphOrder()]
    return buf.getvalue(), kept


def _fallbacks() -> list[tuple[str, int]]:
    from matplotlib import font_manager  # the installed fonts, as charts finds them

    out = []
    for f in font_manager.fontManager.ttflist:
        if f.name in ("WenQuanYi Micro Hei", "Noto Sans CJK JP") and f.fname.endswith(
            (".ttf", ".ttc")
        ):
            out.append((f.fname, 0))
    return out


class TextPdf:
    """Pages of (style, text) lines on ``paper`` (a4 or letter, as the build printed);
    long lines wrap at word boundaries."""

    def __init__(self, paper: str = "a4") -> None:
        self.size = PAPERS[paper]
        import matplotlib  # its DejaVu fonts; matplotlib loads only when a report is written

        ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
        self.regular = _Font(str(ttf / "DejaVuSans.ttf"))
        self.bold = _Font(str(ttf / "DejaVuSans-Bold.ttf"))
        self._extra: list[_Font] | None = None
        self.pages: list[bytes] = []
        #: the pages that show a picture (a JPEG, its width and height in pixels), by index
        self.pictures: dict[int, tuple[bytes, int, int]] = {}
        self._fonts: dict[tuple[str, bool], tuple[_Font, str]] = {}
        self._widths: dict[tuple[str, bool], float] = {}
        self._glyphs: dict[tuple[str, bool], tuple[_Font, str]] = {}  # font, glyph id in hex

    def _fallback(self, ch: str) -> _Font | None:
        if self._extra is None:
            self._extra = []
            for path, n in _fallbacks():
                try:
                    font = _Font(path, n)
                except Exception:  # noqa: BLE001 - an unreadable font is not ours to report
                    continue
                if "glyf" in font.tt:
                    self._extra.append(font)
        return next((f for f in self._extra if f.has(ch)), None)

    def _font(self, ch: str, bold: bool) -> tuple[_Font, str]:
        """The font that sets ``ch`` and the character it sets ("?" where none has it)."""
        known = self._fonts.get((ch, bold))
        if known is None:
            known = self._fonts[(ch, bold)] = self._find(ch, bold)
        return known

    def _find(self, ch: str, bold: bool) -> tuple[_Font, str]:
        main = self.bold if bold else self.regular
        if main.has(ch):
            return main, ch
        fallback = self._fallback(ch)
        return (fallback, ch) if fallback else (main, "?")

    def _width(self, text: str, bold: bool) -> float:
        """``text``'s advance in 1/1000 em (a word's, remembered: pages repeat their words);
        a script (between ``SUB``/``SUP`` and ``END``) at its smaller size."""
        w = self._widths.get((text, bold))
        if w is None:
            w, scale = 0.0, 1.0
            for ch in text:
                if ch in _MARKS:
                    scale = 1.0 if ch == END else SCRIPT_SIZE
                    continue
                font, c = self._font(ch, bold)
                w += font.advance(c) * scale
            self._widths[(text, bold)] = w
        return w

    def _wrap(self, text: str, size: float, bold: bool) -> list[str]:
        room = (self.size[0] - 2 * MARGIN) * 1000 / size
        space = self._width(" ", bold)
        lines: list[str] = []
        cur, width = "", 0.0
        words: list[str] = []
        for word in text.split(" "):
            words += self._pieces(word, room, bold)
        for word in words:
            w = self._width(word, bold)
            if cur and width + space + w > room:
                lines.append(cur)
                cur, width = word, w
            else:
                cur, width = (f"{cur} {word}", width + space + w) if cur else (word, w)
        lines.append(cur)
        return lines

    def _pieces(self, word: str, room: float, bold: bool) -> list[str]:
        """``word``, or where it is wider than a line (a name in a script written without
        spaces, a very long name), cut between characters into pieces that fit."""
        if self._width(word, bold) <= room:
            return [word]
        pieces, cur, width = [], "", 0.0
        for ch in word:
            w = self._width(ch, bold)
            if cur and width + w > room:
                pieces.append(cur)
                cur, width = "", 0.0
            cur, width = cur + ch, width + w
        return [*pieces, cur]

    def _show(self, text: str, bold: bool, size: float) -> str:
        ops: list[str] = []
        current: _Font | None = None
        run: list[str] = []
        glyphs = self._glyphs
        now = size
        for ch in text:
            if ch in _MARKS:  # a script: smaller, lowered or raised; END: back to the line
                if run:
                    ops.append(f"<{''.join(run)}> Tj")
                    run = []
                now = size if ch == END else size * SCRIPT_SIZE
                rise = {SUB: -0.2, SUP: 0.38}.get(ch, 0.0) * size
                ops.append(f"{rise:.2f} Ts")
                current = None
                continue
            known = glyphs.get((ch, bold))
            if known is None:
                font, c = self._font(ch, bold)
                known = glyphs[(ch, bold)] = (font, f"{font.glyph(c):04x}")
            font, gid = known
            if font is not current:
                if run:
                    ops.append(f"<{''.join(run)}> Tj")
                    run = []
                ops.append(f"/F{self._id(font)} {now:g} Tf")
                current = font
            run.append(gid)
        if run:
            ops.append(f"<{''.join(run)}> Tj")
        if now != size:  # a script left open: the rise is text state, kept across lines
            ops.append("0 Ts")
        return " ".join(ops)

    def _id(self, font: _Font) -> int:
        fonts = [self.regular, self.bold, *(self._extra or [])]
        return fonts.index(font) + 1

    def add(self, lines: Sequence[tuple[str, str]], scale: float = 1.0) -> int:
        """Set ``lines`` from the top of a new page, every size times ``scale`` (large
        print: ``LARGE_PRINT``); the pages it took."""
        first = len(self.pages)
        ops: list[str] = []
        y = self.size[1] - MARGIN
        for style, text in lines:
            size, bold, colour = STYLES.get(style, STYLES["plain"])
            size *= scale
            step = size * 1.4
            if style == "h2":
                y -= size * 0.6  # room above a question's heading
            text = " ".join(text.split())
            rtl = scripts.has_rtl(text)
            if rtl:  # Arabic letters joined, and each line in the order it is seen
                text = scripts.shape_arabic(text, (self.bold if bold else self.regular).has)
                base = scripts.base_level(text)
            for piece in self._wrap(text, size, bold):
                if rtl:
                    piece = scripts.visual(piece, base)
                if y - size < MARGIN:
                    self.pages.append("\n".join(ops).encode("ascii"))
                    ops, y = [], self.size[1] - MARGIN
                y -= size
                ops.append(
                    f"BT {colour} rg 1 0 0 1 {MARGIN:.2f} {y:.2f} Tm "
                    f"{self._show(piece, bold, size)} ET"
                )
                y -= step - size
            if style in ("h1", "h2"):
                y -= size * 0.5
        self.pages.append("\n".join(ops).encode("ascii"))
        return len(self.pages) - first

    def add_picture(self, jpeg: bytes, width: int, height: int, caption: str) -> None:
        """A page of its own for a picture (a baseline RGB JPEG of ``width`` x ``height``
        pixels, embedded as it is), as large as the page's margins allow under one line of
        ``caption``."""
        size, bold, colour = STYLES["plain"]
        top = self.size[1] - MARGIN - size
        room_w, room_h = self.size[0] - 2 * MARGIN, top - size * 0.8 - MARGIN
        scale = min(room_w / width, room_h / height)
        w, h = width * scale, height * scale
        x, y = MARGIN + (room_w - w) / 2, MARGIN + room_h - h
        ops = [
            f"BT {colour} rg 1 0 0 1 {MARGIN:.2f} {top:.2f} Tm "
            f"{self._show(' '.join(caption.split()), bold, size)} ET",
            f"q {w:.2f} 0 0 {h:.2f} {x:.2f} {y:.2f} cm /Im1 Do Q",
        ]
        self.pictures[len(self.pages)] = (jpeg, width, height)
        self.pages.append("\n".join(ops).encode("ascii"))

    def pdf(self) -> bytes:
        """The document: every page so far, the fonts embedded once (and each picture on
        its page)."""
        objs: list[bytes] = []

        def new(body: bytes) -> int:
            objs.append(body)
            return len(objs)

        def stream(data: bytes, extra: str = "") -> int:
            z = zlib.compress(data)
            return new(
                f"<< /Length {len(z)} /Filter /FlateDecode {extra}>>\nstream\n".encode()
                + z
                + b"\nendstream"
            )

        fonts = [self.regular, self.bold, *(self._extra or [])]
        font_refs = []
        for i, font in enumerate(fonts, 1):
            if not font.used:
                font_refs.append(
                    f"/F{i} {new(b'<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')} 0 R"
                )
                continue
            prog, cid_to_gid = font.program()
            ff = stream(prog, f"/Length1 {len(prog)} ")
            c2g = stream(cid_to_gid)
            name = f"WSG{i:03d}+F{i}"
            desc = new(
                f"<< /Type /FontDescriptor /FontName /{name} /Flags 32 "
                f"/FontBBox [-1100 -400 2000 1100] /ItalicAngle 0 /Ascent 930 /Descent -240 "
                f"/CapHeight 730 /StemV 80 /FontFile2 {ff} 0 R >>".encode()
            )
            widths = " ".join(
                f"{gid} [{font.hmtx[font.tt.getGlyphName(gid)][0] * font.scale:.0f}]"
                for gid in sorted(font.used)
            )
            cid = new(
                f"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /{name} "
                f"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
                f"/FontDescriptor {desc} 0 R /CIDToGIDMap {c2g} 0 R /W [{widths}] >>".encode()
            )
            pairs = sorted(font.used.items())
            chunks = []
            for k in range(0, len(pairs), 100):
                part = pairs[k : k + 100]
                body = "\n".join(f"<{g:04x}> <{c.encode('utf-16-be').hex()}>" for g, c in part)
                chunks.append(f"{len(part)} beginbfchar\n{body}\nendbfchar")
            cmap = (
                "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
                "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
                "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
                "1 begincodespacerange <0000> <ffff> endcodespacerange\n"
                + "\n".join(chunks)
                + "\nendcmap CMapName currentdict /CMap defineresource pop end end"
            )
            tu = stream(cmap.encode("ascii"))
            ref = new(
                f"<< /Type /Font /Subtype /Type0 /BaseFont /{name} /Encoding /Identity-H "
                f"/DescendantFonts [{cid} 0 R] /ToUnicode {tu} 0 R >>".encode()
            )
            font_refs.append(f"/F{i} {ref} 0 R")
        fonts_dict = f"/Font << {' '.join(font_refs)} >>"
        resources = new(f"<< {fonts_dict} >>".encode())
        # each page: its content and itself; a picture's page its picture and resources too
        pages_id = len(objs) + 1 + 2 * len(self.pages) + 2 * len(self.pictures)
        kids = []
        for n, content in enumerate(self.pages):
            c = stream(content)
            uses = resources
            if n in self.pictures:
                jpeg, width, height = self.pictures[n]
                picture = new(
                    f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} "
                    f"/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode "
                    f"/Length {len(jpeg)} >>\nstream\n".encode()
                    + jpeg
                    + b"\nendstream"
                )
                uses = new(f"<< {fonts_dict} /XObject << /Im1 {picture} 0 R >> >>".encode())
            kids.append(
                new(
                    f"<< /Type /Page /Parent {pages_id} 0 R "
                    f"/MediaBox [0 0 {self.size[0]} {self.size[1]}] "
                    f"/Resources {uses} 0 R /Contents {c} 0 R >>".encode()
                )
            )
        refs = " ".join(f"{k} 0 R" for k in kids)
        assert new(f"<< /Type /Pages /Kids [{refs}] /Count {len(kids)} >>".encode()) == pages_id
        catalog = new(f"<< /Type /Catalog /Pages {pages_id} 0 R >>".encode())
        out = io.BytesIO()
        out.write(b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for n, obj in enumerate(objs, 1):
            offsets.append(out.tell())
            out.write(f"{n} 0 obj\n".encode() + obj + b"\nendobj\n")
        xref = out.tell()
        out.write(f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode())
        for off in offsets:
            out.write(f"{off:010d} 00000 n \n".encode())
        out.write(
            f"trailer\n<< /Size {len(objs) + 1} /Root {catalog} 0 R "
            f"/Info << /Producer (worksheetgen) >> >>\nstartxref\n{xref}\n%%EOF\n".encode()
        )
        return out.getvalue()
