"""The order in which the shapes of a slide are read: rows of shapes top to bottom, and
within a row, columns left to right.

Why not simply top to bottom: a slide often sets two columns side by side (text beside a
table or picture, pandoc's "content with caption" layout, comparison slides), and their
boxes start at different heights; sorted by their tops, a picture or table placed a little
higher on the right would be read before the text on the left. So shapes whose vertical
extents overlap form one row, a row's shapes whose horizontal extents overlap form one
column, and a column is read top to bottom. Shapes set in rows (side-by-side headers, then
side-by-side bodies) keep the order they had.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_SLACK = 50800  # EMU (4 pt): boxes that overlap by less only touch


@dataclass
class _Box:
    shape: Any
    top: int
    left: int
    bottom: int
    right: int


def _box(shape: Any) -> _Box:
    top = shape.top or 0
    left = shape.left or 0
    return _Box(shape, top, left, top + (shape.height or 0), left + (shape.width or 0))


def _groups(boxes: list[_Box], start: str, end: str) -> list[list[_Box]]:
    """``boxes`` (sorted by ``start``) in runs whose extents along one axis overlap."""
    groups: list[list[_Box]] = []
    reach = 0
    for box in boxes:
        if groups and getattr(box, start) < reach - _SLACK:
            groups[-1].append(box)
            reach = max(reach, getattr(box, end))
        else:
            groups.append([box])
            reach = getattr(box, end)
    return groups


def reading_order(shapes: list[Any]) -> list[Any]:
    """``shapes`` (python-pptx shapes) in reading order: rows, then columns, then down."""
    boxes = sorted((_box(s) for s in shapes), key=lambda b: (b.top, b.left))
    ordered: list[Any] = []
    for row in _groups(boxes, "top", "bottom"):
        for column in _groups(sorted(row, key=lambda b: (b.left, b.top)), "left", "right"):
            ordered.extend(b.shape for b in sorted(column, key=lambda b: (b.top, b.left)))
    return ordered
