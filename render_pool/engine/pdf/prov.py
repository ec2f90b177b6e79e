"""Page boxes (``model.PageBox``) of what the PDF reader read: lines, placed blocks, glyphs.

Why a module: the layout path (blocks), the structure-tree path (tagged) and OCR (whose words
become the same lines) all give a block its location the same way: the box around what it
was read from, one box per page. Boxes are made in the frame the page was read in (turned
upright, crop offset kept) and mapped at the end (:class:`PageFrame`) to the page as a viewer
shows it: its crop box, after ``/Rotate``, origin at the top-left, in points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from render_pool.engine.model import Block, Location, PageBox, walk
from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.layout import Block as FlowBlock
from render_pool.engine.pdf.layout import Line
from render_pool.engine.provenance import merged


def _box(page: int, x0: float, top: float, x1: float, bottom: float) -> list[Location]:
    if x1 <= x0 or bottom <= top:
        return []  # an item placed without a box (a tagged block whose span is unknown)
    return [PageBox(page + 1, (x0, top, x1, bottom))]


def items_prov(items: Iterable[Line | FlowBlock]) -> list[Location]:
    """The boxes (one per page) around ``items``, lines or placed blocks of the flow."""
    return merged(*(_box(it.page, it.x0, it.top, it.x1, it.bottom) for it in items))


def chars_prov(chars: Iterable[Char | None], page: int) -> list[Location]:
    """The box around the visible glyphs of ``chars`` on page ``page`` (from 0)."""
    vis = [c for c in chars if c is not None and c.text.strip()]
    if not vis:
        return []
    return _box(page, min(c.x0 for c in vis), min(c.top for c in vis),
                max(c.x1 for c in vis), max(c.bottom for c in vis))


Box = tuple[float, float, float, float]


def turn_box(box: Box, size: tuple[float, float], degrees: int) -> tuple[Box, tuple[float, float]]:
    """``box`` (x0, top, x1, bottom) on a frame of ``size`` turned clockwise by ``degrees``
    (0, 90, 180, 270), and the turned frame's size."""
    x0, top, x1, bottom = box
    w, h = size
    turn = degrees % 360
    if turn == 90:  # (x, y) -> (h - y, x)
        return (h - bottom, x0, h - top, x1), (h, w)
    if turn == 180:
        return (w - x1, h - bottom, w - x0, h - top), (w, h)
    if turn == 270:  # (x, y) -> (y, w - x)
        return (top, w - x1, bottom, w - x0), (h, w)
    return box, size


@dataclass(frozen=True)
class PageFrame:
    """How the frame a page was read in maps to the page as shown (its crop box, after its
    ``/Rotate``, top-left origin): the reader may have turned a sideways page (``unturn``
    clockwise degrees take it back), its coordinates keep the crop box's offset
    (``dx``/``dy``), and the page may be shown turned (``rotate`` clockwise degrees)."""

    width: float  # the reading frame
    height: float
    unturn: int = 0
    dx: float = 0.0
    dy: float = 0.0
    rotate: int = 0

    def shown_box(self, box: Box) -> Box:
        box, size = turn_box(box, (self.width, self.height), self.unturn)
        x0, top, x1, bottom = box
        box, _ = turn_box((x0 + self.dx, top + self.dy, x1 + self.dx, bottom + self.dy), size,
                          self.rotate)
        return box

    def shown_size(self) -> tuple[float, float]:
        _, size = turn_box((0, 0, 0, 0), (self.width, self.height), self.unturn)
        return turn_box((0, 0, 0, 0), size, self.rotate)[1]


def to_shown_frames(blocks: Iterable[Block], frames: dict[int, PageFrame]) -> None:
    """Every page box in ``blocks`` (at any depth) mapped from its page's reading frame to
    the page as shown (pages from 1 in ``frames``)."""
    for node in walk(blocks):
        prov = getattr(node, "prov", None)
        if not prov:
            continue
        out: list[Location] = []
        for loc in prov:
            frame = frames.get(loc.page) if isinstance(loc, PageBox) else None
            if isinstance(loc, PageBox) and frame is not None:
                loc = PageBox(loc.page, frame.shown_box(loc.bbox))
            out.append(loc)
        node.prov = out  # type: ignore[union-attr]  # the nodes with a prov (getattr above)
