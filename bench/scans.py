"""Scanned copies of born-digital PDFs, for the OCR bench and tests.

Each page is rasterised with pypdfium2 at ``dpi`` in greyscale, turned slightly (``skew``
degrees, white fill), sprinkled with speckle noise, optionally turned by a right angle (a
page fed sideways), and the pages are assembled into an image-only PDF: no text layer.
"""

from __future__ import annotations

import io
import random
from typing import Any

import pypdfium2 as pdfium
from PIL import Image


def _noisy(image: Image.Image, amount: float, rng: random.Random) -> Image.Image:
    """``amount`` of the pixels flipped to black or white (salt and pepper)."""
    pixels = image.load()
    width, height = image.size
    for _ in range(int(width * height * amount)):
        x, y = rng.randrange(width), rng.randrange(height)
        pixels[x, y] = 0 if rng.random() < 0.5 else 255
    return image


def scan_pages(pdf_bytes: bytes, dpi: float = 200.0, skew: float = 0.6, noise: float = 0.002,
               turn: dict[int, int] | None = None, seed: int = 7) -> list[Image.Image]:
    """The pages of ``pdf_bytes`` as scanned greyscale images; ``turn`` maps a page index to
    the degrees (90/180/270, counter-clockwise) that page is fed turned."""
    rng = random.Random(seed)
    pdf = pdfium.PdfDocument(pdf_bytes)
    images = []
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            image = page.render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L")
            page.close()
            angle = skew * (1 if index % 2 else -1)
            image = image.rotate(angle, resample=Image.Resampling.BILINEAR, fillcolor=255)
            image = _noisy(image, noise, rng)
            if turn and turn.get(index):
                image = image.rotate(turn[index], expand=True)
            images.append(image)
    finally:
        pdf.close()
    return images


def image_only_pdf(images: list[Image.Image], dpi: float = 200.0) -> bytes:
    """An image-only PDF, one page per image at ``dpi`` (Pillow; lossless Flate for 1-bit,
    JPEG at quality 90 otherwise, as a scanner would write)."""
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:],
                   resolution=dpi, quality=90)
    return out.getvalue()


def scanned_copy(pdf_bytes: bytes, dpi: float = 200.0, **kwargs: Any) -> bytes:
    """A scanned (image-only) copy of ``pdf_bytes``; see :func:`scan_pages`."""
    return image_only_pdf(scan_pages(pdf_bytes, dpi, **kwargs), dpi)
