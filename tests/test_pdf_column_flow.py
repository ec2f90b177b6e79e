"""Issue 32: the flow of text in LibreOffice's two- and three-column prints, outside tables.

Footnotes at the foot of each column, block quotes running on into the next column, table
captions and wrapped titles in narrow columns, a bold phrase ending a line, a column that
holds only a table, and a word that ends two pages at different places. Every document is
hand-written here (base-14 fonts, no tools needed).
"""

from __future__ import annotations

from render_pool.engine.model import (
    BlockQuote,
    Emph,
    Heading,
    Link,
    NoteRef,
    Paragraph,
    plain_text,
    walk,
)
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream

LEFT = ["apple", "anchor", "amber", "arrow", "atlas", "acorn", "alder"]
RIGHT = ["berry", "bridge", "basil", "beacon", "bolt", "birch", "bison"]
FONTS = (b"<< /F1 %d 0 R /F2 %d 0 R /F3 %d 0 R >>")


def _pages_pdf(pages: list[bytes], annots: dict[int, list[bytes]] | None = None) -> bytes:
    """A US Letter PDF, one page per content stream (F1 Helvetica, F2 Helvetica-Bold, F3
    Helvetica-Oblique); ``annots`` gives a page's annotation dictionaries, where ``{page
    N}`` stands for the reference of page N."""
    n = len(pages)
    fonts = [3 + 2 * n, 4 + 2 * n, 5 + 2 * n]
    page_ref = [b"%d 0 R" % (3 + 2 * i) for i in range(n)]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(page_ref), n),
    ]
    for i, ops in enumerate(pages):
        extra = b""
        for k, annot in enumerate((annots or {}).get(i, [])):
            for j, ref in enumerate(page_ref):
                annot = annot.replace(b"{page %d}" % j, ref)
            extra += annot if k == 0 else b" " + annot
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       b"/Resources << /Font " + FONTS % tuple(fonts) + b" >> "
                       b"/Contents %d 0 R" % (4 + 2 * i)
                       + (b" /Annots [" + extra + b"]" if extra else b"") + b" >>")
        objects.append(_stream(b"", ops))
    for name in (b"Helvetica", b"Helvetica-Bold", b"Helvetica-Oblique"):
        objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /" + name + b" >>")
    return _pdf(objects)


def _at(x: float, y: float, text: str, size: float = 10, font: str = "F1") -> bytes:
    return b"BT /%s %.1f Tf 1 0 0 1 %.1f %.1f Tm (%s) Tj ET\n" % (
        font.encode(), size, x, y, text.encode("latin-1"))


def _prose(words: list[str], count: int, start: int = 0) -> list[str]:
    """``count`` lines of five words, every fourth ending a sentence."""
    out = []
    for i in range(start, start + count):
        line = " ".join(words[(i + k) % len(words)] for k in range(5))
        out.append(line.capitalize() if i % 4 == 0 else line + ("." if i % 4 == 3 else ""))
    return out


def _column(x: float, top: float, lines: list[str], pitch: float = 14) -> bytes:
    return b"".join(_at(x, top - pitch * i, line) for i, line in enumerate(lines))


def test_each_column_keeps_its_own_footnotes() -> None:
    """LibreOffice sets a column's notes at that column's foot: the first column's note
    stands higher than the second column's text and its marker; both notes are read."""
    ops = bytearray(_column(72, 700, _prose(LEFT, 30)))
    ops += _at(72, 280, "The apple anchor was checked")
    ops += _at(208, 284, "1", 6)
    ops += _column(72, 180, ["1 The first note tells of apples.", "and of anchors too."])
    ops += _column(336, 700, _prose(RIGHT, 38))
    ops += _at(336, 160, "The berry bridge was checked")
    ops += _at(468, 164, "2", 6)
    ops += _column(336, 110, ["2 The second note tells of berries."])
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    notes = [" ".join(plain_text(blocks).split()) for blocks in doc.notes.values()]
    assert notes == ["The first note tells of apples. and of anchors too.",
                     "The second note tells of berries."]
    assert sum(isinstance(n, NoteRef) for n in walk(doc.blocks)) == 2
    assert "first note" not in plain_text(doc.blocks)


def test_a_long_note_runs_on_at_the_next_columns_foot() -> None:
    """A note cut off mid-sentence at its column's foot goes on at the next column's foot,
    set apart from that column's text and going on in lower case."""
    ops = bytearray(_column(72, 700, _prose(LEFT, 30)))
    ops += _at(72, 280, "The apple anchor was checked")
    ops += _at(208, 284, "1", 6)
    ops += _column(72, 124, ["1 The first note tells of apples", "and of the amber"])
    ops += _column(336, 700, _prose(RIGHT, 30))
    ops += _column(336, 124, ["anchor by the alder.", "It ends here."])
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    notes = [" ".join(plain_text(blocks).split()) for blocks in doc.notes.values()]
    assert notes == ["The first note tells of apples and of the amber anchor by the alder. "
                     "It ends here."]
    assert "alder. It ends" not in " ".join(plain_text(doc.blocks).split())


def test_a_notes_link_back_to_its_marker_is_not_a_link() -> None:
    """A note's text linked back to its marker (LibreOffice does so) is no link to the
    heading that happens to stand near the marker."""
    ops = bytearray(_at(72, 720, "Ground Rules", 16, "F2"))
    ops += _column(72, 690, _prose(LEFT, 12))
    ops += _at(72, 500, "The apple anchor was checked")
    ops += _at(208, 504, "1", 6)
    ops += _at(72, 475, "Second Rules", 16, "F2")
    ops += _column(72, 450, _prose(RIGHT, 8))
    ops += _at(72, 100, "1 The note that links back to its mark.")
    back = (b"<< /Type /Annot /Subtype /Link /Rect [72 96 300 110] /Border [0 0 0] "
            b"/Dest [{page 0} /XYZ 72 512 0] >>")
    doc = read_pdf(_pages_pdf([bytes(ops)], {0: [back]}))
    (note,) = doc.notes.values()
    assert plain_text(note).strip() == "The note that links back to its mark."
    assert not any(isinstance(n, Link) for n in walk(note))


def test_a_block_quote_runs_on_into_the_next_column() -> None:
    """A quote indented in the first column and going on, indented alike, at the top of
    the second is one block quote: its indent is judged against each column's margin."""
    quote = ["the quoted amber words go on", "and on about the atlas and", "the acorn of the alder",
             "which the arrow found in"]
    rest = ["the bridge near the berry", "field by the basil shore."]
    ops = bytearray(_column(72, 700, _prose(LEFT, 34)))
    ops += _column(102, 700 - 14 * 35, ["The quote opens here and", *quote])
    ops += _column(366, 700, rest)
    ops += _column(336, 700 - 14 * 3, _prose(RIGHT, 40))
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    quotes = [b for b in doc.blocks if isinstance(b, BlockQuote)]
    assert len(quotes) == 1
    text = " ".join(plain_text(quotes[0].blocks).split())
    assert text.startswith("The quote opens here") and text.endswith("basil shore.")


def test_a_column_that_holds_only_a_quote_is_judged_by_its_edge() -> None:
    """The last column of a section may hold nothing but the quote that ends it: its lines
    all start right of the column's edge, where the other columns' text starts."""
    quote = ["Each mounted bolt holds", "the birch beam to the", "basil berry shelf and",
             "the bridge for good, as", "the bison beacon keeps", "the bolt of the basil",
             "bridge lit at night."]
    first = bytearray(_column(72, 700, _prose(LEFT, 40), 16))
    first += _column(236, 700, _prose(RIGHT, 40), 16)
    first += _column(400, 700, _prose(LEFT, 40, 2), 16)
    ops = bytearray(_column(72, 700, _prose(LEFT, 40), 16))
    ops += _column(236, 700, _prose(RIGHT, 40), 16)
    ops += _column(424, 700, quote, 16)
    doc = read_pdf(_pages_pdf([bytes(first), bytes(ops)]))
    quotes = [b for b in doc.blocks if isinstance(b, BlockQuote)]
    assert [" ".join(plain_text(q.blocks).split()) for q in quotes] == [" ".join(quote)]


def test_a_caption_is_a_plain_paragraph_not_an_italic_heading() -> None:
    """"Table 1: ..." set apart in italics at body size is the table's caption: a
    paragraph, its italics the caption's style rather than emphasis."""
    ops = bytearray(_column(72, 700, _prose(LEFT, 6)))
    ops += _at(72, 600, "Table 1: apples by year", font="F3")
    ops += _column(72, 570, _prose(RIGHT, 6))
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    assert not any(isinstance(b, Heading) for b in doc.blocks)
    captions = [b for b in doc.blocks if isinstance(b, Paragraph)
                and plain_text([b]).startswith("Table 1")]
    assert len(captions) == 1
    assert not any(isinstance(n, Emph) for n in walk(captions))


def test_a_title_wrapped_before_its_number_stays_one_heading() -> None:
    """"Delivery Plan" / "2010" in a narrow column: the number ends the title."""
    ops = bytearray(_at(72, 720, "Delivery Plan", 16, "F2"))
    ops += _at(72, 700, "2010", 16, "F2")
    ops += _column(72, 670, _prose(LEFT, 8))
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    headings = [plain_text([b]).strip() for b in doc.blocks if isinstance(b, Heading)]
    assert headings == ["Delivery Plan 2010"]


def test_a_bold_phrase_ending_a_line_is_not_a_heading() -> None:
    """"Note **bold words**" filling a line after a sentence's end, the sentence going on
    below, is a bold phrase: the line is not a heading."""
    ops = bytearray(_column(72, 700, _prose(LEFT, 4)))
    ops += _at(72, 644, "Note")
    ops += _at(97, 644, "amber anchor arrow", font="F2")
    ops += _at(72, 630, "atlas matters to us all.")
    ops += _column(72, 616, _prose(RIGHT, 4))
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    assert not any(isinstance(b, Heading) for b in doc.blocks)
    assert "Note amber anchor arrow atlas matters" in " ".join(plain_text(doc.blocks).split())


def test_a_column_that_holds_a_table_is_still_a_column() -> None:
    """Three section columns, the third holding only a table of short cells: the third
    column stands at the pitch of the first two, so the second column's lines are read
    whole, before the table, and never as its cells."""
    ops = bytearray(_column(72, 700, _prose(LEFT, 40), 16))
    ops += _column(236, 700, _prose(RIGHT, 40), 16)
    for i in range(30):
        ops += _at(400, 700 - 16 * i, ["St", "ati", "on"][i % 3])
        ops += _at(426, 700 - 16 * i, str(10 + i))
        ops += _at(453, 700 - 16 * i, ["Yearly", "report", "figures"][i % 3])
    doc = read_pdf(_pages_pdf([bytes(ops)]))
    kinds = [(type(b).__name__, set(plain_text([b]).lower().replace(".", "").split()))
             for b in doc.blocks]
    tables = [i for i, (kind, _) in enumerate(kinds) if kind == "Table"]
    right = [i for i, (_, words) in enumerate(kinds) if set(RIGHT) & words]
    assert tables and right and max(right) < min(tables), kinds
    assert all(not set(RIGHT) & kinds[i][1] for i in tables)


def test_one_word_at_the_foot_of_two_pages_is_text_unless_it_stands_in_one_place() -> None:
    """A word ending the last line of two pages at different places is text; a running
    footer of one word stands in one place on every page and goes."""
    pages = []
    for x in (400, 236):
        ops = bytearray(_column(72, 700, _prose(LEFT, 30)))
        ops += _at(x, 80, "charge.")
        ops += _at(290, 40, "Confidential")
        pages.append(bytes(ops))
    text = plain_text(read_pdf(_pages_pdf(pages)).blocks)
    assert text.count("charge.") == 2
    assert "Confidential" not in text
