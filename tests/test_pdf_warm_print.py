"""The warm print's short cuts (issue 34, item 3) print what Playwright's own path prints.

``render_pdf`` prints with one DevTools ``Page.printToPDF`` instead of ``page.pdf`` (which
prints into a stream and reads it back) and, for a page that cannot fetch anything, does not
wait for its load event. Guards of identical output: the same pages, sizes and text as
``page.pdf`` after a ``load`` wait, and a page with an inline image still shows it, also
between pages that take the short cut.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pypdfium2 as pdfium
import pytest

from render_pool.engine.pdf.writer_layout import footer_template, header_template
from render_pool.runtime import browser
from render_pool.runtime.browser import find_chromium
from tests.pdf_office_set import _png

pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium"),
              pytest.mark.slow]  # Chromium

PICTURE = "data:image/png;base64," + base64.b64encode(_png(60, 40)).decode()
BODY = "".join(f"<h2>Part {n}</h2><p>{'Words of the part, over and over. ' * 40}</p>"
               for n in range(1, 7))
PLAIN = f"<!DOCTYPE html><html><head><title>Plain</title></head><body>{BODY}</body></html>"
PICTURED = (f"<!DOCTYPE html><html><head><title>Pictured</title></head><body><h1>Pictured</h1>"
            f'<p><img src="{PICTURE}" alt="a picture" width="300"></p>{BODY}</body></html>')

# the option sets the PDF writer uses (body, cover), and others page.pdf takes
OPTIONS: dict[str, dict[str, Any]] = {
    "writer body": {
        "format": "A4", "print_background": True, "prefer_css_page_size": True,
        "margin": {"top": "20mm", "bottom": "20mm", "left": "18mm", "right": "18mm"},
        "outline": True, "tagged": True, "display_header_footer": True,
        "header_template": header_template("Header text"),
        "footer_template": footer_template("Footer text", "{page}/{pages}")},
    "writer cover": {
        "width": "8.2700in", "height": "11.6900in", "print_background": True,
        "prefer_css_page_size": False,
        "margin": {"top": "0", "bottom": "0", "left": "0", "right": "0"}},
    "defaults": {},
    "letter landscape, scaled, some pages": {
        "format": "Letter", "landscape": True, "scale": 0.8, "page_ranges": "1-2",
        "margin": {"top": "1cm", "left": "40px"}},
}


@pytest.fixture(autouse=True)
def _close_at_end() -> Iterator[None]:
    yield
    browser.close_browser()


def _pages(data: bytes) -> list[tuple[tuple[float, float], str, int]]:
    """Each page's size, text and number of images."""
    pdf = pdfium.PdfDocument(data)
    try:
        return [(tuple(round(v, 2) for v in pdf.get_page_size(i)),
                 pdf[i].get_textpage().get_text_range(),
                 sum(1 for o in pdf[i].get_objects() if o.type == pdfium.raw.FPDF_PAGEOBJ_IMAGE))
                for i in range(len(pdf))]
    finally:
        pdf.close()


def _playwright_print(html: str, options: dict[str, Any]) -> bytes:
    """The page printed the stock way: ``set_content`` until ``load``, then ``page.pdf``."""
    page = browser._state.context.new_page()
    try:
        page.set_content(html, wait_until="load")
        data: bytes = page.pdf(**options)
        return data
    finally:
        page.close()


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_print_equals_playwrights_own(name: str) -> None:
    options = OPTIONS[name]
    for html in (PLAIN, PICTURED):
        ours = _pages(browser.render_pdf(html, pdf_options=options))
        assert ours == _pages(_playwright_print(html, options)), name
        assert len(ours) > 1


def test_an_inline_picture_is_printed_between_pages_that_wait_for_nothing() -> None:
    assert browser.loads_nothing(PLAIN) and not browser.loads_nothing(PICTURED)
    options = OPTIONS["writer body"]
    for html in (PLAIN, PICTURED, PLAIN, PICTURED, PICTURED, PLAIN):
        pages = _pages(browser.render_pdf(html, pdf_options=options))
        assert "Part 6" in "".join(text for _, text, _ in pages)
        assert sum(images for _, _, images in pages) == (1 if html is PICTURED else 0)


def test_options_it_does_not_take_go_through_page_pdf() -> None:
    with pytest.raises(Exception, match=r"(?i)paper format"):
        browser.render_pdf(PLAIN, pdf_options={"format": "no such paper"})
    data = browser.render_pdf(PLAIN, pdf_options={"format": "A4", "width": "600px",
                                                  "margin": {"top": ".5in"}})
    assert _pages(data) == _pages(_playwright_print(
        PLAIN, {"format": "A4", "width": "600px", "margin": {"top": ".5in"}}))


@pytest.mark.parametrize(("html", "expected"), [
    (PLAIN, True),
    ("<p>text &amp; <b>more</b></p><style>p { background: #eee; color: red }</style>", True),
    (PICTURED, False),
    ("<IMG SRC='x.png'>", False),
    ("<p style=\"background-image: URL(data:image/png;base64,AA)\">x</p>", False),
    ("<style>@font-face { font-family: x; src: local(y) }</style>", False),
    ("<style>p { content: '\\75 rl(' }</style>", False),  # a CSS escape can spell anything
    ("<table background='x.png'><tr><td>x</td></tr></table>", False),
    ("<video poster='x.png'></video>", False),
    ("<svg><image href='x.png'/></svg>", False),
    ("<style>@import 'x.css';</style>", False),
    ("<p>a \\ b</p>", False),  # unsure: a backslash is enough to wait
])
def test_what_counts_as_loading_nothing(html: str, expected: bool) -> None:
    assert browser.loads_nothing(html) is expected
