"""Rows of a table without rules whose cells wrap: which printed lines make one row.

A report table sets each row's cells top-aligned with some padding between rows, so the
lines of one wrapped cell follow each other at the font's line pitch while the next row
starts a little further down. When a table shows both pitches (the baseline distance
between its lines is bimodal), a line at the short pitch continues the row above and a
line at the long pitch starts a new one.

The short pitch is trusted only where the rows it makes look like wrapped rows: some
column (an amount, a code, a date) holds text on the first line of (almost) every row and
on (almost) none of the continuation lines, or the continuation lines fill clearly fewer
cells than the first lines. A statistical table that leaves a blank line
every five rows has two pitches too, but every one of its lines fills every column, so it
keeps a row per line. Header lines are grouped the same way (a head cell set on two lines,
``Change vs.`` over ``last year``) once the body has shown that its rows wrap, or when the
header's lines are closer than the body's rows.

Everything here is linear in the table's lines times its columns.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

# two pitches differ when they are this many ems apart (LibreOffice's default cell
# padding adds about 0.3 em; Chromium's 1 mm padding about 0.6 em at 9 pt)
PITCH_STEP = 0.15
# a key column: filled on this share of the rows' first lines at least ...
KEY_FIRST = 0.8
# ... and on this share of the continuation lines at most
KEY_CONTINUED = 0.2
# the cells of a line sit on one baseline within this many ems ...
SAME_BASELINE = 0.1
# ... on this share of the lines of several cells at least
SHARED = 0.9
# or: the continuation lines fill at most this share of the cells the first lines fill
FEWER_CELLS = 0.7


def shared_baselines(lines: Sequence[Sequence[float]], em: float, share: float = SHARED) -> bool:
    """True when the cells of (almost) every line of several cells sit on one baseline, as
    a table's top-aligned cells do. Two text columns side by side (a table in one column
    of a page, running text in the other) make lines whose parts sit at unrelated
    heights: their pitches say nothing about a table's rows. ``share``: the share of the
    lines of several cells that must be level."""
    multi = [line for line in lines if len(line) >= 2]
    if not multi:
        return False
    level = sum(max(line) - min(line) <= SAME_BASELINE * em for line in multi)
    return level >= share * len(multi)


def _starts_by_pitch(baselines: Sequence[float], em: float) -> list[bool] | None:
    """True for each line that starts a row (the first, and each after a long pitch);
    None when the lines show one pitch only (no sign of wrapped cells)."""
    pitches = [b - a for a, b in itertools.pairwise(baselines)]
    if len(pitches) < 2:
        return None
    step = max(PITCH_STEP * em, 1.0)
    short = min(pitches)
    if short < 0.5 * em:
        return None  # lines on top of one another: not a plain run of lines
    if not any(p > short + step for p in pitches):
        return None
    return [True, *(p > short + step for p in pitches)]


def _has_key_column(starts: Sequence[bool], filled: Sequence[Sequence[bool]]) -> bool:
    """True when the rows look wrapped: a column holds text on the first line of almost
    every row and on almost no continuation line, or the continuation lines fill clearly
    fewer columns than the first lines (a narrow table where every column wraps)."""
    firsts = [row for row, start in zip(filled, starts, strict=True) if start]
    rest = [row for row, start in zip(filled, starts, strict=True) if not start]
    if not rest or len(firsts) < 2:
        return False
    per_first = sum(map(sum, firsts)) / len(firsts)
    per_rest = sum(map(sum, rest)) / len(rest)
    if per_rest <= FEWER_CELLS * per_first:
        return True
    for col in range(len(filled[0])):
        on_first = sum(row[col] for row in firsts)
        on_rest = sum(row[col] for row in rest)
        if on_first >= KEY_FIRST * len(firsts) and on_rest <= KEY_CONTINUED * len(rest):
            return True
    return False


def row_starts(
    baselines: Sequence[float], filled: Sequence[Sequence[bool]], header: int, em: float,
    cut: bool = False,
) -> list[bool | None]:
    """For each line of a table (``header`` head lines, then the body): True where it
    starts a new row, False where it continues the row above, None where the pitches do
    not tell (the caller's own rules then decide). ``cut``: a column's words are cut into
    pieces of a letter or two, one a line (a cell narrower than a word), so its rows wrap
    whenever the pitches show rows."""
    starts: list[bool | None] = [None] * len(baselines)
    if len(baselines) != len(filled) or not filled:
        return starts
    body = _starts_by_pitch(baselines[header:], em)
    body_wraps = body is not None and (cut or _has_key_column(body, filled[header:]))
    if body_wraps and body is not None:
        starts[header:] = body
    if header >= 2 and len(baselines) > header:
        head = [b - a for a, b in itertools.pairwise(baselines[:header])]
        rows = [b - a for a, b in itertools.pairwise(baselines[header:])]
        step = max(PITCH_STEP * em, 1.0)
        row_pitch = max(rows, default=0.0) if body_wraps else min(rows, default=0.0)
        short = min(head)
        for k, pitch in enumerate(head, start=1):
            if row_pitch and pitch <= short + step and pitch + step < row_pitch:
                starts[k] = False  # a head cell set on two lines
    return starts


def continuation_pitch(
    baselines: Sequence[float], filled: Sequence[Sequence[bool]], em: float,
    cut: bool = False,
) -> float | None:
    """The pitch of a wrapped cell's lines in a table body whose rows wrap (see
    ``row_starts``; ``cut`` as there), None when its rows do not wrap: a line that follows
    the table at this pitch, inside one of its columns, is the end of its last cell."""
    body = _starts_by_pitch(baselines, em)
    if body is None or not (cut or _has_key_column(body, filled)):
        return None
    return min(b - a for a, b in itertools.pairwise(baselines))
