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

Section columns are equally wide: a gutter the page's prose does not show (a column of
nothing but tables) stands one column's pitch from the one it shows. A table that a
column break cut in two, its header repeated at the top of the next column, is made one
again. The words of the pages read so far are the lexicon that tells where a word cut
letter by letter inside a narrow cell ends (cell_words).
"""

from __future__ import annotations

import bisect

from render_pool.engine.model import Paragraph, Table, TableCell, TableRow, Text
from render_pool.engine.pdf.borderless import TextTable, find_text_tables
from render_pool.engine.pdf.cell_words import words_of
from render_pool.engine.pdf.chars import Segment
from render_pool.engine.pdf.layout import find_gutters

Gutter = tuple[float, float]

# at most this share of the segments beside a kept gutter may cross it (a title, a figure)
CROSSING_SHARE = 0.05
# least share of a spanning table's lines in one column on a baseline of another column
SHARED_ROWS = 0.6
# least segments on each side of a kept gutter
LEAST_BESIDE = 6
MAX_WORDS = 50_000  # a lexicon this large stops growing
MAX_COLUMNS = 12  # section columns a page may hold (regular_gutters looks no further)


class ColumnMemory:
    """The gutters of the last page that had columns, for the pages after it."""

    def __init__(self, gutters: list[Gutter] | None = None) -> None:
        self.gutters: list[Gutter] = gutters or []
        self.words: frozenset[str] = frozenset()  # the lexicon of the pages so far
        self.table_segs: list[Segment] = []  # the segments of this page's tables

    def learn(self, segs: list[Segment]) -> frozenset[str]:
        """The words of the pages so far with this page's (cell_words.words_of): where a
        word cut inside a narrow cell ends. At most MAX_WORDS are kept."""
        if len(self.words) < MAX_WORDS:
            self.words |= words_of(s.text for s in segs)
        return self.words

    def peek(self, segs: list[Segment], height: float) -> list[Gutter]:
        """The gutters of all the page's text (tables too): the kept ones when the text
        leaves them empty and shows no more columns of its own, else its own. Nothing is
        remembered: a table's column gaps may look like gutters here.

        The kept gutters come first: a page with a table or a list at a column's edge may
        show a wider white band elsewhere, or too few lines of prose beside one gutter."""
        found = regular_gutters(find_gutters(segs, height), segs, height)
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
        found = regular_gutters(find_gutters(segs, height), segs, height)
        kept = self.holding(segs, height)
        if self.table_segs:
            # a column may hold nothing but a table, whose lines left the text: the page's
            # tables count as text beside the gutters
            both = self.holding(segs + self.table_segs, height)
            kept = both if len(both) > len(kept) else kept
        if kept and len(self.gutters) >= len(found):
            return kept
        if found:
            self.gutters = found
            return found
        # the text beside a table may be a line or two: the tables showed these columns
        if fallback and gutters_hold(segs, fallback, height, least=1):
            return fallback
        return []


def regular_gutters(found: list[Gutter], segs: list[Segment],
                    height: float) -> list[Gutter]:
    """``found`` with the gutters it misses between columns of equal width: a word
    processor's section columns (and CSS columns) are equally wide with equal gaps, so the
    first column's width plus the first gutter is the pitch from one gutter to the next.
    A column holding tables of short cells shows too little prose for
    :func:`layout.find_gutters`; a gutter one pitch on is taken when the page's text leaves
    it empty (:func:`gutters_hold`) and a column's worth of text stands right of it."""
    body = _body(segs, height)
    if not found or not body:
        return found
    left = min(s.x0 for s in body)
    right = max(s.x1 for s in body)
    g0, g1 = found[0]
    width = g0 - left
    pitch = width + (g1 - g0)
    if width <= 0 or pitch <= 0:
        return found
    out = list(found)
    k = 1
    while g1 + k * pitch + 0.5 * width <= right and k <= MAX_COLUMNS:
        new = (g0 + k * pitch, g1 + k * pitch)
        k += 1
        if any(a < new[1] and new[0] < b for a, b in out):
            continue
        if gutters_hold(segs, [new], height):
            out.append(new)
    return sorted(out)


def text_tables(segs: list[Segment], memory: ColumnMemory,
                height: float) -> list[TextTable]:
    """The page's borderless tables. Tables are looked for across the page and, when the
    text outside them stands in columns (its own gutters or the kept ones, see
    :meth:`ColumnMemory.after_tables`), column by column: a table found across the page
    stands only where it spans the columns (see :func:`_spanning_or_split`)."""
    words = memory.learn(segs)
    memory.table_segs = []
    found = find_text_tables(segs, words)
    used: set[int] = set().union(*(t.used for t in found)) if found else set()
    prose = [s for s in segs if id(s.chars[0]) not in used]
    gutters = memory.after_tables(prose, height, [])
    if not gutters and memory.gutters and gutters_hold(segs, memory.gutters, height, least=2):
        # a table taken across the page may hold a column's few lines of prose: the kept
        # gutters stand when nothing on the page crosses them
        gutters = list(memory.gutters)
    if gutters:
        found = _spanning_or_split(found, tables_by_column(segs, gutters, words), gutters,
                                   segs)
        found = join_continued(found, gutters, segs, words)
    used = set().union(*(t.used for t in found)) if found else set()
    memory.table_segs = [s for s in segs if id(s.chars[0]) in used]
    return found


def join_continued(found: list[TextTable], gutters: list[Gutter], segs: list[Segment],
                   lexicon: frozenset[str] = frozenset()) -> list[TextTable]:
    """The tables of a page in columns with each table that a column break cut in two made
    one again: a table at the top of a column (no text of the page's ``segs`` above it
    there but a leftover line of its header, no caption of its own) whose first rows
    repeat the first rows of the last table of the column before (a repeated header), as
    many columns wide, continues it. Its rows join the first table (the repeated header
    dropped) and its characters count as that table's, so it stands once, where it
    began. A first row whose cells start in lower case (or with a digit, not all of
    them) is the rest of a row the break cut: its cells' text ends the cells of the row
    above (a word cut there is joined again when the ``lexicon`` knows the whole word)."""
    mids = [(g0 + g1) / 2 for g0, g1 in gutters]

    def column(t: TextTable) -> int:
        return bisect.bisect_left(mids, (t.x0 + t.x1) / 2)

    order = sorted(found, key=lambda t: (column(t), t.top))
    used: set[int] = set().union(*(t.used for t in found)) if found else set()
    # per column, the highest text outside the tables that is no header line left over
    # (more than three lines above where a table begins): none may stand above a
    # continued table
    tops: dict[int, list[tuple[float, float]]] = {}
    for s in segs:
        if id(s.chars[0]) not in used:
            col = bisect.bisect_left(mids, (s.x0 + s.x1) / 2)
            tops.setdefault(col, []).append((s.bottom + 3 * s.size, s.top))

    def at_top(t: TextTable) -> bool:
        return not any(reach < t.top for reach, top in tops.get(column(t), ()) if top < t.top)
    highest: dict[int, float] = {}  # per column, the top of its highest table
    for t in order:
        highest.setdefault(column(t), t.top)  # ``order`` runs top-down in each column
    out: list[TextTable] = []
    reached = -1  # the column the last table of ``out`` ends in
    for t in order:
        last = out[-1] if out else None
        head = _repeats_head(last, t) if last is not None else 0
        if last is not None and column(t) == reached + 1 and head and not t.table.caption \
                and at_top(t) and highest[column(t)] >= t.top:
            _append_rows(last.table, t.table.rows[head:], lexicon)
            last.used |= t.used
        else:
            out.append(t)
        reached = column(t)
    return out


def _repeats_head(first: TextTable, then: TextTable) -> int:
    """How many rows ``then`` opens with that repeat ``first``'s first rows (a header
    repeated after a column break, at most three rows, as many columns wide, two cells of
    text at least); 0 when it does not."""
    a, b = first.table.rows, then.table.rows
    same = 0
    filled = 0
    while same < min(3, len(a), len(b) - 1):
        # compared without spaces: the two parts may join a word cut in a cell or not
        texts = [["".join(cell_text(c).split()).casefold() for c in row.cells]
                 for row in (a[same], b[same])]
        if texts[0] != texts[1] or len(texts[0]) < 2:
            break
        filled += sum(map(bool, texts[0]))
        same += 1
    return same if filled >= 2 else 0


def _append_rows(table: Table, rows: list[TableRow], lexicon: frozenset[str]) -> None:
    """Add ``rows`` to ``table``; a first row the column break cut (its cells starting in
    lower case or with a digit, not all with a digit) ends the cells of the table's last
    row instead."""
    if rows and table.rows and len(rows[0].cells) == len(table.rows[-1].cells):
        texts = [t for t in (cell_text(c) for c in rows[0].cells) if t]
        if any(t[:1].islower() for t in texts) \
                and all(t[:1].islower() or t[:1].isdigit() for t in texts):
            for into, more in zip(table.rows[-1].cells, rows[0].cells, strict=True):
                _extend_cell(into, more, lexicon)
            rows = rows[1:]
    table.rows.extend(rows)


def _extend_cell(into: TableCell, more: TableCell, lexicon: frozenset[str]) -> None:
    """``more``'s text at the end of ``into``'s paragraph: with no space when the word
    ``into`` ends with and the one ``more`` starts with make a lexicon word."""
    if not more.blocks:
        return
    head, tail = into.blocks[-1:], more.blocks[0]
    if not head or not isinstance(head[0], Paragraph) or not isinstance(tail, Paragraph):
        into.blocks.extend(more.blocks)
        return
    para = head[0]
    before, after = cell_text(into).split(), cell_text(more).split()
    glued = bool(before and after) and (before[-1] + after[0]).casefold().strip(".,;:") \
        in lexicon
    last = para.children[-1] if para.children else None
    first = tail.children[0] if tail.children else None
    if glued and isinstance(last, Text) and isinstance(first, Text):
        para.children[-1] = Text(last.text + first.text)
        para.children.extend(tail.children[1:])
    else:
        para.children.extend([Text(" "), *tail.children])
    into.blocks.extend(more.blocks[1:])


def cell_text(cell: TableCell) -> str:
    """The plain text of a cell's paragraphs."""

    def flat(node: object) -> str:
        if isinstance(node, Text):
            return node.text
        return "".join(flat(c) for c in getattr(node, "children", []))

    return " ".join(flat(b) for b in cell.blocks).strip()


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


def tables_by_column(segs: list[Segment], gutters: list[Gutter],
                     lexicon: frozenset[str] = frozenset()) -> list[TextTable]:
    """Borderless tables of a page: of the whole page without gutters, else of each column
    (and of the text crossing the gutters) on its own (``lexicon``: see
    :func:`borderless.find_text_tables`)."""
    if not gutters:
        return find_text_tables(segs, lexicon)
    groups: dict[int, list[Segment]] = {}
    for s in segs:
        groups.setdefault(column_of(s, gutters), []).append(s)
    found: list[TextTable] = []
    for key in sorted(groups):
        found.extend(find_text_tables(groups[key], lexicon))
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
