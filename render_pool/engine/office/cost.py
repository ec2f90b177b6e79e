"""What a LibreOffice conversion will cost, estimated from the input before LibreOffice runs.

Why: LibreOffice's table layout grows faster than the tables. Measured here (2 cores), an
RTF of one table converted to DOCX in 2 s with 6,000 cells, 15 s with 15,000 and 38 s with
30,000; a 6.7 MB RTF with a 100,000-row table held a worker until the time limit (60 s,
then 50401), and a 1 KB ODS whose one row with a value is repeated a million times took
33 s. Calc is about thirty times cheaper per cell than Writer. So the cells LibreOffice
would lay out are counted first, in one pass over the bytes, and a file past the bound
(``limits.office_max_text_cells`` for ODT, DOC and RTF; ``office_max_sheet_cells`` for
ODS and XLS) is refused at once with 41301, the count and the bound in the message,
instead of a minute later with 50401.

How each kind is counted (an estimate: it errs towards more cells, never fewer):

- RTF: the ``\\cell`` and ``\\nestcell`` control words, or the ``\\cellx`` cell
  definitions when there are more of those (a row can be defined without its cells being
  written); escaping cannot hide one from the count.
- ODT, ODS (``content.xml``, read within the zip-bomb caps): every table cell element
  times its ``number-columns-repeated`` times its rows' ``number-rows-repeated``. In a
  spreadsheet only cells holding something count (Calc keeps runs of empty cells as one
  range; every sheet LibreOffice saves ends in a million repeated empty rows).
- DOC: the cell and row marks (character 7) in the ``WordDocument`` stream.
- XLS: the cell records (numbers, strings, formulas, booleans; each value of a MULRK) of
  the ``Workbook`` stream.

Presentations (ODP, PPT) are not estimated here; the pool's time limit bounds them.
"""

from __future__ import annotations

import re
import struct
import zipfile
from xml.parsers import expat

from render_pool.engine import limits
from render_pool.engine.common.ole import read_stream
from render_pool.engine.common.safe_zip import OFFICE_LIMITS
from render_pool.engine.common.zipread import BoundedZip
from render_pool.errors import TooLarge

TEXT_KINDS = ("odt", "doc", "rtf")
SHEET_KINDS = ("ods", "xls")
_RTF_CELL = re.compile(rb"\\(?:nest)?cell(x?)(?![a-zA-Z])")
_HUGE = 10 ** 12  # repeat counts are capped here; any count past the bounds is refused
# BIFF8 records of a cell with a value (LABEL, LABELSST, NUMBER, RK, FORMULA, BOOLERR, RSTRING)
_XLS_CELLS = {0x0204, 0x00FD, 0x0203, 0x027E, 0x0006, 0x0205, 0x00D6}
_XLS_MULRK = 0x00BD


def rtf_cells(data: bytes) -> int:
    """Table cells of an RTF document (see the module doc)."""
    cells = defined = 0
    for match in _RTF_CELL.finditer(data):
        if match.group(1):
            defined += 1
        else:
            cells += 1
    return max(cells, defined)


def odf_cells(content: bytes, *, sheet: bool) -> int:
    """Table cells of an OpenDocument ``content.xml``; in a ``sheet`` only those holding a
    value or any content (see the module doc). Read by expat, linear in the part, by the
    elements' local names (whatever the prefixes); a part that declares a DTD is not counted
    (the XML guard refuses it before LibreOffice runs); in a malformed one, which LibreOffice
    might still read in part, every ``table-cell`` name counts as half a cell (a start and
    an end tag each) when that is more than the cells read before the error."""
    count = _OdfCount(sheet)
    parser = expat.ParserCreate()
    parser.StartElementHandler = count.start
    parser.EndElementHandler = count.end
    parser.StartDoctypeDeclHandler = _no_doctype
    try:
        parser.Parse(content, True)
    except _Doctype:
        return 0
    except expat.ExpatError:
        return min(max(count.total, content.count(b"table-cell") // 2), _HUGE)
    return min(count.total, _HUGE)


class _Doctype(Exception):
    """A content.xml with a DOCTYPE (no ODF part has one)."""


def _no_doctype(*_: object) -> None:
    raise _Doctype


class _OdfCount:
    """expat handlers counting the table cells of a content.xml."""

    def __init__(self, sheet: bool) -> None:
        self.sheet = sheet
        self.total = 0
        self.rows: list[int] = []  # the repeat of each open row (nested tables multiply)
        self.pending = 0  # a sheet's open cell without a value: counted if it holds anything

    def start(self, name: str, attrs: dict[str, str]) -> None:
        local = name.rpartition(":")[2]
        if self.pending:  # anything inside the open cell: it holds something
            self.total += self.pending
            self.pending = 0
        if local == "table-row":
            self.rows.append(_repeat(attrs, "number-rows-repeated"))
        elif local in ("table-cell", "covered-table-cell"):
            cells = _repeat(attrs, "number-columns-repeated")
            for repeat in self.rows:
                cells = min(_HUGE, cells * repeat)
            if not self.sheet or any(a.endswith("value-type") for a in attrs):
                self.total += cells
            else:
                self.pending = cells

    def end(self, name: str) -> None:
        local = name.rpartition(":")[2]
        if local == "table-row" and self.rows:
            self.rows.pop()
        elif local in ("table-cell", "covered-table-cell"):
            self.pending = 0


def _repeat(attrs: dict[str, str], local: str) -> int:
    """The value of the repeat attribute named ``local`` (any namespace), 1 without."""
    for name, value in attrs.items():
        if name.rpartition(":")[2] == local:
            try:
                return max(1, min(_HUGE, int(value)))
            except ValueError:
                return 1
    return 1


def doc_cells(data: bytes) -> int:
    """Cell and row marks of a Word 97-2003 document (0 when its text cannot be found)."""
    text = read_stream(data, "WordDocument")
    return text.count(b"\x07") if text else 0


def xls_cells(data: bytes) -> int:
    """Cells with a value of an Excel 97-2003 workbook (0 when it cannot be read)."""
    book = read_stream(data, "Workbook") or read_stream(data, "Book")
    if not book:
        return 0
    total, at, end = 0, 0, len(book) - 4
    while at <= end:
        kind, size = struct.unpack_from("<HH", book, at)
        if kind in _XLS_CELLS:
            total += 1
        elif kind == _XLS_MULRK and size >= 6:
            total += (size - 6) // 6
        at += 4 + size
    return total


def estimate(data: bytes, kind: str) -> int:
    """The table cells LibreOffice would lay out for ``data`` of ``kind`` (0: not counted)."""
    if kind == "rtf":
        return rtf_cells(data)
    if kind == "doc":
        return doc_cells(data)
    if kind == "xls":
        return xls_cells(data)
    if kind in ("odt", "ods"):
        package = BoundedZip(data, OFFICE_LIMITS, f"The {kind.upper()} package")
        try:
            info = next(i for i in package.infos if i.filename == "content.xml")
        except StopIteration:
            return 0
        try:
            return odf_cells(package.read(info), sheet=kind == "ods")
        except zipfile.BadZipFile:
            return 0  # LibreOffice's own reading says what is wrong with it
    return 0


def check_cost(data: bytes, kind: str) -> None:
    """Refuse (41301) a file LibreOffice would spend too long on; see the module doc."""
    if kind not in TEXT_KINDS + SHEET_KINDS:
        return
    bounds = limits.current()
    cells = estimate(data, kind)
    if kind in TEXT_KINDS and cells > bounds.office_max_text_cells:
        raise TooLarge(
            f"The {kind.upper()} document has about {cells:,} table cells; at most "
            f"{bounds.office_max_text_cells:,} are converted here (LibreOffice's table layout "
            "would take minutes). Split its tables, or send it as DOCX, whose tables are read "
            "up to a row limit.")
    if kind in SHEET_KINDS and cells > bounds.office_max_sheet_cells:
        raise TooLarge(
            f"The {kind.upper()} workbook has about {cells:,} cells with values; at most "
            f"{bounds.office_max_sheet_cells:,} are converted here. Send it as XLSX or CSV, "
            "which are read up to a cell limit.")
