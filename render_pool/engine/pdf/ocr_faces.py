"""The face of each recognised word (bold, italic, monospaced), judged against its page.

The OCR engine measures each word's stem width and slant on the image
(:mod:`render_pool.engine.ocr.style`); what counts as bold depends on the page: a word is bold
when its stems are clearly thicker, relative to its line's size, than those of the page's
body text. Italic is a slant of the letters. Monospace comes from widths alone: in a
proportional face ``i``, ``l`` and ``.`` are narrow and ``m`` wide, in a fixed-pitch face every
character takes the same advance, so a word's width is compared with both predictions (the
em taken from the page's proportional words); a line mostly in fixed-pitch words is taken as
fixed-pitch throughout, as a code block's line is. These flags go on the characters, and the
layout logic shared with text layers makes headings, emphasis and code blocks of them.
"""

from __future__ import annotations

import math

from render_pool.engine.ocr import OcrLine, OcrPage, OcrWord

BOLD_RATIO = 1.25  # stems this much thicker than the body's (relative to size) are bold
ITALIC_SLANT = 0.15  # shear of the letters above which a word is italic
MONO_ADVANCE = 0.6  # a fixed-pitch face's advance, in ems
# log-ratios of the two width predictions needed to tell them apart (a line, a word) and
# how much closer to the fixed pitch than to the proportional face a width must be
MONO_LINE_APART = 0.08
MONO_WORD_APART = 0.2
MONO_MARGIN = 0.05
ITALIC_LINE_SHARE = 0.5  # a line with this share of its letters in italic words is no code
BOLD_LINE_SHARE = 0.8  # and one with this share in bold words is bold throughout
CODE_MAX_SIZE = 1.1  # a fixed-pitch line is at most this many times the body size
# approximate advances of a proportional face in ems, by character (default 0.55)
_NARROW = dict.fromkeys("ijl.,:;'!|`\u2019\u2018", 0.25)
_NARROWISH = dict.fromkeys('ftrI()[]{}/\\-"', 0.32)
_WIDE = {"m": 0.83, "w": 0.72, "M": 0.83, "W": 0.94}
_CAPITAL = 0.68
_DIAGONAL = frozenset("vwxyzkAKVWXYZ")  # letters whose strokes lean by themselves

Faces = dict[int, tuple[bool, bool, bool]]  # id(word) -> (bold, italic, mono)


def proportional_units(text: str) -> float:
    """The width ``text`` takes in a typical proportional face, in ems."""
    total = 0.0
    for ch in text:
        width = _NARROW.get(ch) or _NARROWISH.get(ch) or _WIDE.get(ch)
        if width is None:
            width = _CAPITAL if ch.isupper() else 0.55
        total += width
    return total


_TALL = frozenset("bdfhkl0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
CAP_SHARE = 0.72  # the height of capitals and ascenders, in ems


def line_sizes(page: OcrPage) -> dict[int, float]:
    """Each line's font size in pixels, by ``id`` of the line, from the height its words'
    capitals and ascenders rise over the baseline (the engine's own estimate, ``x_size``,
    grows much less than the type: a 14 pt heading over 10 pt text measured 1.14 times the
    body). A line without a tall letter ("page too.") gets the engine's estimate scaled
    the way the page's other lines are, so it does not look like a size change."""
    rises: dict[int, float] = {}
    for line in page.lines:
        tall = [
            line.baseline - w.top
            for w in line.words
            if not w.raised and any(c in _TALL for c in w.text)
        ]
        rise = _median(tall)
        if rise > 0.3 * line.size:
            rises[id(line)] = rise / CAP_SHARE
    ratio = (
        _median([rises[id(ln)] / ln.size for ln in page.lines if id(ln) in rises and ln.size > 0])
        or 1.0
    )
    return {id(ln): rises.get(id(ln), ln.size * ratio) for ln in page.lines}


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def _body_stroke(page: OcrPage, sizes: dict[int, float]) -> float:
    """The stem width relative to line size of the page's body text (the median over its
    letters)."""
    weighted: list[float] = []
    for line in page.lines:
        for word in line.words:
            if word.stroke > 0 and len(word.text) >= 2 and not word.raised:
                weighted.extend([word.stroke / max(sizes[id(line)], 1.0)] * len(word.text))
    return _median(weighted)


def _em_share(page: OcrPage, sizes: dict[int, float]) -> float:
    """The em as a share of the engine's line size, from proportional words (the median of
    width / predicted width over the page's longer words)."""
    shares = [
        (w.x1 - w.x0) / proportional_units(w.text) / max(sizes[id(line)], 1.0)
        for line in page.lines
        for w in line.words
        if len(w.text) >= 4 and not w.raised
    ]
    return _median(shares) or 1.0


def _fit(words: list[OcrWord], em: float) -> tuple[float, float, float]:
    """How far the words' widths are from a proportional and from a fixed-pitch face of
    em ``em`` (absolute log ratios of measured to predicted width) and how far apart the
    two predictions are."""
    width = sum(w.x1 - w.x0 for w in words)
    prop = sum(proportional_units(w.text) for w in words) * em
    mono = sum(MONO_ADVANCE * len(w.text) for w in words) * em
    if width <= 0 or prop <= 0:
        return 0.0, 0.0, 0.0
    return (abs(math.log(width / prop)), abs(math.log(width / mono)), abs(math.log(mono / prop)))


def _mono_words(line: OcrLine, em: float) -> tuple[bool, list[bool]]:
    """Whether ``line`` as a whole fits a fixed pitch better than a proportional face (its
    words' misfits summed, weighted by their lengths: capitals wider and punctuation
    narrower than a fixed pitch must not cancel out), and per word whether it clearly does
    (an inline code span)."""
    fits = [_fit([w], em) for w in line.words]
    out = [
        len(w.text) >= 3 and apart >= MONO_WORD_APART and by_mono + MONO_MARGIN < by_prop
        for w, (by_prop, by_mono, apart) in zip(line.words, fits, strict=True)
    ]
    weights = [0 if w.raised else len(w.text) for w in line.words]
    total = sum(weights) or 1
    prop_miss, mono_miss, apart = (
        sum(f[k] * n for f, n in zip(fits, weights, strict=True)) / total for k in range(3)
    )
    needed = MONO_LINE_APART if len(line.words) >= 3 else MONO_WORD_APART
    by_em = apart >= needed and mono_miss + MONO_MARGIN < prop_miss
    return by_em or _even_pitch(line), out


def _spread(values: list[float], weights: list[int]) -> float:
    """Weighted mean absolute log-distance of ``values`` from their median."""
    middle = _median(values)
    return sum(abs(math.log(v / middle)) * n for v, n in zip(values, weights, strict=True)) / max(
        1, sum(weights)
    )


def _even_pitch(line: OcrLine) -> bool:
    """True when the line's words share one pitch (width per character) much more evenly
    than they fit one proportional face: a fixed-pitch line, whatever its size. Needs
    three words of three characters or more whose two predictions differ."""
    words = [w for w in line.words if len(w.text) >= 3 and w.x1 > w.x0 and not w.raised]
    if len(words) < 3:
        return False
    weights = [len(w.text) for w in words]
    if (
        sum(
            abs(math.log(MONO_ADVANCE * len(w.text) / proportional_units(w.text))) * n
            for w, n in zip(words, weights, strict=True)
        )
        / sum(weights)
        < MONO_LINE_APART
    ):
        return False
    pitch = _spread([(w.x1 - w.x0) / len(w.text) for w in words], weights)
    em = _spread([(w.x1 - w.x0) / proportional_units(w.text) for w in words], weights)
    return pitch + MONO_MARGIN < em


def _slanted(line: OcrLine) -> list[bool]:
    """Per word of ``line``: italic. A short word (too few letters to measure a slant)
    between two italic words is italic too, so that an italic phrase stays one span."""
    out = [
        w.slant >= ITALIC_SLANT
        and len(w.text) >= 3
        and sum(c in _DIAGONAL for c in w.text) < 0.25 * len(w.text)
        for w in line.words
    ]
    for i in range(1, len(out) - 1):
        if not out[i] and len(line.words[i].text) < 3 and out[i - 1] and out[i + 1]:
            out[i] = True
    return out


def word_faces(page: OcrPage, sizes: dict[int, float]) -> Faces:
    """(bold, italic, mono) of every word of ``page``, by ``id`` of the word; ``sizes``
    holds each line's size in pixels by ``id`` of the line (:func:`line_sizes`)."""
    body = _body_stroke(page, sizes)
    share = _em_share(page, sizes)
    body_size = _median([sizes[id(ln)] for ln in page.lines for w in ln.words for _ in w.text])
    faces: Faces = {}
    for line in page.lines:
        size = max(sizes[id(line)], 1.0)
        whole, mono = _mono_words(line, share * size)
        slanted = _slanted(line)
        letters = sum(len(w.text) for w in line.words) or 1
        # a line mostly in italics is not code, whose faces are upright, nor is a title
        italic_line = (
            sum(len(w.text) for w, i in zip(line.words, slanted, strict=True) if i)
            >= ITALIC_LINE_SHARE * letters
        )
        whole = whole and size <= CODE_MAX_SIZE * body_size and not italic_line
        # a fixed-pitch face's even strokes are thicker than a serif body's: not bold
        heavy = [
            body > 0 and w.stroke / size >= BOLD_RATIO * body and not (w.raised or whole)
            for w in line.words
        ]
        bold_line = (
            sum(len(w.text) for w, b in zip(line.words, heavy, strict=True) if b)
            >= BOLD_LINE_SHARE * letters
        )
        for word, is_mono, italic, bold in zip(line.words, mono, slanted, heavy, strict=True):
            bold = bold or (bold_line and not word.raised)
            faces[id(word)] = (bold, italic, (whole or is_mono) and not (bold or italic))
    return faces
