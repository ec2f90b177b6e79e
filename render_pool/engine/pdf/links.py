"""Links of one PDF page: URI link annotations and plain URLs in the text.

Each link is an area of the page (top-down coordinates, like :mod:`chars`) with its
target; a character whose centre lies in the area belongs to the link. Annotations win over
URLs found in the text (they are what the author made clickable).

Internal links (a GoTo action or a destination, named or explicit) point at a page position,
which the model has no name for: the area carries an :data:`INTERNAL` target (page and
position) until the document is built, then :func:`resolve_internal_links` points it at the
heading found at that position (``#slug``, the slug the writers give that heading), or drops
the link and keeps its text when the page has no heading there.
"""

from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.engine.common.slugs import Slugger
from render_pool.engine.model import (
    Block,
    Heading,
    Inline,
    Link,
    NoteRef,
    map_inlines,
    plain_text,
    walk,
)
from render_pool.engine.pdf.chars import Char

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_LINKS = 2000
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "ftp://")
INTERNAL = "\x00goto:"  # target of an internal link: INTERNAL + "<page>:<top or ->"
_ABOVE, _BELOW = 24.0, 30.0  # points around a destination where its heading may start


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


def _internal(pdf: pdfium.PdfDocument, dest: object) -> str:
    """The INTERNAL target of a destination: its page and, when it names one, the top-down
    y of its position on that page; '' when the page does not exist."""
    page = pdfium_c.FPDFDest_GetDestPageIndex(pdf.raw, dest)
    if page < 0 or page >= len(pdf):
        return ""
    flags = [ctypes.c_int(0) for _ in range(3)]
    xyz = [pdfium_c.FS_FLOAT(0) for _ in range(3)]
    top = "-"
    size = pdfium_c.FS_SIZEF()
    if pdfium_c.FPDFDest_GetLocationInPage(dest, *map(ctypes.byref, flags),
                                           *map(ctypes.byref, xyz)) and flags[1].value \
            and pdfium_c.FPDF_GetPageSizeByIndexF(pdf.raw, page, ctypes.byref(size)):
        top = f"{size.height - xyz[1].value:.1f}"
    return f"{INTERNAL}{page}:{top}"


def _target(pdf: pdfium.PdfDocument, link: object) -> str:
    """A link annotation's target: a safe URI, an INTERNAL target, or ''."""
    action = pdfium_c.FPDFLink_GetAction(link)
    kind = pdfium_c.FPDFAction_GetType(action) if action else pdfium_c.PDFACTION_UNSUPPORTED
    if kind == pdfium_c.PDFACTION_URI:
        n = pdfium_c.FPDFAction_GetURIPath(pdf.raw, action, None, 0)
        if n <= 1 or n > 8192:
            return ""
        buf = ctypes.create_string_buffer(n)
        pdfium_c.FPDFAction_GetURIPath(pdf.raw, action, buf, n)
        return _safe(buf.raw[: n - 1].decode("latin-1"))
    if kind == pdfium_c.PDFACTION_GOTO:
        dest = pdfium_c.FPDFAction_GetDest(pdf.raw, action)
    elif not action:
        dest = pdfium_c.FPDFLink_GetDest(pdf.raw, link)
    else:
        return ""  # other documents, launch, JavaScript: not followed
    return _internal(pdf, dest) if dest else ""


def _annotation_links(pdf: pdfium.PdfDocument, page: pdfium.PdfPage,
                      height: float) -> list[LinkArea]:
    out: list[LinkArea] = []
    pos = ctypes.c_int(0)
    link = pdfium_c.FPDF_LINK()
    rect = pdfium_c.FS_RECTF()
    while len(out) < MAX_LINKS and pdfium_c.FPDFLink_Enumerate(page.raw, ctypes.byref(pos),
                                                               ctypes.byref(link)):
        url = _target(pdf, link)
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


def is_internal(target: str) -> bool:
    """True for an INTERNAL target (not yet resolved to a heading)."""
    return target.startswith(INTERNAL)


def _destination_shift(targets: list[str],
                       by_page: dict[int, list[tuple[float | None, Heading]]]) -> float:
    """How far below its destinations a document's headings consistently start (0 when they
    do not agree). Chromium writes a heading's destination without the page's top margin, so
    every table-of-contents link of its PDFs points about a margin above its heading; the
    shift is learned from the document itself: at least two destinations, each with a
    heading starting 0-100 points below it, all at the same distance (within 8 points)."""
    tops = {page: sorted(top for top, _ in found if top is not None)
            for page, found in by_page.items()}
    gaps: list[float] = []
    for target in targets:
        page_s, _, top_s = target[len(INTERNAL):].partition(":")
        if top_s == "-":
            continue
        y = float(top_s)
        on_page = tops.get(int(page_s), [])
        at = bisect.bisect_left(on_page, y - 4)  # the first heading at or below it
        if at < len(on_page) and on_page[at] <= y + 100:
            gaps.append(on_page[at] - y)
    if len(gaps) < 2:
        return 0.0
    gaps.sort()
    middle = gaps[len(gaps) // 2]
    if middle <= _BELOW or gaps[-1] - middle > 8 or middle - gaps[0] > 8:
        return 0.0  # already in the window, or no one distance: destinations as written
    return middle


def resolve_internal_links(blocks: list[Block], notes: dict[str, list[Block]],
                           places: list[tuple[int, float | None, Heading]]) -> None:
    """Point internal links at the heading at their destination, or unwrap them.

    ``places`` holds (page, top or None, heading) for every heading, in document order. A
    destination with a position takes the first heading on its page that starts there
    (from ``_ABOVE`` points above to ``_BELOW`` points below; a heading of unknown position
    counts), so a citation or a "see Table 1" pointing into body text finds none; one
    without a position (the whole page) takes the page's first heading. The heading gets
    the anchor the writers would give it (GitHub's slug, numbered in document order) and
    the link ``#anchor``. A link with no heading at its destination, or around a footnote
    reference, keeps only its content.
    """
    slug = Slugger()
    anchors = {id(h): slug(plain_text(h.children)) for _, _, h in places}
    by_page: dict[int, list[tuple[float | None, Heading]]] = {}
    for page, top, heading in places:
        by_page.setdefault(page, []).append((top, heading))

    shift = _destination_shift([n.target for n in walk(blocks) if isinstance(n, Link)
                                and is_internal(n.target)], by_page)

    def heading_at(target: str) -> Heading | None:
        page_s, _, top_s = target[len(INTERNAL):].partition(":")
        found = by_page.get(int(page_s), [])
        if top_s == "-":
            return found[0][1] if found else None
        y = float(top_s) + shift
        return next((h for top, h in found if top is None or y - _ABOVE <= top <= y + _BELOW),
                    None)

    def fix(node: Inline) -> list[Inline] | None:
        if not (isinstance(node, Link) and is_internal(node.target)):
            return None
        heading = heading_at(node.target)
        if heading is None or any(isinstance(k, NoteRef) for k in node.children):
            return list(node.children)  # the link unwrapped: its content stays
        heading.anchor = heading.anchor or anchors[id(heading)]
        node.target = "#" + heading.anchor
        return None

    for where in (blocks, *notes.values()):
        map_inlines(where, fix)
