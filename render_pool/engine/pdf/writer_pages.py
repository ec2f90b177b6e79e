"""Reading and joining Chromium PDFs with pypdfium2: heading pages, page size, cover merge.

Cover merge and bookmarks: Chromium prints header/footer templates on every page, so the cover is
printed as its own PDF without them. Copying both PDFs into a *new* document would drop the
outline (pypdfium2 cannot write outlines). Instead the cover page is imported *into the body
document* at index 0 and the body document is saved: its catalog (outline, tagged structure,
link destinations, metadata) is kept, and since outline entries point at page objects rather
than page numbers, every bookmark still lands on its heading, one page further on.
"""

from __future__ import annotations

import io

import pypdfium2 as pdfium

from render_pool.engine.pdf.writer_layout import HeadingRef, normalise
from render_pool.errors import ConversionFailed


def _open(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:  # Chromium produced something unreadable: our failure
        raise ConversionFailed(f"rendered PDF cannot be read: {exc}") from exc


def first_page_size_in(data: bytes) -> tuple[float, float]:
    """Width and height of page 1 in inches (the cover is printed at the body's page size)."""
    pdf = _open(data)
    try:
        width, height = pdf.get_page_size(0)
        return width / 72, height / 72
    finally:
        pdf.close()


def heading_pages(data: bytes, headings: list[HeadingRef]) -> dict[str, int]:
    """0-based page index of each heading (by anchor), read from the PDF outline.

    Chromium builds the outline from the document's headings in order (skipping empty or
    hidden ones), so the outline is walked in step with ``headings``, matching titles by their
    whitespace-collapsed text. A heading with no matching entry is left out.
    """
    pdf = _open(data)
    try:
        outline = []
        for item in pdf.get_toc():
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            outline.append((normalise(item.get_title()), index))
    finally:
        pdf.close()
    found: dict[str, int] = {}
    pos = 0
    for ref in headings:
        for j in range(pos, len(outline)):
            title, index = outline[j]
            if title == ref.text:
                if index is not None:
                    found[ref.anchor] = index
                pos = j + 1
                break
    return found


def prepend_cover(body: bytes, cover: bytes) -> bytes:
    """Body PDF with the cover's first page in front, keeping the body's outline and links."""
    body_pdf, cover_pdf = _open(body), _open(cover)
    try:
        body_pdf.import_pages(cover_pdf, pages=[0], index=0)
        out = io.BytesIO()
        body_pdf.save(out)
        return out.getvalue()
    finally:
        cover_pdf.close()
        body_pdf.close()
