"""Clean-up of a page image before recognition: specks, shading and ruling lines.

Specks (scanner dust, noise) read as stray punctuation, and Tesseract skips text boxed in by
ruling lines (it takes a ruled table for a picture). So a 3x3 median filter removes specks
(computed with numpy min/max passes: the same pixels as Pillow's ``MedianFilter(3)`` in
about a fifth of its time),
light greys become paper, and long thin dark runs (table borders, underlines, separators) are found,
returned as segments (they tell the layout reader where a table's grid is, as a text
layer's vector rules do) and painted white before recognition.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

DARK = 128  # grey level below which a pixel is ink
MIN_ASPECT = 15  # a rule is at least this many times longer than thick (a bold stem is not)
LIGHT = 170  # grey level above which a pixel is taken for paper (specks, light shading)
MAX_THICKNESS = 14  # pixels; thicker dark runs are shapes, not rules (at about 300 dpi)

Segment = tuple[bool, int, int, int]  # (horizontal, position, start, end) in pixels


def _median3(pixels: np.ndarray) -> np.ndarray:
    """The 3x3 median of a grey image (edges repeated, as Pillow's ``MedianFilter(3)``).

    Each column of three is sorted first; the median of the nine is then the median of the
    largest of the three lows, the middle of the three middles and the smallest of the three
    highs (an exact identity), 18 elementwise min/max passes in all."""
    padded = np.pad(pixels, 1, mode="edge")
    above, here, below = padded[:-2], padded[1:-1], padded[2:]
    low, high = np.minimum(above, here), np.maximum(above, here)
    mid, high = np.minimum(high, below), np.maximum(high, below)
    low, mid = np.minimum(low, mid), np.maximum(low, mid)
    lows = np.maximum(np.maximum(low[:, :-2], low[:, 1:-1]), low[:, 2:])
    highs = np.minimum(np.minimum(high[:, :-2], high[:, 1:-1]), high[:, 2:])
    return _middle(lows, _middle(mid[:, :-2], mid[:, 1:-1], mid[:, 2:]), highs)


def _middle(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The elementwise median of three arrays."""
    middle: np.ndarray = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    return middle


def _runs(mask: np.ndarray, length: int) -> np.ndarray:
    """Pixels of ``mask`` (2-D, rows) lying in a horizontal run of at least ``length``.

    Only rows that hold a fully inked block of half that length at a multiple of it (every
    run that long holds one) are looked at, a handful on a page of text; in those, runs are found
    from where the row switches between ink and paper, and the long ones painted back."""
    h, w = mask.shape
    out = np.zeros_like(mask)
    if w < length:
        return out
    block = (length + 1) // 2  # a run of 2 * block - 1 pixels covers one aligned block
    count = w // block
    blocks = np.all(mask[:, :count * block].reshape(h, count, block), axis=2)
    rows = np.nonzero(np.any(blocks, axis=1))[0]
    if rows.size:
        out[rows] = _row_runs(mask[rows], length)
    return out


def _row_runs(mask: np.ndarray, length: int) -> np.ndarray:
    """:func:`_runs` on every row of ``mask``."""
    h, w = mask.shape
    out = np.zeros_like(mask)
    edges = np.zeros((h, w + 2), dtype=np.int8)
    edges[:, 1:-1] = mask
    steps = np.diff(edges, axis=1)  # +1 where a run starts, -1 just past where it ends
    rows, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)  # row-major: the n-th end closes the n-th start
    for r, a, b in zip(*(x[ends - starts >= length].tolist() for x in (rows, starts, ends)),
                       strict=True):
        out[r, a:b] = True
    return out


def _segments(line_mask: np.ndarray, horizontal: bool, length: int) -> list[Segment]:
    """Ruling segments from a mask of line pixels (rows of a horizontal mask): runs that
    touch in adjacent rows form one component, kept when it is thin (a filled shape or a
    picture is thick) and long."""
    out: list[Segment] = []
    live: list[list[int]] = []  # [first row, last row, start, end]

    def finish(comp: list[int]) -> None:
        thick = comp[1] - comp[0] + 1
        if thick <= MAX_THICKNESS and comp[3] - comp[2] >= max(length, MIN_ASPECT * thick):
            out.append((horizontal, (comp[0] + comp[1]) // 2, comp[2], comp[3]))

    for r in np.nonzero(line_mask.any(axis=1))[0].tolist():
        cols = np.nonzero(line_mask[r])[0]
        breaks = np.nonzero(np.diff(cols) > 1)[0]
        for a, b in zip(cols[np.r_[0, breaks + 1]].tolist(),
                        cols[np.r_[breaks, cols.size - 1]].tolist(), strict=True):
            comp = next((c for c in live if c[1] >= r - 1 and c[2] <= b and a <= c[3]), None)
            if comp is None:
                live.append([r, r, a, b])
            else:
                comp[1], comp[2], comp[3] = r, min(comp[2], a), max(comp[3], b)
        for comp in [c for c in live if c[1] < r - 1]:
            finish(comp)
            live.remove(comp)
    for comp in live:
        finish(comp)
    return out


def _connected(rules: list[Segment], length: int, reach: int = 6) -> list[Segment]:
    """The rules that are long (separators, underlines) or meet a crossing rule (a grid):
    a letter's stroke is neither, so it is not taken for a rule and erased."""
    def meets(r: Segment, o: Segment) -> bool:
        return (r[0] != o[0] and o[2] - reach <= r[1] <= o[3] + reach
                and r[2] - reach <= o[1] <= r[3] + reach)

    return [r for r in rules if r[3] - r[2] >= 3 * length or any(meets(r, o) for o in rules)]


def skew_angle(image: Image.Image, limit: float = 4.0) -> float:
    """Degrees to turn ``image`` counter-clockwise so its text lines run level.

    Projection profile: on a reduced copy, the angle whose row sums of ink vary most (lines
    of text and white gaps between them line up), searched coarse then fine."""
    small = image.reduce(max(1, min(image.size) // 600))
    ink = Image.eval(small, lambda v: 255 if v < DARK else 0)

    def sharpness(angle: float) -> float:
        rows = np.asarray(ink.rotate(angle, resample=Image.Resampling.NEAREST)).sum(axis=1)
        return float(np.var(rows.astype(np.float64)))

    best = max((a / 2 for a in range(int(-limit * 2), int(limit * 2) + 1)), key=sharpness)
    best = max((best + a / 10 for a in range(-5, 6)), key=sharpness)
    return best if abs(best) >= 0.1 else 0.0


def sideways(image: Image.Image) -> bool:
    """True when the text lines of ``image`` seem to run up or down the page (turned 90 or
    270 degrees), so orientation detection should run before reading, not after a wasted read.

    Between its first and last line of ink an upright page of text has empty rows (the gaps
    between lines) and hardly an empty column; a sideways page the other way round. On a
    copy about 600 pixels across, where a row or column with a speck or two counts as
    empty. A page that says neither (a picture, strong skew) is read upright first."""
    small = image.reduce(max(1, round(min(image.size) / 600)))
    ink = np.asarray(small) < DARK

    def empty_share(counts: np.ndarray) -> float:
        line = counts > max(1, counts.size // 200)  # a speck or two is no ink
        used = np.nonzero(line)[0]
        if used.size < 2:
            return 0.0
        return float((~line[used[0]:used[-1] + 1]).mean())

    rows, cols = empty_share(ink.sum(axis=1)), empty_share(ink.sum(axis=0))
    return cols >= 0.12 and cols >= 3 * rows


def line_height(image: Image.Image, strips: int = 8) -> float:
    """The typical height of the text lines of ``image`` in pixels (median over vertical
    strips of the runs of rows holding ink; 0 when there is no ink): about 0.7 of an em.

    Cheap (a copy about 600 pixels across), to choose the resolution the page is
    recognised at before Tesseract has measured anything; strips keep the lines of side by
    side columns apart even when they do not line up."""
    step = max(1, round(min(image.size) / 600))
    ink = np.asarray(image.reduce(step)) < DARK
    width = ink.shape[1] // strips
    heights: list[int] = []
    for n in range(strips if width else 0):
        rows = ink[:, n * width:(n + 1) * width].any(axis=1).astype(np.int8)
        steps = np.diff(np.concatenate(([0], rows, [0])))
        runs = np.nonzero(steps == -1)[0] - np.nonzero(steps == 1)[0]
        heights.extend(runs[runs >= 2].tolist())  # a run of one row is a speck or a rule
    return float(np.median(heights)) * step if heights else 0.0


def clean_page(image: Image.Image) -> tuple[Image.Image, list[Segment]]:
    """The image without specks and ruling lines, and the rules found (pixels).

    Rules are looked for before the median filter, which would wipe out hairlines."""
    ink = np.asarray(image) < DARK
    pixels = _median3(np.asarray(image))
    pixels[pixels > LIGHT] = 255  # faint specks, shading and cell fills: paper
    length = max(60, max(pixels.shape) // 30)  # about 0.35 in on a page: above a letter stroke
    horiz = _runs(ink, length)
    vert = _runs(ink.T, length).T
    rules = _connected(_segments(horiz, True, length) + _segments(vert.T, False, length),
                       length)
    if not rules:
        return Image.fromarray(pixels), []
    erase = np.zeros_like(ink)
    for horizontal, pos, a, b in rules:
        if horizontal:
            erase[max(0, pos - MAX_THICKNESS // 2 - 1):pos + MAX_THICKNESS // 2 + 2, a:b + 1] = True
        else:
            erase[a:b + 1, max(0, pos - MAX_THICKNESS // 2 - 1):pos + MAX_THICKNESS // 2 + 2] = True
    cleaned = pixels.copy()
    cleaned[erase] = 255  # the whole band: a rule's grey anti-aliased edges read as '|'
    return Image.fromarray(cleaned), rules


def bullet_left_of(pixels: np.ndarray, x0: int, baseline: float, size: float) -> str:
    """"•" or "◦" when a lone small blob sits just left of ``x0`` on a text line (a list
    bullet the engine skipped: it often drops or misreads them), else ""."""
    top, bottom = int(baseline - 0.75 * size), int(baseline + 0.05 * size)
    left = max(0, int(x0 - 1.6 * size))
    if top < 0 or bottom > pixels.shape[0] or x0 - left < 4:
        return ""
    ink = pixels[top:bottom, left:max(left, x0 - 2)] < DARK
    if not ink.any():
        return ""
    rows, cols = np.nonzero(ink)
    h, w = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
    if not (0.12 * size <= h <= 0.45 * size and 0.12 * size <= w <= 0.45 * size):
        return ""
    if rows.max() + top < baseline - 0.6 * size:  # a raised mark (quote, accent): not a bullet
        return ""
    fill = ink.sum() / (h * w)
    if fill < 0.3:  # scattered specks, not one mark
        return ""
    return "\u2022" if fill >= 0.6 else "\u25e6"
