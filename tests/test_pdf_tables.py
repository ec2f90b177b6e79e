"""Issue 22, item 2: tables in PDFs written by others, above all tables without rules.

Every document is hand-written here (base-14 fonts, no tools needed): tables turned
sideways, tables whose columns show only by alignment, row rules without column rules,
and running text that must stay text.
"""

from __future__ import annotations

from render_pool.engine.model import Paragraph, Table, Text
from render_pool.engine.pdf import borderless
from render_pool.engine.pdf.chars import Char, Segment
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream, tagged_cells_pdf

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


def _right(x: float, y: float, text: str, size: float = 10, font: str = "F1") -> bytes:
    """Text ending at x (right-aligned), Helvetica widths approximated for digits."""
    width = 0.556 * size * len(text)
    return _at(x - width, y, text, size, font)


def _body_text(y: float, lines: int) -> bytes:
    words = ("the reader of a report wants the numbers in their rows and the words in "
             "their sentences so that nothing is lost on the way").split()
    ops = bytearray()
    for i in range(lines):
        line = " ".join(words[(i * 3 + k) % len(words)] for k in range(12))
        ops += _at(72, y - 14 * i, line)
    return bytes(ops)


def borderless_pdf() -> bytes:
    """A paragraph, then a table with no rules at all: a left-aligned label column, three
    right-aligned number columns under a bold header, then another paragraph. The table
    is written column by column, as many report producers do."""
    ops = bytearray(_body_text(720, 3))
    y = 650
    ops += _at(320, y + 16, "Sales", font="F2")  # spans the Units and Price columns
    ops += _at(72, y, "Region", font="F2")
    for r, row in enumerate(BODY, start=1):
        ops += _at(72, y - 16 * r, row[0])
    ops += _at(72, y - 16 * (len(BODY) + 1), "Islands")  # a group label, alone on its row
    tail = ["Isle", "12", "3.10", "1%"]
    ops += _at(72, y - 16 * (len(BODY) + 2), tail[0])
    for c, x in enumerate((300, 400, 500), start=1):
        ops += _right(x, y, HEAD[c], font="F2")
        for r, row in enumerate([*BODY, ["", "", "", ""], tail], start=1):
            ops += _right(x, y - 16 * r, row[c]) if row[c] else b""
    ops += _body_text(480, 3)
    return _page_pdf(bytes(ops))


def test_table_without_rules_is_found_from_its_columns() -> None:
    data = borderless_pdf()
    doc = read_pdf(data)
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1
    # the spanning heading is one cell over the two columns it is centred on
    assert _cells(tables[0]) == [["", "Sales", ""], HEAD, *BODY, ["Islands", "", "", ""],
                                 ["Isle", "12", "3.10", "1%"]]
    assert [c.colspan for c in tables[0].rows[0].cells] == [1, 2, 1]
    assert tables[0].header_rows == 2
    # the paragraphs around it stay paragraphs, in their places
    kinds = [type(b).__name__ for b in doc.blocks]
    assert kinds == ["Paragraph", "Table", "Paragraph"], kinds


def test_label_above_its_numbers_and_cells_set_close_together() -> None:
    # a statistical abstract's layout: a long label alone on its line, its numbers on the
    # next; and two cells whose gap is narrower than an em (one text run in the PDF):
    # cut at the space between them, never inside a word
    ops = bytearray()
    y = 700
    rows = [("Total arrests", "11,062.6", "1,540.0"), ("Violent crime", "467.9", "69.1"),
            ("Property crime", "1,396.4", "338.7"), ("Fraud", "173.7", "5.1")]
    for r, (label, a, b) in enumerate(rows):
        top = y - 24 * r
        if r == 1:  # the label on its own line, the numbers on the next
            ops += _at(72, top + 8, label)
            label = ""
        if label:
            ops += _at(72, top, label)
        ops += _right(300, top, a)
        ops += _right(360, top, b)
    # one more row whose two number cells are written as one string, 6 pt apart
    ops += _at(72, y - 96, "Mukesh Kumar")
    ops += _at(300 - 0.556 * 10 * 5, y - 96, "123.4 " + "   " + "56.7")
    tables = _tables(_page_pdf(bytes(ops)))
    assert len(tables) == 1, tables
    got = tables[0]
    assert ["Violent crime", "467.9", "69.1"] in got
    assert all(len(r) == 3 for r in got)
    assert ["Mukesh Kumar", "123.4", "56.7"] in got


def test_lists_and_two_column_prose_stay_text() -> None:
    # bullets beside their sentences line up like a two-column table; so do the lines of
    # a two-column page: neither becomes a table
    ops = bytearray()
    for i in range(6):
        ops += _at(72, 700 - 14 * i, "\x95" if i % 2 == 0 else "")
        ops += _at(90, 700 - 14 * i, "an item of a list that runs on for a while here")
    for i in range(20):
        ops += _at(72, 560 - 14 * i, "left column words that make up a running sentence")
        ops += _at(320, 560 - 14 * i, "right column words making up another running text")
    assert _tables(_page_pdf(bytes(ops))) == []


def test_three_narrow_text_columns_stay_text() -> None:
    # a register page: three narrow columns of running text, three to six words a line,
    # some lines in title case, a heading in one column: lines of text, not cells
    text = ("The Federal Aviation Administration proposes to supersede an airworthiness "
            "directive for certain Boeing airplanes which requires installing new flight "
            "control computer software and revising the existing flight manual to include "
            "new procedures for the flightcrew Comments are due by the closing date and "
            "may be sent through the Federal eRulemaking Portal or by mail to the Docket "
            "Operations office at the address above between nine and five").split()
    ops = bytearray()
    for col, x in enumerate((40, 230, 420)):
        for i in range(24):
            n = 3 + (i + col) % 4
            line = " ".join(text[(i * 4 + col * 7 + k) % len(text)] for k in range(n))
            if i == 8 and col == 1:
                line = "Examining the AD Docket"
            ops += _at(x, 740 - 11 * i, line, size=8)
    doc = read_pdf(_page_pdf(bytes(ops)))
    assert not [b for b in doc.blocks if isinstance(b, Table)]


def tagged_rows_pdf() -> bytes:
    """A tagged page whose table rows (TR) sit in a Sect without a Table element, the
    first row one cell holding a headnote."""
    cells = [["Headnote: in thousands."], HEAD, *BODY]
    content = bytearray(b"BT /F1 10 Tf\n")
    mcid = 0
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            content += (b"/TD <</MCID %d>> BDC 1 0 0 1 %d %d Tm (%s) Tj EMC\n"
                        % (mcid, 72 + c * 90, 700 - r * 16, text.encode()))
            mcid += 1
    content += b"ET\n"
    return tagged_cells_pdf(bytes(content), [len(row) for row in cells], container=b"Sect")


def test_tagged_rows_without_a_table_element_are_a_table() -> None:
    doc = read_pdf(tagged_rows_pdf())
    assert isinstance(doc.blocks[0], Paragraph)
    assert _text(doc.blocks[0]) == "Headnote: in thousands."
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1 and _cells(tables[0]) == [HEAD, *BODY]


def test_a_rule_crossing_a_word_does_not_cut_it() -> None:
    # a ruled grid whose middle rule runs through a name (the boxes of an electoral roll
    # are drawn a little off their text): the name stays whole, in one cell
    ops = bytearray()
    for y in (700, 680, 660, 640):
        ops += b"72 %d m 372 %d l S\n" % (y, y)
    for x in (72, 200, 372):
        ops += b"%d 640 m %d 700 l S\n" % (x, x)
    ops += _at(80, 686, "Name")
    ops += _at(210, 686, "Age")
    ops += _at(188, 666, "Mukesh Kumar")  # "Mu" left of the rule at 200, "kesh" right
    ops += _at(80, 646, "Total")
    ops += _at(210, 646, "55")
    tables = _tables(_page_pdf(bytes(ops)))
    assert len(tables) == 1
    words = [w for row in tables[0] for cell in row for w in cell.split()]
    assert "Mukesh" in words and "Mu" not in words and "kesh" not in words, tables[0]


def test_row_rules_without_column_rules_only_separate_rows() -> None:
    # rules under every row and none between the columns (health.pdf): the rules do not
    # make a one-column table of whole lines; the columns come from the alignment
    ops = bytearray()
    y = 700
    for r, row in enumerate([HEAD, *BODY]):
        top = y - 18 * r
        ops += _at(72, top, row[0], font="F2" if r == 0 else "F1")
        for x, cell in zip((300, 400, 500), row[1:], strict=True):
            ops += _right(x, top, cell, font="F2" if r == 0 else "F1")
        ops += b"72 %.1f m 500 %.1f l S\n" % (top - 5, top - 5)
    tables = _tables(_page_pdf(bytes(ops)))
    assert tables == [[HEAD, *BODY]]


def _line_segment(text: str, x: float, top: float, size: float = 4.0) -> Segment:
    seg = Segment()
    for i, ch in enumerate(text):
        seg.add(Char(ch, x + i * size / 2, x + (i + 1) * size / 2, top, top + size,
                     top + 0.8 * size, size, False, False))
    return seg


def test_table_search_grows_with_the_page_not_its_square(monkeypatch) -> None:
    """A page of many two-part lines that are no table (a dense index): the search for a
    table without rules looks at each line a bounded number of times. Before, every line
    started a run to the end of the page (1600 such lines: 5 s, 3000: 17 s)."""
    lines = 1200
    segs = []
    for n in range(lines):
        top = n * 4.8
        segs += [_line_segment("ab cd", 10, top),
                 _line_segment("ef", 30 + (n * 37 % 200), top)]  # no column of white
    looked = 0
    real = borderless._candidate

    def counting(row: object) -> bool:
        nonlocal looked
        looked += 1
        return real(row)

    monkeypatch.setattr(borderless, "_candidate", counting)
    assert borderless.find_text_tables(segs) == []
    assert looked < 250 * lines


def test_long_table_without_rules_is_still_found() -> None:
    """A table of 60 rows (more than most pages hold) is one table, all rows kept."""
    rows = [["Item", "Qty", "Price"]] + [[f"Part {n}", str(n * 3), f"{n}.50"]
                                         for n in range(1, 60)]
    segs = []
    for n, row in enumerate(rows):
        for text, x in zip(row, (40, 200, 320), strict=True):
            segs.append(_line_segment(text, x, n * 12.0, size=9.0))
    found = borderless.find_text_tables(segs)
    assert len(found) == 1
    assert len(found[0].table.rows) == 60
