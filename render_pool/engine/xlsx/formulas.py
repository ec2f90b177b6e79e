"""Formula cells an XLSX saved without a value, named in a warning.

Why: openpyxl and many generators write ``<c><f>SUM(A1:A3)</f></c>`` with no cached
``<v>``; the reader shows saved values only (it never evaluates formulas: a formula
engine is a large attack surface for a small gain), so such a cell would come out empty
without a word. The warning names the first cells, so the user knows what is missing and
how to get it (open and save the file in a spreadsheet program, which computes them).

The scan streams the sheet part once (lxml ``iterparse``, no entities, no network); the
package was verified by the reader (zip-bomb and XML-bomb guards) before.
"""

from __future__ import annotations

import io
import zipfile

from lxml import etree

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_SHOWN = 5  # cells named in the warning


def uncomputed_cells(sheet_xml: bytes) -> tuple[int, list[str]]:
    """(how many formula cells have no saved value, the first few of their addresses)."""
    if b"<f" not in sheet_xml and b":f" not in sheet_xml:
        return 0, []
    count = 0
    first: list[str] = []
    events = etree.iterparse(io.BytesIO(sheet_xml), events=("end",), tag=f"{_MAIN}c",
                             resolve_entities=False, no_network=True, huge_tree=False,
                             recover=True)
    try:
        for _, cell in events:
            formula = cell.find(f"{_MAIN}f")
            value = cell.find(f"{_MAIN}v")
            inline = cell.find(f"{_MAIN}is")
            # an empty <v> is a saved empty text only in a text cell (t="str"); a number
            # is never empty (openpyxl writes <f>...</f><v></v> for "not computed")
            empty = value is None or (not (value.text or "").strip()
                                      and cell.get("t") not in ("str", "s", "inlineStr"))
            if formula is not None and empty and inline is None:
                count += 1
                if len(first) < _SHOWN:
                    first.append(cell.get("r", "?"))
            cell.clear()
    except etree.XMLSyntaxError:
        pass  # the reader reports a damaged sheet; this scan only adds a warning
    return count, first


def uncomputed_warning(package: zipfile.ZipFile, path: str, sheet: str) -> str | None:
    """The warning for sheet ``sheet`` (part ``path`` of ``package``), or None."""
    try:
        data = package.read(path.lstrip("/"))
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        return None
    count, first = uncomputed_cells(data)
    if not count:
        return None
    more = ", ..." if count > len(first) else ""
    cells = "formula cell has" if count == 1 else "formula cells have"
    return (f"Sheet {sheet!r}: {count} {cells} no saved value ({', '.join(first)}{more}); "
            "open and save the file in a spreadsheet program to compute them.")
