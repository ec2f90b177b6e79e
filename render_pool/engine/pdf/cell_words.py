"""Words a word processor broke inside a narrow table cell, joined again.

A cell narrower than a word gets the word cut without a hyphen where the next letter no
longer fits ("Squa" / "re", "4,455" / ".20"). Such a piece is one word with the next when
both sit in the same cell on consecutive lines (one line pitch apart), the first piece is a
single word fragment, and it fills the column's width: the next piece's first glyph would
not have fitted beside it. No dictionary is asked; a line ending in a space or hyphen, a
next line starting with a capital, or a number with decimals over a line starting with a
digit (two values stacked in one cell, as papers print them) is left as it is.
"""

from __future__ import annotations

import itertools
import re

from render_pool.engine.pdf.chars import Char

CellLines = list[list[Char]]  # the lines of one cell, each its characters
# how far (in font sizes) a piece and the next glyph must overrun the cell's width: widths
# measured from glyph boxes are not exact
SLACK = 0.05
# a column's text within this many font sizes of the next column's: cells filled to their
# padding, as when words are cut
TIGHT = 1.0
_DECIMALS = re.compile(r"\d[.,]\d+%?$")  # a number that ends with its decimals


def _visible(line: list[Char]) -> list[Char]:
    return [c for c in line if c.text.strip()]


def _width(line: list[Char]) -> float:
    vis = _visible(line)
    return max(c.x1 for c in vis) - min(c.x0 for c in vis) if vis else 0.0


def _broken(above: list[Char], below: list[Char], column_width: float) -> bool:
    """True when ``below`` continues the word ``above`` ends, cut for want of room."""
    top, bottom = _visible(above), _visible(below)
    if not top or not bottom or " " in "".join(c.text for c in above).strip():
        return False  # empty, or several words on the line above
    last, first = top[-1], bottom[0]
    if not last.text[-1:].isalnum() and last.text not in ",.":
        return False
    if first.text[:1].isupper() or not (first.text[:1].isalnum() or first.text in ".,"):
        return False
    if first.text[:1].isdigit() and _DECIMALS.search("".join(c.text for c in top)):
        return False  # "0.955" over "0.955": two values in one cell, not one cut number
    size = max(last.size, first.size, 1.0)
    pitch = first.baseline - last.baseline
    if not 0.6 * size <= pitch <= 1.8 * size:
        return False  # not the next line of the cell
    return _width(above) + (first.x1 - first.x0) > column_width + SLACK * size


def join_broken_cells(cells: dict[tuple[int, int], CellLines],
                      wide: set[tuple[int, int]], xs: list[float]) -> None:
    """:func:`join_broken_words` for the cells of a ruled grid keyed by (row, column), its
    column rules at ``xs``; the ``wide`` cells span several columns and are left alone.
    A column's text width is its rules' distance less the cells' padding on both sides:
    the least distance from a left rule to a line anywhere in the table (a centred line
    stands further in)."""
    pad = float("inf")
    for (_, col), lines in cells.items():
        for line in lines:
            vis = _visible(line)
            if vis and col + 1 < len(xs):
                pad = min(pad, vis[0].x0 - xs[col])
    if pad == float("inf"):
        return
    for key, lines in cells.items():
        col = key[1]
        if key not in wide and col + 1 < len(xs):
            lines[:] = _joined(lines, xs[col + 1] - xs[col] - 2 * max(pad, 0.0))


def _joined(cell: CellLines, width: float) -> CellLines:
    """The cell's lines with each broken word's pieces on one line."""
    if len(cell) < 2:
        return cell
    joined: CellLines = [list(cell[0])]
    for above, line in itertools.pairwise(cell):
        if _broken(above, line, width):
            joined[-1].extend(line)
        else:
            joined.append(list(line))
    return joined


def join_broken_words(grid: list[list[CellLines]],
                      spans: list[dict[int, int]] | None = None) -> None:
    """Join, in place, the pieces of words broken inside the cells of a table without
    rules, ``grid`` (rows of cells, each cell its lines; ``spans``: per row, column ->
    columns covered, cells over several columns left alone).

    A column's text runs from its lines' left edge to the next column's, less the
    table's tightest gap between one column's text and the next (the cells' padding:
    a column whose words are cut fills its cells); only columns that close to the next
    are looked at, in tables with such a column. The last column has no such edge and is
    measured by its widest line."""
    if not grid:
        return
    ncols = max(len(row) for row in grid)
    left = [float("inf")] * ncols
    right = [float("-inf")] * ncols
    for i, row in enumerate(grid):
        for col, cell in enumerate(row):
            if spans and i < len(spans) and spans[i].get(col, 1) > 1:
                continue
            for vis in (_visible(line) for line in cell):
                if vis:
                    left[col] = min(left[col], vis[0].x0)
                    right[col] = max(right[col], max(c.x1 for c in vis))
    filled = [c for c in range(ncols) if left[c] < right[c]]
    gaps = {a: left[b] - right[a] for a, b in itertools.pairwise(filled)}
    sizes = sorted(c.size for row in grid for cell in row for line in cell
                   for c in _visible(line))
    em = sizes[len(sizes) // 2] if sizes else 10.0
    padding = max(min(gaps.values()), 0.0) if gaps else 0.0
    if not gaps or padding > TIGHT * em:
        return  # no column's text reaches the next one's: no word was cut for want of room
    widths = {a: left[b] - padding - left[a] for a, b in itertools.pairwise(filled)
              if gaps[a] <= padding + TIGHT * em}
    widths[filled[-1]] = right[filled[-1]] - left[filled[-1]]
    for i, row in enumerate(grid):
        for col, cell in enumerate(row):
            if col in widths and not (spans and i < len(spans) and spans[i].get(col, 1) > 1):
                cell[:] = _joined(cell, widths[col])
