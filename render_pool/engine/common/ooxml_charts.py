"""Charts embedded in a DOCX (DrawingML ``c:chart`` parts) as data tables.

Why: a chart is a picture of numbers that Word keeps in its chart part (series names,
categories and cached values). Those numbers are the content; turning them into a table keeps
them in the converted document instead of dropping the chart.
"""

from __future__ import annotations

from lxml import etree

from render_pool.engine.model import Paragraph, Table, TableCell, TableRow, Text

C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_C = f"{{{C}}}"


def _number(text: str) -> str:
    """Cached chart values carry float noise (4.4000000000000004): print them shortly."""
    try:
        return f"{float(text):.12g}"
    except ValueError:
        return text


def _points(el: etree._Element | None) -> list[str]:
    if el is None:
        return []
    pts: dict[int, str] = {}
    for pt in el.iter(_C + "pt"):
        v = pt.find(_C + "v")
        try:
            idx = int(pt.get("idx", "0"))
        except ValueError:
            continue
        pts[idx] = _number((v.text or "") if v is not None else "")
    if not pts:
        return []
    return [pts.get(i, "") for i in range(max(pts) + 1)]


def _cell(text: str, header: bool = False) -> TableCell:
    return TableCell([Paragraph([Text(text)])] if text else [], header=header)


def chart_title(root: etree._Element) -> str:
    """The chart's title text, if it has one."""
    title = root.find(f".//{_C}title")
    if title is None:
        return ""
    return "".join(t.text or "" for t in title.iter(f"{{{A}}}t")).strip()


def chart_table(root: etree._Element) -> Table | None:
    """A table with one row per category and one column per series, or None if empty."""
    series = list(root.iter(_C + "ser"))
    if not series:
        return None
    names: list[str] = []
    columns: list[list[str]] = []
    categories: list[str] = []
    for i, ser in enumerate(series):
        tx = ser.find(_C + "tx")
        name = _points(tx)
        names.append(name[0] if name else f"Series {i + 1}")
        values = _points(ser.find(_C + "val")) or _points(ser.find(_C + "yVal"))
        columns.append(values)
        if not categories:
            categories = _points(ser.find(_C + "cat")) or _points(ser.find(_C + "xVal"))
    n = max([len(categories)] + [len(c) for c in columns])
    if n == 0:
        return None
    rows = [TableRow([_cell("", True)] + [_cell(nm, True) for nm in names])]
    for r in range(n):
        label = categories[r] if r < len(categories) else str(r + 1)
        rows.append(TableRow([_cell(label)] + [_cell(c[r] if r < len(c) else "")
                                               for c in columns]))
    return Table(rows=rows, header_rows=1)
