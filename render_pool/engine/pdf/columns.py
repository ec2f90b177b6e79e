"""Column gutters kept from page to page, and borderless tables found column by column.

A word processor's section columns stand at the same x on every page of the section. A page
whose columns hold mostly tables (short cells, words broken inside narrow cells) has too few
lines of prose for :func:`layout.find_gutters` to tell its columns from a table's; there the
gutters of the page before are kept when the page's text still leaves them empty, and the
gutters of all the page's text (tables too) when the text outside the tables is a line or
two beside a table. Tables without rules are looked for inside each column too: read
across the whole page, the rows of a table in one column and the lines of the text beside
it make one wide table. A table that spans the columns (its cells cross a gutter, or its
rows run across one) is kept whole. A ruled table's unruled label column never reaches
over a gutter (see reader.py, tables.widen_grid).
"""

from __future__ import annotations

import bisect

from render_pool.engine.pdf.borderless import TextTable, find_text_tables
from render_pool.engine.pdf.chars import Segment
from render_pool.engine.pdf.layout import find_gutters

Gutter = tuple[float, float]

# at most this share of the segments beside a kept gutter may cross it (a title, a figure)
CROSSING_SHARE = 0.05
# least share of a spanning table's lines in one column on a baseline of another column
SHARED_ROWS = 0.6
# least segments on each side of a kept gutter
LEAST_BESIDE = 6


class ColumnMemory:
    """The gutters of the last page that had columns, for the pages after it."""

    def __init__(self, gutters: list[Gutter] | None = None) -> None:
        self.gutters: list[Gutter] = gutters or []

    def peek(self, segs: list[Segment], height: float) -> list[Gutter]:
        """The gutters of all the page's text (tables too): the kept ones when the text
        leaves them empty and shows no more columns of its own, else its own. Nothing is
        remembered: a table's column gaps may look like gutters here.

        The kept gutters come first: a page with a table or a list at a column's edge may
        show a wider white band elsewhere, or too few lines of prose beside one gutter."""
        found = find_gutters(segs, height)
        kept = self.holding(segs, height)
        if kept and len(self.gutters) >= len(found):
            return kept
        return found

    def holding(self, segs: list[Segment], height: float) -> list[Gutter]:
        """The kept gutters when the page's text leaves them empty; the last page of a
        section may fill only its first columns, so gutters with no text right of them are
        left off first. None when nothing holds."""
        kept = list(self.gutters)
        while kept:
            if gutters_hold(segs, kept, height):
                return kept
            mid = (kept[-1][0] + kept[-1][1]) / 2
            if any(s.x0 >= mid - 2 for s in _body(segs, height)):
                return []
            kept.pop()
        return []

    def after_tables(self, segs: list[Segment], height: float,
                     fallback: list[Gutter]) -> list[Gutter]:
        """The gutters of the page's text outside its tables: the kept ones when that text
        leaves them empty and shows no more columns of its own (see :meth:`peek`), else its
        own (remembered for the next page), else ``fallback``; none when nothing holds."""
        found = find_gutters(segs, height)
        kept = self.holding(segs, height)
        if kept and len(self.gutters) >= len(found):
            return kept
        if found:
            self.gutters = found
            return found
        # the text beside a table may be a line or two: the tables showed these columns
        if fallback and gutters_hold(segs, fallback, height, least=1):
            return fallback
        return []


def text_tables(segs: list[Segment], memory: ColumnMemory,
                height: float) -> list[TextTable]:
    """The page's borderless tables. Tables are looked for across the page and, when the
    text outside them stands in columns (its own gutters or the kept ones, see
    :meth:`ColumnMemory.after_tables`), column by column: a table found across the page
    stands only where it spans the columns (see :func:`_spanning_or_split`)."""
    found = find_text_tables(segs)
    used: set[int] = set().union(*(t.used for t in found)) if found else set()
    prose = [s for s in segs if id(s.chars[0]) not in used]
    gutters = memory.after_tables(prose, height, [])
    if gutters:
        found = _spanning_or_split(found, tables_by_column(segs, gutters), gutters, segs)
    return found


def gutters_hold(segs: list[Segment], gutters: list[Gutter], height: float,
                 least: int = LEAST_BESIDE) -> bool:
    """True when every gutter has text on both sides (``least`` segments) and (almost)
    none across it.

    Running headers and page numbers (top and bottom 7% of the page) are not counted."""
    segs = _body(segs, height)
    for g0, g1 in gutters:
        mid = (g0 + g1) / 2
        left = right = crossing = 0
        for s in segs:
            if s.x1 <= mid + 2:
                left += 1
            elif s.x0 >= mid - 2:
                right += 1
            else:
                crossing += 1
        if min(left, right) < least or crossing > CROSSING_SHARE * (left + right):
            return False
    return True


def _body(segs: list[Segment], height: float) -> list[Segment]:
    """The segments off the top and bottom 7% of the page (running headers, page numbers)."""
    if not height:
        return segs
    return [s for s in segs if s.bottom > 0.07 * height and s.top < 0.93 * height]


def column_of(seg: Segment, gutters: list[Gutter]) -> int:
    """Index of the column ``seg`` stays in (by the gutters' middles); -1 when it crosses
    a gutter."""
    col = 0
    for g0, g1 in gutters:
        mid = (g0 + g1) / 2
        if seg.x1 <= mid + 2:
            return col
        if seg.x0 < mid - 2:
            return -1
        col += 1
    return col


def gutter_left_of(x: float, gutters: list[Gutter]) -> float:
    """The middle of the last gutter left of ``x`` (-inf when none): text of a table in a
    column does not reach over it."""
    mids = [(g0 + g1) / 2 for g0, g1 in gutters if (g0 + g1) / 2 <= x]
    return mids[-1] if mids else float("-inf")


def tables_by_column(segs: list[Segment], gutters: list[Gutter]) -> list[TextTable]:
    """Borderless tables of a page: of the whole page without gutters, else of each column
    (and of the text crossing the gutters) on its own."""
    if not gutters:
        return find_text_tables(segs)
    groups: dict[int, list[Segment]] = {}
    for s in segs:
        groups.setdefault(column_of(s, gutters), []).append(s)
    found: list[TextTable] = []
    for key in sorted(groups):
        found.extend(find_text_tables(groups[key]))
    return found


def _spanning_or_split(whole: list[TextTable], split: list[TextTable],
                       gutters: list[Gutter], segs: list[Segment]) -> list[TextTable]:
    """The tables of a page in columns. A table found across the page is kept whole when
    it spans the columns: some of its cells cross a gutter, or its lines on both sides of
    a gutter share baselines (rows run across). Otherwise the text of one column was
    taken in with a table of another: the tables found column by column stand instead."""
    kept = [t for t in whole if _spans(t, gutters, segs)]

    def under(t: TextTable, part: TextTable) -> bool:
        return part.top < t.bottom and t.top < part.bottom \
            and part.x0 >= t.x0 - 1 and part.x1 <= t.x1 + 1

    return kept + [p for p in split if not any(under(t, p) for t in kept)]


def _spans(table: TextTable, gutters: list[Gutter], segs: list[Segment]) -> bool:
    """True when ``table`` crosses a gutter and its cells do too, or its lines on either
    side of it share baselines."""
    mids = [(g0 + g1) / 2 for g0, g1 in gutters]
    if not any(table.x0 < m < table.x1 for m in mids):
        return False
    inside: dict[int, list[Segment]] = {}
    for s in segs:
        if id(s.chars[0]) in table.used:
            inside.setdefault(column_of(s, gutters), []).append(s)
    if len(inside.get(-1, ())) >= 2:
        return True  # its cells cross a gutter, as a column's text never does
    inside.pop(-1, None)
    return len(inside) >= 2 and _rows_across(inside)


def _baseline(seg: Segment) -> float:
    bases = sorted(c.baseline for c in seg.chars if c.text.strip())
    return bases[len(bases) // 2] if bases else seg.bottom


def _rows_across(by_column: dict[int, list[Segment]]) -> bool:
    """True when the lines of a table's columns stand on shared baselines (its rows run
    across the gutter): most lines of one column have a line of another column on their
    baseline (the other may hold more lines, its cells wrapping). A table in one column
    and the text of another do not."""
    bases = {col: sorted(_baseline(s) for s in segs) for col, segs in by_column.items()}
    for col, segs in by_column.items():
        others = sorted(b for c, bs in bases.items() if c != col for b in bs)
        shared = 0
        for s in segs:
            b = _baseline(s)
            at = bisect.bisect_left(others, b - 0.2 * s.size)
            shared += at < len(others) and others[at] <= b + 0.2 * s.size
        if shared >= SHARED_ROWS * len(segs):
            return True
    return False
