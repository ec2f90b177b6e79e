"""XLSX (Excel) to the document model, with openpyxl in read-only mode.

Why this shape: each sheet becomes a heading (its name) and one table. Values are
the text the sheet shows (``xlsx_values.shown``: number formats, dates, percentages) and
formulas their cached results, as saved by the program that computed them (formulas saved
without one, as openpyxl and many generators write them, are named in a warning). Empty
margins (rows and columns around the used range) are trimmed, merged ranges become
row/column spans, hidden sheets are read with "(hidden)" after their name. Sheets are
streamed row by row and the cells holding a value across the workbook are capped
(``max_cells``, from the ``SHEET_MAX_CELLS`` setting): past it the rest is left out with a
warning, so a 100,000-row sheet costs the cap, never a memory blow-up; so are each sheet's
rows (``TABLE_MAX_ROWS``). The shared strings are decoded only for the cells read
(``xlsx_strings``), never the whole table. A declared sheet size is never trusted (it can
claim a million rows); columns are capped too.

The package is re-packed under the zip-bomb and XML-bomb guards first
(``safe_zip.verified_zip``); links to external workbooks are never opened.
"""

from __future__ import annotations

import bisect
import io
import re
import zipfile
from typing import Any

from lxml import etree

from render_pool.engine import limits
from render_pool.engine.common.safe_zip import verified_zip
from render_pool.engine.common.sheet_prov import locate_sheet
from render_pool.engine.common.slugs import Slugger, slugify
from render_pool.engine.model import (
    Block,
    Document,
    Heading,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
)
from render_pool.engine.xlsx.budget import estimate_cells, fair_shares
from render_pool.engine.xlsx.formulas import uncomputed_warning
from render_pool.engine.xlsx.strings import SharedStrings, open_workbook
from render_pool.engine.xlsx.values import shown
from render_pool.errors import CorruptDocument

DEFAULT_MAX_CELLS = 50_000  # without the service; it passes SHEET_MAX_CELLS
MAX_COLUMNS = 1024  # not a setting: SHEET_MAX_CELLS is the operator's bound on a sheet
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_PARSER_KW: dict[str, Any] = {"resolve_entities": False, "no_network": True, "huge_tree": False}


_SHEET_ROOT = re.compile(rb"<(?:\w+:)?worksheet\b[^>]*>")


def _declare_size(name: str, data: bytes) -> bytes:
    """A worksheet part with a placeholder ``<dimension>`` when it declares none: openpyxl
    otherwise parses the whole sheet for its size when it opens the workbook (seconds per
    100,000 rows, before any limit applies). The reader never uses the declared size."""
    if not name.startswith("xl/worksheets/") or b"<dimension" in data[:4096]:
        return data
    m = _SHEET_ROOT.search(data[:4096])
    if m is None:
        return data
    return data[:m.end()] + b'<dimension ref="A1"/>' + data[m.end():]


def _merges(package: zipfile.ZipFile, path: str) -> list[tuple[int, int, int, int]]:
    """Merged ranges of a sheet as (min_row, min_col, max_row, max_col), 1-based."""
    from openpyxl.utils.cell import range_boundaries

    try:
        data = package.read(path)
    except KeyError:
        return []
    if b"mergeCell" not in data:
        return []
    out: list[tuple[int, int, int, int]] = []
    for _, el in etree.iterparse(io.BytesIO(data), tag=f"{{{_MAIN}}}mergeCell", **_PARSER_KW):
        try:
            c1, r1, c2, r2 = range_boundaries(el.get("ref", ""))
        except (ValueError, TypeError):
            continue
        if None not in (c1, r1, c2, r2):
            out.append((r1, c1, r2, c2))
        el.clear()
    return out


def _cell(text: str, rowspan: int = 1, colspan: int = 1) -> TableCell:
    return TableCell([Paragraph([Text(text)])] if text else [], rowspan, colspan)


class _SheetReader:
    def __init__(self, doc: Document, package: zipfile.ZipFile, max_cells: int,
                 strings_part: str = "") -> None:
        self.doc = doc
        self.package = package
        self.budget = max_cells  # cells left in the workbook
        self.sheet_budget = max_cells  # cells this sheet may take (``xlsx.budget``)
        self.slugger = Slugger()
        self.strings = SharedStrings(package, strings_part)  # decoded as cells need them
        self.max_rows = limits.current().table_max_rows

    def grid(self, ws: Any) -> tuple[dict[tuple[int, int], str], bool]:
        """Non-empty cells of a sheet as {(row, col): text}, within the budget; whether the
        sheet was cut short. Rows are parsed as stored: missing rows and cells cost
        nothing, whatever size the sheet declares. Past ``max_rows`` stored rows the rest
        of the sheet is left out with a warning (``TABLE_MAX_ROWS``)."""
        from openpyxl.cell.read_only import ReadOnlyCell
        from openpyxl.worksheet._reader import WorkSheetParser

        cells: dict[tuple[int, int], str] = {}
        wb = ws.parent
        with ws._get_source() as src:
            parser = WorkSheetParser(src, self.strings, data_only=True, epoch=wb.epoch,
                                     date_formats=wb._date_formats,
                                     timedelta_formats=wb._timedelta_formats)
            for count, (_, row) in enumerate(parser.parse()):
                if count == self.max_rows:
                    self.doc.warn(f"Sheet {ws.title!r} has more than {self.max_rows:,} rows; "
                                  f"only its first {self.max_rows:,} were read.")
                    return cells, False
                # only cells holding a value count: a formatted but empty range (a style
                # applied to whole rows) costs its parsing, bounded by the package guards
                full = [c for c in row if c["value"] is not None and c["value"] != ""]
                if len(full) > min(self.budget, self.sheet_budget):
                    return cells, True
                self.budget -= max(len(full), 1)
                self.sheet_budget -= max(len(full), 1)
                for c in full:
                    if c["column"] > MAX_COLUMNS:
                        continue
                    cell = ReadOnlyCell(ws, **c)
                    text = shown(cell.value, cell.number_format).strip()
                    if text:
                        cells[(c["row"], c["column"])] = text
        return cells, False

    def sheet(self, ws: Any, hidden: bool = False) -> list[Block]:
        name = ws.title
        cells, cut = self.grid(ws)
        if cut:
            self.doc.warn(f"Sheet {name!r} is larger than the cell limit; only its first rows "
                          "were read.")
        warning = uncomputed_warning(self.package, getattr(ws, "_worksheet_path", ""), name)
        if warning:
            self.doc.warn(warning)
        label = f"{name} (hidden)" if hidden else name
        heading = Heading(1, [Text(label)], self.slugger.unique(slugify(name) or "sheet"))
        if not cells:
            return locate_sheet(name, heading)
        # rows and columns holding a value, in order: empty margins and empty rows or
        # columns inside the range are left out, so a stray far cell costs one cell
        rows = sorted({r for r, _ in cells})
        cols = sorted({c for _, c in cells})
        if len(rows) * len(cols) > 4 * max(self.budget, DEFAULT_MAX_CELLS):
            keep = max(1, 4 * DEFAULT_MAX_CELLS // len(cols))
            self.doc.warn(f"Sheet {name!r} is too sparse and wide; only its first {keep} rows "
                          "were read.")
            rows = rows[:keep]
        row_pos = {r: i for i, r in enumerate(rows)}
        col_pos = {c: i for i, c in enumerate(cols)}
        covered: set[tuple[int, int]] = set()
        spans: dict[tuple[int, int], tuple[int, int]] = {}
        for mr0, mc0, mr1, mc1 in _merges(self.package, getattr(ws, "_worksheet_path", "")):
            if (mr0, mc0) not in cells or (mr0, mc0) in covered or mr0 not in row_pos:
                continue
            span_rows = rows[row_pos[mr0]:bisect.bisect_right(rows, mr1)]
            span_cols = cols[col_pos[mc0]:bisect.bisect_right(cols, mc1)]
            spans[(mr0, mc0)] = (len(span_rows), len(span_cols))
            covered.update((r, c) for r in span_rows for c in span_cols if (r, c) != (mr0, mc0))
        table_rows: list[TableRow] = []
        for r in rows:
            row: list[TableCell] = []
            for c in cols:
                if (r, c) in covered:
                    continue
                rs, cs = spans.get((r, c), (1, 1))
                row.append(_cell(cells.get((r, c), ""), rs, cs))
            table_rows.append(TableRow(row))
        return locate_sheet(name, heading, Table(table_rows, header_rows=1), rows, cols)


def read_xlsx(data: bytes, max_cells: int = DEFAULT_MAX_CELLS) -> Document:
    """An XLSX workbook as a document: a heading and a table per sheet (a hidden one
    marked so in its heading)."""
    safe = verified_zip(data, "The XLSX package", transform=_declare_size)
    try:
        wb, strings_part = open_workbook(io.BytesIO(safe))
    except (KeyError, ValueError, TypeError, zipfile.BadZipFile, OSError) as exc:
        raise CorruptDocument(f"The XLSX workbook cannot be read: {exc}") from None
    except Exception as exc:  # XML damage inside the parts
        raise CorruptDocument(f"The XLSX workbook is damaged: {type(exc).__name__}") from None
    doc = Document()
    title = wb.properties.title if wb.properties is not None else None
    if title:
        doc.meta["title"] = title
    reader = _SheetReader(doc, zipfile.ZipFile(io.BytesIO(safe)), max(1, max_cells),
                          strings_part)
    try:
        sheets = list(wb.worksheets)
        shares = fair_shares([estimate_cells(reader.package, getattr(ws, "_worksheet_path", ""))
                              for ws in sheets], reader.budget)
        unused = 0  # of the shares of the sheets read so far
        for ws, share in zip(sheets, shares, strict=True):
            if reader.budget <= 0:
                doc.warn(f"Sheet {ws.title!r} was left out: the cell limit was reached.")
                continue
            reader.sheet_budget = share + unused
            doc.blocks.extend(reader.sheet(ws, getattr(ws, "sheet_state", "visible")
                                           != "visible"))
            unused = max(reader.sheet_budget, 0)
        for cs in getattr(wb, "chartsheets", []):
            doc.warn(f"Chart sheet {cs.title!r} was left out.")
    except (KeyError, ValueError, TypeError, zipfile.BadZipFile) as exc:
        raise CorruptDocument(f"The XLSX workbook cannot be read: {exc}") from None
    finally:
        wb.close()
    return doc
