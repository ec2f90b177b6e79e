"""What a word's image says beyond its letters: stroke weight, slant and raised note marks.

Tesseract 5 (its LSTM engine) reports no font attributes, so they are measured here on the
page image the words were read from, a few numpy operations per word:

- **stroke**: the mean length of the horizontal ink runs across the word's letters (stems
  and bowls), in pixels. Bold type has thicker stems; the PDF reader compares each word with
  the page's body text, relative to the line size, so it does not depend on resolution.
- **slant**: the shear (horizontal pixels per pixel of height) that makes the word's
  column profile sharpest: upright stems line up at 0, italic ones at about 0.2.
- **raised marks**: a small glyph group at a word's end whose ink stops well above the
  baseline (a footnote reference, ``checked¹``), which Tesseract reads as a quote, ``!`` or
  drops. It is cut out of the word and read again on its own, digits only; so is one
  starting a line's first word (a footnote's number at the page foot, ``¹This``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

DARK = 128  # grey level below which a pixel is ink (as in clean)
_SHEARS = (-0.1, 0.0, 0.1, 0.2, 0.3)
# a raised mark's height and rise over the baseline as shares of the word's ascender height
MARK_MAX = 0.9
MARK_MIN = 0.4  # a closing quote is flatter
MARK_RISE = 0.35
LEAD_TOP = 0.8  # a mark starting a word reaches about the capitals' height


@dataclass(slots=True)
class RaisedMark:
    """A raised glyph group at the right end of a word: its box in pixels."""

    x0: int
    top: int
    x1: int
    bottom: int


def ink_of(grey: np.ndarray) -> np.ndarray:
    """The ink of a word's crop (grey levels): pixels darker than halfway between its
    darkest pixel and paper, so that grey type (a heading set in grey) keeps its stems."""
    if grey.size == 0:
        return np.zeros(grey.shape, dtype=bool)
    limit = (int(grey.min()) + 255) // 2
    return grey < min(max(limit, DARK), 200)


def stroke_width(ink: np.ndarray, size: float) -> float:
    """Mean length of the horizontal ink runs in ``ink`` (a word's boolean crop), runs
    longer than a third of ``size`` (horizontal bars, underlines) left out; 0 when none."""
    if ink.size == 0:
        return 0.0
    edges = np.zeros((ink.shape[0], ink.shape[1] + 2), dtype=np.int8)
    edges[:, 1:-1] = ink
    steps = np.diff(edges, axis=1)
    starts = np.nonzero(steps == 1)[1]
    ends = np.nonzero(steps == -1)[1]
    runs = ends - starts
    runs = runs[runs <= max(2.0, size / 3)]
    return float(runs.mean()) if runs.size else 0.0


def slant(ink: np.ndarray, baseline: float) -> float:
    """The shear among ``_SHEARS`` whose column profile of ``ink`` is sharpest (the variance
    of its column sums): about 0 for upright type, 0.2 for italic.

    The profiles of all the shears are counted in one pass (side by side in one histogram),
    a few hundred words a page each paying one numpy call instead of five."""
    rows, cols = np.nonzero(ink)
    if rows.size < 20 or ink.shape[0] < 8:
        return 0.0
    shears = np.asarray(_SHEARS)
    moved = np.rint(cols[None, :] - shears[:, None] * (baseline - rows)[None, :]).astype(
        np.int64)
    moved -= np.minimum(0, moved.min(axis=1, keepdims=True))
    lengths = np.maximum(ink.shape[1], moved.max(axis=1) + 1)  # each profile's columns
    span = int(lengths.max())
    offsets = np.arange(len(_SHEARS))[:, None] * span
    counts = np.bincount((moved + offsets).ravel(), minlength=span * len(_SHEARS))
    squares = (counts.reshape(len(_SHEARS), span) ** 2).sum(axis=1)
    best, best_var = 0.0, -1.0
    for shear, columns, square in zip(_SHEARS, lengths.tolist(), squares.tolist(), strict=True):
        mean = rows.size / columns
        var = square / columns - mean * mean  # the profile's variance, zeros included
        if var > best_var * 1.02 or (shear == 0.0 and var >= best_var * 0.98):
            best, best_var = shear, var
    return best


def _groups(cols: np.ndarray) -> list[tuple[int, int]]:
    """Runs of columns holding ink: (first, last) column, left to right."""
    used = np.nonzero(cols)[0]
    if used.size == 0:
        return []
    breaks = np.nonzero(np.diff(used) > 1)[0]
    firsts = used[np.r_[0, breaks + 1]].tolist()
    lasts = used[np.r_[breaks, used.size - 1]].tolist()
    return list(zip(firsts, lasts, strict=True))


def raised_mark(ink: np.ndarray, baseline: float, size: float) -> RaisedMark | None:
    """The raised glyph group ending the word ``ink`` (its crop; ``baseline`` in crop rows),
    skipping one full stop or comma after it, or None."""
    groups = _groups(np.asarray(ink.any(axis=0)))
    if len(groups) < 2:
        return None

    above = max(1, int(baseline - 0.04 * size))  # an underline (a linked mark) is below

    def extent(a: int, b: int) -> tuple[int, int]:
        rows = np.nonzero(ink[:above, a : b + 1].any(axis=1))[0]
        return (int(rows[0]), int(rows[-1])) if rows.size else (above, above)

    end = len(groups) - 1
    top, bottom = extent(*groups[end])
    if bottom >= baseline - 0.1 * size and bottom - top <= 0.3 * size:
        end -= 1  # a full stop or comma on the baseline after the mark
        if end < 1:
            return None
    first = end
    top, bottom = extent(*groups[end])
    letters = [extent(*g) for g in groups[:end]]
    rising = baseline - min(t for t, _ in letters)  # the word's ascender (or cap) height
    if rising < 0.3 * size or not (
        baseline - bottom >= MARK_RISE * rising
        and MARK_MIN * rising <= bottom - top + 1 <= MARK_MAX * rising
    ):
        return None
    while first - 1 >= 1 and end - first < 2:  # a number of up to three digits
        t, b = letters[first - 1]
        if (
            baseline - b < MARK_RISE * rising
            or groups[first][0] - groups[first - 1][1] > 0.3 * size
        ):
            break
        first -= 1
        top, bottom = min(top, t), max(bottom, b)
    if groups[first][0] - groups[first - 1][1] > 0.6 * size:
        return None  # standing apart: not attached to the word
    return RaisedMark(groups[first][0], top, groups[end][1], bottom)


def leading_mark(ink: np.ndarray, baseline: float, rising: float) -> RaisedMark | None:
    """The raised glyph group (up to three digits) starting the word ``ink`` (its crop;
    ``baseline`` in crop rows), as a footnote's number starts its note at the page foot
    ("¹This", which Tesseract reads as a quote or an asterisk), or None. ``rising`` is the
    ascender height of the words after it on the line; the mark may be the whole word."""
    groups = _groups(np.asarray(ink.any(axis=0)))
    if not groups or rising < 4:
        return None
    above = max(1, int(baseline - 0.04 * rising))
    box: RaisedMark | None = None
    for n, (a, b) in enumerate(groups[:4]):
        rows = np.nonzero(ink[:, a : b + 1].any(axis=1))[0]
        if not rows.size:
            return None
        top, bottom = int(rows[0]), int(rows[-1])
        raised = (bottom < above and baseline - bottom >= MARK_RISE * rising
                  and baseline - top >= LEAD_TOP * rising  # a bullet is lower
                  and MARK_MIN * rising <= bottom - top + 1 <= MARK_MAX * rising)
        if not raised or n == 3 or (box is not None and a - box.x1 > 0.3 * rising):
            break
        box = (RaisedMark(a, top, b, bottom) if box is None
               else RaisedMark(box.x0, min(box.top, top), b, max(box.bottom, bottom)))
    return box


def read_mark(
    pixels: np.ndarray, mark: RaisedMark, x: int, y: int, digits: Callable[[np.ndarray], str]
) -> str:
    """The digits of ``mark`` (its box relative to the crop at ``x``, ``y`` of the page
    ``pixels``), read by ``digits`` on a padded cut-out; "" when it reads no digits."""
    top, left = max(0, y + mark.top - 1), max(0, x + mark.x0)
    cut = pixels[top : y + mark.bottom + 2, left : x + mark.x1 + 1]  # the reader pads it
    text = digits(cut)
    return text if text.isdigit() and len(text) <= 3 else ""
