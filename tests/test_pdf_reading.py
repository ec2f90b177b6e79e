"""Issue 22, PDF reading of documents written by others: figures drawn in form XObjects,
hanging punctuation at a column's edge, page numbers above the bottom band, rotated
pages and text, right-to-left scripts and lenient opening.

Every document is made here (hand-written PDFs, :mod:`tests.pdf_fixtures`).
"""

from __future__ import annotations

import re

import pytest

from render_pool.engine.model import Table
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream
from tests.test_reader_pdf import plain_text

LEFT = ["apple", "anchor", "amber", "arrow", "atlas", "acorn", "alder"]
RIGHT = ["berry", "bridge", "basil", "beacon", "bolt", "birch", "bison"]


def _text(x: float, y: float, text: str, size: int = 10, font: str = "F1") -> bytes:
    return b"BT /%s %d Tf %.1f %.1f Td (%s) Tj ET\n" % (font.encode(), size, x, y,
                                                       text.encode("latin-1"))


def _lines(words: list[str], count: int) -> list[str]:
    """``count`` lines of seven words; every fifth line ends a sentence (short)."""
    out = []
    for i in range(count):
        picked = [words[(i + k) % len(words)] for k in range(7 if i % 5 != 4 else 3)]
        out.append(" ".join(picked) + ("." if i % 5 == 4 else ""))
    return out


def _page_pdf(ops: bytes, extra_objects: list[bytes] | None = None, xobjects: bytes = b"",
              page_extra: bytes = b"", size: tuple[int, int] = (612, 792)) -> bytes:
    """A one-page PDF whose content is ``ops``; F1 Helvetica, F2 Helvetica-Bold; objects
    from 7 on are ``extra_objects`` (``xobjects`` names them in the resources)."""
    return _pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] " % size + page_extra
        + b" /Resources << /Font << /F1 5 0 R /F2 6 0 R >> /XObject << " + xobjects
        + b" >> >> /Contents 4 0 R >>",
        _stream(b"", ops),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
        *(extra_objects or []),
    ])


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def test_a_ruled_figure_in_a_form_xobject_sits_where_the_form_puts_it() -> None:
    """A figure drawn inside a form XObject is placed by the form's matrix: its boxes are
    not taken at the form's own coordinates (over the text column, which then came out
    as a table of cut words)."""
    grid = b"0.5 w 60 520 m 290 520 l S 60 600 m 290 600 l S 60 680 m 290 680 l S " \
           b"60 520 m 60 680 l S 175 520 m 175 680 l S 290 520 m 290 680 l S\n"
    form = _stream(b"/Type /XObject /Subtype /Form /BBox [0 0 612 792]", grid)
    ops = bytearray()
    for i, line in enumerate(_lines(LEFT, 20)):
        ops += _text(60, 690 - 13 * i, line)
    ops += b"q 1 0 0 1 270 -400 cm /Fm1 Do Q\n"  # the figure lands at the bottom right
    doc = read_pdf(_page_pdf(bytes(ops), [form], b"/Fm1 7 0 R"))
    text = plain_text([b for b in doc.blocks if not isinstance(b, Table)])
    assert _words(text) == [w for ln in _lines(LEFT, 20) for w in _words(ln)]


def _two_columns(right_lines: list[str]) -> bytes:
    ops = bytearray()
    for i, line in enumerate(_lines(LEFT, 30)):
        ops += _text(54, 700 - 13 * i, line)
    for i, line in enumerate(right_lines):
        # a line opening with a quote hangs the quote into the gutter
        ops += _text(318 - (4 if line.startswith('"') else 0), 700 - 13 * i, line)
    return bytes(ops)


def test_a_line_with_hanging_punctuation_stays_in_its_column() -> None:
    right = _lines(RIGHT, 30)
    right[12] = '"' + right[12] + '" said'
    doc = read_pdf(_page_pdf(_two_columns(right)))
    words = _words(plain_text(doc.blocks))
    a = [i for i, w in enumerate(words) if w in LEFT]
    b = [i for i, w in enumerate(words) if w in RIGHT]
    assert max(a) < min(b), "the right column was cut at its quoted line"


def test_a_page_number_above_the_bottom_band_is_not_text() -> None:
    """LaTeX sets the page number well above the bottom tenth of an A4 page; it does not
    run into the next page's first paragraph."""
    pages = []
    for n in (1, 2):
        ops = bytearray()
        for i, line in enumerate(_lines(LEFT if n == 1 else RIGHT, 40)):
            ops += _text(90, 770 - 13 * i, line)
        ops += _text(300, 140, str(n))
        pages.append(bytes(ops))
    doc = read_pdf(_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 7 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 7 0 R >> >> /Contents 6 0 R >>",
        _stream(b"", pages[0]), _stream(b"", pages[1]),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]))
    assert not re.search(r"[0-9]", plain_text(doc.blocks))


def _turned_text(x: float, y: float, text: str, direction: int, size: int = 10) -> bytes:
    """Text running ``direction`` degrees counter-clockwise from (x, y)."""
    a, b = {0: (1, 0), 90: (0, 1), 180: (-1, 0), 270: (0, -1)}[direction]
    return b"BT /F1 %d Tf %d %d %d %d %.1f %.1f Tm (%s) Tj ET\n" % (
        size, a, b, -b, a, x, y, text.encode("latin-1"))


@pytest.mark.parametrize("rotate,direction", [(90, 90), (0, 90), (0, 270), (180, 180)])
def test_a_page_turned_or_with_its_text_turned_reads_upright(rotate: int,
                                                             direction: int) -> None:
    """A landscape page in a portrait document (``/Rotate`` with its content drawn
    turned) and a table printed sideways: the lines read whole, first to last."""
    lines = _lines(LEFT, 12)
    ops = bytearray()
    for i, line in enumerate(lines):
        if direction == 90:  # lines stacked from the left edge (the top once turned)
            ops += _turned_text(60 + 14 * i, 80, line, 90)
        elif direction == 270:
            ops += _turned_text(550 - 14 * i, 700, line, 270)
        else:  # upside down: the first line nearest the bottom edge
            ops += _turned_text(550, 100 + 14 * i, line, 180)
    doc = read_pdf(_page_pdf(bytes(ops), page_extra=b"/Rotate %d" % rotate))
    assert _words(plain_text(doc.blocks)) == [w for ln in lines for w in _words(ln)]


def test_a_stamp_in_the_margin_is_kept_whole_after_the_page_text() -> None:
    """arXiv's vertical stamp in the left margin: read bottom to top, in one piece, and
    not in the middle of the paragraph beside it."""
    ops = bytearray()
    lines = _lines(LEFT, 30)
    for i, line in enumerate(lines):
        ops += _text(90, 700 - 13 * i, line)
    ops += _turned_text(30, 250, "arXiv:2004.04906v3 [cs.CL] 30 Sep 2020", 90, 16)
    doc = read_pdf(_page_pdf(bytes(ops)))
    text = plain_text(doc.blocks)
    assert text.endswith("arXiv:2004.04906v3 [cs.CL] 30 Sep 2020")
    assert _words(text)[: -5] == [w for ln in lines for w in _words(ln)]


def test_a_stamp_repeated_in_the_margin_of_every_page_is_furniture() -> None:
    pages = []
    for n in (1, 2, 3):
        ops = bytearray()
        for i, line in enumerate(_lines(LEFT, 20)):
            ops += _text(90, 700 - 13 * i, line)
        ops += _turned_text(30, 250, f"VerDate Sep 11 2014 16:21 Aug 0{n} 2020", 90)
        pages.append(_stream(b"", bytes(ops)))
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(3))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count 3 >>"]
    objs += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
             b"<< /F1 9 0 R >> >> /Contents %d 0 R >>" % (6 + i) for i in range(3)]
    objs += [*pages, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    text = plain_text(read_pdf(_pdf(objs)).blocks)
    assert "VerDate" not in text and "apple" in text


def test_a_vertical_header_in_a_ruled_table_is_kept_in_reading_direction() -> None:
    grid = b"0.5 w 100 500 m 400 500 l S 100 600 m 400 600 l S 100 700 m 400 700 l S " \
           b"100 500 m 100 700 l S 250 500 m 250 700 l S 400 500 m 400 700 l S\n"
    ops = bytearray(grid)
    for i, line in enumerate(_lines(LEFT, 6)):  # the page's text runs left to right
        ops += _text(100, 760 - 12 * i, line)
    ops += _turned_text(180, 610, "Quarter", 90)
    ops += _turned_text(330, 610, "Revenue", 90)
    ops += _text(160, 545, "Spring")
    ops += _text(310, 545, "1200")
    doc = read_pdf(_page_pdf(bytes(ops)))
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1
    cells = [[plain_text(c.blocks) for c in r.cells] for r in tables[0].rows]
    assert cells == [["Quarter", "Revenue"], ["Spring", "1200"]]


def test_glyph_three_of_a_font_without_a_unicode_map_is_a_word_space() -> None:
    """A subset font without a Unicode map gives its glyph ids as codes; glyph 3 is the
    space, and the words do not run together."""
    ops = b"BT /F1 12 Tf 72 700 Td (Hello\003world\003again) Tj ET\n"
    assert plain_text(read_pdf(_page_pdf(ops)).blocks) == "Hello world again"


def _glyphs(text: str, x_right: float, rtl: bool, size: float = 10.0) -> list:
    """Characters of ``text`` (logical order) placed as a renderer would show them: a
    right-to-left word from ``x_right`` leftwards, a left-to-right one rightwards."""
    from render_pool.engine.pdf.chars import Char

    out = []
    x = x_right
    for ch in text:
        w = 0.0 if ch == " " else 0.5 * size
        if rtl:
            out.append(Char(ch, x - w, x, 0, size, 0.8 * size, size, False, False))
            x -= w + (0.3 * size if ch == " " else 0.0)
        else:
            out.append(Char(ch, x, x + w, 0, size, 0.8 * size, size, False, False))
            x += w + (0.3 * size if ch == " " else 0.0)
    return out


def test_arabic_and_hebrew_lines_read_in_logical_order_with_whole_words() -> None:
    """A left-aligned "Arabic: <Arabic words>" line whose glyphs come right to left (as
    pdfium gives them): the label first, the Arabic words whole and in reading order;
    a right-aligned Hebrew line with a number keeps the number's digits in order."""
    from render_pool.engine.pdf.chars import segments_of
    from render_pool.engine.pdf.layout import Line

    label = _glyphs("Arabic: ", 50.0, False)
    arabic = _glyphs("\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
                     160.0, True)
    line = Line(segments_of(arabic + label), col_x0=50.0, col_x1=400.0)
    assert line.text == "Arabic: \u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645"
    hebrew = _glyphs("\u05e9\u05dc\u05d5\u05dd ", 400.0, True)
    digits = _glyphs("2024", hebrew[-1].x0 - 3 - 20.0, False)  # the number reads forwards
    line = Line(segments_of(hebrew + digits), col_x0=50.0, col_x1=400.0)
    assert line.text == "\u05e9\u05dc\u05d5\u05dd 2024"


def test_a_pdf_whose_page_tree_is_missing_is_read_from_its_pages() -> None:
    """The catalogue points at a page tree the file lost (a truncated linearised file):
    the pages are found by scanning, with a warning, instead of a refusal."""
    from tests.pdf_fixtures import _pdf, _stream

    data = _pdf([
        b"<< /Type /Catalog /Pages 9 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 9 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 2 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", _text(72, 700, "Text on a page the tree lost")),
    ])
    doc = read_pdf(data)
    assert plain_text(doc.blocks) == "Text on a page the tree lost"
    assert any("damaged" in w for w in doc.warnings)


def test_tagged_hebrew_text_is_one_line_of_whole_words() -> None:
    """Text read from a structure tree: Hebrew letters run leftwards, which is no jump
    back to a new line (each letter came out alone, spaced apart)."""
    from render_pool.engine.pdf.tagged import _lines

    hebrew = _glyphs("\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd", 300.0, True)
    lines = _lines(list(hebrew))
    assert ["".join(c.text for c in ln) for ln in lines] == [
        "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd"]
