"""The workbook's cell limit shared between its sheets, so one big sheet does not starve the rest.

Why: ``SHEET_MAX_CELLS`` bounds the cells read from a whole workbook. Spent in sheet order,
a first sheet of 80,000 cells took all of it and a small sheet after it (a page of formulas
and notes) was cut to a few rows or left out. Here each sheet's cells are estimated from
its part (closed ``<c>`` elements, a cell holding something, and its rows), and the limit
is shared the way water fills vessels: a sheet that needs less than an even share gets all
it needs, and what it leaves goes to the bigger ones. The estimate is an upper bound of what
the reader will count, so a sheet within its share is read whole; the reader passes any
share a sheet did not use on to the sheets after it.
"""

from __future__ import annotations

import re
import zipfile

_CHUNK = 1 << 20
# a cell that holds something is closed by its own end tag (an empty, styled one closes
# itself); a row costs the reader at least one cell
_COUNTED = re.compile(rb"</(?:[\w.-]+:)?c>|<(?:[\w.-]+:)?row\b")
_OVERLAP = 16  # a tag cut by a chunk's end is counted in the next chunk


def estimate_cells(package: zipfile.ZipFile, path: str) -> int | None:
    """An upper bound of the cells (and empty rows) the reader counts in the worksheet part
    ``path``, read in chunks; None when the part cannot be found (the need is unknown)."""
    if not path:
        return None
    try:
        stream = package.open(path)
    except (KeyError, zipfile.BadZipFile, RuntimeError, ValueError, OSError):
        return None
    count = 0
    tail = b""
    with stream:
        while chunk := stream.read(_CHUNK):
            window = tail + chunk
            cut = max(len(window) - _OVERLAP, 0)
            # count the tags that start before the overlap kept for the next chunk
            count += sum(1 for m in _COUNTED.finditer(window) if m.start() < cut)
            tail = window[cut:]
    return count + sum(1 for _ in _COUNTED.finditer(tail))


def fair_shares(estimates: list[int | None], budget: int) -> list[int]:
    """Each sheet's share of ``budget`` (same order as ``estimates``): smaller needs met in
    full, the rest split evenly between the bigger ones and those of unknown need."""
    needs = [budget if e is None else e for e in estimates]
    shares = [0] * len(needs)
    left = budget
    order = sorted(range(len(needs)), key=lambda i: needs[i])
    for done, i in enumerate(order):
        even = left // (len(needs) - done)
        shares[i] = min(needs[i], even)
        left -= shares[i]
    return shares
