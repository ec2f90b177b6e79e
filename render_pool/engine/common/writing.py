"""Rules several writers share; none of them is a writer, so no writer imports another.

- :class:`NoteNumbering`: notes numbered in order of first reference, and the "render notes
  until none is new" loop (a note may reference further notes).
- :func:`is_tight_list`: whether a list is tight (no blank lines or ``<p>`` in its items).
- :func:`placeholder_label`: the visible text of content a reader could not convert.
- :func:`place_cells` / :func:`table_grid`: a table's cells placed on a grid, spans resolved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from render_pool.engine.model import Document, ListBlock, ListItem, Paragraph, Table, TableCell

T = TypeVar("T")


class NoteNumbering:
    """Numbers notes 1, 2, ... in the order they are first referenced."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.numbers: dict[str, int] = {}
        self.ref_counts: dict[str, int] = {}

    def number(self, note_id: str) -> int:
        """Number of ``note_id``, assigning the next one on first use."""
        if note_id not in self.numbers:
            self.numbers[note_id] = len(self.numbers) + 1
        return self.numbers[note_id]

    def next_ref(self, note_id: str) -> int:
        """Count one more reference to ``note_id``; returns 1 for the first reference."""
        self.ref_counts[note_id] = self.ref_counts.get(note_id, 0) + 1
        return self.ref_counts[note_id]

    def ordered(self) -> list[tuple[int, str]]:
        """All notes to print, in number order, including notes never referenced (appended)."""
        for note_id in self.doc.notes:
            self.number(note_id)
        return sorted((n, nid) for nid, n in self.numbers.items())

    def render_all(self, render: Callable[[int, str], T]) -> list[T]:
        """``render(number, note_id)`` of every note, in number order. Rendering a note may
        number further notes (a note that references another), so this renders until no
        note is new."""
        out: list[tuple[int, T]] = []
        done: set[str] = set()
        while pending := [(n, nid) for n, nid in self.ordered() if nid not in done]:
            for n, nid in pending:
                done.add(nid)
                out.append((n, render(n, nid)))
        out.sort(key=lambda item: item[0])
        return [item for _, item in out]


def is_tight_list(items: list[ListItem]) -> bool:
    """A list is tight when every item is at most one paragraph followed by nested lists."""
    for item in items:
        blocks = item.blocks
        rest = blocks[1:] if blocks and isinstance(blocks[0], Paragraph) else blocks
        if any(not isinstance(b, ListBlock) for b in rest):
            return False
    return True


def placeholder_label(text: str) -> str:
    """Visible text for content a reader could not convert: ``[unsupported: ...]``."""
    text = text.strip()
    if text.startswith("["):
        return text
    if text.lower().startswith("unsupported"):
        return f"[{text}]"
    return f"[unsupported: {text}]" if text else "[unsupported content]"


@dataclass(frozen=True)
class PlacedCell:
    """A table cell at its grid position, its spans clipped to the table."""

    row: int
    col: int
    rowspan: int
    colspan: int
    cell: TableCell


def place_cells(table: Table, max_colspan: int | None = None) -> list[PlacedCell]:
    """Every cell at the first free grid position of its row, honouring earlier spans;
    row spans reaching past the last row are clipped (and column spans to ``max_colspan``)."""
    n_rows = len(table.rows)
    occupied: set[tuple[int, int]] = set()
    placed: list[PlacedCell] = []
    for r, row in enumerate(table.rows):
        c = 0
        for cell in row.cells:
            while (r, c) in occupied:
                c += 1
            rs = max(1, min(cell.rowspan, n_rows - r))
            cs = max(1, cell.colspan if max_colspan is None else min(cell.colspan, max_colspan))
            occupied.update((r + dr, c + dc) for dr in range(rs) for dc in range(cs))
            placed.append(PlacedCell(r, c, rs, cs, cell))
            c += cs
    return placed


def table_grid(table: Table) -> list[list[tuple[int, int, TableCell] | None]]:
    """Lay ``table`` out on a rectangular grid, resolving row and column spans.

    Each position holds ``(origin_row, origin_col, cell)`` for the cell covering it, or
    ``None`` where a ragged row leaves a hole.
    """
    rows = table.rows
    if all(cell.rowspan <= 1 and cell.colspan <= 1 for row in rows for cell in row.cells):
        # no spans (most tables): each cell stands at its index in its row, as
        # place_cells would put it, without the set of taken positions it keeps
        width = max((len(row.cells) for row in rows), default=0)
        return [[(r, c, cell) for c, cell in enumerate(row.cells)]
                + [None] * (width - len(row.cells)) for r, row in enumerate(rows)]
    taken: dict[tuple[int, int], tuple[int, int, TableCell]] = {}
    for p in place_cells(table):
        for dr in range(p.rowspan):
            for dc in range(p.colspan):
                taken.setdefault((p.row + dr, p.col + dc), (p.row, p.col, p.cell))
    width = max((k[1] + 1 for k in taken), default=0)
    return [[taken.get((r, c)) for c in range(width)] for r in range(len(table.rows))]
