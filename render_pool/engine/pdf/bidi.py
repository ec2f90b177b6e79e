"""Right-to-left lines of a PDF in logical order (the order they are read and typed).

A PDF places glyphs; the order of its content stream (or of pdfium's own reordering) is
not reliably the reading order when Arabic or Hebrew is mixed with Latin words, digits and
punctuation. A line holding right-to-left letters is therefore rebuilt from the glyphs'
positions: sorted left to right (the visual order), a space between two glyphs a space
separates in the content (or in a wide gap without one),
then turned into logical order the way the Unicode bidirectional algorithm displays
text, backwards: in a line whose base direction is right to left, the glyphs are taken
from the right and each run of left-to-right text (Latin words, numbers) is turned back
round; in a left-to-right line, each run of right-to-left text is turned round. The base
direction follows the line's alignment in its column (an Arabic paragraph is set flush
right), else the majority of its letters.
"""

from __future__ import annotations

import bisect
import unicodedata

from render_pool.engine.pdf.chars import Char

_RTL = ("R", "AL")
_NUMBER = ("EN", "AN")


def _kind(ch: Char) -> str:
    """'R' (right-to-left letter), 'L' (left-to-right letter), 'N' (digit) or '-'
    (neutral: spaces, punctuation)."""
    cls = unicodedata.bidirectional(ch.text[:1]) if ch.text else ""
    if cls in _RTL:
        return "R"
    if cls == "L":
        return "L"
    if cls in _NUMBER:
        return "N"
    return "-"


def _with_spaces(chars: list[Char]) -> list[Char]:
    """The glyphs left to right with the content's spaces put back: between the two glyphs
    a space separates in the content when they are neighbours on the line (whatever box
    the space has: some producers place it a glyph off), else at the space's own place
    (a number inside right-to-left text); and in a gap wider than half an em."""
    visual = sorted((c for c in chars if c.text.strip()), key=lambda c: (c.x0 + c.x1) / 2)
    where = {id(c): i for i, c in enumerate(visual)}
    centres = [(c.x0 + c.x1) / 2 for c in visual]
    after: set[int] = set()  # a space goes after visual[i]
    last: Char | None = None
    space: Char | None = None
    for ch in chars:
        if not ch.text.strip():
            space = ch if last is not None else None
            continue
        if space is not None and last is not None:
            a, b = sorted((where[id(last)], where[id(ch)]))
            if b == a + 1:
                after.add(a)
            else:
                at = bisect.bisect_left(centres, (space.x0 + space.x1) / 2) - 1
                if 0 <= at < len(visual) - 1:
                    after.add(at)
        last, space = ch, None
    out: list[Char] = []
    for i, ch in enumerate(visual):
        if out:
            prev = out[-1]
            if i - 1 in after or ch.x0 - prev.x1 > 0.5 * max(prev.size, ch.size, 1.0):
                out.append(Char(" ", prev.x1, max(prev.x1, ch.x0), prev.top, prev.bottom,
                                prev.baseline, prev.size, prev.bold and ch.bold,
                                prev.italic and ch.italic, prev.mcid, prev.mono and ch.mono,
                                generated=True))
        out.append(ch)
    return out


def _turn_runs(seq: list[Char], kinds: list[str], strong: str) -> tuple[
        list[Char], list[tuple[int, int]]]:
    """Turn round each run that starts and ends with a ``strong`` glyph (neutrals and
    digits inside it belong to it); returns the new order and the turned spans."""
    out = list(seq)
    spans: list[tuple[int, int]] = []
    other = "L" if strong == "R" else "R"
    i = 0
    n = len(seq)
    while i < n:
        if kinds[i] != strong:
            i += 1
            continue
        j = k = i
        while k + 1 < n and kinds[k + 1] != other:
            k += 1
            if kinds[k] == strong:
                j = k
        out[i:j + 1] = reversed(seq[i:j + 1])
        spans.append((i, j + 1))
        i = j + 1
    return out, spans


def _numbers(seq: list[Char], lo: int, hi: int) -> list[tuple[int, int]]:
    """Spans of numbers (digits, with . , : / between digits) in seq[lo:hi]."""
    out = []
    i = lo
    while i < hi:
        if _kind(seq[i]) != "N":
            i += 1
            continue
        j = i
        while j + 1 < hi and (_kind(seq[j + 1]) == "N" or (
                seq[j + 1].text in ".,:/" and j + 2 < hi and _kind(seq[j + 2]) == "N")):
            j += 1
        out.append((i, j + 1))
        i = j + 1
    return out


def logical_order(chars: list[Char], col_x0: float = 0.0, col_x1: float = 0.0) -> list[Char]:
    """The characters of one line (any order) in logical order, with word spaces."""
    visible = [c for c in chars if c.text.strip()]
    if not visible:
        return []
    visual = _with_spaces(chars)
    x0, x1 = visual[0].x0, visual[-1].x1
    em = max(sorted(c.size for c in visible)[len(visible) // 2], 1.0)
    kinds = [_kind(c) for c in visual]
    flush_left = col_x1 > col_x0 and x0 - col_x0 < 2 * em and col_x1 - x1 > 4 * em
    flush_right = col_x1 > col_x0 and col_x1 - x1 < 2 * em and x0 - col_x0 > 4 * em
    base_rtl = flush_right or (not flush_left and kinds.count("R") > kinds.count("L"))
    if base_rtl:
        # read from the right; Latin runs (with what lies between their words) and numbers
        # outside them read forwards again
        seq, kinds = visual[::-1], kinds[::-1]
        out, spans = _turn_runs(seq, kinds, "L")
        inside = {i for lo, hi in spans for i in range(lo, hi)}
        for lo, hi in _numbers(out, 0, len(out)):
            if lo not in inside:
                out[lo:hi] = reversed(out[lo:hi])
        return out
    # read from the left; right-to-left runs turned round, numbers inside them forwards
    out, spans = _turn_runs(visual, kinds, "R")
    for lo, hi in spans:
        for a, b in _numbers(out, lo, hi):
            out[a:b] = reversed(out[a:b])
    return out
