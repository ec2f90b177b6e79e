"""Words that office files written by others lost (issue 32, item 6; ``bench/office_recall.py``)."""

from __future__ import annotations

import io

from render_pool.engine.jobs import convert_document


def test_a_table_after_an_unclosed_row_opening_a_table_is_kept() -> None:
    # a page's footer after ``</td><tr><table>``: libxml2 puts the footer table inside the
    # row, outside any cell, where a browser shows it before the table
    page = (
        b"<html><body><table><tr><td>Hardness 293-375</td><tr><table><br><br>"
        b"<table><tr><td>Free searchable database, all rights reserved</td></tr></table>"
        b"</body></html>"
    )
    md = convert_document(page, "markdown").content
    assert "Hardness 293-375" in md
    assert "Free searchable database, all rights reserved" in md


def test_text_and_paragraphs_a_table_holds_outside_its_cells_are_kept() -> None:
    page = b"<table>Caption-like text<tr><td>cell</td><p>stray paragraph</p></tr></table>"
    md = convert_document(page, "markdown").content
    assert "Caption-like text" in md and "stray paragraph" in md and "cell" in md
    # rows inside a wrapper (a form around them) stay the table's, and are not said twice
    wrapped = b"<table><form action=x><tr><td>Row in a form</td></tr></form></table>"
    assert convert_document(wrapped, "markdown").content.count("Row in a form") == 1


def _workbook(big_rows: int) -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    big = wb.active
    big.title = "Data"
    for r in range(1, big_rows + 1):
        big.append([r, r * 2, r * 3])
    notes = wb.create_sheet("Notes")
    notes.append(["Read me: the totals exclude returns"])
    notes.append(["Checked by the regional office"])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_a_small_sheet_after_a_big_one_is_read_whole_under_the_cell_limit() -> None:
    from render_pool.engine.markdown.writer import write_markdown
    from render_pool.engine.xlsx.reader import read_xlsx

    doc = read_xlsx(_workbook(1000), max_cells=1000)
    md = write_markdown(doc)
    assert "Read me: the totals exclude returns" in md
    assert "Checked by the regional office" in md
    # the big sheet is still cut, with its warning, and the limit holds
    assert any("Data" in w and "cell limit" in w for w in doc.warnings)
    assert md.count("\n| ") <= 1000 // 3 + 10


def test_a_month_initial_format_shows_the_initial() -> None:
    # ``mmmmm`` is the month's first letter in Excel and LibreOffice (J for January)
    import datetime as dt

    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append(["Month", "Initial", "With year"])
    ws.append(["first", dt.datetime(2024, 1, 15), dt.datetime(2024, 12, 15)])
    ws["B2"].number_format = "mmmmm"
    ws["C2"].number_format = "mmmmm-yy"
    out = io.BytesIO()
    wb.save(out)
    md = convert_document(out.getvalue(), "markdown").content
    assert "| first | J | D-24 |" in md
