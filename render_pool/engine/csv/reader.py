"""CSV (and other delimited text) to the document model: one table.

Why: a CSV is a sheet without formatting. Its encoding and dialect (delimiter, quoting)
are sniffed from the bytes, the first row is the header, and the cells read are capped
(``max_cells``, the same ``SHEET_MAX_CELLS`` setting as XLSX) with a warning, so a huge
file costs the cap.
"""

from __future__ import annotations

import csv
import io

from render_pool.engine.common.text_decode import decode_text
from render_pool.engine.model import Document, Paragraph, Table, TableCell, TableRow, Text
from render_pool.engine.sniff import sniff_dialect

DEFAULT_MAX_CELLS = 50_000  # without the service; it passes SHEET_MAX_CELLS
csv.field_size_limit(10 * 1024 * 1024)


def read_csv(data: bytes, max_cells: int = DEFAULT_MAX_CELLS) -> Document:
    """A CSV file as a document holding one table (header row first)."""
    text, warning = decode_text(data)
    doc = Document()
    if warning:
        doc.warn(warning)
    dialect = sniff_dialect(text[: 64 * 1024].splitlines()[:50]) or csv.excel
    rows: list[list[str]] = []
    budget = max(1, max_cells)
    for record in csv.reader(io.StringIO(text, newline=""), dialect):
        if not any(cell.strip() for cell in record):
            continue
        budget -= max(len(record), 1)
        if budget < 0:
            doc.warn("The CSV file is larger than the cell limit; only its first "
                     f"{len(rows)} rows were read.")
            break
        rows.append([cell.strip() for cell in record])
    if not rows:
        return doc
    width = max(len(r) for r in rows)
    table_rows = [TableRow([TableCell([Paragraph([Text(c)])] if c else [], header=i == 0)
                            for c in r + [""] * (width - len(r))])
                  for i, r in enumerate(rows)]
    doc.blocks.append(Table(table_rows, header_rows=1))
    return doc
