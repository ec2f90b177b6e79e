"""Issue 22, item 2: tables in PDFs written by others, above all tables without rules.

Every document is hand-written here (base-14 fonts, no tools needed): tables turned
sideways, tables whose columns show only by alignment, row rules without column rules,
and running text that must stay text.
"""

from __future__ import annotations

from render_pool.model import Paragraph, Table, Text
from render_pool.readers.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream

HEAD = ["Region", "Units", "Price", "Share"]
BODY = [["North", "1,204", "12.50", "31%"], ["South", "987", "9.75", "22%"],
        ["East", "2,311", "14.00", "40%"], ["West", "45", "7.25", "7%"],
        ["Centre", "610", "11.10", "18%"]]


def _page_pdf(ops: bytes, rotate: int = 0) -> bytes:
    """A one-page US Letter PDF drawing ``ops`` (F1 Helvetica, F2 Helvetica-Bold)."""
    return _pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate %d "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>" % rotate,
        _stream(b"", ops),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ])


def _at(x: float, y: float, text: str, size: float = 10, font: str = "F1",
        turn: int = 0) -> bytes:
    """Text at (x, y) in PDF space; ``turn`` 90 writes it upwards, 270 downwards."""
    m = {0: (1, 0, 0, 1), 90: (0, 1, -1, 0), 270: (0, -1, 1, 0)}[turn]
    return b"BT /%s %.1f Tf %d %d %d %d %.1f %.1f Tm (%s) Tj ET\n" % (
        font.encode(), size, *m, x, y, text.encode("latin-1"))


def _text(node: object) -> str:
    if isinstance(node, Text):
        return node.text
    return "".join(_text(k) for k in getattr(node, "children", None) or [])


def _cells(table: Table) -> list[list[str]]:
    return [[" ".join(_text(b) for b in c.blocks if isinstance(b, Paragraph)) for c in row.cells]
            for row in table.rows]


def _tables(data: bytes) -> list[list[list[str]]]:
    return [_cells(b) for b in read_pdf(data).blocks if isinstance(b, Table)]


def _sideways_table(turn: int, ruled: bool) -> bytes:
    """HEAD + BODY set sideways: rows advance across the page, text runs along it."""
    ops = bytearray()
    xs = [0, 90, 170, 250]  # offsets along the text direction
    for r, row in enumerate([HEAD, *BODY]):
        for c, cell in enumerate(row):
            along = 150 + xs[c]
            across = 100 + 22 * r
            if turn == 90:  # reads bottom to top, rows go right
                ops += _at(across, along, cell, font="F2" if r == 0 else "F1", turn=90)
            else:  # reads top to bottom, rows go left
                ops += _at(612 - across, 792 - along, cell, font="F2" if r == 0 else "F1",
                           turn=270)
    if ruled:
        lo, hi = 140, 140 + 330
        for r in range(len(BODY) + 2):
            a = 100 - 16 + 22 * r if turn == 90 else 612 - (100 - 16 + 22 * r)
            b0, b1 = (lo, hi) if turn == 90 else (792 - hi, 792 - lo)
            ops += b"%.1f %.1f m %.1f %.1f l S\n" % (a, b0, a, b1)
        for x in [*xs, 330]:
            along = 140 + x if turn == 90 else 792 - (140 + x)
            a0 = 100 - 16 if turn == 90 else 612 - (100 - 16 + 22 * (len(BODY) + 1))
            a1 = a0 + 22 * (len(BODY) + 1)
            ops += b"%.1f %.1f m %.1f %.1f l S\n" % (a0, along, a1, along)
    return _page_pdf(bytes(ops))


def test_sideways_tables_read_as_the_page_shows_them() -> None:
    # a landscape table printed on a portrait page, either way round, ruled or not: its
    # rows are the rows a reader of the turned page sees (not transposed, no letters
    # shuffled), the header first
    for turn in (90, 270):
        for ruled in (True, False):
            tables = _tables(_sideways_table(turn, ruled))
            assert tables, (turn, ruled)
            assert tables[0] == [HEAD, *BODY], (turn, ruled, tables[0])
