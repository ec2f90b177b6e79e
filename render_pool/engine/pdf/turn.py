"""A page whose text runs vertically, turned so that its text reads left to right.

Tables printed sideways (landscape tables on portrait pages, with or without a page
``/Rotate``) have their glyphs written along the page's y axis. Lines, columns and the
rows of a table only make sense in the text's own frame, so when most of a page's text
runs up (or down) the page, the characters, rules, shadings and images are mapped into
the frame the reader of the printed page sees: x along the text, y down its lines. The
turn is found from the glyphs' own advance (consecutive characters of a word), so it
needs no text matrix and leaves upright and right-to-left pages untouched.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.graphics import FillRect, PageImage, Rule

MIN_PAIRS = 20  # glyph pairs needed before a page is called sideways
SAMPLE = 6000  # characters looked at: enough to tell, and bounded on dense pages


@dataclass(slots=True)
class Page:
    """What the layout reads of one page, in one frame."""

    chars: list[Char | None]
    rules: list[Rule]
    fills: list[FillRect]
    images: list[PageImage]
    width: float
    height: float
    turn: int = 0  # degrees (90, 270) turn_page turned the page's frame clockwise


def text_turn(chars: list[Char | None]) -> int:
    """90 when most words run up the page (text turned anticlockwise), 270 when they run
    down it, else 0: from the step between consecutive glyphs of a word."""
    up = down = across = 0
    prev: Char | None = None
    for c in chars[:SAMPLE]:
        if c is None or not c.text.strip():
            prev = None
            continue
        if prev is not None:
            dx = (c.x0 + c.x1 - prev.x0 - prev.x1) / 2
            dy = (c.top + c.bottom - prev.top - prev.bottom) / 2
            if abs(dy) > 2 * abs(dx):
                if dy < 0:
                    up += 1
                else:
                    down += 1
            elif abs(dx) > 2 * abs(dy):
                across += 1
        prev = c
    if up + down < MIN_PAIRS or up + down < 3 * across:
        return 0
    if up >= 3 * down:
        return 90
    if down >= 3 * up:
        return 270
    return 0


def _upright_words(chars: list[Char | None]) -> set[int]:
    """Ids of the characters of words that run across the page of a sideways page (a
    page number, a stamp): turned with the page they would stand on end and break the
    lines they meet, so they are left out, as page_chars leaves out a rotated minority."""
    out: set[int] = set()
    word: list[Char] = []
    for c in [*chars, None]:
        if c is not None and c.text.strip():
            word.append(c)
            continue
        steps = [(b.x0 + b.x1 - a.x0 - a.x1, b.top + b.bottom - a.top - a.bottom)
                 for a, b in itertools.pairwise(word)]
        if steps and all(abs(dx) > 2 * abs(dy) for dx, dy in steps):
            out.update(id(ch) for ch in word)
        word = []
    return out


def _char(c: Char, x0: float, x1: float, top: float, bottom: float) -> Char:
    # the baseline of the turned glyph: near the bottom of its box in the new frame
    base = bottom - 0.2 * (bottom - top)
    return Char(c.text, x0, x1, top, bottom, base, c.size, c.bold, c.italic, c.mcid, c.mono,
                c.link, c.generated)


def turn_page(page: Page) -> Page:
    """The page in its text's frame when its text runs vertically, else ``page`` itself."""
    turn = text_turn(page.chars)
    if turn == 0:
        return page
    w, h = page.width, page.height
    if turn == 90:  # text reads bottom to top: x' = h - y, y' = x
        def box(x0: float, x1: float, top: float, bottom: float
                ) -> tuple[float, float, float, float]:
            return h - bottom, h - top, x0, x1

        def rule(r: Rule) -> Rule:
            if r.horizontal:
                return Rule(False, h - r.a, r.b0, r.b1)
            return Rule(True, r.a, h - r.b1, h - r.b0)
    else:  # text reads top to bottom: x' = y, y' = w - x
        def box(x0: float, x1: float, top: float, bottom: float
                ) -> tuple[float, float, float, float]:
            return top, bottom, w - x1, w - x0

        def rule(r: Rule) -> Rule:
            if r.horizontal:
                return Rule(False, r.a, w - r.b1, w - r.b0)
            return Rule(True, w - r.a, r.b0, r.b1)
    across = _upright_words(page.chars)
    chars: list[Char | None] = [None if c is None else _char(c, *box(c.x0, c.x1, c.top, c.bottom))
                                for c in page.chars if c is None or id(c) not in across]
    fills = [FillRect(*box(f.x0, f.x1, f.top, f.bottom)) for f in page.fills]
    images = []
    for img in page.images:
        img.x0, img.x1, img.top, img.bottom = box(img.x0, img.x1, img.top, img.bottom)
        images.append(img)
    return Page(chars, [rule(r) for r in page.rules], fills, images, h, w, turn)
