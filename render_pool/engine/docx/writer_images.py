"""Image sizing for the DOCX writer: natural size from the image header, scaled to fit.

python-docx reads pixel size and DPI from PNG, JPEG, GIF, BMP and TIFF headers. A missing DPI
(python-docx then reports 72) is taken as 96, the CSS pixel, so screenshots come out at their
on-screen size. Explicit ``width_px``/``height_px`` from the model (``<img width>``) win.
"""

from __future__ import annotations

from docx.image.image import Image as DocxImage
from docx.shared import Emu

EMU_PER_INCH = 914400
CSS_DPI = 96


class UnsupportedImage(ValueError):
    """The bytes are not an image Word can embed (SVG, WebP, corrupt data...)."""


def fitted_size(data: bytes, max_width: int, max_height: int, width_px: int | None = None,
                height_px: int | None = None) -> tuple[Emu, Emu]:
    """Width and height in EMU: natural size, aspect ratio kept, within the given box."""
    try:
        img = DocxImage.from_blob(data)
        px_w, px_h = img.px_width, img.px_height
        dpi_x, dpi_y = img.horz_dpi, img.vert_dpi
    except Exception as exc:  # unknown formats and corrupt headers raise many types
        raise UnsupportedImage(str(exc) or type(exc).__name__) from exc
    if px_w <= 0 or px_h <= 0:
        raise UnsupportedImage("image has no size")
    dpi_x = CSS_DPI if not dpi_x or dpi_x == 72 else dpi_x
    dpi_y = CSS_DPI if not dpi_y or dpi_y == 72 else dpi_y
    width = px_w / dpi_x * EMU_PER_INCH
    height = px_h / dpi_y * EMU_PER_INCH
    ratio = height / width
    if width_px and height_px:
        width = width_px / CSS_DPI * EMU_PER_INCH
        height = height_px / CSS_DPI * EMU_PER_INCH
    elif width_px:
        width = width_px / CSS_DPI * EMU_PER_INCH
        height = width * ratio
    elif height_px:
        height = height_px / CSS_DPI * EMU_PER_INCH
        width = height / ratio
    scale = min(1.0, max_width / width, max_height / height)
    return Emu(max(1, int(width * scale))), Emu(max(1, int(height * scale)))
