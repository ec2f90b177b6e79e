"""Line and column analysis of one PDF page: segments -> lines in reading order.

Columns are found from the x-distribution of text segments: a vertical band that (almost)
no narrow segment covers, with enough text of a column-like width on both sides, is a
gutter; a run that repeats the columns' pitch opens the next column even when that column
holds a table's short cells, or only a table. Segments crossing a gutter (titles,
full-width figures) split the page into bands; inside a band the columns are read left to
right, each top to bottom.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from render_pool.engine import model
from render_pool.engine.pdf.bidi import logical_order
from render_pool.engine.pdf.chars import Char, Segment, is_cjk, is_rtl


@dataclass(slots=True)
class Line:
    """One text line: its segments (left to right) and the column it sits in."""

    segs: list[Segment]
    page: int = 0
    col_x0: float = 0.0
    col_x1: float = 0.0
    region: tuple[int, int, int] = (0, 0, 0)  # (page, band, column); -1 column = spanning
    x0: float = 0.0
    x1: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    chars: list[Char] = field(default_factory=list)

    def __post_init__(self) -> None:
        n_rtl = sum(is_rtl(c.text) for s in self.segs for c in s.chars)
        rtl = n_rtl * 2 > sum(1 for s in self.segs for c in s.chars if c.text.isalpha())
        self.segs.sort(key=lambda s: -s.x1 if rtl else s.x0)
        self.x0 = min(s.x0 for s in self.segs)
        self.x1 = max(s.x1 for s in self.segs)
        self.top = min(s.top for s in self.segs)
        self.bottom = max(s.bottom for s in self.segs)
        chars: list[Char] = []
        if n_rtl:
            joined: list[Char] = []  # segments are words apart, as in a left-to-right line
            for s in self.segs:
                if joined:
                    last = joined[-1]
                    joined.append(Char(" ", last.x1, last.x1, last.top, last.bottom,
                                       last.baseline, last.size, False, False))
                joined.extend(s.chars)
            self.chars = logical_order(joined, self.col_x0, self.col_x1)
            return
        for s in self.segs:
            if chars and chars[-1].text != " " and not (
                    is_cjk(chars[-1].text[-1:]) and is_cjk(s.chars[0].text)):
                last = chars[-1]
                chars.append(Char(" ", last.x1, last.x1, last.top, last.bottom, last.baseline,
                                  last.size, last.bold and s.chars[0].bold,
                                  last.italic and s.chars[0].italic))
            chars.extend(s.chars)
        self.chars = chars

    @property
    def text(self) -> str:
        return " ".join("".join([c.text for c in self.chars]).split())

    @property
    def visible(self) -> list[Char]:
        return [c for c in self.chars if c.text.strip()]

    @property
    def size(self) -> float:
        """The median size of the line's glyphs; of its prose glyphs when it has both: inline
        code set smaller (``Set x_2 first.``) does not make the line a smaller one."""
        sizes = sorted([c.size for c in self.chars if not c.mono and c.text.strip()]) or sorted(
            [c.size for c in self.chars if c.text.strip()])
        return sizes[len(sizes) // 2] if sizes else 0.0

    @property
    def baseline(self) -> float:
        base = sorted([c.baseline for c in self.chars if c.text.strip()])
        return base[len(base) // 2] if base else self.bottom

    @property
    def bold(self) -> bool:
        vis = [c for c in self.visible if c.text.isalnum()] or self.visible
        return bool(vis) and sum(c.bold for c in vis) >= 0.8 * len(vis)

    @property
    def italic(self) -> bool:
        vis = [c for c in self.visible if c.text.isalnum()] or self.visible
        return bool(vis) and sum(c.italic for c in vis) >= 0.8 * len(vis)


@dataclass(slots=True)
class Block:
    """A non-text item placed in the flow: an image or a table (``payload``)."""

    x0: float
    x1: float
    top: float
    bottom: float
    payload: model.Block
    page: int = 0
    region: tuple[int, int, int] = (0, 0, 0)
    margin: bool = False  # turned text beside the page's text (a stamp in the margin)


Item = Line | Block


def group_lines(segs: list[Segment]) -> list[list[Segment]]:
    """Group segments into lines by vertical overlap; lines sorted top to bottom."""
    lines: list[tuple[float, float, list[Segment]]] = []
    for s in sorted(segs, key=lambda s: (s.top, s.x0)):
        h = max(s.bottom - s.top, 0.1)
        best = None
        best_ov = 0.0
        for idx in range(len(lines) - 1, max(-1, len(lines) - 6), -1):
            top, bottom, members = lines[idx]
            ov = min(bottom, s.bottom) - max(top, s.top)
            lh = max(bottom - top, 0.1)
            if ov < 0.5 * min(h, lh):
                continue
            if any(min(m.x1, s.x1) - max(m.x0, s.x0) > 0.5 for m in members):
                continue
            if ov > best_ov:
                best, best_ov = idx, ov
        if best is None:
            lines.append((s.top, s.bottom, [s]))
        else:
            top, bottom, members = lines[best]
            members.append(s)
            # the line box follows its main text, not superscripts
            lines[best] = (top if s.size < members[0].size else min(top, s.top),
                           bottom if s.size < members[0].size else max(bottom, s.bottom),
                           members)
    lines.sort(key=lambda t: t[0])
    return [sorted(m, key=lambda s: s.x0) for _, _, m in lines]


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def find_gutters(segs: list[Segment], height: float = 0.0) -> list[tuple[float, float]]:
    """Vertical gutters (x ranges) separating text columns on one page, left to right.

    Segments in the top and bottom 7% of the page (running headers, page numbers) are
    ignored, as is the odd segment crossing the gutter.
    """
    if height:
        segs = [s for s in segs if s.bottom > 0.07 * height and s.top < 0.93 * height]
    if len(segs) < 8:
        return []
    xmin = min(s.x0 for s in segs)
    xmax = max(s.x1 for s in segs)
    width = xmax - xmin
    if width < 150:
        return []
    em = _median([s.size for s in segs]) or 10.0
    narrow = [s for s in segs if s.x1 - s.x0 < 0.55 * width]
    if len(narrow) < 8:
        return []
    cov = [0] * (int(width) + 2)
    for s in narrow:
        for b in range(int(s.x0 - xmin), int(s.x1 - xmin) + 1):
            cov[b] += 1
    # loose here: an author block or a centred page number over the gutter is allowed; the
    # crossings that matter (beside the columns' lines) are counted below
    runs: list[tuple[float, float]] = []
    for share in (0.03, 0.12, 0.25):  # strict first; a run found looser must be new
        for run in _low_runs(cov, max(2, int(share * len(narrow))), xmin, em):
            if not any(r[0] < run[1] and run[0] < r[1] for r in runs):
                runs.append(run)
    runs.sort()
    gutters: list[tuple[float, float]] = []
    lo = xmin
    for g0, g1 in runs:
        if gutters and _repeats(gutters, xmin, lo, (g0, g1), em) \
                and _clear_beside(segs, (g0, g1), lo, em):
            gutters.append((g0, g1))  # the section's next column, whatever it holds
            lo = g1
            continue
        if not _is_column(narrow, lo, g0, width, em):
            continue
        # the column on the right ends at a later low-coverage run or at the text's edge
        ends = [r[0] for r in runs if r[0] > g1] + [xmax]
        hi_right = next((e for e in ends if _is_column(narrow, g1, e, width, em)), None)
        if hi_right is not None:
            # the columns' extent from their lines of a column-like width (not author names)
            left = [s for s in narrow if s.x0 >= lo - 1 and s.x1 <= g0 + 1
                    and s.x1 - s.x0 >= 0.45 * (g0 - lo)]
            right = [s for s in narrow if s.x0 >= g1 - 1 and s.x1 <= hi_right + 1
                     and s.x1 - s.x0 >= 0.45 * (hi_right - g1)]
            top_l, bot_l = min(s.top for s in left), max(s.bottom for s in left)
            top_r, bot_r = min(s.top for s in right), max(s.bottom for s in right)
            top, bottom = max(top_l, top_r), min(bot_l, bot_r)
            if bottom - top <= 0.3 * min(bot_l - top_l, bot_r - top_r):
                continue
            if not (_is_column([s for s in narrow if top <= s.top <= bottom], lo, g0, width,
                               em, 2)
                    and _is_column([s for s in narrow if top <= s.top <= bottom], g1,
                                   hi_right, width, em, 2)):
                continue  # beside the other column, short cells: a table, not columns
            beside = sum(1 for s in left + right if top <= s.top <= bottom)
            crossing = sum(1 for s in segs if s.x0 < g0 - 1 and s.x1 > g1 + 1
                           and top <= (s.top + s.bottom) / 2 <= bottom)
            if crossing <= max(2, 0.12 * beside):
                gutters.append((g0, g1))
                lo = g1
    return gutters


def _repeats(gutters: list[tuple[float, float]], xmin: float, lo: float,
             run: tuple[float, float], em: float) -> bool:
    """True when ``run`` repeats the columns' pitch: the column right of it starts as far
    from the last column's start (``lo``) as that one from the column before it, and the
    run is about as wide as the last gutter. A word processor's section columns are of one
    width, so the next column stands there even when it holds a table of short cells
    rather than prose. (Left edges are measured: the text's right edges are ragged.)"""
    p0, p1 = gutters[-1]
    before = gutters[-2][1] if len(gutters) > 1 else xmin
    return abs((run[1] - lo) - (p1 - before)) <= em and run[1] - run[0] >= 0.5 * (p1 - p0)


def _block_column(gutters: list[tuple[float, float]], segs: list[Segment],
                  blocks: list[Block], xmin: float) -> list[tuple[float, float]]:
    """``gutters`` and, when a table or image stands where the next column of the same
    pitch starts with no text across the gutter before it, that gutter too: a column that
    holds only a table (its text was taken out) is still read after the column before."""
    if not gutters or not blocks:
        return gutters
    em = _median([s.size for s in segs]) or 10.0
    p0, p1 = gutters[-1]
    start = p1 + p1 - (gutters[-2][1] if len(gutters) > 1 else xmin)
    if not any(abs(b.x0 - start) <= em for b in blocks):
        return gutters
    g0 = start - (p1 - p0)
    if any(s.x0 < start - 1 and s.x1 > g0 + 1 and s.x1 > p1 for s in segs) \
            or any(b.x0 < start - em and b.x1 > g0 for b in blocks if b.x0 >= p1 - 1):
        return gutters
    return [*gutters, (g0, start)]


def _clear_beside(segs: list[Segment], run: tuple[float, float], lo: float, em: float) -> bool:
    """True when (almost) no segment crosses ``run`` and text of a column's width stands
    right of it (the column it opens holds something)."""
    g0, g1 = run
    col_w = g0 - lo
    crossing = sum(1 for s in segs if s.x0 < g0 - 1 and s.x1 > g1 + 1)
    right = sum(1 for s in segs if s.x0 >= g1 - 1 and s.x1 <= g1 + col_w + em)
    return crossing <= max(2, 0.03 * len(segs)) and right >= 6


def _low_runs(cov: list[int], limit: int, xmin: float,
              em: float) -> list[tuple[float, float]]:
    """x ranges (at least 0.6 em wide, not at the left edge) where at most ``limit``
    segments pass, each narrowed to its least covered part."""
    runs: list[tuple[float, float]] = []
    start = None
    for b, c in enumerate(cov):
        if c <= limit and start is None:
            start = b
        elif c > limit and start is not None:
            if start > 0 and b - start >= max(5.0, 0.6 * em):
                runs.append(_narrowest(cov, start, b, xmin, em))
            start = None
    return runs


def _narrowest(cov: list[int], start: int, end: int, xmin: float,
               em: float) -> tuple[float, float]:
    """The widest part of a low-coverage run where coverage is (nearly) least: the gap
    between the columns, not the ragged ends of the lines beside it."""
    low = min(cov[start:end]) + 2
    best = (start, end)
    best_w = -1
    b0 = start
    while b0 < end:
        if cov[b0] <= low:
            b1 = b0
            while b1 < end and cov[b1] <= low:
                b1 += 1
            if b1 - b0 > best_w:
                best, best_w = (b0, b1), b1 - b0
            b0 = b1
        else:
            b0 += 1
    if best_w < 0.6 * em:
        return xmin + start, xmin + end
    return xmin + best[0], xmin + best[1]


def _is_column(segs: list[Segment], lo: float, hi: float, width: float, em: float,
               least: int = 4) -> bool:
    """True when the x range holds a real text column (enough lines of a column-like width,
    at least ``least``)."""
    inside = [s for s in segs if s.x0 >= lo - 1 and s.x1 <= hi + 1]
    col_w = hi - lo
    if col_w < 0.2 * width or col_w < 8 * em:
        return False
    if len(inside) < max(least, 0.15 * len(segs)):
        return False
    # lines filling the column: prose, not a figure's labels or a table's short cells
    full = sum(1 for s in inside if s.x1 - s.x0 >= 0.45 * col_w)
    return full >= max(least, 0.12 * len(inside))


def order_page(segs: list[Segment], blocks: list[Block], page: int,
               height: float = 0.0,
               gutters: list[tuple[float, float]] | None = None) -> list[Item]:
    """Lines and blocks of one page in reading order (bands, then columns, then top-down).

    ``gutters`` are the page's column gutters when the caller knows them (columns.py);
    else they are found here."""
    if not segs and not blocks:
        return []
    if gutters is None:
        gutters = find_gutters(segs, height)
    xs = [s.x0 for s in segs] + [b.x0 for b in blocks]
    xe = [s.x1 for s in segs] + [b.x1 for b in blocks]
    xmin, xmax = min(xs), max(xe)
    gutters = _block_column(gutters, segs, blocks, xmin)
    bounds = [xmin, *[v for g in gutters for v in g], xmax]
    cols = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]

    # a segment belongs to a column when it stays on its side of the gutters' middles: a
    # line starting with hanging punctuation (an opening quote) reaches into the gutter
    # without crossing it
    mids = [xmin, *[(g0 + g1) / 2 for g0, g1 in gutters], xmax]

    def column_of(x0: float, x1: float) -> int:
        for i in range(len(cols)):
            if x0 >= mids[i] - 2 and x1 <= mids[i + 1] + 2:
                return i
        return -1

    span_segs = [s for s in segs if column_of(s.x0, s.x1) < 0]
    span_lines = [Line(g, page=page, col_x0=xmin, col_x1=xmax) for g in group_lines(span_segs)]
    span_items: list[Item] = [*span_lines, *[b for b in blocks if column_of(b.x0, b.x1) < 0]]
    span_items.sort(key=lambda it: it.top)
    tops = [it.top for it in span_items]
    groups: dict[tuple[int, int], list[Segment]] = {}
    group_blocks: dict[tuple[int, int], list[Block]] = {}
    for s in segs:
        c = column_of(s.x0, s.x1)
        if c >= 0:
            groups.setdefault((bisect.bisect_right(tops, s.top), c), []).append(s)
    for b in blocks:
        c = column_of(b.x0, b.x1)
        if c >= 0:
            group_blocks.setdefault((bisect.bisect_right(tops, b.top), c), []).append(b)
    out: list[Item] = []
    for band in range(len(span_items) + 1):
        for c, (lo, hi) in enumerate(cols):
            lines: list[Item] = [
                Line(g, page=page, col_x0=lo, col_x1=hi, region=(page, band, c))
                for g in group_lines(groups.get((band, c), []))]
            for b in group_blocks.get((band, c), []):
                b.region = (page, band, c)
                lines.append(b)
            lines.sort(key=lambda it: it.top)
            out.extend(lines)
        if band < len(span_items):
            it = span_items[band]
            it.region = (page, band, -1)
            out.append(it)
    for it in out:
        it.page = page
    return out

