"""Issue 32: tables in the narrow columns of LibreOffice's three-column prints.

A four-column table set in a third of a page gets cells a few letters wide: LibreOffice cuts
each word letter by letter ("Li" / "ab" / "ilit" / "y"), a comment cell wraps over many
lines, the table's caption takes two lines, and a column break cuts the table in two,
its header repeated at the top of the next column. Every document is hand-written here
(base-14 Helvetica, its glyph widths below; no tools needed), the cells cut the way a word
processor cuts them: as many letters on a line as fit the cell.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from render_pool.engine.model import Paragraph
from render_pool.engine.pdf.cell_words import _joined
from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream, plain_text, table_texts

# Helvetica's advance widths (per 1000 units of the font size) of the letters used here
WIDTHS = {**dict.fromkeys("abdeghnopqu", 556), **dict.fromkeys("ijl", 222),
          **dict.fromkeys("ckstvxyz", 500), "f": 278, "m": 833, "r": 333, "w": 722,
          "t": 278, **dict.fromkeys("ABEKPSVXY", 667), **dict.fromkeys("CDHNRUw", 722),
          "F": 611, "G": 778, "I": 278, "J": 500, "L": 556, "M": 833, "O": 778, "Q": 778,
          "T": 611, "W": 944, "Z": 611, " ": 278, ",": 278, ".": 278}
SIZE = 10.0
PITCH = 12.0  # a cell's lines
ROW_GAP = 5.0  # LibreOffice's cell padding between rows
PROSE = ("the liability of the dividend and the operating margin was reported with the "
         "equity and the revenue of the year while each name and its comment was checked "
         "by the board before the deferred asset and the current revenue were printed")


def _width(text: str) -> float:
    return sum(WIDTHS.get(ch, 556) for ch in text) * SIZE / 1000


def _cut(text: str, width: float) -> list[str]:
    """The lines of ``text`` in a cell ``width`` points wide: words wrap at spaces, and a
    word wider than the cell is cut where the next letter no longer fits."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and _width(f"{line} {word}") <= width:
            line = f"{line} {word}"
            continue
        if line:
            lines.append(line)
        line = ""
        for ch in word:
            if line and _width(line + ch) > width:
                lines.append(line)
                line = ""
            line += ch
    if line:
        lines.append(line)
    return lines


def _page_pdf(ops: bytes) -> bytes:
    """A one-page US Letter PDF drawing ``ops`` (F1 Helvetica)."""
    return _pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", ops),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def _two_pages(first: bytes, second: bytes) -> bytes:
    """A two-page US Letter PDF drawing ``first`` and ``second`` (F1 Helvetica)."""
    def page(contents: int) -> bytes:
        return (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                b"/Resources << /Font << /F1 6 0 R >> >> /Contents %d 0 R >>" % contents)
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
                 page(5), page(7), _stream(b"", first),
                 b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                 _stream(b"", second)])


def _at(x: float, y: float, text: str) -> bytes:
    return b"BT /F1 10 Tf 1 0 0 1 %.2f %.2f Tm (%s) Tj ET\n" % (x, y, text.encode("latin-1"))


def _prose(x: float, y: float, count: int) -> tuple[bytes, float]:
    """``count`` lines of running text in a column 138 pt wide from ``y`` down; the
    baseline under the last line."""
    ops = bytearray()
    for line in textwrap.wrap(" ".join([PROSE] * 4), 26)[:count]:
        ops += _at(x, y, line)
        y -= PITCH
    return bytes(ops), y


def _rows(x: float, y: float, rows: Sequence[tuple[str, ...]], widths: tuple[float, ...],
          gap: float = 6.0) -> tuple[bytes, float]:
    """Table rows from ``y`` down at ``x``: each cell's text cut to its column's width
    (``gap`` points of padding between columns), the cells top-aligned, a row as high as
    its tallest cell; the baseline under the last row."""
    ops = bytearray()
    for row in rows:
        left = x
        tallest = 1
        for text, width in zip(row, widths, strict=True):
            lines = _cut(text, width) if text else []
            for k, line in enumerate(lines):
                ops += _at(left, y - PITCH * k, line)
            tallest = max(tallest, len(lines))
            left += width + gap
        y -= PITCH * tallest + ROW_GAP
    return bytes(ops), y


HEAD = ("Name", "Year", "Comment")
WIDTHS_3 = (16.0, 16.0, 70.0)
BODY = [
    ("Liability", "12", "Equity revenue dividend expense consolidated revenue revenue "
                        "net liability."),
    ("Dividend operating", "7", "Liability asset operating margin."),
]


def test_a_table_cut_letter_by_letter_in_a_third_of_the_page_is_one_table() -> None:
    # three section columns (72-210, 235-373, 398-536); the first is prose, the second
    # holds some prose, a caption of two lines and a table whose first two columns are cut letter by
    # letter and whose comment cell wraps over many lines; the column break cuts the row
    # "Equity margin" after "Equity mar": the third column repeats the header, ends that
    # row ("gin") and holds one more row, then prose
    prose, _ = _prose(72, 720, 48)
    ops = bytearray(prose)
    above, y = _prose(235, 720, 10)
    ops += above + _at(235, y - 8, "Table 1: margin of the") + _at(235, y - 20, "year")
    table, y = _rows(235, y - 40, [HEAD, *BODY], WIDTHS_3)
    ops += table
    # the row cut by the column break: its last two pieces go to the next column
    cut = _cut("Equity margin", WIDTHS_3[0])
    comment = _cut("Dividend deferred equity.", WIDTHS_3[2])
    assert len(comment) <= len(cut) - 2
    ops += b"".join(_at(235, y - PITCH * k, piece) for k, piece in enumerate(cut[:-2]))
    ops += _at(235 + WIDTHS_3[0] + 6, y, "30")
    ops += b"".join(_at(235 + WIDTHS_3[0] + WIDTHS_3[1] + 12, y - PITCH * k, line)
                    for k, line in enumerate(comment))
    head, y = _rows(398, 720, [HEAD], WIDTHS_3)
    ops += head + _at(398, y, cut[-2]) + _at(398, y - PITCH, cut[-1])
    y -= PITCH
    rest, y = _rows(398, y - PITCH - ROW_GAP, [("Revenue", "4", "Margin equity asset.")],
                    WIDTHS_3)
    ops += rest
    ops += _prose(398, y - 20, 12)[0]
    assert len(cut) > 4  # the words are cut as the issue shows
    tables = table_texts(_page_pdf(bytes(ops)))
    assert tables == [[
        ["Name", "Year", "Comment"],
        ["Liability", "12", BODY[0][2]],
        ["Dividend operating", "7", BODY[1][2]],
        ["Equity margin", "30", "Dividend deferred equity."],
        ["Revenue", "4", "Margin equity asset."],
    ]]


def test_columns_holding_only_tables_keep_the_gutter_between_them() -> None:
    # three section columns; the first is prose, the second a few lines of prose over a
    # narrow table, the third nothing but a narrow table (too little prose for the gutter
    # between them to show): the columns are equally wide, so the second gutter stands one
    # column on from the first, and each column's table is read on its own, in order
    ops = bytearray(_prose(72, 720, 48)[0])
    above, y = _prose(235, 720, 12)
    ops += above
    first = [("Code", "Unit", "Comment"), ("Liability", "12", "Net revenue of the year."),
             ("Dividend", "7", "Operating margin checked by the board.")]
    second = [("Item", "Rate", "Note"), ("Revenue", "4", "Deferred asset of the year."),
              ("Equity", "30", "Current revenue printed.")]
    ops += _rows(235, y - 10, first, WIDTHS_3)[0] + _rows(398, 700, second, WIDTHS_3)[0]
    tables = table_texts(_page_pdf(bytes(ops)))
    assert tables == [[list(row) for row in first], [list(row) for row in second]]


def test_a_column_of_prose_beside_a_table_on_its_baselines_is_no_part_of_it() -> None:
    # two section columns (72-276, 317-540; the first page is prose in both) on a shared
    # baseline grid: on the second page the left column holds a table whose comment cells
    # wrap, the right column three lines of running text at the top: the lines stand on
    # the table's baselines but are the right column's prose, not cells of a table across
    # the page
    widths = (40.0, 30.0, 110.0)
    body = [("Ingredient", "Amount", "Preparation"),
            ("Pepper roasted", "20", "Fresh butter roasted pepper ground garlic smoked."),
            ("Ground tomato", "30", "Flour fresh lentil chopped garlic onion tomato."),
            ("Roasted butter", "15", "Tomato smoked garlic tomato pepper onion onion."),
            ("Fresh lentil", "21", "Garlic chopped tomato flour ground smoked flour.")]
    table, _ = _rows(72, 700, body, widths)
    prose = [_at(317, 700 - PITCH * k, line) for k, line in enumerate(
        ("Our smoked pepper simmer this garlic for", "our fresh flour and bake each of the",
         "tomatoes before the butter is roasted."))]
    left = b"".join(_at(72, 720 - PITCH * k, line) for k, line in enumerate(
        textwrap.wrap(" ".join([PROSE] * 6), 40)[:50]))
    right = b"".join(_at(317, 720 - PITCH * k, line) for k, line in enumerate(
        textwrap.wrap(" ".join([PROSE] * 6), 40)[:50]))
    data = _two_pages(left + right, table + b"".join(prose))
    tables = table_texts(data)
    assert tables == [[list(row) for row in body]]
    text = " ".join(plain_text(b) for b in read_pdf(data).blocks if isinstance(b, Paragraph))
    assert "Our smoked pepper simmer this garlic for our fresh flour" in text


def _line(text: str, x: float, baseline: float, size: float = 10.0) -> list[Char]:
    step = size * 0.56
    return [Char(ch, x + i * step, x + (i + 1) * step, baseline - size, baseline, baseline,
                 size, False, False) for i, ch in enumerate(text)]


def test_whole_numbers_of_one_width_stacked_in_a_narrow_cell_stay_two_numbers() -> None:
    # a margin column of line numbers (a printer's proof: "16" over "17") is as narrow as its
    # numbers, so the next number's first digit "would not have fitted": yet they are two
    stacked = [_line("16", 10, 100), _line("17", 10, 112)]
    assert [_text_of(line) for line in _joined(stacked, 11.3)] == ["16", "17"]
    # a word cut for want of room is still joined, and so is a number cut unevenly
    cut = [_line("Squa", 10, 100), _line("re", 10, 112)]
    assert [_text_of(line) for line in _joined(cut, 22.5)] == ["Square"]
    number = [_line("4455", 10, 100), _line("20", 10, 112)]
    assert [_text_of(line) for line in _joined(number, 22.5)] == ["445520"]


def _text_of(line: list[Char]) -> str:
    return "".join(c.text for c in line)
