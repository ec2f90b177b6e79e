"""Image reader: PNG, JPEG, TIFF (every page) and WebP uploads read by OCR, one page each.

Each frame becomes one page of an image-only PDF (Pillow) at the image's own resolution
(when it has none, one that makes the page about A4 wide), and that PDF is read by the PDF
reader, so an image is recognised exactly like a scanned page: same rendering, time limit,
parallel recognition, layout logic and warnings.
"""

from __future__ import annotations

import io
import warnings

from PIL import Image, ImageSequence

from render_pool.errors import CorruptDocument, OcrPending, TooLarge
from render_pool.model import Document
from render_pool.readers.pdf.ocr import OcrPages
from render_pool.readers.pdf.reader import read_pdf

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_FRAMES = 200
MAX_PIXELS = 60_000_000  # per frame; above this the image is refused (decompression bombs)
_A4_WIDTH_INCHES = 8.27
_SIGNATURES = {b"\x89PNG\r\n\x1a\n": "PNG", b"\xff\xd8\xff": "JPEG", b"II*\x00": "TIFF",
               b"MM\x00*": "TIFF"}


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


def image_pdf(data: bytes) -> bytes:
    """An image-only PDF with one page per frame of the image ``data``."""
    pages: list[Image.Image] = []
    resolution = 300.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            for n, frame in enumerate(ImageSequence.Iterator(image)):
                if n >= MAX_FRAMES:
                    raise TooLarge(f"The image has more than {MAX_FRAMES} pages")
                if frame.width * frame.height > MAX_PIXELS:
                    raise TooLarge(f"The image is too large ({frame.width}x{frame.height} "
                                   "pixels)")
                if n == 0:
                    resolution = _dpi(frame)
                page = frame.convert("RGBA") if frame.mode in ("P", "LA", "PA") else frame
                if page.mode == "RGBA":  # transparent areas become white paper
                    flat = Image.new("RGB", page.size, "white")
                    flat.paste(page, mask=page.getchannel("A"))
                    page = flat
                pages.append(page.convert("L") if page.mode not in ("L", "RGB") else page.copy())
    except (TooLarge, CorruptDocument):
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise TooLarge("The image is too large") from None
    except Exception:
        raise CorruptDocument("The image is corrupt or unreadable") from None
    if not pages:
        raise CorruptDocument("The image has no pages")
    out = io.BytesIO()
    pages[0].save(out, format="PDF", save_all=True, append_images=pages[1:],
                  resolution=resolution, quality=95)
    return out.getvalue()


def read_image(data: bytes, ocr: str = "auto", ocr_languages: str = "",
               ocr_fanout: bool = False, ocr_pages: OcrPages | None = None) -> Document:
    """Read an image upload by OCR into a Document; ``ocr="off"`` refuses it (40003).

    ``ocr_fanout``/``ocr_pages`` as for :func:`read_pdf`; the :class:`OcrPending` raised for
    a TIFF of several pages carries the PDF made of it, which the page jobs read."""
    if ocr == "off":
        raise CorruptDocument("An image can only be read by OCR, and OCR is turned off "
                              "(ocr=off)")
    pdf = image_pdf(data)
    try:
        doc = read_pdf(pdf, ocr="force" if ocr == "force" else "auto",
                       ocr_languages=ocr_languages, ocr_fanout=ocr_fanout, ocr_pages=ocr_pages)
    except OcrPending as pending:
        raise OcrPending(pending.pages, pdf, pending.page_pdfs) from None
    except CorruptDocument as exc:
        if "no text layer" in exc.message:
            raise CorruptDocument("OCR found no text in the image") from None
        raise
    return doc
