"""Structure of the text flow of untagged PDFs as browsers print them: notes gathered at
the end of the document, list bullets drawn as shapes, listings of short lines of words,
and inline code set smaller than the prose around it.

The PDFs are written here by hand (standard fonts, no tools needed), laid out like
Chromium's prints of pandoc's HTML.
"""

from __future__ import annotations

import pypdfium2 as pdfium

from render_pool.engine.model import (
    Block,
    Code,
    CodeBlock,
    Heading,
    ListBlock,
    NoteRef,
    Paragraph,
    Text,
    walk,
)
from render_pool.engine.pdf.blocks import build_blocks
from render_pool.engine.pdf.chars import page_chars, segments_of
from render_pool.engine.pdf.flow_bullets import drawn_bullets
from render_pool.engine.pdf.layout import Item, order_page
from render_pool.engine.pdf.notes import place_notes, take_endnotes, take_notes
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import text_pdf

WIDTH, HEIGHT = 595, 842
LEFT = 52.0


def _escape(text: str) -> bytes:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")


def _text(x: float, top: float, text: str, size: float = 10.0, font: str = "F1") -> bytes:
    """One run of text whose baseline is ``top`` points from the top of the page."""
    return b"BT /%s %.2f Tf 1 0 0 1 %.2f %.2f Tm (%s) Tj ET\n" % (
        font.encode(),
        size,
        x,
        HEIGHT - top,
        _escape(text),
    )


def _runs(x: float, top: float, runs: list[tuple[str, float, str, float]]) -> bytes:
    """Runs of text one after the other on a line: (text, size, font, rise)."""
    out = b"BT 1 0 0 1 %.2f %.2f Tm " % (x, HEIGHT - top)
    for text, size, font, rise in runs:
        out += b"/%s %.2f Tf %.2f Ts (%s) Tj " % (font.encode(), size, rise, _escape(text))
    return out + b"ET\n"


def _disc(x: float, top: float, d: float = 4.0) -> bytes:
    """A filled circle of diameter ``d`` whose centre is ``top`` from the top (four
    Bezier arcs, as Skia draws a list's disc)."""
    r, k = d / 2, 0.5523 * d / 2
    cx, cy = x + r, HEIGHT - top
    return (
        b"%.2f %.2f m %.2f %.2f %.2f %.2f %.2f %.2f c %.2f %.2f %.2f %.2f %.2f %.2f c "
        b"%.2f %.2f %.2f %.2f %.2f %.2f c %.2f %.2f %.2f %.2f %.2f %.2f c f\n"
        % (
            cx + r,
            cy,
            cx + r,
            cy + k,
            cx + k,
            cy + r,
            cx,
            cy + r,
            cx - k,
            cy + r,
            cx - r,
            cy + k,
            cx - r,
            cy,
            cx - r,
            cy - k,
            cx - k,
            cy - r,
            cx,
            cy - r,
            cx + k,
            cy - r,
            cx + r,
            cy - k,
            cx + r,
            cy,
        )
    )


def _pdf(pages: list[bytes]) -> bytes:
    """A PDF of the given content streams: Helvetica as /F1, Courier /F2, Helvetica-Bold /F3."""
    return text_pdf(pages, ("Helvetica", "Courier", "Helvetica-Bold"), (WIDTH, HEIGHT),
                    b"/WinAnsiEncoding")


def _prose(top: float, lines: list[str]) -> bytes:
    return b"".join(_text(LEFT, top + 13.5 * i, line) for i, line in enumerate(lines))


def _texts(blocks: list[Block]) -> list[str]:
    return ["".join(n.text for n in walk([b]) if isinstance(n, Text)) for b in blocks]


def _page_items(data: bytes, bullets: bool = False) -> tuple[list[list[Item]], list[float]]:
    """Each page's lines in reading order, as the reader lays them out (with the drawn
    bullets added to the characters when ``bullets``)."""
    pdf = pdfium.PdfDocument(data)
    pages, heights = [], []
    for index in range(len(pdf)):
        page = pdf[index]
        height = page.get_size()[1]
        chars = page_chars(page.get_textpage(), height)
        if bullets:
            chars += drawn_bullets(page, height, chars)
        pages.append(order_page(segments_of(chars), [], index, height))
        heights.append(height)
    return pages, heights


def _endnotes_pdf() -> bytes:
    """Two pages: a raised, slightly smaller mark after "checked" on each, and the notes
    section that ends the document ("1. Text" under a rule, as pandoc's HTML prints)."""
    first = (
        _text(LEFT, 80, "Minutes", 20)
        + _runs(
            LEFT,
            120,
            [
                (
                    "Our budget proposed this agenda for every standing budget. This was checked",
                    10,
                    "F1",
                    0,
                ),
                ("1", 8.33, "F1", 3.7),
                (".", 10, "F1", 0),
            ],
        )
        + _prose(
            133.5,
            [
                "And the chair noted every vote of a standing vote before the annual meeting.",
            ],
        )
    )
    second = (
        _runs(
            LEFT,
            80,
            [
                (
                    "Its pending vote deferred every motion near the annual motion. It was checked",
                    10,
                    "F1",
                    0,
                ),
                ("2", 8.33, "F1", 3.7),
                (".", 10, "F1", 0),
            ],
        )
        + _prose(
            93.5,
            [
                "Again by the chair, who noted every member present at the vote.",
            ],
        )
        + _prose(
            140,
            [
                "The committee closed the meeting at noon.",
            ],
        )
        + b"0.5 w %.2f %.2f m %.2f %.2f l S\n" % (LEFT, HEIGHT - 160, 545, HEIGHT - 160)
        + _text(69, 180, "1. Every annual motion seconded its committee.")
        + _text(69, 204, "2. Each annual agenda seconded this chair for each")
        + _text(82, 217.5, "pending agenda.")
    )
    return _pdf([first, second])


def test_notes_that_end_the_document_are_tied_to_their_marks() -> None:
    pages, heights = _page_items(_endnotes_pdf())
    notes: dict[str, list[Block]] = {}
    for index, items in enumerate(pages):
        take_notes(items, heights[index], index, notes)
    assert not notes  # body-size notes at the end of the document are no page's footnotes
    take_endnotes(pages, notes)
    blocks = build_blocks([it for items in pages for it in items])
    place_notes(blocks, list(notes))
    texts = _texts(blocks)
    assert not any("Every annual motion" in t or "pending agenda" in t for t in texts)
    refs = [n.note_id for n in walk(blocks) if isinstance(n, NoteRef)]
    assert len(refs) == 2 and len(set(refs)) == 2
    assert [_texts(notes[r]) for r in refs] == [
        ["Every annual motion seconded its committee."],
        ["Each annual agenda seconded this chair for each pending agenda."],
    ]
    assert any(t.startswith("Our budget") and "checked." in t for t in texts)  # no "1"


def test_a_numbered_list_that_ends_the_document_stays_a_list() -> None:
    data = _pdf(
        [
            _text(LEFT, 80, "Steps", 20)
            + _prose(
                120,
                [
                    "Follow these steps, in the order given, to assemble the shelf on the wall.",
                ],
            )
            + _text(69, 150, "1. Fix the brackets.")
            + _text(69, 164, "2. Lay the board.")
        ]
    )
    pages, _ = _page_items(data)
    notes: dict[str, list[Block]] = {}
    take_endnotes(pages, notes)
    assert not notes
    blocks = build_blocks([it for items in pages for it in items])
    lists = [b for b in blocks if isinstance(b, ListBlock)]
    assert len(lists) == 1 and len(lists[0].items) == 2


def _bullets_pdf() -> bytes:
    """A list whose bullets are filled circles (no glyphs), one item wrapping."""
    content = _text(LEFT, 80, "Packing", 20) + _prose(
        120,
        [
            "Take these things on the trip, and check them off before leaving the house.",
        ],
    )
    items = [
        ("Warm boots for the walk", 150),
        ("A map of the coast and a compass, both in", 164),
        ("the waterproof bag", 178),
        ("Water", 192),
    ]
    for text, top in items:
        content += _text(82, top, text)
    for top in (150, 164, 192):
        content += _disc(70, top - 3.5)
    content += _prose(220, ["Then lock the door."])
    return _pdf([content])


def test_bullets_drawn_as_shapes_start_list_items() -> None:
    pages, _ = _page_items(_bullets_pdf(), bullets=True)
    blocks = build_blocks([it for items in pages for it in items])
    lists = [b for b in blocks if isinstance(b, ListBlock)]
    assert len(lists) == 1 and not lists[0].ordered
    assert [_texts(item.blocks) for item in lists[0].items] == [
        ["Warm boots for the walk"],
        ["A map of the coast and a compass, both in the waterproof bag"],
        ["Water"],
    ]
    assert _texts(blocks)[-1] == "Then lock the door."


def test_shapes_that_are_no_bullets_add_nothing() -> None:
    content = (
        _prose(120, ["A line of text with a dot drawn under it, not beside it."])
        + _disc(200, 125)
        + _disc(400, 300)
    )  # under a word's baseline; alone on the page
    pdf = pdfium.PdfDocument(_pdf([content]))
    page = pdf[0]
    chars = page_chars(page.get_textpage(), HEIGHT)
    assert drawn_bullets(page, HEIGHT, chars) == []


def test_a_listing_of_short_lines_of_words_is_code() -> None:
    listing = [
        "Vote 12: 4 for",
        "Motion 95: committee carried",
        "Motion 41: motion carried",
        "Motion 75: motion carried",
        "Vote 44: 65 for",
    ]
    content = _prose(120, ["The votes of the meeting were as follows, counted by the chair."])
    for i, line in enumerate(listing):
        content += _text(LEFT, 150 + 11.3 * i, line, 8.5, "F2")
    content += _prose(230, ["The meeting then closed."])
    doc = read_pdf(_pdf([content]))
    code = [b for b in doc.blocks if isinstance(b, CodeBlock)]
    assert len(code) == 1 and code[0].text.splitlines() == listing


def test_inline_code_set_smaller_does_not_end_the_paragraph() -> None:
    content = (
        _prose(
            120,
            [
                "A reasonable agreement binds a party across an applicable agreement, and each",
                "material clause agrees with each warranty of each exclusive clause and then it",
            ],
        )
        + _runs(
            LEFT,
            147,
            [("set ", 10, "F1", 0), ("licensee_2_key", 8.5, "F2", 0), (" first.", 10, "F1", 0)],
        )
        + _prose(175, ["A new paragraph starts here."])
    )
    doc = read_pdf(_pdf([content]))
    paras = [b for b in doc.blocks if isinstance(b, Paragraph)]
    assert len(paras) == 2
    assert [n.text for n in walk(paras[:1]) if isinstance(n, Code)] == ["licensee_2_key"]


def _column(x: float, top: float, lines: list[str]) -> bytes:
    return b"".join(_text(x, top + 13.5 * i, line) for i, line in enumerate(lines))


FILL = "and the members of the board read the long report"
RIGHT_COLUMN = [
    "then they went home",
    *["and the members of the board read the short notes"] * 18,
    "and went home.",
]


def test_a_paragraph_goes_on_in_the_next_column_after_a_full_line() -> None:
    """The left column's last line is full and ends a sentence; the next sentence of the
    same paragraph opens the right column."""
    left = ["The board met at noon", *[FILL] * 28, FILL + "."]
    right = ["Nobody asked any question", *RIGHT_COLUMN]
    doc = read_pdf(_pdf([_column(LEFT, 100, left) + _column(310, 100, right)]))
    texts = _texts([b for b in doc.blocks if isinstance(b, Paragraph)])
    assert len(texts) == 1
    assert "long report. Nobody asked any question then they went home" in texts[0]


def test_a_list_goes_on_in_the_next_column_at_its_level() -> None:
    """A nested list cut by a column break: the right column's dashes stay nested."""
    left = _column(LEFT, 100, ["The board met at noon", *[FILL] * 26, "and went home."])
    left += _text(64, 100 + 13.5 * 28, "\x95 fruit") + _text(88, 100 + 13.5 * 29, "\x96 apples")
    left += _text(88, 100 + 13.5 * 30, "\x96 pears")
    right = _text(346, 100, "\x96 plums") + _text(322, 113.5, "\x95 bread")
    right += _column(310, 140, ["The shopping was done", *RIGHT_COLUMN])
    doc = read_pdf(_pdf([left + right]))
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert len(lists) == 1
    items = lists[0].items
    assert [_texts(item.blocks[:1]) for item in items] == [["fruit"], ["bread"]]
    nested = items[0].blocks[1]
    assert isinstance(nested, ListBlock)
    assert [_texts(item.blocks) for item in nested.items] == [["apples"], ["pears"], ["plums"]]


def test_a_bold_phrase_filling_a_line_is_no_heading() -> None:
    content = (
        _prose(
            120,
            [
                "Each daily tablet is stored in its box under a mild light, and so the dose keeps",
                "its strength for a long time. Note",
            ],
        )
        + _text(LEFT, 147, "the very rare common reactions", 10, "F3")
        + _prose(
            160.5,
            [
                "matters. A doctor reports every reaction to the pharmacist after the visit.",
            ],
        )
    )
    doc = read_pdf(_pdf([content]))
    assert not [b for b in doc.blocks if isinstance(b, Heading)]
    assert len([b for b in doc.blocks if isinstance(b, Paragraph)]) == 1


def test_a_page_note_is_not_taken_from_a_numbered_list_above_it() -> None:
    """Both "2. symptom" (a list item low on the page) and "2 Our ..." (the note at the
    page foot) could be note 2: the note's own style (no full stop) wins."""
    mark = [("1", 7.0, "F1", 4.0)]
    content = _runs(LEFT, 480, [("The dose was checked", 10, "F1", 0), *mark, (".", 10, "F1", 0)])
    content += _runs(
        LEFT,
        493.5,
        [("A symptom was seen", 10, "F1", 0), ("2", 7.0, "F1", 4.0), (".", 10, "F1", 0)],
    )
    content += _text(64, 520, "1. daily dose severe") + _text(64, 533.5, "2. symptom daily")
    content += _text(LEFT, 560, "The visit then ended.")
    content += _text(LEFT, 760, "1 A rare symptom needs a doctor.", 8)
    content += _text(LEFT, 772, "2 Our common dose avoids each symptom.", 8)
    doc = read_pdf(_pdf([content]))
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert len(lists) == 1 and len(lists[0].items) == 2
    assert sorted(_texts(blocks)[0] for blocks in doc.notes.values()) == [
        "A rare symptom needs a doctor.",
        "Our common dose avoids each symptom.",
    ]


def test_a_listing_goes_on_in_the_next_column() -> None:
    left = _column(LEFT, 100, ["The board met at noon", *[FILL] * 26, "and went home:"])
    for i, line in enumerate(["Vote 22: 19 for", "Vote 94: 34 for"]):
        left += _text(LEFT, 100 + 13.5 * 28 + 11.3 * i, line, 8.5, "F2")
    right = b""
    for i, line in enumerate(["Vote 42: 68 for", "Motion 94: committee carried"]):
        right += _text(310, 100 + 11.3 * i, line, 8.5, "F2")
    right += _column(310, 140, ["The votes were counted", *RIGHT_COLUMN])
    doc = read_pdf(_pdf([left + right]))
    code = [b for b in doc.blocks if isinstance(b, CodeBlock)]
    assert [c.text.splitlines() for c in code] == [
        ["Vote 22: 19 for", "Vote 94: 34 for", "Vote 42: 68 for", "Motion 94: committee carried"]
    ]


def test_read_pdf_ties_the_notes_that_end_the_document_to_their_marks() -> None:
    """A numbered list closing the document (a notes section) becomes the notes its marks point at."""
    doc = read_pdf(_endnotes_pdf())
    refs = [n.note_id for n in walk(doc.blocks) if isinstance(n, NoteRef)]
    assert len(refs) == 2 and sorted(refs) == sorted(doc.notes)
    assert not any("Every annual motion" in t for t in _texts(doc.blocks))


def test_read_pdf_reads_bullets_drawn_as_shapes_as_a_list() -> None:
    """List discs drawn as shapes, not glyphs, still make a list."""
    doc = read_pdf(_bullets_pdf())
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert len(lists) == 1 and len(lists[0].items) == 3
