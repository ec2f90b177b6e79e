"""What OCR spends on a page (issue 34): a scan holding no detail finer than half the
rendered pixels is recognised at half the resolution, with the same words; a sharper page at
full resolution; the clean-up's fast median filter gives Pillow's pixels."""

from __future__ import annotations

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw, ImageFilter

from bench.paged_scans import text_page
from bench.scans import image_only_pdf
from render_pool.engine.ocr import OcrPage, tesseract
from render_pool.engine.ocr.clean import _median3
from render_pool.engine.pdf.ocr import render_page
from tests.pdf_fixtures import dense_pdf


def _rendered(dpi: float) -> tuple[Image.Image, float]:
    """A text page scanned at ``dpi``, rendered for OCR: the image and its detail share."""
    pdf = pdfium.PdfDocument(image_only_pdf([text_page(3, dpi)], dpi))
    try:
        image, _, detail = render_page(pdf, 0)
    finally:
        pdf.close()
    return image, detail


def test_the_detail_of_a_scan_is_its_resolution_over_the_rendering() -> None:
    assert _rendered(100)[1] == pytest.approx(1 / 3, abs=0.01)
    assert _rendered(300)[1] == pytest.approx(1.0)
    pdf = pdfium.PdfDocument(dense_pdf(400, 40))  # text: sharp at every resolution
    try:
        assert render_page(pdf, 0)[2] == 1.0
    finally:
        pdf.close()


def _sizes_read(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The sizes of the images Tesseract is given from now on."""
    seen: list[tuple[int, int]] = []
    real = tesseract._hocr

    def spy(image: Image.Image, langs: str, timeout: float) -> str:
        seen.append(image.size)
        return real(image, langs, timeout)

    monkeypatch.setattr(tesseract, "_hocr", spy)
    return seen


def _words(page: OcrPage) -> list[tuple[str, int, int, int, int]]:
    return [(w.text, w.x0, w.top, w.x1, w.bottom) for w in page.words]


@pytest.mark.slow  # Tesseract, three readings
def test_a_coarse_scan_is_read_at_half_resolution_with_the_same_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    image, detail = _rendered(100)
    seen = _sizes_read(monkeypatch)
    coarse = tesseract.recognise(image, "eng", detail=detail)
    full = tesseract.recognise(image, "eng")  # as if the page were sharp
    width, height = image.size
    assert seen == [((width + 1) // 2, (height + 1) // 2), (width, height)]  # reduce rounds up
    assert [w[0] for w in _words(coarse)] == [w[0] for w in _words(full)]
    assert len(full.words) > 50
    tops: list[int] = []
    for got, want in zip(_words(coarse), _words(full), strict=True):  # boxes in full pixels
        (_, x0, top, x1, bottom), (_, x0_, top_, x1_, bottom_) = got, want
        assert max(abs(x0 - x0_), abs(x1 - x1_), abs(bottom - bottom_)) <= 3, (got, want)
        tops.append(abs(top - top_))
    # the tops too, but for an i's dot, which the coarser reading may leave out of a box
    assert max(tops) <= 12 and sorted(tops)[len(tops) // 2] <= 2
    sharp, sharp_detail = _rendered(300)
    seen.clear()
    tesseract.recognise(sharp, "eng", detail=sharp_detail)
    assert seen == [sharp.size]


def test_the_clean_up_median_is_pillows() -> None:
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(37, 53), dtype=np.uint8)
    pixels[rng.random(pixels.shape) < 0.5] = 255  # paper with specks, as a scan
    image = Image.fromarray(pixels)
    draw = ImageDraw.Draw(image)
    draw.line((0, 10, 52, 12), fill=0, width=2)
    want = np.asarray(image.filter(ImageFilter.MedianFilter(3)))
    assert np.array_equal(_median3(np.asarray(image)), want)
