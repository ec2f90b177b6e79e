"""Links of one PDF page: URI link annotations and plain URLs in the text.

Each link is an area of the page (top-down coordinates, like :mod:`pdf_chars`) with its
target; a character whose centre lies in the area belongs to the link. Annotations win over
URLs found in the text (they are what the author made clickable). Internal links (GoTo
actions) are not kept: their targets are page positions, not model anchors.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.readers.pdf_chars import Char

MAX_LINKS = 2000
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "ftp://")


@dataclass(slots=True)
class LinkArea:
    """A clickable rectangle (top-down) and its URL."""

    x0: float
    x1: float
    top: float
    bottom: float
    url: str


def _safe(url: str) -> str:
    """The URL when its scheme is one a reader can follow; '' for javascript: and others."""
    url = url.strip().replace("\x00", "")
    return url if url.lower().startswith(_SAFE_SCHEMES) and len(url) < 4096 else ""


def _annotation_links(pdf: pdfium.PdfDocument, page: pdfium.PdfPage,
                      height: float) -> list[LinkArea]:
    out: list[LinkArea] = []
    pos = ctypes.c_int(0)
    link = pdfium_c.FPDF_LINK()
    rect = pdfium_c.FS_RECTF()
    while len(out) < MAX_LINKS and pdfium_c.FPDFLink_Enumerate(page.raw, ctypes.byref(pos),
                                                               ctypes.byref(link)):
        action = pdfium_c.FPDFLink_GetAction(link)
        if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_URI:
            continue
        n = pdfium_c.FPDFAction_GetURIPath(pdf.raw, action, None, 0)
        if n <= 1 or n > 8192:
            continue
        buf = ctypes.create_string_buffer(n)
        pdfium_c.FPDFAction_GetURIPath(pdf.raw, action, buf, n)
        url = _safe(buf.raw[: n - 1].decode("latin-1"))
        if not url or not pdfium_c.FPDFLink_GetAnnotRect(link, ctypes.byref(rect)):
            continue
        top, bottom = sorted((height - rect.top, height - rect.bottom))
        x0, x1 = sorted((rect.left, rect.right))
        out.append(LinkArea(x0, x1, top, bottom, url))
    return out


def _web_links(textpage: pdfium.PdfTextPage, height: float) -> list[LinkArea]:
    out: list[LinkArea] = []
    links = pdfium_c.FPDFLink_LoadWebLinks(textpage.raw)
    if not links:
        return out
    try:
        l_, t_, r_, b_ = (ctypes.c_double() for _ in range(4))
        for i in range(min(pdfium_c.FPDFLink_CountWebLinks(links), MAX_LINKS)):
            n = pdfium_c.FPDFLink_GetURL(links, i, None, 0)
            if n <= 1 or n > 4096:
                continue
            buf = (ctypes.c_ushort * n)()
            pdfium_c.FPDFLink_GetURL(links, i, buf, n)
            url = _safe(bytes(buf)[: 2 * (n - 1)].decode("utf-16-le", "replace"))
            if not url:
                continue
            for r in range(min(pdfium_c.FPDFLink_CountRects(links, i), 16)):
                if pdfium_c.FPDFLink_GetRect(links, i, r, ctypes.byref(l_), ctypes.byref(t_),
                                             ctypes.byref(r_), ctypes.byref(b_)):
                    out.append(LinkArea(l_.value, r_.value, height - t_.value,
                                        height - b_.value, url))
    finally:
        pdfium_c.FPDFLink_CloseWebLinks(links)
    return out


def page_links(pdf: pdfium.PdfDocument, page: pdfium.PdfPage, textpage: pdfium.PdfTextPage,
               height: float) -> list[LinkArea]:
    """Link areas of the page: annotations first, then plain URLs of the text."""
    try:
        return _annotation_links(pdf, page, height) + _web_links(textpage, height)
    except (pdfium.PdfiumError, ValueError, OSError):  # links are optional
        return []


def attach_links(chars: list[Char | None], links: list[LinkArea]) -> None:
    """Set ``Char.link`` on every visible character whose centre lies in a link area."""
    if not links:
        return
    rows: dict[int, list[LinkArea]] = {}  # 10-point bands keep the cost near linear
    for a in links:
        for band in range(int(a.top // 10), min(int(a.bottom // 10), int(a.top // 10) + 50) + 1):
            rows.setdefault(band, []).append(a)
    for c in chars:
        if c is None or not c.text.strip():
            continue
        cx, cy = (c.x0 + c.x1) / 2, (c.top + c.bottom) / 2
        for a in rows.get(int(cy // 10), ()):
            if a.x0 - 0.5 <= cx <= a.x1 + 0.5 and a.top - 0.5 <= cy <= a.bottom + 0.5:
                c.link = a.url
                break
