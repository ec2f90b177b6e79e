"""DOCX tables (``w:tbl``) to model tables with row and column spans.

Why: Word encodes a horizontally merged cell as one ``w:tc`` with ``gridSpan`` and a vertical
merge as a ``vMerge="restart"`` cell followed by ``vMerge`` (continue) cells in the rows below.
The model wants one cell with ``rowspan``/``colspan`` and no placeholder cells, so the grid
column of every cell is tracked and continuation cells extend their origin.

A table keeps at most ``max_rows`` rows (``TABLE_MAX_ROWS``, see ``render_pool.engine.limits``);
the rest is left out with a warning, before their cells are read. Why: an RTF with a
100,000-row table comes back from LibreOffice as a DOCX whose reading and writing would
cost minutes for a table nobody reads whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lxml import etree

from render_pool.engine import limits
from render_pool.engine.docx.package import W
from render_pool.engine.model import Block, Table, TableCell, TableRow

_W = f"{{{W}}}"


_SDT = _W + "sdt"
_CUSTOM_XML = _W + "customXml"
_SDT_CONTENT = _W + "sdtContent"
_TR, _TC, _TRPR, _TCPR = _W + "tr", _W + "tc", _W + "trPr", _W + "tcPr"
_GRID_SPAN, _V_MERGE, _H_MERGE = _W + "gridSpan", _W + "vMerge", _W + "hMerge"
_DEL, _TBL_HEADER, _GRID_BEFORE = _W + "del", _W + "tblHeader", _W + "gridBefore"
_VAL = _W + "val"


def _children(el: etree._Element, tag: str) -> Iterator[etree._Element]:
    """Direct children with ``tag``, looking through content controls and custom XML."""
    for c in el[:]:  # lxml's list of the children: cheaper than its iterator
        ctag = c.tag
        if ctag == tag:
            yield c
        elif ctag == _SDT or ctag == _CUSTOM_XML:
            inner = c.find(_SDT_CONTENT) if ctag == _SDT else c
            if inner is not None:
                yield from _children(inner, tag)


def first_child(el: etree._Element, tag: str) -> etree._Element | None:
    """``el.find(tag)`` for one plain tag: the first such child. A loop over the children
    costs a fraction of ``find``, which goes through lxml's path machinery on every call;
    properties come first by the schema's order, so the first child is tried alone before
    the loop (``el[0]`` makes one element, an iterator more work)."""
    if not len(el):
        return None
    first = el[0]
    if first.tag == tag:
        return first
    for child in el:
        if child.tag == tag:
            return child
    return None


def _first_of(el: etree._Element | None, *tags: str) -> list[etree._Element | None]:
    """The first child of ``el`` with each of ``tags`` (None where there is none): one pass
    over the children instead of a ``find`` (lxml's path machinery) per tag."""
    found: list[etree._Element | None] = [None] * len(tags)
    if el is not None:
        for child in el[:]:
            ctag = child.tag
            for i, tag in enumerate(tags):
                if ctag == tag and found[i] is None:
                    found[i] = child
    return found


def _int_val(el: etree._Element | None, default: int) -> int:
    if el is None:
        return default
    try:
        return max(1, int(el.get(_VAL, default)))
    except ValueError:
        return default


def _flag(el: etree._Element | None) -> bool:
    if el is None:
        return False
    return el.get(_W + "val", "true").lower() not in ("0", "false", "off")


def first_row_is_header(tbl: etree._Element) -> bool:
    """Whether the table's look says its first row is formatted as a header."""
    look = tbl.find(f"{_W}tblPr/{_W}tblLook")
    if look is None:
        return False
    first = look.get(_W + "firstRow")
    if first is not None:
        return first in ("1", "true", "on")
    try:
        return bool(int(look.get(_W + "val", "0"), 16) & 0x0020)
    except ValueError:
        return False


def read_table(
    tbl: etree._Element,
    cell_blocks: Callable[[etree._Element], list[Block]],
    *,
    keep_deleted_rows: bool = False,
    warn: Callable[[str], None] | None = None,
    max_rows: int | None = None,
) -> Table:
    """Build a :class:`Table`; ``cell_blocks`` converts one ``w:tc`` into blocks. Past
    ``max_rows`` rows (default: this worker's ``table_max_rows``) the rest is left out and
    ``warn`` told so."""
    cap = limits.current().table_max_rows if max_rows is None else max_rows
    rows: list[TableRow] = []
    header_rows = 0
    counting_header = True
    active: dict[int, TableCell] = {}  # grid column -> cell whose vertical merge is open
    for tr in _children(tbl, _TR):
        if len(rows) == cap:
            if warn is not None:
                warn(f"A table has more than {cap:,} rows; only its first {cap:,} were read.")
            break
        deleted, header_flag, grid_before = _first_of(first_child(tr, _TRPR), _DEL, _TBL_HEADER,
                                                      _GRID_BEFORE)
        if deleted is not None and not keep_deleted_rows:
            continue
        is_header = _flag(header_flag)
        col = _int_val(grid_before, 0) if grid_before is not None else 0
        cells: list[TableCell] = []
        had_cells = False
        for tc in _children(tr, _TC):
            had_cells = True
            first = tc[0] if len(tc) else None  # first_child(tc, _TCPR), its first test inline
            tcpr = first if first is None or first.tag == _TCPR else first_child(tc, _TCPR)
            if tcpr is None or not len(tcpr):  # most cells: no span, no merge
                span_el = vmerge = hmerge = None
            else:
                span_el, vmerge, hmerge = _first_of(tcpr, _GRID_SPAN, _V_MERGE, _H_MERGE)
            span = _int_val(span_el, 1)
            if hmerge is not None and hmerge.get(_VAL, "continue") == "continue" and cells:
                cells[-1].colspan += span
                col += span
                continue
            if vmerge is not None and vmerge.get(_VAL, "continue") == "continue":
                origin = active.get(col)
                if origin is not None:
                    origin.rowspan += 1
                    col += span
                    continue
            cell = TableCell(cell_blocks(tc), colspan=span)
            if active:  # a vertical merge is open: this cell ends it in its columns
                for c in range(col, col + span):
                    active.pop(c, None)
            if vmerge is not None:  # restart (or a continue without origin)
                active[col] = cell
            cells.append(cell)
            col += span
        if not had_cells:
            continue
        rows.append(TableRow(cells))
        if counting_header and is_header:
            header_rows += 1
        else:
            counting_header = False
    if header_rows == 0 and rows and first_row_is_header(tbl):
        header_rows = 1
    for row in rows[:header_rows]:
        for cell in row.cells:
            cell.header = True
    return Table(rows=rows, header_rows=header_rows)
