"""Issue 32: multi-column prints as LibreOffice makes them (section columns, tables in a
column, words cut inside narrow cells).

Every document is hand-written here (base-14 Helvetica, no tools needed).
"""

from __future__ import annotations

from tests.pdf_fixtures import table_texts, text_pdf

WORDS = ("the station reported its figures for the year and the figures were checked by "
         "the board before they were printed here in the annual report of the society").split()


def _page_pdf(ops: bytes) -> bytes:
    """A one-page US Letter PDF drawing ``ops`` (F1 Helvetica, F2 Courier)."""
    return text_pdf([ops])


def _at(x: float, y: float, text: str, font: bytes = b"F1") -> bytes:
    return b"BT /%s 10 Tf 1 0 0 1 %.1f %.1f Tm (%s) Tj ET\n" % (
        font, x, y, text.encode("latin-1"))


def _rule(x0: float, y0: float, x1: float, y1: float) -> bytes:
    return b"%.1f %.1f m %.1f %.1f l S\n" % (x0, y0, x1, y1)


def _grid(x0: float, xs: list[float], top: float, rows: list[float]) -> bytes:
    """Rules of a grid: column rules at ``x0`` and ``xs``, row rules at ``top`` and
    ``rows``."""
    ops = b"".join(_rule(x, rows[-1], x, top) for x in [x0, *xs])
    return ops + b"".join(_rule(x0, y, xs[-1], y) for y in [top, *rows])


def test_a_word_cut_inside_a_narrow_cell_is_one_word() -> None:
    # a column 25 pt wide inside its padding: "Square" does not fit, LibreOffice prints
    # "Squa" on one line and "re" on the next; "Lot east" wraps at its space, "Lot" far
    # from filling the cell, and stays two words
    ops = bytearray()
    ops += _grid(72, [103, 300], 732, [712, 680, 650])
    for y, first, second in ((720, "Kind", "Note"), (700, "Squa", "Area of the plot"),
                             (688, "re", ""), (670, "Lot", "Twelve acres"),
                             (658, "east", "")):
        ops += _at(75, y, first)
        if second:
            ops += _at(106, y, second)
    tables = table_texts(_page_pdf(bytes(ops)))
    assert tables == [[["Kind", "Note"], ["Square", "Area of the plot"],
                       ["Lot east", "Twelve acres"]]]


def _prose_lines(x: float, y: float, count: int, chars: int) -> bytes:
    """``count`` lines of prose set in Courier (6 pt a character), each ``chars`` long:
    a justified column's lines end at its right edge."""
    ops = bytearray()
    text = " ".join(WORDS * 20)
    for i in range(count):
        line = text[i * 7:i * 7 + chars].replace(" ", "x", 1).ljust(chars, "x")
        ops += _at(x, y - 12 * i, line, b"F2")
    return bytes(ops)


def test_a_ruled_table_in_the_right_column_takes_no_lines_of_the_left_column() -> None:
    # two section columns (72-276 and 290-530); a ruled table in the right column below
    # its prose; the left column's lines beside the table end close to the table's left
    # rule but are another column's text, not the table's row labels
    ops = bytearray(_prose_lines(72, 720, 40, 34))
    ops += _prose_lines(290, 720, 14, 40)
    rows = [548.0, 530.0, 512.0, 494.0, 476.0]
    ops += _grid(290, [380, 460, 540], 566, rows)
    cells = [("Item", "Count", "Price"), ("Apples", "12", "3.10"), ("Pears", "7", "2.45"),
             ("Plums", "30", "0.80"), ("Figs", "4", "5.20")]
    for (item, count, price), y in zip(cells, [554, 536, 518, 500, 482], strict=True):
        ops += _at(293, y, item) + _at(383, y, count) + _at(463, y, price)
    tables = table_texts(_page_pdf(bytes(ops)))
    assert tables == [[list(row) for row in cells]]


def test_a_column_cut_letter_by_letter_keeps_its_rows_and_words() -> None:
    # a table whose columns are a letter or two wide: LibreOffice sets "Net" as "Ne" / "t",
    # "Overdue" as "Ov" / "er" / "du" / "e" and 4849 as 4 / 8 / 4 / 9, one piece a line,
    # so every column has text on every line of a row; the rows stand a cell padding apart
    # (16 pt) while a cell's lines follow at 12 pt
    ops = bytearray()
    rows = [
        (["No"], ["Description"], ["Q"], ["Pr"]),
        (["Ne", "t"], ["Item monthly", "gross licence"], ["4", "8"], ["3,", "18"]),
        (["Ov", "er", "du", "e"], ["Net charge", "gross item", "net charge", "item"],
         ["3", "4", "3", "5"], ["5,", "80", "6.", "94"]),
        (["Du", "e"], ["Charge gross", "service item"], ["1", "7"], ["1,", "98"]),
    ]
    y = 720.0
    for row in rows:
        for x, lines in zip((72, 92, 170, 182), row, strict=True):
            for k, line in enumerate(lines):
                ops += _at(x, y - 12 * k, line)
        y -= 12 * max(len(lines) for lines in row) + 4
    ops += _prose_lines(72, y - 20, 6, 40)
    tables = table_texts(_page_pdf(bytes(ops)))
    assert [row[0] for row in tables[0]] == ["No", "Net", "Overdue", "Due"]
    assert [row[2] for row in tables[0][1:]] == ["48", "3435", "17"]


def _two_pages(first: bytes, second: bytes) -> bytes:
    """A two-page US Letter PDF drawing ``first`` and ``second`` (F1 Helvetica, F2 Courier)."""
    return text_pdf([first, second])


def test_a_first_page_column_all_table_keeps_the_gutter_of_the_next_page() -> None:
    # two section columns (72-276 and 290-530); on page 1 the right column holds nothing
    # but a table whose first column is cut letter by letter ("Ov" / "er" / "du" / "e"),
    # so page 1 alone shows no gutter; page 2 is prose in both columns
    ops = bytearray()
    rows = [(["No"], ["Description"], ["Q"], ["Pr"])]
    rows += [(["Ov", "er", "du", "e"], ["Net charge", "gross item", "net charge", "item"],
              ["3", "4", "3", "5"], ["5,", "80", "6.", "94"])] * 6
    y = 720.0
    for row in rows:
        for x, lines in zip((290, 310, 388, 400), row, strict=True):
            for k, line in enumerate(lines):
                ops += _at(x, y - 12 * k, line)
        y -= 12 * max(len(lines) for lines in row) + 4
    first = _prose_lines(72, 720, 40, 34) + bytes(ops)
    second = _prose_lines(72, 720, 40, 34) + _prose_lines(290, 720, 40, 40)
    tables = table_texts(_two_pages(first, second))
    assert [[row[0] for row in table] for table in tables] == [["No"] + ["Overdue"] * 6]


def test_a_last_page_filling_its_first_columns_keeps_their_gutters() -> None:
    # three section columns (72-228, 245-401, 418-574); the last page fills only the first
    # two, the first with a table cut letter by letter, the second with prose: the first
    # gutter stands though the third column is empty
    first = b"".join(_prose_lines(x, 720, 40, 26) for x in (72, 245, 418))
    ops = bytearray()
    rows = [(["No"], ["Charge"], ["Q"], ["Pr"])]
    rows += [(["Ov", "er", "du", "e"], ["Net", "gross", "net", "item"],
              ["3", "4", "3", "5"], ["5,", "80", "6.", "94"])] * 6
    y = 720.0
    for row in rows:
        for x, lines in zip((72, 92, 150, 162), row, strict=True):
            for k, line in enumerate(lines):
                ops += _at(x, y - 12 * k, line)
        y -= 12 * max(len(lines) for lines in row) + 4
    second = bytes(ops) + _prose_lines(245, 720, 30, 26)
    tables = table_texts(_two_pages(first, second))
    assert [[row[0] for row in table][1:] for table in tables] == [["Overdue"] * 6]
