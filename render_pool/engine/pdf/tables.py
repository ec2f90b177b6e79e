"""Tables of a PDF page: grids of ruling lines, and text aligned in columns.

A ruled table is a connected set of horizontal and vertical rules with at least two rows or
columns of cells. Cell boundaries that a rule does not cover become row or column spans.
Characters whose centre falls inside the grid are taken out of the text flow and put into
the cells.

An unruled table is a run of lines that each split into several segments at the same
x positions (column starts); it is recognised conservatively, from three rows up.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from render_pool.engine.model import Block, Paragraph, Table, TableCell, TableRow
from render_pool.engine.pdf.cell_words import join_broken_cells
from render_pool.engine.pdf.chars import Char, Segment, segments_of
from render_pool.engine.pdf.graphics import FillRect, Rule
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import Line, group_lines

TOL = 2.0


@dataclass(slots=True)
class Grid:
    """Row boundaries ``ys`` and column boundaries ``xs`` (top-down), with the rules."""

    xs: list[float]
    ys: list[float]
    h: list[Rule]
    v: list[Rule]

    @property
    def box(self) -> tuple[float, float, float, float]:
        return self.xs[0], self.xs[-1], self.ys[0], self.ys[-1]

    def contains(self, c: Char) -> bool:
        x0, x1, top, bottom = self.box
        cx, cy = (c.x0 + c.x1) / 2, (c.top + c.bottom) / 2
        return x0 - 1 <= cx <= x1 + 1 and top - 1 <= cy <= bottom + 1


def _merge(rules: list[Rule]) -> list[Rule]:
    """Join collinear rules that touch or overlap (within the tolerance)."""
    out: list[Rule] = []
    for r in sorted(rules, key=lambda r: (round(r.a), r.b0)):
        for o in out:
            if abs(o.a - r.a) <= TOL / 2 and r.b0 <= o.b1 + TOL and r.b1 >= o.b0 - TOL:
                o.b0, o.b1 = min(o.b0, r.b0), max(o.b1, r.b1)
                break
        else:
            out.append(Rule(r.horizontal, r.a, r.b0, r.b1))
    return out


def _cluster(values: list[float]) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if out and v - out[-1] <= TOL:
            continue
        out.append(v)
    return out


def find_grids(rules: list[Rule], page_w: float, page_h: float) -> list[Grid]:
    """Connected groups of rules that form a table grid (at least two cells)."""
    h = _merge([r for r in rules if r.horizontal])
    v = _merge([r for r in rules if not r.horizontal])
    if not h or not v or len(h) + len(v) > 3000:
        return []
    parent = list(range(len(h) + len(v)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, hr in enumerate(h):
        for j, vr in enumerate(v):
            if (hr.b0 - TOL <= vr.a <= hr.b1 + TOL) and (vr.b0 - TOL <= hr.a <= vr.b1 + TOL):
                parent[find(i)] = find(len(h) + j)
    comps: dict[int, tuple[list[Rule], list[Rule]]] = {}
    for i, hr in enumerate(h):
        comps.setdefault(find(i), ([], []))[0].append(hr)
    for j, vr in enumerate(v):
        comps.setdefault(find(len(h) + j), ([], []))[1].append(vr)
    grids: list[Grid] = []
    for hs, vs in comps.values():
        if not hs or not vs:
            continue
        ys = _cluster([r.a for r in hs] + [min(r.b0 for r in vs), max(r.b1 for r in vs)])
        xs = _cluster([r.a for r in vs] + [min(r.b0 for r in hs), max(r.b1 for r in hs)])
        if len(xs) < 2 or len(ys) < 2 or (len(xs) - 1) * (len(ys) - 1) < 2:
            continue
        if xs[-1] - xs[0] > 0.98 * page_w and ys[-1] - ys[0] > 0.9 * page_h:
            continue  # a page frame, not a table
        grids.append(Grid(xs, ys, hs, vs))
    return grids


def widen_grid(grid: Grid, chars: list[Char | None], floor: float = float("-inf")) -> Grid:
    """The grid with an unruled label column on its left added, when text stands there
    on most of its rows, ending close to its first rule (a stub column drawn without
    rules: the row names of a ruled block of numbers). Its rows are the grid's rows.
    Text left of ``floor`` (a column gutter) is another column's, never labels."""
    x0, _, top, bottom = grid.box
    left = [c for c in chars if c is not None and c.text.strip() and c.x1 <= x0 + 1
            and c.x0 >= floor and top <= (c.top + c.bottom) / 2 <= bottom]
    if not left:
        return grid
    em = max(1.0, sorted(c.size for c in left)[len(left) // 2])
    near = max(c.x1 for c in left)
    if x0 - near > 3 * em:
        return grid
    # the label column: the text left of the grid back to a gap wider than 3 em
    left.sort(key=lambda c: -c.x1)
    start = near
    for c in left:
        if start - c.x1 > 3 * em:
            break
        start = min(start, c.x0)
    labels = [c for c in left if c.x0 >= start - 0.5]
    heights = sorted(b - a for a, b in itertools.pairwise(grid.ys))
    usual = heights[len(heights) // 2]
    rows = [(a, b) for a, b in itertools.pairwise(grid.ys) if b - a >= 0.6 * usual]
    filled = sum(1 for a, b in rows if any(a <= (c.top + c.bottom) / 2 <= b for c in labels))
    if filled < max(2, 0.5 * len(rows)):
        return grid
    new_x0 = start - 1
    h = list(grid.h) + [Rule(True, y, new_x0, x0) for y in grid.ys]
    v = [*grid.v, Rule(False, new_x0, top, bottom)]
    return Grid([new_x0, *grid.xs], grid.ys, h, v)


def _has_v(grid: Grid, x: float, y: float) -> bool:
    return any(abs(r.a - x) <= TOL and r.b0 - TOL <= y <= r.b1 + TOL for r in grid.v)


def _has_h(grid: Grid, y: float, x: float) -> bool:
    return any(abs(r.a - y) <= TOL and r.b0 - TOL <= x <= r.b1 + TOL for r in grid.h)


def cell_lines(chars: list[Char | None]) -> list[list[Char]]:
    """The lines of one cell's characters, top to bottom."""
    return [Line(g).chars for g in group_lines(segments_of(chars))]


def lines_blocks(lines: list[list[Char]]) -> list[Block]:
    """Paragraph of the lines of one cell (lines joined, hyphens resolved)."""
    inl = to_inlines(join_lines(lines)) if lines else []
    return [Paragraph(inl)] if inl else []


def cell_blocks(chars: list[Char | None]) -> list[Block]:
    """Paragraph of the characters of one cell (lines joined, hyphens resolved)."""
    return lines_blocks(cell_lines(chars))


def _prose_grid(buckets: dict[tuple[int, int], list[Char | None]]) -> bool:
    """True when the "cells" of a grid hold running text: a cell of over 60 words, or a
    third or more of the filled cells over 30 words (a figure's frame or boxes drawn over
    a paragraph, not a table). Running text then stays in the text flow, read in columns."""
    words = [sum(1 for before, c in zip([None, *chars], chars, strict=False)
                 if c is not None and c.text.strip()
                 and (before is None or not before.text.strip()))
             for chars in buckets.values()]
    filled = [w for w in words if w]
    return bool(filled) and (max(filled) > 60
                             or 3 * sum(1 for w in filled if w > 30) >= len(filled))


def _word_centres(chars: list[Char | None]) -> dict[int, tuple[float, float]]:
    """The centre of the word each character belongs to (by character id): a word goes
    to one cell whole, even where a rule of another row's grid crosses it ("Mukesh", not
    "Mu | kesh"). A word is a run of touching glyphs on one baseline."""
    out: dict[int, tuple[float, float]] = {}
    word: list[Char] = []

    def close() -> None:
        if len(word) > 1:
            centre = ((word[0].x0 + word[-1].x1) / 2,
                      (min(c.top for c in word) + max(c.bottom for c in word)) / 2)
            for c in word:
                out[id(c)] = centre
        word.clear()

    for ch in chars:
        if ch is None or not ch.text.strip():
            close()
            continue
        if word:
            last = word[-1]
            em = max(last.size, 1.0)
            if abs(ch.baseline - last.baseline) > 0.3 * em \
                    or not -0.3 * em <= ch.x0 - last.x1 <= 0.15 * em:
                close()
        word.append(ch)
    close()
    return out


def build_grid_table(grid: Grid, chars: list[Char | None], fills: list[FillRect]) -> Table | None:
    """Model table of a grid from the characters inside it; None if it holds no text."""
    nrows, ncols = len(grid.ys) - 1, len(grid.xs) - 1
    if ncols < 2:
        return None  # row rules alone separate rows of text; columns come from alignment
    owner: dict[tuple[int, int], tuple[int, int]] = {}
    spans: dict[tuple[int, int], tuple[int, int]] = {}
    for r in range(nrows):
        ymid = (grid.ys[r] + grid.ys[r + 1]) / 2
        for c in range(ncols):
            if (r, c) in owner:
                continue
            xmid = (grid.xs[c] + grid.xs[c + 1]) / 2
            cs = 1
            while c + cs < ncols and not _has_v(grid, grid.xs[c + cs], ymid) \
                    and (r, c + cs) not in owner:
                cs += 1
            rs = 1
            while r + rs < nrows and not _has_h(grid, grid.ys[r + rs], xmid):
                rs += 1
            spans[(r, c)] = (rs, cs)
            for rr in range(r, r + rs):
                for cc in range(c, c + cs):
                    owner[(rr, cc)] = (r, c)
    buckets: dict[tuple[int, int], list[Char | None]] = {}
    centres = _word_centres(chars)
    for ch in chars:
        if ch is None:
            for b in buckets.values():
                if b and b[-1] is not None:
                    b.append(None)
            continue
        cx, cy = centres.get(id(ch), ((ch.x0 + ch.x1) / 2, (ch.top + ch.bottom) / 2))
        col = next((i for i in range(ncols) if cx <= grid.xs[i + 1]), ncols - 1)
        row = next((i for i in range(nrows) if cy <= grid.ys[i + 1]), nrows - 1)
        buckets.setdefault(owner.get((row, col), (row, col)), []).append(ch)
    lines = {key: cell_lines(chars) for key, chars in buckets.items()}
    join_broken_cells(lines, {key for key, (_, cs) in spans.items() if cs > 1}, grid.xs)
    rows: list[TableRow] = []
    texts = 0
    for r in range(nrows):
        cells: list[TableCell] = []
        for c in range(ncols):
            if (r, c) not in spans:
                continue
            rs, cs = spans[(r, c)]
            blocks = lines_blocks(lines.get((r, c), []))
            texts += bool(blocks)
            cells.append(TableCell(blocks, rowspan=rs, colspan=cs))
        rows.append(TableRow(cells))
    # drop rows that are entirely covered by spans from above (no cells of their own),
    # and thin empty bands between double rules (cells of their own, one row high, empty)
    heights = sorted(b - a for a, b in itertools.pairwise(grid.ys))
    sizes = sorted(ch.size for ch in chars if ch is not None and ch.text.strip())
    least = max(0.6 * heights[len(heights) // 2], 0.9 * sizes[len(sizes) // 2] if sizes else 0)
    thin = {r for r in range(nrows) if grid.ys[r + 1] - grid.ys[r] < least
            and all(owner.get((r, c), (-1, 0))[0] == r
                    and spans.get(owner.get((r, c), (r, c)), (1, 1))[0] == 1
                    and not any(ch is not None and ch.text.strip()
                                for ch in buckets.get((r, c), []))
                    for c in range(ncols))}
    rows = [row for r, row in enumerate(rows) if row.cells and r not in thin] or rows
    if texts < 2 or _prose_grid(buckets):
        return None
    first = [ch for i in range(ncols) for ch in buckets.get((0, i), [])
             if ch is not None and ch.text.strip()]
    if rows and any(cell.rowspan > 1 for cell in rows[0].cells):
        first = []  # a spanning first row is not a plain header
    header = 0
    if first and sum(ch.bold for ch in first) >= 0.8 * len(first):
        header = 1
    elif any(f.top <= grid.ys[0] + TOL and abs(f.bottom - grid.ys[1]) <= 2 * TOL
             and f.x1 - f.x0 > 0.5 * (grid.xs[-1] - grid.xs[0]) for f in fills):
        header = 1
    for header_row in rows[:header]:
        for cell in header_row.cells:
            cell.header = True
    return Table(rows, header_rows=header)


def aligned_table(lines: list[Line]) -> Table | None:
    """A table from lines whose segments start at shared x positions, else None.

    Needs at least three lines of two or more segments, with column starts that line up
    (within a few points) on most lines. A line whose first column is empty continues the
    row above (a cell that wraps over several lines).
    """
    multi = [ln for ln in lines if len(ln.segs) >= 2]
    if len(multi) < 3:
        return None
    prose = sum(1 for ln in multi if sum(len(s.text.split()) >= 6 for s in ln.segs) >= 2)
    if 2 * prose >= len(multi):
        return None  # running text beside running text (columns), not cells
    em = max(1.0, sorted(ln.size for ln in multi)[len(multi) // 2])
    starts = _start_columns(multi, em)
    if starts is not None:
        start_xs = starts

        def column(seg: Segment) -> int:
            return max((i for i, x in enumerate(start_xs) if seg.x0 >= x - 0.8 * em), default=0)
    else:
        bounds = _gap_columns(multi, em)
        if bounds is None:
            return None
        starts = bounds

        def column(seg: Segment) -> int:
            mid = (seg.x0 + seg.x1) / 2
            return max((i for i, x in enumerate(bounds) if mid >= x), default=0)
    grid: list[list[list[list[Char]]]] = []  # rows -> cells -> lines -> chars
    bold_rows: list[bool] = []
    for ln in lines:
        cells: list[list[list[Char]]] = [[] for _ in starts]
        for s in ln.segs:
            idx = column(s)
            if cells[idx]:
                cells[idx][-1].append(Char(" ", 0, 0, 0, 0, 0, 0, False, False))
                cells[idx][-1].extend(s.chars)
            else:
                cells[idx].append(list(s.chars))
        if grid and not cells[0] and 2 * sum(map(bool, cells)) < sum(map(bool, grid[-1])):
            # a wrapped line (first cell empty, few cells): its text joins the row above
            for into, more in zip(grid[-1], cells, strict=True):
                into.extend(list(part) for part in more)
            continue
        grid.append(cells)
        bold_rows.append(ln.bold)
    rows = [TableRow([TableCell([Paragraph(to_inlines(join_lines(c)))] if c else [])
                      for c in cells]) for cells in grid]
    header = 1 if bold_rows[0] and not all(bold_rows) else 0
    for cell in rows[0].cells if header else []:
        cell.header = True
    return Table(rows, header_rows=header)


def _start_columns(multi: list[Line], em: float) -> list[float] | None:
    """Column starts shared by most lines (left-aligned columns), or None."""
    starts = _cluster_loose([s.x0 for ln in multi for s in ln.segs], 0.8 * em)
    if len(starts) < 2 or len(starts) > 12:
        return None
    hits = 0
    total = 0
    for ln in multi:
        for s in ln.segs:
            total += 1
            hits += any(abs(s.x0 - x) <= 0.8 * em for x in starts)
    support = [sum(1 for ln in multi if any(abs(s.x0 - x) <= 0.8 * em for s in ln.segs))
               for x in starts]
    if hits < 0.9 * total or min(support) < max(2, 0.5 * len(multi)):
        return None
    return starts


def white_bands(lines: list[list[Segment]], em: float, max_width: float
                ) -> list[float] | None:
    """Left bounds of the columns of ``lines`` (first: the text's left edge): the middles
    of bands of white, at least half an em wide, that at most a tenth of the lines' text
    crosses in the projection of their segments; None when the text is wider than
    ``max_width`` points. One prefix sum over the width: +1 where a segment starts, -1
    past its end."""
    x0 = min(s.x0 for segs in lines for s in segs)
    x1 = max(s.x1 for segs in lines for s in segs)
    if x1 - x0 > max_width:
        return None
    steps = [0] * (int(x1 - x0) + 3)
    for segs in lines:
        for s in segs:
            steps[int(s.x0 - x0)] += 1
            steps[int(s.x1 - x0) + 1] -= 1
    limit = int(0.1 * len(lines))
    bounds = [x0]
    start = None
    for b, c in enumerate(itertools.accumulate(steps[:-1])):
        if c <= limit and start is None:
            start = b
        elif c > limit and start is not None:
            if b - start >= 0.5 * em:
                bounds.append(x0 + (start + b) / 2)
            start = None
    return bounds


def _gap_columns(multi: list[Line], em: float) -> list[float] | None:
    """Left bounds of columns separated by vertical gaps that (almost) no line's text
    crosses: columns aligned left, right, centred or on the decimal point alike. None
    unless there are 2..20 columns, each holding text on a quarter of the lines or more."""
    x1 = max(s.x1 for ln in multi for s in ln.segs)
    bounds = white_bands([ln.segs for ln in multi], em, 3000)
    if bounds is None or not 2 <= len(bounds) <= 20:
        return None
    edges = [*bounds[1:], x1 + 1]
    for lo, hi in zip(bounds, edges, strict=True):
        filled = sum(1 for ln in multi if any(lo <= (s.x0 + s.x1) / 2 < hi for s in ln.segs))
        if filled < max(2, 0.25 * len(multi)):
            return None
    return bounds


def _cluster_loose(values: list[float], tol: float) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= tol:
            out[-1].append(v)
        else:
            out.append([v])
    return [min(g) for g in out]
