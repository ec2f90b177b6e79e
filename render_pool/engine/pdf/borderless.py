"""Tables without rules, found on the whole page before its columns and reading order.

A statistical table is a run of text lines that split into cells at the same x positions:
its columns show as vertical bands of white that (almost) no line's text crosses. Found
per page, before reading order, because column detection would otherwise read each
column of numbers as a text column of its own.

How (the ideas of camelot's stream mode and of Nurminen's text-edge method; the code is
our own):

1. Lines of the page (segments grouped by baseline); a line of two or more segments, not
   two runs of prose side by side, is a *row candidate*.
2. Row candidates close above one another (a few line pitches) make a run; short
   one-segment lines may sit between them (group labels such as "Caste/tribe", a label on
   the line above its numbers, a cell that wraps: any number of lines a pitch apart, each
   inside one cell). A line led by a bullet or a number under rows that had none starts a
   list: the run ends.
3. A run of three row candidates or more is a table when its columns are real: bands of
   white in the projection of the data rows' segments (the rows with most cells; header
   rows above them span columns) that at most a tenth of them cross, text in every
   column on a good share of the rows, and edges that line up (left, right or centre in
   most columns: left, right, centred and decimal alignment all do).
4. Lines right above it that fit its width (cells, or one short label; not a caption
   such as "Table 3:") are header rows; a heading centred over several columns is one
   cell spanning them, any other segment goes to the column it overlaps most.
5. A segment crossing a column gap (two cells set closer than an em) is split at the space
   nearest to the gap, never inside a word. A label alone on its line followed by a line
   of numbers with an empty first cell make one row; so does a wrapped line.
6. Cells that wrap (report tables): where the lines' baseline pitches show two values, the
   short one inside a cell and the long one between rows, the pitches decide the rows
   (table_rows); then a column of running text is allowed, the last row's last lines are
   kept (table_edges), and a caption right above ("Table 3: ...", over a few lines in its
   own style) becomes the table's caption while a heading set larger stays out. Words cut
   letter by letter in narrow cells are joined again (cell_words, with the page's words
   as a lexicon where the cell's width leaves the break open). A line set smaller than the table, or
   with a raised note mark, ends it (the page's footnotes); so does a caption below it.
   Lines whose cells sit at unrelated heights (running text in columns beside one
   another) are no table.

What is not clearly a table stays text: columns of running text (two or three text
columns, a text column beside a figure's labels, justified lines whose words happen to
line up), lists (bullets or numbers beside text), code listings, charts' symbols and
forms' fill-in lines.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from render_pool.engine.model import Paragraph, Table, TableCell, TableRow
from render_pool.engine.pdf.cell_words import join_broken_words
from render_pool.engine.pdf.chars import Char, Segment
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import group_lines
from render_pool.engine.pdf.table_edges import (
    MAX_TAIL,
    LineBox,
    caption_chars,
    is_caption,
    is_heading_over,
    wrapped_tail,
)
from render_pool.engine.pdf.table_rows import continuation_pitch, row_starts, shared_baselines
from render_pool.engine.pdf.tables import white_bands

# a letter stack (see _letter_stack): on this share of the body's lines at least, of this
# many lines at least
STACK_SHARE = 0.6
STACK_LINES = 4
MAX_SEGMENTS = 6000  # pages with more segments are left to the text flow (time bound)
MAX_COLUMNS = 30
# rows a run may hold: a run that is no table is tried again from each of its rows, so
# this bounds the search at rows x MAX_RUN (a page of 3000 two-cell lines that are no table
# took 17 s before); a longer table (200 rows on one page) is read as two tables
MAX_RUN = 200
# a table's row candidates sit with all their cells on one baseline on this share at least
LEVEL_ROWS = 0.85
SMALLER = 0.85  # a line set this much smaller than a run's first line ends the run
_CAPTION = re.compile(r"^(Table|Tab\.|Figure|Fig\.|Tableau|Tabelle|Tabla)\s*[\dIVX]", re.I)
_LOWER_WORD = re.compile(r"^[^\W\d_A-Z][^\W\d_]*[-,.;:]?$")
_MARKER = re.compile(r"^([\u2022\u25e6\u25aa\u25cf\u25cb\u25a0\u25a1\u2023\u2043\u2013*-]"
                     r"|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxIVX]{1,4}[.)])$")


@dataclass(slots=True)
class _Row:
    segs: list[Segment]
    top: float
    bottom: float
    size: float
    baseline: float = 0.0  # the median baseline of its glyphs
    cand: bool = False  # a row candidate (see _candidate), worked out once
    bases: list[float] = field(default_factory=list)  # its segments' baselines, once
    ends: bool = False  # a footnote or a caption: ends a run (see _grow), worked out once

    @property
    def multi(self) -> bool:
        return len(self.segs) >= 2


@dataclass(slots=True)
class TextTable:
    """A table found from text alignment: its box, the model table, and the characters
    it took from the page (by id)."""

    x0: float
    x1: float
    top: float
    bottom: float
    table: Table
    used: set[int]


def _rows(segs: list[Segment]) -> list[_Row]:
    out = []
    for group in group_lines(segs):
        sizes = sorted(s.size for s in group)
        bases = sorted(c.baseline for s in group for c in s.chars if c.text.strip())
        row = _Row(group, min(s.top for s in group), max(s.bottom for s in group),
                   sizes[len(sizes) // 2] or 10.0,
                   bases[len(bases) // 2] if bases else max(s.bottom for s in group))
        row.cand = row.multi and not _prose_line(row)
        row.bases = _seg_baselines(group)
        row.ends = _note_line(row) if row.multi else is_caption(_box(row))
        out.append(row)
    return out


def _words(seg: Segment) -> int:
    return len(seg.text.split())


def _prose_line(row: _Row) -> bool:
    """Two runs of running text side by side (a line across a two-column page)."""
    return sum(_words(s) >= 6 for s in row.segs) >= 2


def _candidate(row: _Row) -> bool:
    """A line of two segments or more that is not two runs of prose side by side."""
    return row.cand


def _gap_bounds(rows: list[_Row], em: float) -> list[float] | None:
    """Left bounds of the columns (first = the text's left edge): bands of white in the
    projection of the rows' segments that at most a tenth of the rows cross, at least
    half an em wide."""
    bounds = white_bands([r.segs for r in rows], em, 5000)
    if bounds is None or not 2 <= len(bounds) <= MAX_COLUMNS:
        return None
    return bounds


def _column(seg: Segment, bounds: list[float]) -> int:
    """The column a segment overlaps most."""
    best, best_ov = 0, -1.0
    edges = [*bounds[1:], float("inf")]
    for i, (lo, hi) in enumerate(zip(bounds, edges, strict=True)):
        ov = min(seg.x1, hi) - max(seg.x0, lo)
        if ov > best_ov:
            best, best_ov = i, ov
    return best


def _split(seg: Segment, bounds: list[float], em: float) -> list[Segment]:
    """A segment crossing column bounds cut at the spaces nearest to them (a space inside
    the band of white around the bound); words are never cut."""
    inner = [b for b in bounds[1:] if seg.x0 < b < seg.x1]
    if not inner:
        return [seg]
    cuts: list[int] = []
    for b in inner:
        best, best_d = -1, 0.6 * em
        for i, c in enumerate(seg.chars):
            if c.text == " " and 0 < i < len(seg.chars) - 1:
                left, right = seg.chars[i - 1], seg.chars[i + 1]
                if left.x1 <= b + 0.6 * em and right.x0 >= b - 0.6 * em:
                    d = abs((left.x1 + right.x0) / 2 - b)
                    if d < best_d:
                        best, best_d = i, d
        if best > 0 and best not in cuts:
            cuts.append(best)
    if not cuts:
        return [seg]
    out: list[Segment] = []
    start = 0
    for cut in [*sorted(cuts), len(seg.chars)]:
        part = Segment()
        for c in seg.chars[start:cut]:
            part.add(c)
        while part.chars and part.chars[0].text == " ":
            part.chars.pop(0)
        if part.visible:
            out.append(part)
        start = cut + 1
    return out


def _spanned(seg: Segment, bounds: list[float]) -> list[int]:
    """The columns a header segment spans: those holding 30% of its width or more (a
    heading centred over two columns), else the one it overlaps most."""
    edges = [*bounds[1:], float("inf")]
    width = max(seg.x1 - seg.x0, 0.1)
    cols = [i for i, (lo, hi) in enumerate(zip(bounds, edges, strict=True))
            if min(seg.x1, hi) - max(seg.x0, lo) >= 0.3 * width]
    return cols if len(cols) >= 2 else [_column(seg, bounds)]


def _cells_of(row: _Row, bounds: list[float], em: float,
              spans: dict[int, int] | None = None) -> list[list[list[Char]]]:
    """The row's characters per column (lines of characters per cell). With ``spans``
    (header rows), a segment over several columns is not cut: it goes to the first of
    them and ``spans`` records how many it covers."""
    cells: list[list[list[Char]]] = [[] for _ in bounds]
    for seg in row.segs:
        if spans is not None:
            cols = _spanned(seg, bounds)
            if len(cols) >= 2 and not any(cells[c] for c in cols) \
                    and not any(c in spans or any(c < k + n for k, n in spans.items()
                                                  if k < c) for c in cols):
                spans[cols[0]] = len(cols)
                cells[cols[0]].append(list(seg.chars))
                continue
        for part in _split(seg, bounds, em):
            idx = _column(part, bounds)
            if cells[idx]:
                cells[idx][-1].append(Char(" ", 0, 0, 0, 0, 0, 0, False, False))
                cells[idx][-1].extend(part.chars)
            else:
                cells[idx].append(list(part.chars))
    return cells


def _is_table(body: list[_Row], bounds: list[float], wrap_pitch: float | None = None
              ) -> bool:
    """The columns are real: every column holds text on a good share of the row
    candidates, most rows fill at least half the columns, and cells are short. With a
    ``wrap_pitch`` (the run's rows wrap, see table_rows), one column may hold running
    text (a description column of a report table), and single lower-case words on the
    rows are the pieces of wrapped or cut cells, not words spread by justification."""
    cands = [r for r in body if r.multi]
    ncols = len(bounds)
    edges = [*bounds[1:], float("inf")]
    for lo, hi in zip(bounds, edges, strict=True):
        filled = sum(1 for r in cands if any(lo <= (s.x0 + s.x1) / 2 < hi for s in r.segs))
        if filled < max(2, 0.2 * len(cands)):
            return False
    full = sum(1 for r in cands if len(r.segs) >= max(2, ncols // 2))
    if full < max(3, 0.5 * len(cands)):
        return False
    if not shared_baselines([r.bases for r in cands], cands[0].size, LEVEL_ROWS):
        return False  # lines whose parts sit at unrelated heights: columns of text
    wrapped = wrap_pitch is not None and ncols >= 3
    words = [_words(s) for r in cands for s in r.segs]
    if sum(words) > 6 * len(words):
        return False
    # running text in a cell on many rows: a text column beside figure labels or a
    # sidebar, not a table
    if not wrapped and 5 * sum(1 for r in cands if any(_words(s) >= 7 for s in r.segs)) \
            >= 2 * len(cands):
        return False
    if _prose_columns(cands, bounds, wrapped):
        return False
    if not wrapped and len(cands) < 5 and any(_prose_cell(s) for r in cands for s in r.segs):
        return False  # a few lines with running text: too little to call it a table
    if not _aligned(cands, bounds):
        return False
    texts = [s.text.strip() for r in cands for s in r.segs]
    if not wrapped and 2 * sum(bool(_LOWER_WORD.match(t)) for t in texts) >= len(texts):
        return False  # single lower-case words spread by justification: a paragraph
    if 2 * sum(any(ch.isalnum() for ch in t) for t in texts) < len(texts):
        return False  # a chart's markers or symbols, not cells
    if 10 * sum(t.count("_") >= 5 for t in texts) >= 3 * len(texts):
        return False  # a form's fill-in lines (signature blocks)
    glyphs = [c for r in cands for s in r.segs for c in s.chars if c.text.strip()]
    if sum(c.mono for c in glyphs) >= 0.8 * len(glyphs):
        return False  # a code listing with aligned comments
    first = [r.segs[0] for r in cands if r.segs[0].x0 < bounds[1]]
    if first and all(_MARKER.match(s.text.strip()) for s in first):
        return False  # bullets or numbers before text: a list
    # two columns, the second running text on most rows: a list or labelled paragraphs
    long_rows = sum(1 for r in cands if _words(r.segs[-1]) >= 7)
    return ncols > 2 or 2 * long_rows < len(cands)


def _aligned(cands: list[_Row], bounds: list[float]) -> bool:
    """True when the columns are aligned, as a table's are: in two thirds of the columns
    or more, half of the cells share a left, right or centre edge (within half an em).
    Words spread over a justified line fall between bands of white by chance, at edges
    all over the place."""
    edges = [*bounds[1:], float("inf")]
    em = sorted(r.size for r in cands)[len(cands) // 2]
    good = 0
    for lo, hi in zip(bounds, edges, strict=True):
        cells = [s for r in cands for s in r.segs if lo <= (s.x0 + s.x1) / 2 < hi]
        if len(cells) < 2:
            continue
        best = 0
        keys: tuple[Callable[[Segment], float], ...] = (
            lambda s: s.x0, lambda s: s.x1, lambda s: (s.x0 + s.x1) / 2)
        for key in keys:
            xs = sorted(key(s) for s in cells)
            j = 0
            for i, x in enumerate(xs):  # the largest group within half an em
                while x - xs[j] > 0.5 * em:
                    j += 1
                best = max(best, i - j + 1)
        good += 2 * best >= len(cells)
    return 3 * good >= 2 * len(bounds)


def _prose_cell(seg: Segment) -> bool:
    """Running text: four words or more, most of them lower-case words."""
    words = seg.text.split()
    return len(words) >= 4 and sum(w[:1].islower() for w in words) >= 0.5 * len(words)


def _prose_columns(cands: list[_Row], bounds: list[float], wrapped: bool = False) -> bool:
    """True when the "columns" are columns of running text (a page of two or three text
    columns, a text column beside a figure's labels): a column whose cells are mostly
    running text filling the column's width (justified or ragged lines), unless the rows
    are ``wrapped`` (a table's description column), or two columns of running text."""
    edges = [*bounds[1:], float("inf")]
    prose = wide = 0
    em = sorted(r.size for r in cands)[len(cands) // 2]
    for lo, hi in zip(bounds, edges, strict=True):
        cells = [s for r in cands for s in r.segs if lo <= (s.x0 + s.x1) / 2 < hi]
        if not cells:
            continue
        words = sorted(_words(s) for s in cells)
        widths = sorted(s.x1 - s.x0 for s in cells)
        width = widths[len(widths) // 2]
        if (words[len(words) // 2] >= 3 and width >= 10 * em) or width >= 14 * em:
            wide += 1  # lines of text several words long, not short cells
        running = sum(_prose_cell(s) for s in cells)
        if 2 * running < len(cells):
            continue
        prose += 1
        widest = max(s.x1 - s.x0 for s in cells)
        if not wrapped and 2 * sum(s.x1 - s.x0 >= 0.8 * widest for s in cells) >= len(cells):
            return True
    return prose >= 2 or wide >= 2


def _fits(row: _Row, bounds: list[float], x0: float, x1: float, em: float) -> bool:
    """A line that can be a header row of the table: inside its width, and either cells
    (two segments or more, not prose) or one short label."""
    if row.segs[0].x0 < x0 - 2 * em or row.segs[-1].x1 > x1 + 2 * em:
        return False
    if _CAPTION.match(row.segs[0].text.strip()):
        return False  # "Table 3:" is the table's caption, not a row
    if row.multi:
        return not _prose_line(row)
    return _words(row.segs[0]) <= 5 and row.segs[0].x1 - row.segs[0].x0 < 0.5 * (x1 - x0)


def _letter_stack(lines: list[list[list[list[Char]]]]) -> bool:
    """True when a column of the body holds, on most lines, pieces of one to three
    letters, mostly lower case: words cut letter by letter in a cell narrower than a word
    ("It" / "e" / "m"). Codes and figures (upper case, digits) do not count."""
    if len(lines) < STACK_LINES:
        return False
    for col in range(max(len(cells) for cells in lines)):
        texts = ["".join(c.text for line in cells[col] for c in line if c.text.strip())
                 for cells in lines if col < len(cells)]
        pieces = [t for t in texts if t]
        if len(pieces) < STACK_SHARE * len(lines):
            continue
        short = sum(len(t) <= 4 for t in pieces)
        lower = sum(t[:1].islower() for t in pieces)
        if short >= 0.8 * len(pieces) and lower >= 0.5 * len(pieces):
            return True
    return False


def _assemble(rows: list[_Row], bounds: list[float], em: float, header: int,
              lexicon: frozenset[str] = frozenset()) -> Table:
    lines: list[list[list[list[Char]]]] = []
    line_spans: list[dict[int, int]] = []
    for i, row in enumerate(rows):
        spans: dict[int, int] = {}
        lines.append(_cells_of(row, bounds, em, spans if i < header else None))
        line_spans.append(spans)
    starts: list[bool | None] = [None] * len(rows)
    if shared_baselines([r.bases for r in rows], em):
        starts = row_starts([r.baseline for r in rows],
                            [[bool(c) for c in cells] for cells in lines], header, em,
                            cut=_letter_stack(lines[header:]))
    grid: list[list[list[list[Char]]]] = []
    bold: list[bool] = []
    row_spans: list[dict[int, int]] = []
    nhead = 0
    for i, (row, cells) in enumerate(zip(rows, lines, strict=True)):
        if grid and _continues(cells, grid[-1], i >= header, starts[i]):
            for into, more in zip(grid[-1], cells, strict=True):
                into.extend(more)
            continue
        grid.append(cells)
        row_spans.append(line_spans[i])
        nhead += i < header
        vis = [c for seg in row.segs for c in seg.chars if c.text.strip()]
        bold.append(bool(vis) and sum(c.bold for c in vis) >= 0.8 * len(vis))
    join_broken_words(grid, row_spans, lexicon)
    table_rows: list[TableRow] = []
    for cells, spans in zip(grid, row_spans, strict=True):
        out: list[TableCell] = []
        skip = 0
        for col, c in enumerate(cells):
            if skip:
                skip -= 1
                if not c:
                    continue
            n = spans.get(col, 1)
            skip = n - 1
            out.append(TableCell([Paragraph(to_inlines(join_lines(c)))] if c else [],
                                 colspan=n))
        table_rows.append(TableRow(out))
    nhead = min(nhead, len(table_rows) - 1)
    if nhead < len(bold) - 1 and bold[nhead] and not all(bold[nhead:]):
        nhead += 1  # a bold row of column heads over plain rows
    for header_row in table_rows[:nhead]:
        for cell in header_row.cells:
            cell.header = True
    return Table(table_rows, header_rows=nhead)


def _continues(cells: list[list[list[Char]]], above: list[list[list[Char]]], body: bool,
               start: bool | None) -> bool:
    """True when a line's cells continue the row above. Where the line pitches tell
    (``start``, see table_rows.row_starts), they decide; else, in the body, the numbers
    of a label set on the line above, or a wrapped line (first cell empty, few cells)."""
    if start is not None:
        return not start
    if not body:
        return False
    filled = [bool(c) for c in cells]
    prev = [bool(c) for c in above]
    label_only = prev[0] and not any(prev[1:])
    return not filled[0] and ((label_only and sum(filled) >= 2)
                              or 2 * sum(filled) < sum(prev))


def find_text_tables(segs: list[Segment], lexicon: frozenset[str] = frozenset()
                     ) -> list[TextTable]:
    """Tables without rules on one page, top to bottom; the segments they use are
    reported by their characters' ids so the caller can take them out of the text.
    Row rules without column rules need nothing here: a grid of one column is no table
    (tables.build_grid_table), so its lines come here and each line is a row. The
    ``lexicon`` (the words of the page's text, cell_words.words_of) tells where a word cut
    inside a narrow cell ends."""
    if len(segs) < 9 or len(segs) > MAX_SEGMENTS:
        return []
    rows = _rows(segs)
    if len(rows) < 3:
        return []
    sizes = sorted(r.size for r in rows)
    em = max(1.0, sizes[len(sizes) // 2])
    found: list[TextTable] = []
    taken: set[int] = set()
    i = 0
    while i < len(rows):
        if not _candidate(rows[i]) or i in taken:
            i += 1
            continue
        run = _grow(rows, i, em)
        body_idx = [k for k in run if k not in taken]
        body = [rows[k] for k in body_idx]
        cands = [r for r in body if r.multi]
        # the columns come from the data rows (those with most cells); header rows above
        # them span columns and would close the white bands between them
        most = max(len(r.segs) for r in cands)
        data = [r for r in cands if len(r.segs) >= max(2, 0.6 * most)]
        if len(data) < 3:
            data = cands
        bounds = _gap_bounds(data, em) if len(data) >= 3 else None
        cut = bounds is not None and _letter_stack([_cells_of(r, bounds, em) for r in body])
        if bounds is None or not _is_table(data, bounds, _wrap_pitch(body, bounds, em, cut)):
            i += 1
            continue
        x0 = min(s.x0 for r in cands for s in r.segs)
        x1 = max(s.x1 for r in cands for s in r.segs)
        # single-segment lines are part of the table only inside its width (labels)
        body_idx = [k for k in body_idx
                    if rows[k].multi or (rows[k].segs[0].x0 >= x0 - em
                                         and rows[k].segs[0].x1 <= x1 + em)]
        # trailing one-segment lines are text after the table, not rows, unless they
        # end a wrapped last row
        while body_idx and not rows[body_idx[-1]].multi:
            body_idx.pop()
        body_idx += _tail(rows, body_idx, bounds, em, taken, cut)
        table_size = sorted(r.size for r in data)[len(data) // 2]
        head_idx: list[int] = []
        k = body_idx[0] - 1
        pitch = 2.2 * em
        while k >= 0 and k not in taken and len(head_idx) < 4 \
                and rows[k + 1].top - rows[k].bottom <= pitch \
                and _fits(rows[k], bounds, x0, x1, em) \
                and not is_heading_over(_box(rows[k]), table_size):
            head_idx.insert(0, k)
            k -= 1
        # a caption over several lines: its last lines are no header rows
        cap = _caption_above(rows, body_idx[0], taken, em) \
            or _caption_above(rows, (head_idx or body_idx)[0], taken, em)
        head_idx = [h for h in head_idx if h not in cap]
        all_idx = head_idx + body_idx
        first_data = next(n for n, k in enumerate(all_idx) if any(rows[k] is r for r in data))
        table = _assemble([rows[k] for k in all_idx], bounds, em, first_data, lexicon)
        if cap:
            table.caption = to_inlines(join_lines([caption_chars(rows[c].segs[0].chars)
                                                   for c in cap]))
            all_idx[:0] = cap
        used = {id(c) for k in all_idx for s in rows[k].segs for c in s.chars}
        top = min(rows[k].top for k in all_idx)
        bottom = max(rows[k].bottom for k in all_idx)
        found.append(TextTable(min(x0, *(rows[k].segs[0].x0 for k in all_idx)),
                               max(x1, *(rows[k].segs[-1].x1 for k in all_idx)),
                               top, bottom, table, used))
        taken.update(all_idx)
        i = max(all_idx) + 1
    return found


def _caption_above(rows: list[_Row], top: int, taken: set[int], em: float) -> list[int]:
    """Indices (top down) of a caption right above ``rows[top]``: a line starting "Table
    3" and the lines that continue it (see :func:`_caption_lines`), one segment each.
    Empty when there is none."""
    k = top - 1
    while k >= 0 and k not in taken and top - k <= 4 and not rows[k].multi \
            and rows[k + 1].top - rows[k].bottom <= 2.2 * em:
        if is_caption(_box(rows[k])):
            return _caption_lines(rows, k, top)
        k -= 1
    return []


def _caption_lines(rows: list[_Row], first: int, top: int) -> list[int]:
    """The caption starting at ``rows[first]`` (lines up to ``top``, the table's): the
    lines after its first set in its style and size at a line's pitch, no further apart
    than the caption's last line is from what follows it (a header row of the table
    stands apart, or in another style)."""

    def style(row: _Row) -> tuple[bool, bool]:
        vis = [c for s in row.segs for c in s.chars if c.text.strip()]
        return (2 * sum(c.italic for c in vis) > len(vis), 2 * sum(c.bold for c in vis) > len(vis))

    lead = rows[first]
    lines = [first]
    for k in range(first + 1, top):
        row = rows[k]
        pitch = row.baseline - rows[k - 1].baseline
        if style(row) != style(lead) or abs(row.size - lead.size) > 0.1 * lead.size \
                or pitch > 1.6 * lead.size:
            break
        lines.append(k)
    # the caption ends where the pitch grows: its lines are closer than it is to the table
    while len(lines) > 1:
        inner = max(rows[b].baseline - rows[a].baseline
                    for a, b in itertools.pairwise(lines))
        after = rows[lines[-1] + 1].baseline - rows[lines[-1]].baseline
        if inner <= after + 0.1 * lead.size:
            break
        lines.pop()
    return lines


def _box(row: _Row) -> LineBox:
    return LineBox(row.baseline, row.segs[0].x0, row.segs[-1].x1, row.size, len(row.segs),
                   row.segs[0].text)


def _tail(rows: list[_Row], body_idx: list[int], bounds: list[float], em: float,
          taken: set[int], cut: bool = False) -> list[int]:
    """Indices of the one-segment lines after ``body_idx`` that end its wrapped last row
    (see table_edges.wrapped_tail); none when its rows do not wrap."""
    pitch = _wrap_pitch([rows[k] for k in body_idx], bounds, em, cut)
    if pitch is None:
        return []
    after = body_idx[-1] + 1
    following = [_box(r) for r in rows[after:after + MAX_TAIL]]
    count = wrapped_tail(rows[body_idx[-1]].baseline, pitch, following, bounds, em)
    return [k for k in range(after, after + count) if k not in taken]


def _wrap_pitch(body: list[_Row], bounds: list[float], em: float, cut: bool = False
                ) -> float | None:
    """The pitch of the wrapped cells' lines when the rows of ``body`` wrap, else None
    (see table_rows.continuation_pitch; ``cut``: a column's words are cut letter by
    letter, see _letter_stack)."""
    if not shared_baselines([r.bases for r in body], em):
        return None
    filled = [[bool(c) for c in _cells_of(r, bounds, em)] for r in body]
    return continuation_pitch([r.baseline for r in body], filled, em, cut)


def _seg_baselines(segs: list[Segment]) -> list[float]:
    """The baseline of each segment of a line (the median of its glyphs')."""
    out = []
    for seg in segs:
        bases = sorted(c.baseline for c in seg.chars if c.text.strip())
        if bases:
            out.append(bases[len(bases) // 2])
    return out


def _note_line(row: _Row) -> bool:
    """A footnote: a short mark set smaller and raised above the text that follows it."""
    if not row.multi:
        return False
    mark, text = row.segs[0], row.segs[1]
    bases = row.bases
    return len(mark.text.strip()) <= 3 and mark.size < SMALLER * text.size \
        and len(bases) >= 2 and bases[0] < bases[1] - 0.1 * text.size


def _grow(rows: list[_Row], start: int, em: float) -> list[int]:
    """Indices of a run of row candidates from ``start``: each within a few line pitches
    of the last, with at most three one-segment lines in between (the wrapped lines of one
    cell aside, see _in_cell) and no caption, up to a list (a line led by a bullet or a
    number under rows that had none); at most ``MAX_RUN`` rows."""
    run = [start]
    singles: list[int] = []
    loose = 0  # singles that are not the wrapped lines of one cell
    marked = bool(_MARKER.match(rows[start].segs[0].text.strip()))  # a row led by a bullet
    starts = sorted(s.x0 for s in rows[start].segs)  # the cells' left edges so far
    gaps: list[float] = []  # kept sorted: the median is read at every step
    k = start + 1
    while k < len(rows) and len(run) + len(singles) < MAX_RUN:
        row = rows[k]
        gap = row.top - rows[(singles or run)[-1]].bottom
        usual = gaps[len(gaps) // 2] if len(gaps) >= 3 else 0.0
        if gap > max(3.0 * em, 2.5 * usual) or row.size < SMALLER * rows[start].size \
                or (row.multi and row.ends):
            break  # far below, or a footnote under the table (set smaller, or a raised mark)
        bisect.insort(gaps, gap)
        cand = _candidate(row)
        led = cand and bool(_MARKER.match(row.segs[0].text.strip()))
        if led and len(run) >= 3 and not marked:
            break  # a list after the table: its rows had no bullets or numbers
        if cand:
            marked = marked or led
            run.extend(singles)
            singles = []
            loose = 0
            run.append(k)
            for seg in row.segs:
                _add_start(starts, seg.x0, em)
        elif row.multi or loose >= 3 or row.ends:
            break  # prose, a gap of text, or a caption: the table has ended
        else:
            loose += not _in_cell(row, starts, gap, em)
            singles.append(k)
        k += 1
    return run


def _add_start(starts: list[float], x: float, em: float) -> None:
    """Add a cell's left edge to the sorted ``starts`` unless one is within half an em
    (at most MAX_COLUMNS kept: the search stays linear)."""
    at = bisect.bisect_left(starts, x)
    near = starts[max(0, at - 1):at + 1]
    if len(starts) < MAX_COLUMNS and not any(abs(x - s) <= 0.5 * em for s in near):
        starts.insert(at, x)


def _in_cell(row: _Row, starts: list[float], gap: float, em: float) -> bool:
    """True when a one-segment line is the next line of a wrapped cell: close under the
    line above (a line pitch), starting at a cell's left edge and ending before the next
    cell's. A cell narrower than its words wraps over many such lines; a paragraph after
    the table runs across the cells."""
    seg = row.segs[0]
    if gap > 0.8 * em:
        return False
    at = next((i for i, x in enumerate(starts) if abs(seg.x0 - x) <= 0.5 * em), None)
    if at is None:
        return False
    return at + 1 == len(starts) or seg.x1 < starts[at + 1] - 0.2 * em
