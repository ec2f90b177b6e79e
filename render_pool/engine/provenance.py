"""Provenance of blocks: where each block of a
:class:`~render_pool.engine.model.Document` came from.

Readers put locations (``model.Location``: a box on a PDF page, a slide, a sheet range, a
package part and position) in the ``prov`` of the blocks they build; writers read them (JSON
writes them, DocTags turns page boxes into location tokens, Markdown and HTML can mark where
pages start, the chunker gives each chunk its pages). This module holds the rules every one of
them shares, so no reader or writer has its own idea of them:

- :func:`merged`: locations joined (boxes on one page become one box);
- :func:`locate` / :func:`locate_parts`: a location given to the blocks that have none;
- :func:`roll_up`: a container (list, quote, table) with no location of its own takes the
  joined locations of what it holds;
- :func:`pages_of` / :func:`first_page`: the pages a block is on;
- :func:`page_starts` / :func:`page_marker`: where pages start, and how Markdown and HTML
  mark it (``page_markers=true``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from render_pool.engine.model import (
    Block,
    BlockQuote,
    ListBlock,
    ListItem,
    Location,
    Node,
    PageBox,
    PartRef,
    Table,
    TableCell,
    TableRow,
    walk,
)

__all__ = ["first_page", "locate", "locate_parts", "merged", "page_marker", "page_starts",
           "pages_of", "roll_up"]

_CONTAINERS = (ListBlock, BlockQuote, Table)


def merged(*groups: Iterable[Location]) -> list[Location]:
    """The locations of ``groups`` joined, in order of first appearance: boxes on the same
    page become the box around them all; other locations appear once each."""
    out: list[Location] = []
    page_at: dict[int, int] = {}  # page -> position of its box in ``out``
    for group in groups:
        for loc in group:
            if isinstance(loc, PageBox):
                at = page_at.get(loc.page)
                if at is None:
                    page_at[loc.page] = len(out)
                    out.append(loc)
                    continue
                old = out[at]
                assert isinstance(old, PageBox)
                a, b = old.bbox, loc.bbox
                out[at] = PageBox(loc.page, (min(a[0], b[0]), min(a[1], b[1]),
                                             max(a[2], b[2]), max(a[3], b[3])))
            elif loc not in out:
                out.append(loc)
    return out


def locate(blocks: Sequence[Block], where: Location) -> list[Block]:
    """``blocks`` (as a list), each without a location of its own given ``where``."""
    for block in blocks:
        if not block.prov:
            block.prov = [where]
    return list(blocks)


def locate_parts(blocks: Sequence[Block], part: str, start: int = 0) -> list[Block]:
    """``blocks`` (as a list), each without a location given ``PartRef(part, position)``,
    positions counted from ``start`` in order."""
    for pos, block in enumerate(blocks, start):
        if not block.prov:
            block.prov = [PartRef(part, pos)]
    return list(blocks)


def roll_up(blocks: Sequence[Block]) -> None:
    """Give every list, quote and table in ``blocks`` (at any depth) that has no location the
    joined locations of the blocks and cells inside it, innermost first: one box per page,
    and of a package part only the position where the container starts (its items keep
    their own).

    One pass over the blocks, items, rows and cells, never into inlines (no inline has a
    location): each container gets what its own walk would have found, gathered on the
    way back up, in document order."""
    for block in blocks:
        _rolled(block)


# where a node's blocks, items, rows or cells are (in the order ``model.walk`` visits them);
# inline lists (a paragraph's children, a table's caption) hold no locations
_INNER: dict[type, str] = {ListBlock: "items", ListItem: "blocks", BlockQuote: "blocks",
                           Table: "rows", TableRow: "cells", TableCell: "blocks"}


def _rolled(node: object) -> list[list[Location]]:
    """The locations of everything below ``node``, in document order, after the containers
    among them (and ``node`` itself, if it is one without a location) were rolled up."""
    name = _INNER.get(type(node))
    if name is None:
        return []
    inner: list[list[Location]] = []
    for child in getattr(node, name):
        below = _rolled(child)
        own = getattr(child, "prov", None)
        if own:
            inner.append(own)
        inner += below
    if isinstance(node, _CONTAINERS) and not node.prov:
        node.prov = _joined(inner)
    return inner


def _joined(inner: list[list[Location]]) -> list[Location]:
    """``inner`` merged, a package part's only first position kept."""
    parts: set[str] = set()
    out: list[Location] = []
    for loc in merged(*inner):
        if isinstance(loc, PartRef):
            if loc.part in parts:
                continue
            parts.add(loc.part)
        out.append(loc)
    return out


def pages_of(node: Node) -> list[int]:
    """The pages (from 1, ascending) a block or cell is on: from its own boxes, else from
    the boxes of what it holds; empty when nothing says."""
    own = getattr(node, "prov", None) or []
    pages = {loc.page for loc in own if isinstance(loc, PageBox)}
    if not own:
        for inner in walk([node]):
            pages.update(loc.page for loc in getattr(inner, "prov", None) or []
                         if isinstance(loc, PageBox))
    return sorted(pages)


def first_page(node: Node) -> int | None:
    """The first page a block is on (see :func:`pages_of`), or None."""
    pages = pages_of(node)
    return pages[0] if pages else None



def page_starts(blocks: Sequence[Block]) -> dict[int, int]:
    """Where pages start among top-level ``blocks``: position -> the page (from 1) that
    starts there, for the first block of each page (a page none of whose blocks starts on it
    has no entry). What the writers' page markers (``page_markers``) follow."""
    out: dict[int, int] = {}
    last = 0
    for pos, block in enumerate(blocks):
        page = first_page(block)
        if page is not None and page > last:
            out[pos] = page
            last = page
    return out


def page_marker(page: int) -> str:
    """The marker Markdown and HTML carry where page ``page`` starts."""
    return f"<!-- page {page} -->"
