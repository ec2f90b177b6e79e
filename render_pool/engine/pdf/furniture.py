"""Page furniture: running headers, footers and page numbers of a PDF.

A line is furniture when it sits in the top or bottom band of its page, is among the first
or last lines there, and the same text (digits ignored, so "Page 3 of 9" matches
"Page 4 of 9") appears in that band on at least half of the pages (two pages at least); a
single word must also stand in the same place (the last word of a column may end two pages).
Bare page numbers ("7", "- 7 -", "Page 7", "7 / 12", "vii") in those bands always go, and so
does one that is the page's lowest (or highest) line in its bottom (top) quarter, set apart
from the text by a blank line's height (LaTeX puts it well above the bottom band).

Repeated text is furniture only when some page holds it beside other content (its body):
text that is all a page holds on every page it repeats on (a one-line note copied onto
every page, a rotated test page printed four ways) stays, as each page's body, unless it
lies wholly above or below the page, where no viewer shows it; a running header also on a
blank page (a book's verso) goes from that page too. The reader's
``include_furniture`` keeps what was taken, once per distinct text (:func:`furniture_blocks`),
in ``Document.furniture``.
"""

from __future__ import annotations

import re

from render_pool.engine import model
from render_pool.engine.model import Paragraph, plain_text
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import Block, Item, Line
from render_pool.engine.pdf.prov import items_prov
from render_pool.engine.provenance import merged

BAND = 0.1
_PAGE_NO = re.compile(
    r"^[-\u2013\u2014\s]*(page|p\.|seite|pagina|p\u00e1gina)?\s*(\d{1,4}|[ivxlc]{1,7})"
    r"(\s*(/|of|von|de)\s*\d{1,4})?[-\u2013\u2014\s]*$", re.IGNORECASE)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _text(it: Item) -> str:
    if isinstance(it, Line):
        return it.text
    # furniture candidates are lines or paragraph blocks: tagged paragraphs (_is_text) and
    # turned margin text, which reader._turned_blocks always makes a paragraph
    assert isinstance(it.payload, Paragraph)
    return " ".join(plain_text(it.payload.children).split())


def _is_text(it: Item) -> bool:
    """A line, or a paragraph from a structure tree whose place on the page is known."""
    return isinstance(it, Line) or (isinstance(it, Block) and isinstance(it.payload, Paragraph)
                                    and it.bottom > it.top)


def _edge_lines(items: list[Item], height: float) -> list[tuple[str, Item]]:
    """Lines in the top or bottom band that are among the page's outermost three lines."""
    lines = sorted((it for it in items if _is_text(it)), key=lambda ln: ln.top)
    out: list[tuple[str, Item]] = []
    for ln in lines[:3]:
        if ln.bottom <= height * BAND + 12:
            out.append(("top", ln))
    for ln in lines[-3:]:
        if ln.top >= height * (1 - BAND) - 12 and all(ln is not o for _, o in out):
            out.append(("bottom", ln))
    if lines and all(lines[-1] is not o for _, o in out):
        last = lines[-1]
        gap = last.top - max((ln.bottom for ln in lines[:-1]), default=0.0)
        if last.top >= 0.75 * height and gap >= last.bottom - last.top \
                and _PAGE_NO.match(_text(last)):
            out.append(("bottom", last))
    if lines and all(lines[0] is not o for _, o in out):
        first = lines[0]
        gap = min((ln.top for ln in lines[1:]), default=height) - first.bottom
        if first.bottom <= 0.25 * height and gap >= first.bottom - first.top \
                and _PAGE_NO.match(_text(first)):
            out.append(("top", first))
    return out


def _keys(zone: str, ln: Item) -> list[tuple[str, str]]:
    """The keys a line is counted under from page to page: its zone and text (digits
    ignored). A single word also needs the same place, its left or its right edge (a
    running header stands where it stood): one word ending a column's last line, or a
    footnote's, may fall at the foot of two pages by chance."""
    key = _key(_text(ln))
    if " " in key:
        return [(zone, key)]
    return [(zone, f"{key}@<{round(ln.x0 / 2)}"), (zone, f"{key}@>{round(ln.x1 / 2)}")]


def remove_furniture(pages: list[list[Item]], heights: list[float],
                     taken: list[Item] | None = None) -> int:
    """Drop running headers/footers and page numbers in place; returns lines removed, and
    appends them to ``taken`` (page by page, top to bottom) when given.

    Turned text in a side margin (a printer's or archive's stamp) counts as furniture
    the same way: when the same text (digits ignored) is there on half of the pages.
    Repeated text is furniture only when it stands beside body text on some page (body:
    anything but repeated text and page numbers, a table or an image too); then it goes
    from every page, a blank page's header too. Text that is the only text of every page
    it repeats on stays, as each page's body."""
    counts: dict[tuple[str, str], int] = {}
    edges = [_edge_lines(items, h) + [("side", it) for it in items
                                      if isinstance(it, Block) and it.margin]
             for items, h in zip(pages, heights, strict=True)]
    for found in edges:
        for key in {k for zone, ln in found for k in _keys(zone, ln)}:
            counts[key] = counts.get(key, 0) + 1
    need = max(2, (len(pages) + 1) // 2)
    marks: list[tuple[set[int], list[tuple[Item, list[tuple[str, str]]]]]] = []
    beside: set[tuple[str, str]] = set()  # repeated keys seen beside a page's body
    for items, found in zip(pages, edges, strict=True):
        numbers: set[int] = set()
        repeated: list[tuple[Item, list[tuple[str, str]]]] = []
        for zone, ln in found:
            keys = _keys(zone, ln)
            if _PAGE_NO.match(_text(ln)) and zone != "side":
                numbers.add(id(ln))
            elif max(counts.get(k, 0) for k in keys) >= need:
                repeated.append((ln, [k for k in keys if counts.get(k, 0) >= need]))
        taken_ids = numbers | {id(ln) for ln, _ in repeated}
        if any(id(it) not in taken_ids for it in items):
            beside.update(k for _, keys in repeated for k in keys)
        marks.append((numbers, repeated))
    removed = 0
    for items, height, (numbers, repeated) in zip(pages, heights, marks, strict=True):
        drop = numbers | {id(ln) for ln, keys in repeated
                          if beside.intersection(keys) or _off_page(ln, height)}
        if drop:
            removed += len(drop)
            if taken is not None:
                taken.extend(sorted((it for it in items if id(it) in drop),
                                    key=lambda it: it.top))
            items[:] = [it for it in items if id(it) not in drop]
    return removed


def _off_page(item: Item, height: float) -> bool:
    """Whether ``item`` lies wholly above or below its page (text a viewer never shows):
    never a page's body, however alone it stands."""
    return item.bottom <= 0 or item.top >= height


def furniture_blocks(taken: list[Item]) -> list[model.Block]:
    """Paragraphs for the furniture ``taken`` by :func:`remove_furniture`, in order: one
    per distinct text, its ``prov`` the places it stood on every page it was found on."""
    out: list[model.Block] = []
    seen: dict[str, Paragraph] = {}
    for it in taken:
        if isinstance(it, Line):
            inl = to_inlines(join_lines([it.chars]))
            if not inl:
                continue
            para = Paragraph(inl, prov=items_prov([it]))
        elif isinstance(it.payload, Paragraph):
            para = Paragraph(it.payload.children, prov=it.payload.prov or items_prov([it]))
        else:
            continue
        text = " ".join(plain_text(para.children).split())
        first = seen.get(text)
        if first is not None:
            first.prov = merged(first.prov, para.prov)
            continue
        seen[text] = para
        out.append(para)
    return out
