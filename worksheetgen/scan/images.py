"""Scanned pages as grey images: multi-page PDFs from a copier (rendered by pypdfium2) and
PNG, JPEG or TIFF images (Pillow), each page a NumPy array of bytes, 0 black to 255 white.
The scans are only read, and never held whole: a page is decoded from its file (a
``ScanFile``: the file checked at the start of the run, opened again), so memory does not
grow with a pile of pages, one file a page or a copier's PDF or TIFF of thousands."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

import numpy as np
import pypdfium2 as pdfium
from PIL import Image, UnidentifiedImageError

from worksheetgen.errors import ScanError
from worksheetgen.inputs import read_limited

#: the largest scan file read (a class's copier PDF at 300 dpi is far less)
MAX_SCAN_BYTES = 2_000_000_000
#: the resolution PDF pages are rendered at
PDF_DPI = 200
#: the most pixels an image page may have (A3 at 600 dpi is about 70 million)
MAX_PIXELS = 120_000_000
#: a JPEG page whose shorter side has this many pixels (190 dpi on A4 or Letter) is
#: decoded at half its resolution
READ_HALF_FROM = 1570
_KINDS = {
    b"%PDF": "pdf",
    b"\x89PNG": "png",
    b"\xff\xd8\xff": "jpeg",
    b"II*\x00": "tiff",
    b"MM\x00*": "tiff",
}


#: how much of a scan's start is read to tell its kind
_HEAD_BYTES = 16


@dataclass(frozen=True)
class ScanFile:
    """A scan's file as it was checked at the start of the run (``check_scan``): its path
    and its identity (device, inode, size, modification time). Its pages are decoded from
    the file opened again, which must still be that file (else a ScanError)."""

    path: str
    identity: tuple[int, int, int, int]


#: a page's source: a scan's file, or its bytes in memory
Source = ScanFile | bytes


def file_identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """A file's identity: (device, inode, size, modification time in ns)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def open_scan(scan: ScanFile, buffered: bool = True) -> IO[bytes]:
    """The scan's file opened for reading, checked to be the file of the start of the run
    (a ScanError when it was changed, replaced or removed since)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    changed = "expected the scan as it was when the run began, got "
    try:
        fd = os.open(scan.path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ScanError(changed + "no such file any more", file=scan.path) from None
    except OSError as exc:
        raise ScanError(
            f"expected a readable file, got {exc.strerror or exc}", file=scan.path
        ) from None
    try:
        if file_identity(os.fstat(fd)) != scan.identity:
            raise ScanError(changed + "a file changed since", file=scan.path)
        return os.fdopen(fd, "rb", buffering=-1 if buffered else 0)
    except BaseException:
        os.close(fd)
        raise


def kind_of(data: bytes) -> str | None:
    """pdf, png, jpeg or tiff from a file's first bytes, or None."""
    for magic, kind in _KINDS.items():
        if data.startswith(magic):
            return kind
    return None


def check_scan(path: str) -> tuple[str, ScanFile]:
    """A scan's kind and file (only its first bytes read: its kind, size and page count
    are what is checked before any page is decoded), or a ScanError saying why it cannot
    be one."""
    opened: list[os.stat_result] = []
    head = read_limited(
        path,
        MAX_SCAN_BYTES,
        what="a scan (PDF, PNG, JPEG or TIFF)",
        error=ScanError,
        check=opened.append,
        head=_HEAD_BYTES,
    )
    kind = kind_of(head)
    if kind is None:
        raise ScanError(
            "expected a scan (a PDF, PNG, JPEG or TIFF file), got a file of another kind",
            file=path,
        )
    return kind, ScanFile(path, file_identity(opened[0]))


def page_count(path: str, kind: str, source: Source, most: int | None = None) -> int:
    """How many pages a scan has (a ScanError for a damaged file), read with bounded work
    (``bounded``). With ``most``: when it has at most ``most`` pages, every page's size is
    checked against the pixel limit too, before any page is decoded."""
    # the child's bound on the work (a fork per scan, not per page)
    from worksheetgen.scan.bounded import bounded

    return int(bounded(_count, path, kind, source, most, file=path))


def _too_large(path: str, width: float, height: float, page: int | None) -> ScanError:
    where = "" if page is None else f"page {page}: "
    return ScanError(
        f"{where}expected a page of at most {MAX_PIXELS:,} pixels, got "
        f"{round(width)}x{round(height)}",
        file=path,
    )


def _pdf_pixels(pdf: pdfium.PdfDocument, index: int) -> tuple[float, float]:
    """The pixels (width, height) page ``index`` of ``pdf`` renders to, from its size alone."""
    w_pt, h_pt = pdf.get_page_size(index)
    return w_pt * PDF_DPI / 72, h_pt * PDF_DPI / 72


@contextmanager
def _pdf(path: str, source: Source) -> Iterator[pdfium.PdfDocument]:
    """A scan's PDF document, closed after (a ScanError for a damaged one). From a file,
    PDFium reads what it needs as it needs it: the cross-reference table, then a page's
    objects."""
    fh = None if isinstance(source, bytes) else open_scan(source, buffered=False)
    try:
        try:
            pdf = pdfium.PdfDocument(source if fh is None else fh)
        except pdfium.PdfiumError as exc:
            raise _damaged_pdf(path, exc) from None
        try:
            yield pdf
        except pdfium.PdfiumError as exc:
            raise _damaged_pdf(path, exc) from None
        finally:
            pdf.close()
    finally:
        if fh is not None:
            fh.close()


def _damaged_pdf(path: str, exc: Exception) -> ScanError:
    return ScanError(f"expected a readable PDF, got a damaged one ({exc})", file=path)


@contextmanager
def _image(path: str, kind: str, source: Source) -> Iterator[Image.Image]:
    """A scan image opened (only its header read), closed after, or a ScanError: damaged
    (when opened or decoded), or more pixels declared than the limit (Pillow's own bomb
    check says so before anything is decoded). From a file, Pillow reads the rest as a
    page is decoded."""
    fh = io.BytesIO(source) if isinstance(source, bytes) else open_scan(source)
    damaged = (UnidentifiedImageError, OSError, ValueError, EOFError)
    try:
        try:
            im = Image.open(fh)
        except Image.DecompressionBombError:
            raise ScanError(
                f"expected a page of at most {MAX_PIXELS:,} pixels, got an image declaring "
                "far more",
                file=path,
            ) from None
        except damaged as exc:
            raise _damaged_image(path, kind, exc) from None
        try:
            if im.width * im.height > MAX_PIXELS:
                raise _too_large(path, im.width, im.height, None)
            yield im
        except damaged as exc:
            raise _damaged_image(path, kind, exc) from None
        finally:
            im.close()
    finally:
        fh.close()


def _damaged_image(path: str, kind: str, exc: Exception) -> ScanError:
    return ScanError(
        f"expected a readable {kind.upper()} image, got a damaged one ({exc})", file=path
    )


def _count(path: str, kind: str, source: Source, most: int | None) -> int:
    """(In the bounded child.) The scan's page count; with ``most``, each page's size
    checked when there are at most ``most``."""
    if kind == "pdf":
        with _pdf(path, source) as pdf:
            count = len(pdf)
            if most is not None and count <= most:
                for i in range(count):
                    width, height = _pdf_pixels(pdf, i)
                    if not 0 < width * height <= MAX_PIXELS:
                        raise _too_large(path, width, height, i + 1)
            return count
    with _image(path, kind, source) as im:
        count = int(getattr(im, "n_frames", 1))
        if most is not None and count <= most:
            for i in range(1, count):
                im.seek(i)
                if im.width * im.height > MAX_PIXELS:
                    raise _too_large(path, im.width, im.height, i + 1)
        return count


def _grey(im: Image.Image, path: str) -> np.ndarray:
    if im.width * im.height > MAX_PIXELS:
        raise _too_large(path, im.width, im.height, None)
    if im.format == "JPEG" and im.mode != "L":
        im.draft("L", im.size)  # JPEG decodes its grey channel alone, much faster
    if im.mode.startswith("I;16") or im.mode == "I":
        # 16 bits a pixel (a scanner's 16-bit grey PNG or TIFF): Pillow's convert("L")
        # clips every value above 255 to white, so a page read as blank; scaled instead
        wide = np.asarray(im)
        if im.mode == "I":  # 32 bits: a 16-bit image, or 8 bits widened
            top = 255 if wide.size and int(wide.max()) <= 255 else 65535
            wide = np.clip(wide, 0, top)
            if top == 255:
                return wide.astype(np.uint8)
        return (wide >> 8).astype(np.uint8)
    return np.asarray(im.convert("L"), dtype=np.uint8)


def read_page(path: str, kind: str, source: Source, index: int) -> np.ndarray:
    """The grey image of page ``index`` (from 0) of a scan (a ScanError for a damaged one,
    or for a file changed since it was checked), decoded with bounded work (``bounded``: a
    page that needs more memory or time than one page may is refused, naming it)."""
    # the child's bound on the work
    from worksheetgen.scan.bounded import bounded

    image: np.ndarray = bounded(
        _decode, path, kind, source, index, file=path, where=f"page {index + 1}"
    )
    return image


def _decode(path: str, kind: str, source: Source, index: int) -> np.ndarray:
    """(In the bounded child.) The grey image of page ``index``."""
    if kind == "pdf":
        with _pdf(path, source) as pdf:
            width, height = _pdf_pixels(pdf, index)
            if not 0 < width * height <= MAX_PIXELS:  # checked before it is rendered
                raise _too_large(path, width, height, index + 1)
            page = pdf[index]
            try:
                return _grey(page.render(scale=PDF_DPI / 72, grayscale=True).to_pil(), path)
            finally:
                page.close()
    with _image(path, kind, source) as im:
        if index:
            im.seek(index)
        elif im.format == "JPEG":
            # JPEG decodes its grey channel alone, and a page scanned at 190 dpi or
            # more at half its resolution (still 95 dpi or more: a box is 15 pixels
            # wide, a pen's stroke two): a quarter of the pixels to decode and read
            half = min(im.size) >= READ_HALF_FROM
            im.draft("L", (im.size[0] // 2, im.size[1] // 2) if half else im.size)
        return _grey(im, path)


def crop_png(image: np.ndarray, box: tuple[int, int, int, int]) -> bytes:
    """A PNG of ``image``'s part (left, top, right, bottom) in pixels, clipped to it."""
    h, w = image.shape
    left, top, right, bottom = box
    left, top = max(0, left), max(0, top)
    right, bottom = min(w, right), min(h, bottom)
    part = np.ascontiguousarray(image[top:bottom, left:right], dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(part).save(out, format="PNG")
    return out.getvalue()
