"""Words a word processor broke inside a narrow table cell, joined again.

A cell narrower than a word gets the word cut without a hyphen where the next letter no
longer fits ("Squa" / "re", "4,455" / ".20"). Such a piece is one word with the next when
both sit in the same cell on consecutive lines (one line pitch apart), the first piece is a
single word fragment, and it fills the column's width: the next piece's first glyph would
not have fitted beside it. Where the widths allow both readings, the words of the
document's own running text decide (:func:`words_of`, :func:`_choose`); no outside
dictionary is asked. A line ending in a space or hyphen, a next line starting with a
capital, a number with decimals over a line starting with a digit, or a whole number of two
digits or more over one of as many (two values stacked in one cell, as papers and margins
print them) is left as it is.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from render_pool.engine.pdf.chars import Char

CellLines = list[list[Char]]  # the lines of one cell, each its characters
# how far (in font sizes) a piece and the next glyph must overrun the cell's width: widths
# measured from glyph boxes are not exact
SLACK = 0.05
# a column's text within this many font sizes of the next column's: cells filled to their
# padding, as when words are cut
TIGHT = 1.0
MAX_PIECES = 24  # lines one word may run over in a cell
MAX_LINES = 300  # cells of more lines are joined by their widths alone (time bound)
_WORD = re.compile(r"[^\W\d_]+")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
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
    upper, lower = "".join(c.text for c in top), "".join(c.text for c in bottom)
    # "16" over "17": numbers of one width stacked (line numbers, years); single digits in a
    # one-glyph column are a number cut digit by digit
    if upper.isdigit() and lower.isdigit() and len(upper) == len(lower) >= 2:
        return False
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


def _joined(cell: CellLines, width: float, lexicon: frozenset[str] = frozenset()
            ) -> CellLines:
    """The cell's lines with each broken word's pieces on one line. Where the width allows
    both readings (the next piece's first glyph would not have fitted, but the line may
    still end a word), the words of the ``lexicon`` decide (see :func:`_choose`)."""
    if len(cell) < 2:
        return cell
    may = [_broken(above, line, width) for above, line in itertools.pairwise(cell)]
    glue = _choose(cell, may, lexicon) if lexicon and any(may) and len(cell) <= MAX_LINES \
        else may
    joined: CellLines = [list(cell[0])]
    for line, join in zip(cell[1:], glue, strict=True):
        if join:
            joined[-1].extend(line)
        else:
            joined.append(list(line))
    return joined


def words_of(texts: Iterable[str]) -> frozenset[str]:
    """The lexicon of a page: the case-folded words of three letters or more in its lines
    of several words (running text and longer cells; the pieces of a word cut inside a
    narrow cell stand alone on their lines and are left out)."""
    out: set[str] = set()
    for text in texts:
        words = _WORD.findall(text)
        if len(text.split()) >= 2:
            out.update(w.casefold() for w in words if len(w) >= 3)
    return frozenset(out)


def _choose(cell: CellLines, may: list[bool], lexicon: frozenset[str]) -> list[bool]:
    """Which of the line breaks ``may`` allow to be inside a word are: the choice whose
    words hold the most letters of lexicon words, ties going to joining (pieces of one to
    three letters are far more often inside a word than whole words). A dynamic programme
    over the lines (a word runs over at most MAX_PIECES of them): linear in the cell."""
    lines = ["".join(c.text for c in line).split() or [""] for line in cell]
    n = len(lines)
    # chain[i]: the best reading of lines[i:] from line i's last word on, as (letters of
    # known words, joins, j, inside): that word runs to line j, and ends inside line j
    # (whose last word starts the next chain) or with it (line j + 1 starts afresh)
    chain: list[tuple[int, int, int, bool]] = [(0, 0, 0, False)] * n
    fresh = [0] * (n + 1)  # letters of known words in lines[k:] after a space before k
    joins = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        word = lines[i][-1]
        best = (_known(word, lexicon) + fresh[i + 1], joins[i + 1], i, False)
        for j in range(i + 1, min(n, i + MAX_PIECES)):
            if not may[j - 1]:
                break
            word += lines[j][0]
            if len(lines[j]) > 1:  # the word ends inside line j; its last word goes on
                middle = sum(_known(w, lexicon) for w in lines[j][1:-1])
                option = (_known(word, lexicon) + middle + chain[j][0],
                          chain[j][1] + j - i, j, True)
                best = max(best, option, key=lambda o: (o[0], o[1]))
                break
            option = (_known(word, lexicon) + fresh[j + 1], joins[j + 1] + j - i, j, False)
            best = max(best, option, key=lambda o: (o[0], o[1]))
        chain[i] = best
        fresh[i] = sum(_known(w, lexicon) for w in lines[i][:-1]) + best[0]
        joins[i] = best[1]
    glue = [False] * (n - 1)
    i = 0
    while i < n:
        _, _, j, inside = chain[i]
        glue[i:j] = [True] * (j - i)
        i = j if inside else j + 1
    return glue


def _known(word: str, lexicon: frozenset[str]) -> int:
    """Letters of ``word`` when it is a lexicon word (punctuation around it aside)."""
    core = _EDGE.sub("", word).casefold()
    return len(core) if core in lexicon else 0


def join_broken_words(grid: list[list[CellLines]],
                      spans: list[dict[int, int]] | None = None,
                      lexicon: frozenset[str] = frozenset()) -> None:
    """Join, in place, the pieces of words broken inside the cells of a table without
    rules, ``grid`` (rows of cells, each cell its lines; ``spans``: per row, column ->
    columns covered).

    A column's text runs from its lines' left edge to the next column's, less the
    table's tightest gap between one column's text and the next (the cells' padding:
    a column whose words are cut fills its cells); only columns that close to the next
    are looked at, in tables with such a column. The last column has no such edge and is
    measured by its widest line; a cell over several columns (a head cell) reaches to the
    text of the column after them. The ``lexicon`` (see :func:`words_of`) decides the
    breaks the widths leave open."""
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
            span = spans[i].get(col, 1) if spans and i < len(spans) else 1
            if col not in widths:
                continue
            if span == 1:
                cell[:] = _joined(cell, widths[col], lexicon)
            elif col + span < ncols and left[col + span] < float("inf"):
                # a head cell over several columns reaches to the next column's text
                cell[:] = _joined(cell, left[col + span] - padding - left[col], lexicon)
            elif col + span == ncols and right[ncols - 1] > left[col]:
                cell[:] = _joined(cell, right[ncols - 1] - left[col], lexicon)
