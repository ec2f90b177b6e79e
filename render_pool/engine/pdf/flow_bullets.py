"""List bullets that a producer drew instead of writing them as text.

Chromium (Skia) prints the discs, circles and squares of HTML lists as small vector shapes,
not glyphs: the page's text then holds the items' words with nothing to say they are list
items, and every list reads as a paragraph. A small, roughly square shape that stands just
left of the first glyph of a line, centred on that glyph's height and smaller than it, is
such a bullet; it is given back as a ``•`` character at its place, so that the lines it
starts read as list items like those with written bullets.
"""

from __future__ import annotations

import bisect

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.engine.pdf.chars import Char

BULLET = "\u2022"
MAX_PATHS = 20_000  # a page of more path objects is a drawing: its shapes are not bullets
MAX_BULLETS = 500


def _shapes(page: pdfium.PdfPage, height: float) -> list[tuple[float, float, float, float]]:
    """(x0, x1, top, bottom) of the page's small, roughly square path objects."""
    out: list[tuple[float, float, float, float]] = []
    for count, obj in enumerate(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2)):
        if count >= MAX_PATHS or len(out) >= MAX_BULLETS:
            break
        left, bottom, right, top = obj.get_bounds()
        w, h = right - left, top - bottom
        if 1.5 <= w <= 8.0 and 1.5 <= h <= 8.0 and abs(w - h) <= 0.25 * max(w, h):
            out.append((left, right, height - top, height - bottom))
    return out


class _Rows:
    """The page's visible glyphs sorted by top, to find those across a height quickly."""

    def __init__(self, chars: list[Char]) -> None:
        self.chars = sorted(chars, key=lambda c: c.top)
        self.tops = [c.top for c in self.chars]
        self.reach = max(c.bottom - c.top for c in self.chars)  # the tallest glyph

    def across(self, y: float) -> list[Char]:
        """The glyphs whose box spans the height ``y``."""
        lo = bisect.bisect_left(self.tops, y - self.reach)
        hi = bisect.bisect_left(self.tops, y)
        return [c for c in self.chars[lo:hi] if c.bottom > y]


def _bullet_for(shape: tuple[float, float, float, float], rows: _Rows) -> Char | None:
    """The bullet character for ``shape`` when a line's first glyph stands right of it."""
    x0, x1, top, bottom = shape
    mid = (top + bottom) / 2
    right: Char | None = None
    for c in rows.across(mid):
        if c.x1 > x0 - 0.2 and c.x0 < x1 + 0.2:
            return None  # a shape under a glyph (an underline's end, a box around it)
        em = max(c.size, 1.0)
        if x1 < c.x0 <= x1 + 2.5 * em and (right is None or c.x0 < right.x0):
            right = c
        elif c.x1 <= x0 and x0 - c.x1 < 1.5 * em:
            return None  # text just before it: a symbol inside a line, not a bullet
    if right is None:
        return None
    em = max(right.size, 1.0)
    if not 0.15 * em <= bottom - top <= 0.7 * em:
        return None
    return Char(BULLET, x0, x1, right.top, right.bottom, right.baseline, right.size, False, False)


def drawn_bullets(
    page: pdfium.PdfPage, height: float, chars: list[Char | None]
) -> list[Char | None]:
    """The bullets drawn on ``page`` as characters, each after a ``None`` (a segment of its
    own, for :func:`render_pool.engine.pdf.chars.segments_of`); to be added to the
    page's characters before lines are built."""
    visible = [c for c in chars if c is not None and c.text.strip()]
    if not visible:
        return []
    rows = _Rows(visible)
    out: list[Char | None] = []
    for shape in _shapes(page, height):
        bullet = _bullet_for(shape, rows)
        if bullet is not None:
            out.extend((None, bullet))
    return out
