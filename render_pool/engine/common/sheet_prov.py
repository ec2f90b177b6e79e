"""Provenance of a sheet read into a heading and a table: ``SheetRange`` locations.

Why a module of its own: the XLSX reader (and through it ODS and XLS) keeps only the rows and
columns that hold a value, so a table cell's position is not its sheet address; this module
maps them back (``A1`` names) from the sheet rows and columns the reader kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from render_pool.engine.model import Block, Heading, SheetRange, Table


def column_name(col: int) -> str:
    """``1`` -> ``A``, ``27`` -> ``AA`` (columns from 1)."""
    name = ""
    while col > 0:
        col, rest = divmod(col - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def cell_range(r0: int, c0: int, r1: int, c1: int) -> str:
    """``A1`` for one cell, ``A1:D20`` for more (rows and columns from 1)."""
    first = f"{column_name(c0)}{r0}"
    return first if (r0, c0) == (r1, c1) else f"{first}:{column_name(c1)}{r1}"


def locate_sheet(name: str, heading: Heading, table: Table | None = None,
                 rows: Sequence[int] = (), cols: Sequence[int] = ()) -> list[Block]:
    """``[heading, table]`` (``[heading]`` for an empty sheet) with their locations: the
    sheet and the range its values span (``""`` when it has none); each cell its address.
    ``rows``/``cols`` are the sheet rows and columns (from 1) of the table's rows and columns."""
    if table is None or not rows or not cols:
        heading.prov = [SheetRange(name, "")]
        return [heading]
    whole = SheetRange(name, cell_range(rows[0], cols[0], rows[-1], cols[-1]))
    heading.prov = [whole]
    table.prov = [whole]
    taken: set[tuple[int, int]] = set()  # grid slots held by a cell spanning into them
    for i, row in enumerate(table.rows):
        j = 0
        for cell in row.cells:
            while (i, j) in taken:
                j += 1
            if j >= len(cols) or i >= len(rows):
                break
            i1 = min(i + cell.rowspan, len(rows)) - 1
            j1 = min(j + cell.colspan, len(cols)) - 1
            taken.update((a, b) for a in range(i, i1 + 1) for b in range(j, j1 + 1))
            cell.prov = [SheetRange(name, cell_range(rows[i], cols[j], rows[i1], cols[j1]))]
            j = j1 + 1
    return [heading, table]
