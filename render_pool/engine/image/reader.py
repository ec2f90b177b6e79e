"""Image reader: PNG, JPEG, TIFF (every page) and WebP uploads read by OCR, one page each.

Each frame becomes one page of an image-only PDF (Pillow) at the image's own resolution
(when it has none, one that makes the page about A4 wide), and that PDF is read by the PDF
reader, so an image is recognised exactly like a scanned page: same rendering, time limit,
parallel recognition, layout logic and warnings.

Every frame's size and the number of frames are checked from the headers before any pixel
is decoded (:func:`check_frames`), and the frames are decoded and written to the PDF one at
a time, so a small file cannot make the reader hold hundreds of decoded pages at once.
"""

from __future__ import annotations

import io
import re
import warnings

import pypdfium2 as pdfium
from PIL import Image

from render_pool.engine.model import Document
from render_pool.engine.page_ranges import PageRanges
from render_pool.engine.pdf.ocr import OcrPages
from render_pool.engine.pdf.reader import read_pdf
from render_pool.errors import CorruptDocument, OcrPending, TooLarge

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile image into a clear error (41301, with the figure and the limit) before it
# is decoded, far above what real scans need (A4 at 600 dpi is 4,961 x 7,016 pixels).
MAX_FRAMES = 200
MAX_PIXELS = 60_000_000  # per frame; above this the image is refused (decompression bombs)
MAX_SIDE = 65_500  # pixels a side: the most a JPEG, and so a page of the PDF, can hold
MAX_TOTAL_PIXELS = 2_000_000_000  # all frames together: about 230 A4 pages at 300 dpi
_A4_WIDTH_INCHES = 8.27
_SIGNATURES = {b"\x89PNG\r\n\x1a\n": "PNG", b"\xff\xd8\xff": "JPEG", b"II*\x00": "TIFF",
               b"MM\x00*": "TIFF"}
_BOMB_SIZE = re.compile(r"\((\d+) pixels\)")


def image_format(data: bytes) -> str:
    """"PNG", "JPEG", "TIFF" or "WEBP" from the first bytes, "" for anything else."""
    for magic, name in _SIGNATURES.items():
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return ""


def _dpi(frame: Image.Image) -> float:
    """The frame's resolution from its metadata, else one that makes it about A4 wide."""
    dpi = frame.info.get("dpi")
    try:
        value = float(dpi[0]) if dpi else 0.0
    except (TypeError, ValueError, IndexError):
        value = 0.0
    if 50 <= value <= 1200:
        return value
    return max(72.0, frame.width / _A4_WIDTH_INCHES)


def _check_size(width: int, height: int, page: int) -> None:
    """TooLarge for one frame over ``MAX_SIDE`` or ``MAX_PIXELS``."""
    where = f" (page {page})" if page > 1 else ""
    if max(width, height) > MAX_SIDE:
        raise TooLarge(f"The image{where} is {width:,} x {height:,} pixels; the limit is "
                       f"{MAX_SIDE:,} pixels a side")
    if width * height > MAX_PIXELS:
        raise TooLarge(f"The image{where} has {width * height:,} pixels ({width:,} x "
                       f"{height:,}); the limit is {MAX_PIXELS:,}")


def check_frames(image: Image.Image) -> int:
    """The number of frames of the opened ``image``, each checked against the limits from
    its header alone (no pixel is decoded): TooLarge (41301) with the figure and the limit.

    A TIFF's pages each have their own size and are walked header by header (at most
    ``MAX_FRAMES`` + 1 of them, however many the file chains); the other formats' frames
    share one canvas, counted by their header (an APNG's frames could only be walked by
    decoding them)."""
    if image.format != "TIFF":
        frames = int(getattr(image, "n_frames", 1))
        if frames > MAX_FRAMES:
            raise TooLarge(f"The image has {frames:,} frames; the limit is {MAX_FRAMES}")
        _check_size(*image.size, 1)
        total = frames * image.width * image.height
    else:
        total = frames = 0
        while True:
            frames += 1
            _check_size(*image.size, frames)
            total += image.width * image.height
            try:
                image.seek(frames)  # the next page's header: nothing is decoded
            except EOFError:
                break
            if frames >= MAX_FRAMES:
                raise TooLarge(f"The image has more than {MAX_FRAMES} pages; the limit is "
                               f"{MAX_FRAMES}")
        image.seek(0)
    if total > MAX_TOTAL_PIXELS:
        raise TooLarge(f"The image's {frames} pages have {total:,} pixels in all; the limit "
                       f"is {MAX_TOTAL_PIXELS:,}")
    return frames


def _page(frame: Image.Image) -> Image.Image:
    """The decoded frame as a page for the PDF: transparent areas white, in L or RGB."""
    page = frame.convert("RGBA") if frame.mode in ("P", "LA", "PA") else frame
    if page.mode == "RGBA":  # transparent areas become white paper
        flat = Image.new("RGB", page.size, "white")
        flat.paste(page, mask=page.getchannel("A"))
        page = flat
    return page.convert("L") if page.mode not in ("L", "RGB") else page


def _open(data: bytes) -> Image.Image:
    """The image opened (headers only), Pillow's own bomb check answered as TooLarge."""
    try:
        return Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        found = _BOMB_SIZE.search(str(exc))
        figure = f" has {int(found.group(1)):,} pixels" if found else " is too large"
        raise TooLarge(f"The image{figure}; the limit is {MAX_PIXELS:,}") from None


def image_pdf(data: bytes) -> bytes:
    """An image-only PDF with one page per frame of the image ``data``: TooLarge (41301)
    over a limit, CorruptDocument (40003) when it cannot be decoded."""
    out = pdfium.PdfDocument.new()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = _open(data)
            frames = check_frames(image)
            resolution = _dpi(image)
            for n in range(frames):
                try:
                    image.seek(n)
                except EOFError:  # fewer frames than the header said: those there are
                    break
                one = io.BytesIO()
                _page(image).save(one, format="PDF", resolution=resolution, quality=95)
                page = pdfium.PdfDocument(one.getvalue())
                try:
                    out.import_pages(page)
                finally:
                    page.close()
        pdf = io.BytesIO()
        out.save(pdf)
        return pdf.getvalue()
    except (TooLarge, CorruptDocument, MemoryError):
        raise  # a MemoryError is the worker's limit: the pool answers 41301
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise TooLarge(f"The image is too large; the limit is {MAX_PIXELS:,} pixels") from None
    except Exception:
        raise CorruptDocument("The image is corrupt or unreadable") from None
    finally:
        out.close()


def read_image(data: bytes, ocr: str = "auto", ocr_languages: str = "",
               ocr_fanout: bool = False, ocr_pages: OcrPages | None = None,
               pages: PageRanges | None = None) -> Document:
    """Read an image upload by OCR into a Document; ``ocr="off"`` refuses it (40003).

    ``ocr_fanout``/``ocr_pages``/``pages`` as for :func:`read_pdf`; the :class:`OcrPending`
    raised for a TIFF of several pages carries the PDF made of it, which the page jobs read."""
    if ocr == "off":
        raise CorruptDocument("An image can only be read by OCR, and OCR is turned off "
                              "(ocr=off)")
    pdf = image_pdf(data)
    try:
        doc = read_pdf(pdf, ocr="force" if ocr == "force" else "auto",
                       ocr_languages=ocr_languages, ocr_fanout=ocr_fanout, ocr_pages=ocr_pages,
                       pages=pages)
    except OcrPending as pending:
        raise OcrPending(pending.pages, pdf, pending.page_pdfs) from None
    except CorruptDocument as exc:
        if "no text layer" in exc.message:
            raise CorruptDocument("OCR found no text in the image") from None
        raise
    return doc
