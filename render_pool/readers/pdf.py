"""PDF reader: a PDF's text layer, tables and images as a :class:`Document`.

Built on pypdfium2. Per page: characters with boxes and font style (pdf_chars), ruling
lines and images (pdf_graphics), ruled tables (pdf_tables), columns and reading order
(pdf_layout). Then, for the whole document: running headers/footers and page numbers are
removed (pdf_furniture) and lines become headings, paragraphs, lists and tables
(pdf_blocks).

Bad input never surfaces as a pdfium error: empty, non-PDF, corrupt and encrypted files,
and scans without a text layer raise :class:`CorruptDocument`; too many pages raise
:class:`TooLarge`.
"""

from __future__ import annotations

import logging

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.errors import CorruptDocument, TooLarge
from render_pool.model import Document, Image, Paragraph, Resource
from render_pool.readers.pdf_blocks import build_blocks
from render_pool.readers.pdf_chars import Char, page_chars, segments_of
from render_pool.readers.pdf_furniture import remove_furniture
from render_pool.readers.pdf_graphics import page_images, page_rules
from render_pool.readers.pdf_layout import Block as FlowBlock
from render_pool.readers.pdf_layout import Item, order_page
from render_pool.readers.pdf_tables import build_grid_table, find_grids

log = logging.getLogger(__name__)

MAX_PAGES = 2000
MAX_IMAGES = 500
_META_KEYS = {"Title": "title", "Author": "author", "Subject": "subject", "Keywords": "keywords"}


def _open(data: bytes) -> pdfium.PdfDocument:
    """Open the bytes with pdfium, turning every failure into a CorruptDocument."""
    if not data:
        raise CorruptDocument("The PDF file is empty (0 bytes)")
    if b"%PDF-" not in data[:1024]:
        raise CorruptDocument("The file is not a PDF (no %PDF- header)")
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise CorruptDocument(
                "The PDF is encrypted and needs a password; remove the protection and try "
                "again") from None
        if exc.err_code == pdfium_c.FPDF_ERR_SECURITY:
            raise CorruptDocument(
                "The PDF is encrypted with an unsupported security handler") from None
        raise CorruptDocument("The PDF is corrupt or unreadable") from None
    except Exception:
        raise CorruptDocument("The PDF is corrupt or unreadable") from None


def _metadata(pdf: pdfium.PdfDocument) -> dict[str, str]:
    try:
        raw = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # metadata is optional; a broken Info dictionary is not fatal
        return {}
    meta = {}
    for key, name in _META_KEYS.items():
        value = " ".join(str(raw.get(key, "")).replace("\x00", "").split())
        if value:
            meta[name] = value
    return meta


class _PageResult:
    __slots__ = ("height", "image_count", "items", "text_chars")

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.height = 0.0
        self.text_chars = 0
        self.image_count = 0


def _read_page(pdf: pdfium.PdfDocument, index: int, doc: Document,
               budget: list[int]) -> _PageResult:
    """Ordered items (lines, tables, images) of one page; the page is closed afterwards."""
    res = _PageResult()
    page = pdf[index]
    try:
        width, height = page.get_size()
        res.height = height
        textpage = page.get_textpage()
        try:
            chars = page_chars(textpage, height)
        finally:
            textpage.close()
        rules, fills = page_rules(page, height)
        images, skipped = page_images(page, height, budget)
    finally:
        page.close()
    if skipped:
        doc.warn(f"page {index + 1}: {skipped} image(s) skipped (too large, too many or "
                 "unreadable)")
    res.text_chars = sum(1 for c in chars if c is not None and c.text.strip())
    res.image_count = len(images) + skipped
    blocks: list[FlowBlock] = []
    for grid in find_grids(rules, width, height):
        inside: list[Char | None] = [c for c in chars if c is None or grid.contains(c)]
        table = build_grid_table(grid, inside, fills)
        if table is None:
            continue
        chars = [c for c in chars if c is None or not grid.contains(c)]
        x0, x1, top, bottom = grid.box
        blocks.append(FlowBlock(x0, x1, top, bottom, table))
    for n, img in enumerate(images, start=1):
        name = f"page{index + 1}-img{n}.png"
        doc.resources[name] = Resource(img.png, "image/png")
        para = Paragraph([Image(name, alt="", width_px=img.width_px, height_px=img.height_px)])
        blocks.append(FlowBlock(img.x0, img.x1, img.top, img.bottom, para))
    res.items = order_page(segments_of(chars), blocks, index, height)
    return res


def read_pdf(data: bytes) -> Document:
    """Read a PDF's text layer into a Document (headings, paragraphs, lists, tables, images).

    Raises CorruptDocument for empty, non-PDF, corrupt or encrypted input and for scans
    without a text layer (OCR is not supported), and TooLarge above ``MAX_PAGES`` pages.
    """
    pdf = _open(data)
    doc = Document()
    try:
        count = len(pdf)
        if count > MAX_PAGES:
            raise TooLarge(f"The PDF has {count} pages; the limit is {MAX_PAGES}")
        doc.meta.update(_metadata(pdf))
        budget = [MAX_IMAGES]
        pages: list[_PageResult] = []
        for index in range(count):
            try:
                pages.append(_read_page(pdf, index, doc, budget))
            except pdfium.PdfiumError as exc:
                log.info("page %d unreadable: %s", index + 1, exc)
                doc.warn(f"page {index + 1} could not be read and was skipped")
    finally:
        pdf.close()
    text_total = sum(p.text_chars for p in pages)
    if text_total == 0:
        if any(p.image_count for p in pages):
            raise CorruptDocument(
                "The PDF has no text layer (scanned?); OCR is not supported")
        doc.warn("The PDF contains no text")
        return doc
    scanned = [i + 1 for i, p in enumerate(pages) if not p.text_chars and p.image_count]
    if scanned:
        doc.warn("page(s) " + ", ".join(map(str, scanned[:20]))
                 + " have no text layer (scanned?); only their images were kept")
    page_items = [p.items for p in pages]
    remove_furniture(page_items, [p.height for p in pages])
    flow = [it for items in page_items for it in items]
    doc.blocks = build_blocks(flow)
    return doc
