"""Text repeated on every page of a PDF: furniture only beside a page's body.

A line copied onto every page (a one-line PDF printed twice, a rotated test file) used to
be taken as a running header on each page and the document came out empty, with no
warning. Repeated text in a page's top or bottom band is a running header or footer only
when the page has other content; ``include_furniture`` keeps what was taken as furniture.
"""

from __future__ import annotations

import json

import pytest

from render_pool.engine.formats import ReadRequest
from render_pool.engine.json.writer import write_json
from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.model import Block, PageBox, Paragraph, plain_text
from render_pool.engine.pdf.reader import read_pdf
from render_pool.engine.registry import read
from tests.pdf_fixtures import text_pdf

HELLO = "Hello world this is a test line."
HEADER = "Quarterly Operations Review"
BODY = [
    "The northern depot moved its stock to the new racks during the spring.",
    "Deliveries from the coast arrived on time for most of the quarter.",
    "Two vans were replaced after the inspection found worn brakes and tyres.",
    "The night shift asked for better lighting along the loading bay doors.",
    "Returns fell slightly once the packing checklist was printed on each bench.",
]


def _line(x: float, y: float, text: str, size: int = 11) -> bytes:
    return b"BT /F1 %d Tf %.1f %.1f Td (%s) Tj ET\n" % (size, x, y, text.encode())


def _same_line_pdf(pages: int, y: float) -> bytes:
    """``pages`` US Letter pages, each holding only ``HELLO`` at height ``y``."""
    return text_pdf([_line(72, y, HELLO)] * pages)


def _report_pdf(pages: int = 4) -> bytes:
    """A report: the same header at the top and "Page N" at the foot of every page, body
    text between them that differs from page to page."""
    streams = []
    for n in range(1, pages + 1):
        ops = bytearray(_line(72, 750, HEADER, 9))
        for i, sentence in enumerate(BODY):
            ops += _line(72, 680 - 16 * i, f"{sentence} Part {n}.")
        ops += _line(290, 40, f"Page {n}", 9)
        streams.append(bytes(ops))
    return text_pdf(streams)


def _pages(block: Block) -> list[int]:
    """The pages ``block`` was read from (its ``prov``)."""
    return [loc.page for loc in getattr(block, "prov", []) if isinstance(loc, PageBox)]


def _body(data: bytes) -> str:
    return plain_text(read_pdf(data).blocks)


@pytest.mark.parametrize("pages", [2, 3])
@pytest.mark.parametrize("y", [740.0, 40.0, 400.0], ids=["top", "bottom", "middle"])
def test_a_line_alone_on_every_page_is_the_body_of_each_page(pages: int, y: float) -> None:
    doc = read_pdf(_same_line_pdf(pages, y))
    paras = [b for b in doc.blocks if isinstance(b, Paragraph)]
    assert [plain_text(p.children) for p in paras] == [HELLO] * pages
    assert sorted(n for p in paras for n in _pages(p)) == list(range(1, pages + 1))
    assert not doc.furniture
    markdown = write_markdown(doc)
    assert markdown.count(HELLO) == pages
    blocks = json.loads(write_json(doc))["blocks"]
    assert len(blocks) == pages


def test_a_line_alone_on_every_page_is_kept_with_include_furniture_too() -> None:
    doc = read_pdf(_same_line_pdf(2, 740.0), include_furniture=True)
    assert write_markdown(doc).count(HELLO) == 2
    assert not doc.furniture  # it was the pages' body, not furniture


def test_one_page_of_the_same_line_is_unchanged() -> None:
    assert _body(_same_line_pdf(1, 740.0)) == HELLO


def test_a_running_header_and_page_numbers_beside_body_text_are_dropped() -> None:
    data = _report_pdf(4)
    text = _body(data)
    assert HEADER not in text and "Page 2" not in text
    for n in range(1, 5):
        assert f"{BODY[0]} Part {n}." in text
    doc = read_pdf(data)
    assert not doc.furniture
    assert HEADER not in write_markdown(doc)


def test_include_furniture_keeps_the_running_header_and_page_numbers() -> None:
    data = _report_pdf(4)
    doc = read_pdf(data, include_furniture=True)
    assert plain_text(doc.blocks) == _body(data)  # the body is the same either way
    kept = [plain_text(b.children) for b in doc.furniture if isinstance(b, Paragraph)]
    assert kept.count(HEADER) == 1  # once, with where it stood on every page
    assert {"Page 1", "Page 2", "Page 3", "Page 4"} <= set(kept)
    header = next(b for b in doc.furniture
                  if isinstance(b, Paragraph) and plain_text(b.children) == HEADER)
    assert _pages(header) == [1, 2, 3, 4]
    markdown = write_markdown(doc)
    assert markdown.index("---") < markdown.index(HEADER)  # after the body's rule
    assert json.loads(write_json(doc))["furniture"]


def test_a_running_header_on_a_blank_page_of_the_report_still_goes() -> None:
    """The report's last page is blank but for its header and number (a book's verso):
    the header stands beside body text on the other pages, so it is furniture there too."""
    streams = []
    for n in range(1, 5):
        ops = bytearray(_line(72, 750, HEADER, 9))
        if n < 4:
            for i, sentence in enumerate(BODY):
                ops += _line(72, 680 - 16 * i, f"{sentence} Part {n}.")
        ops += _line(290, 40, f"Page {n}", 9)
        streams.append(bytes(ops))
    doc = read_pdf(text_pdf(streams), include_furniture=True)
    text = plain_text(doc.blocks)
    assert HEADER not in text and "Page 4" not in text and f"{BODY[0]} Part 3." in text
    header = next(b for b in doc.furniture
                  if isinstance(b, Paragraph) and plain_text(b.children) == HEADER)
    assert _pages(header) == [1, 2, 3, 4]


def test_a_line_alone_on_pages_with_numbers_is_still_their_body() -> None:
    """Page numbers are not body: a line that is each page's only other text stays."""
    doc = read_pdf(text_pdf([_line(72, 740, HELLO) + _line(290, 40, f"{n}", 9)
                             for n in (1, 2, 3)]), include_furniture=True)
    paras = [b for b in doc.blocks if isinstance(b, Paragraph)]
    assert [plain_text(p.children) for p in paras] == [HELLO] * 3
    assert [plain_text(b.children) for b in doc.furniture
            if isinstance(b, Paragraph)] == ["1", "2", "3"]


def test_include_furniture_of_a_request_reaches_the_pdf_reader() -> None:
    """The option as /api/convert and the command line hand it over (it was read for DOCX
    only: for a PDF the running header stayed out whatever was asked)."""
    data = _report_pdf(4)
    assert not read(data).furniture
    kept = read(data, options=ReadRequest(include_furniture=True)).furniture
    assert HEADER in [plain_text(b.children) for b in kept if isinstance(b, Paragraph)]


def test_a_line_alone_above_every_page_is_not_their_body() -> None:
    """Above the page (y past its height): no viewer shows it, and pdftotext reads nothing;
    pages holding only that line have no body (pypdf's imagemagick-images.pdf is so)."""
    beside = text_pdf([_line(72, 800, HELLO) + _line(72, 400, f"Body of page {n}.")
                       for n in (1, 2)])
    assert HELLO not in _body(beside)
    assert "Body of page 2." in _body(beside)
    alone = text_pdf([_line(72, 800, HELLO)] * 2)
    assert plain_text(read_pdf(alone, ocr="off").blocks) == ""
