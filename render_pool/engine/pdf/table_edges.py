"""Where a table without rules begins and ends: the last lines of a wrapped last row, and
the caption or heading set above it.

A table's run of lines is found from its multi-cell lines, so the lines that end a wrapped
last row (one cell's text alone on its line) look like the text after the table; they
belong to it when they follow at the pitch of a wrapped cell (``table_rows``) inside one
of its columns. Above a table, a caption ("Table 3: ...") is the table's caption, not its
first row, and a heading (set larger than the table's text) is kept out of it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.table_rows import PITCH_STEP

CAPTION = re.compile(r"^(Table|Tab\.|Tableau|Tabelle|Tabla)\s*[\dIVX]", re.I)
MAX_TAIL = 6  # continuation lines of a wrapped last cell taken at most


@dataclass(slots=True, frozen=True)
class LineBox:
    """What this module needs to know of a printed line."""

    baseline: float
    x0: float
    x1: float
    size: float
    segments: int
    text: str


def wrapped_tail(
    last_baseline: float,
    pitch: float,
    following: Sequence[LineBox],
    bounds: Sequence[float],
    em: float,
) -> int:
    """How many of the ``following`` lines (those after the table's last line, top down)
    end its last row: one segment each, each at the wrapped cells' ``pitch`` from the line
    above, inside one column (``bounds``: the columns' left bounds; the last column ends
    where its text does)."""
    edges = [*bounds[1:], math.inf]
    step = max(PITCH_STEP * em, 1.0)
    taken = 0
    above = last_baseline
    for line in following[:MAX_TAIL]:
        if line.segments != 1 or line.baseline - above > pitch + step:
            break
        if not any(
            line.x0 >= lo - 0.5 * em and line.x1 <= hi + 0.5 * em
            for lo, hi in zip(bounds, edges, strict=True)
        ):
            break
        taken += 1
        above = line.baseline
    return taken


def is_caption(line: LineBox) -> bool:
    """A table's caption: one line of text starting "Table 3" (or its translations)."""
    return line.segments == 1 and bool(CAPTION.match(line.text.strip()))


def is_heading_over(line: LineBox, table_size: float) -> bool:
    """A line set clearly larger than the table's text: a section heading above the
    table, not a row of it."""
    return line.size >= 1.15 * table_size


def caption_chars(chars: Sequence[Char]) -> list[Char]:
    """A caption's characters, without the italic or bold that the whole caption is set
    in: that is the caption's style, not emphasis of its words."""
    visible = [c for c in chars if c.text.strip()]
    italic = bool(visible) and all(c.italic for c in visible)
    bold = bool(visible) and all(c.bold for c in visible)
    if not italic and not bold:
        return list(chars)
    return [
        dataclasses.replace(c, italic=c.italic and not italic, bold=c.bold and not bold)
        for c in chars
    ]
