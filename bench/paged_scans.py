"""Many-page scans made on the spot, for the tests and bench of page progress: pages of plain
text drawn with Pillow's own font (no fonts of the system needed) and wrapped into an
image-only PDF, each page a heading and a few paragraphs that OCR reads back."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from bench.scans import image_only_pdf

_WORDS = ("report", "quarter", "budget", "review", "figures", "growth", "market", "customer",
          "service", "station", "engine", "delivery", "planning", "summary", "results")


def text_page(number: int, dpi: float) -> Image.Image:
    """One letter-size page at ``dpi``: a heading and three paragraphs of ordinary words."""
    width, height = int(8.5 * dpi), int(11 * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = max(10, int(dpi * 0.16))  # about 11.5 pt: large enough to read at 100 dpi
    heading = ImageFont.load_default(size=int(size * 1.6))
    body = ImageFont.load_default(size=size)
    margin = int(dpi)
    y = margin
    draw.text((margin, y), f"Chapter {number}", font=heading, fill=0)
    y += int(size * 3.2)
    for paragraph in range(3):
        for line in range(4):
            words = [_WORDS[(number * 7 + paragraph * 5 + line * 3 + k) % len(_WORDS)]
                     for k in range(8)]
            draw.text((margin, y), " ".join(words).capitalize(), font=body, fill=0)
            y += int(size * 1.5)
        y += size
    return image


def text_scan(pages: int, dpi: float = 100.0) -> bytes:
    """An image-only PDF of ``pages`` text pages at ``dpi`` (no text layer: every page goes
    to OCR)."""
    return image_only_pdf([text_page(n + 1, dpi) for n in range(pages)], dpi)
