"""Lenient opening of a damaged PDF: its pages found by scanning the file.

When pdfium refuses a file whose cross-reference table or page tree is broken (objects
missing, a truncated linearised file), the objects are looked for by their ``N G obj``
headers, the ``/Type /Page`` objects among them are gathered under a new page tree and
catalogue, and a new cross-reference section pointing at every object found is appended
(an incremental update, in memory only). That is what pdfminer and pdftotext do in
effect; the pages come out in the order they sit in the file.
"""

from __future__ import annotations

import re

_OBJ = re.compile(rb"(?<![0-9])(\d{1,7})\s+(\d{1,5})\s+obj\b")
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
MAX_OBJECTS = 500_000


def rebuilt(data: bytes, max_pages: int) -> bytes | None:
    """The file with a new page tree and cross-reference section, or None when no page
    object is found (or the file holds too many objects to scan)."""
    offsets: dict[int, tuple[int, int]] = {}
    for count, m in enumerate(_OBJ.finditer(data)):
        if count >= MAX_OBJECTS:
            return None
        offsets[int(m.group(1))] = (m.start(), int(m.group(2)))
    pages: list[tuple[int, int, int]] = []
    for num, (off, gen) in offsets.items():
        head = data[off: off + 1024]
        cut = head.find(b"stream")
        if _PAGE.search(head if cut < 0 else head[:cut]):
            pages.append((off, num, gen))
    if not pages or len(pages) > max_pages:
        return None
    pages.sort()
    tree, catalog = max(offsets) + 1, max(offsets) + 2
    out = bytearray(data if data.endswith(b"\n") else data + b"\n")
    kids = b" ".join(b"%d %d R" % (num, gen) for _, num, gen in pages)
    added = {tree: len(out)}
    out += b"%d 0 obj\n<< /Type /Pages /Kids [%s] /Count %d >>\nendobj\n" % (
        tree, kids, len(pages))
    added[catalog] = len(out)
    out += b"%d 0 obj\n<< /Type /Catalog /Pages %d 0 R >>\nendobj\n" % (catalog, tree)
    xref = len(out)
    out += b"xref\n0 %d\n" % (catalog + 1)
    for num in range(catalog + 1):
        if num in added:
            out += b"%010d 00000 n \n" % added[num]
        elif num in offsets:
            out += b"%010d %05d n \n" % offsets[num]
        else:
            out += b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        catalog + 1, catalog, xref)
    return bytes(out)
