"""Issue 32, item 2: report tables whose cells wrap, read from a PDF without column rules.

Every document is hand-written here (base-14 fonts, no tools needed), laid out as
LibreOffice and Chromium print a report table: cells top-aligned, a line pitch inside a
cell and a longer one between rows, a head cell on two lines, a caption and a section
heading above the table.
"""

from __future__ import annotations

from render_pool.engine.model import Heading, Paragraph, Table, Text
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import text_pdf

LINE = 12.0  # pitch of the lines of one cell
ROW = 18.0  # pitch from the last line of a row to the next row (cell padding)


def _page_pdf(ops: bytes) -> bytes:
    """A one-page US Letter PDF drawing ``ops`` (F1 Helvetica, F2 Helvetica-Bold)."""
    return text_pdf([ops], ("Helvetica", "Helvetica-Bold"))


def _at(x: float, y: float, text: str, size: float = 10, font: str = "F1") -> bytes:
    return b"BT /%s %.1f Tf 1 0 0 1 %.1f %.1f Tm (%s) Tj ET\n" % (
        font.encode(),
        size,
        x,
        y,
        text.encode("latin-1"),
    )


def _text(node: object) -> str:
    if isinstance(node, Text):
        return node.text
    return "".join(_text(k) for k in getattr(node, "children", None) or [])


def _cells(table: Table) -> list[list[str]]:
    return [
        [" ".join(_text(b) for b in c.blocks if isinstance(b, Paragraph)) for c in row.cells]
        for row in table.rows
    ]


def _prose(y: float, lines: int, x: float = 72, words: int = 12) -> bytes:
    vocab = (
        "the station reported its figures for the year and the figures were "
        "checked by the board before they were printed here"
    ).split()
    ops = bytearray()
    for i in range(lines):
        line = " ".join(vocab[(i * 5 + k) % len(vocab)] for k in range(words))
        ops += _at(x, y - 14 * i, line)
    return bytes(ops)


COLUMNS = (72, 190, 280, 370)
HEAD = [["Station", "Departures", "Change vs.", "Notes"], ["", "", "last year", ""]]
BODY = [
    [["Central", "Station East"], ["18 904"], ["+4.1%"], ["Open all night on", "weekends."]],
    [["North"], ["7 211"], ["-1.3%"], ["Closed for works", "until the spring."]],
    [["Harbour"], ["12 050"], ["+0.8%"], ["Open"]],
    [["West Gate"], ["3 377"], ["+2.2%"], ["Night buses stop", "at the side entrance."]],
]


def report_table_pdf() -> bytes:
    """A section heading, a paragraph, the table's caption, then a table with a rule under
    its head: a head cell on two lines, body cells that wrap (the last row's last line is
    one cell alone), rows apart by more than a cell's lines; a paragraph after it."""
    ops = bytearray(_at(72, 730, "Station traffic", 14, "F2"))
    ops += _prose(708, 2)
    ops += _at(72, 672, "Table 2: Departures by station")
    y = 650.0
    for line in HEAD:
        for x, text in zip(COLUMNS, line, strict=True):
            ops += _at(x, y, text, font="F2") if text else b""
        y -= LINE
    ops += b"72 %.1f m 540 %.1f l S\n" % (y + 7, y + 7)  # the rule under the head
    y -= ROW - LINE
    for row in BODY:
        depth = max(len(cell) for cell in row)
        for x, cell in zip(COLUMNS, row, strict=True):
            for k, text in enumerate(cell):
                ops += _at(x, y - LINE * k, text)
        y -= LINE * (depth - 1) + ROW
    ops += _prose(y - 14, 2)
    return _page_pdf(bytes(ops))


def test_wrapped_cells_and_a_two_line_head_make_one_row_each() -> None:
    doc = read_pdf(report_table_pdf())
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1, doc.blocks
    table = tables[0]
    assert _cells(table) == [
        ["Station", "Departures", "Change vs. last year", "Notes"],
        ["Central Station East", "18 904", "+4.1%", "Open all night on weekends."],
        ["North", "7 211", "-1.3%", "Closed for works until the spring."],
        ["Harbour", "12 050", "+0.8%", "Open"],
        ["West Gate", "3 377", "+2.2%", "Night buses stop at the side entrance."],
    ]
    assert table.header_rows == 1
    # the caption above is the table's caption; the heading above stays a heading
    assert "".join(_text(n) for n in table.caption) == "Table 2: Departures by station"
    headings = [_text(b) for b in doc.blocks if isinstance(b, Heading)]
    assert headings == ["Station traffic"]
    kinds = [type(b).__name__ for b in doc.blocks]
    assert kinds == ["Heading", "Paragraph", "Table", "Paragraph"], kinds


def grouped_figures_pdf() -> bytes:
    """A caption, then a statistical table: a bold head, then rows of a label and three
    numbers, a blank line after every third row (two pitches, but every line fills every
    column)."""
    ops = bytearray(_prose(720, 2))
    ops += _at(72, 684, "Table 4: Arrivals per quarter")
    y = 660.0
    for x, text in zip(COLUMNS, ["Region", "Q1", "Q2", "Q3"], strict=True):
        ops += _at(x, y, text, font="F2")
    labels = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"]
    for n, label in enumerate(labels):
        y -= LINE + (LINE if n and n % 3 == 0 else 0)
        ops += _at(COLUMNS[0], y, label)
        for k, x in enumerate(COLUMNS[1:], start=1):
            ops += _at(x, y, f"{(n + 2) * k * 137 % 9000:,}")
    ops += _prose(y - 30, 2)
    return _page_pdf(bytes(ops))


def test_rows_apart_by_a_blank_line_stay_rows_and_the_caption_is_kept() -> None:
    doc = read_pdf(grouped_figures_pdf())
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1, doc.blocks
    rows = _cells(tables[0])
    assert [r[0] for r in rows] == [
        "Region",
        "Alpha",
        "Bravo",
        "Charlie",
        "Delta",
        "Echo",
        "Foxtrot",
    ]
    assert all(len(r) == 4 and all(r) for r in rows)
    assert "".join(_text(n) for n in tables[0].caption) == "Table 4: Arrivals per quarter"
    texts = [_text(b) for b in doc.blocks if not isinstance(b, Table)]
    assert not any("Table 4" in t for t in texts)


def footnote_under_table_pdf() -> bytes:
    """A table at the foot of a page, then the page's footnote: a raised small mark and
    its text, close under the table's last row."""
    ops = bytearray(_prose(720, 2))
    y = 680.0
    for x, text in zip(COLUMNS, ["Region", "Units", "Price", "Share"], strict=True):
        ops += _at(x, y, text, font="F2")
    for n, label in enumerate(["North", "South", "East", "West"]):
        y -= ROW
        ops += _at(COLUMNS[0], y, label)
        for k, x in enumerate(COLUMNS[1:], start=1):
            ops += _at(x, y, f"{(n + 3) * k * 71 % 900}")
    y -= ROW + 4
    ops += _at(72, y + 3, "1", 7)
    ops += _at(88, y, "Figures of the regional offices, checked in March.")
    return _page_pdf(bytes(ops))


def test_a_footnote_under_a_table_is_not_a_row() -> None:
    doc = read_pdf(footnote_under_table_pdf())
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1, doc.blocks
    rows = _cells(tables[0])
    assert [r[0] for r in rows] == ["Region", "North", "South", "East", "West"]
    assert not any("regional offices" in cell for row in rows for cell in row)


def text_columns_pdf() -> bytes:
    """Three narrow columns of running text whose lines sit at unrelated heights (a
    heading and a list shift each column differently): no table."""
    ops = bytearray()
    vocab = (
        "each monthly item was billed under the net charge and paid by our "
        "client after the delivery of every prepaid service"
    ).split()
    for col, (x, start, pitch) in enumerate(((72, 700, 14.0), (250, 693, 15.5), (428, 705, 13.0))):
        for i in range(24):
            words = " ".join(vocab[(col * 7 + i * 3 + k) % len(vocab)] for k in range(3))
            ops += _at(x, start - pitch * i, words)
    return _page_pdf(bytes(ops))


def test_text_columns_at_unrelated_heights_are_not_a_table() -> None:
    doc = read_pdf(text_columns_pdf())
    assert not any(isinstance(b, Table) for b in doc.blocks)
