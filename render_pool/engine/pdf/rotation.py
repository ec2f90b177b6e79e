"""Pages turned upright before they are read: ``/Rotate`` and text set sideways.

A page is read in the direction its text runs. The dominant direction of the page's
characters (from their text matrices, on a sample) decides: when most of the text runs
upwards, downwards or upside down in the page's own coordinates (a landscape page in a
portrait document, a table printed sideways, a page with ``/Rotate`` whose content is
drawn turned so that it shows upright), the page's content, link areas and boxes are
turned in memory so that this text runs left to right, and ``/Rotate`` is cleared. A page
with ``/Rotate`` whose text runs left to right in its own coordinates (it shows sideways)
is read as its text runs, since that is the only way it reads as text.

pdfium applies the turn by wrapping the content stream in a ``cm`` (and moving the
annotations), so characters, rules, images and links all come out in the new coordinates
once the page is loaded again; nothing is saved.
"""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

SAMPLE = 600  # characters looked at per page: enough to tell the direction, cheap


def text_direction(textpage: pdfium.PdfTextPage) -> int:
    """The direction (0, 90, 180 or 270 degrees counter-clockwise) most of the page's
    characters run in, 0 when no direction has a majority, -1 when there are none."""
    count = textpage.count_chars()
    if count <= 0:
        return -1
    step = max(1, count // SAMPLE)
    votes = {0: 0, 90: 0, 180: 0, 270: 0}
    mat = pdfium_c.FS_MATRIX()
    raw = textpage.raw  # the handle itself: the wrapper converts through a property per call
    for i in range(0, count, step):
        code = pdfium_c.FPDFText_GetUnicode(raw, i)
        if code <= 32 or code in (0xFFFE, 0xFFFF) or pdfium_c.FPDFText_IsGenerated(
                raw, i) == 1:
            continue
        if not pdfium_c.FPDFText_GetMatrix(raw, i, mat):
            continue
        if abs(mat.a) >= abs(mat.b):
            votes[0 if mat.a > 0 else 180] += 1
        else:
            votes[90 if mat.b > 0 else 270] += 1
    total = sum(votes.values())
    if not total:
        return -1
    best = max(votes, key=lambda k: votes[k])
    return best if votes[best] * 2 > total else 0


def upright_page(pdf: pdfium.PdfDocument, index: int, page: pdfium.PdfPage,
                 textpage: pdfium.PdfTextPage) -> tuple[pdfium.PdfPage | None, int]:
    """The page turned so that its text runs left to right (None when it was not turned,
    ``page`` and ``textpage`` still open then; closed otherwise), and the angle its text
    shows at on screen (degrees counter-clockwise; 0 when it shows upright)."""
    rotation = page.get_rotation()
    direction = text_direction(textpage)
    if direction < 0 or (direction == 0 and rotation == 0):
        return None, 0  # no text (a scan keeps its /Rotate for OCR), or upright already
    shown = (direction - rotation) % 360
    x0, y0, x1, y1 = page.get_cropbox()
    w, h = x1 - x0, y1 - y0
    # content coordinates (x, y) -> turned coordinates with the origin at the bottom left
    if direction == 90:  # text runs upwards: turn clockwise
        matrix, size = (0.0, -1.0, 1.0, 0.0, -y0, x1), (h, w)
    elif direction == 180:
        matrix, size = (-1.0, 0.0, 0.0, -1.0, x1, y1), (w, h)
    elif direction == 270:  # text runs downwards: turn counter-clockwise
        matrix, size = (0.0, 1.0, -1.0, 0.0, y1, -x0), (h, w)
    else:
        matrix, size = (1.0, 0.0, 0.0, 1.0, -x0, -y0), (w, h)
    m = pdfium_c.FS_MATRIX(*matrix)
    if not pdfium_c.FPDFPage_TransFormWithClip(page, m, None):
        return None, 0
    pdfium_c.FPDFPage_TransformAnnots(page, *matrix)
    pdfium_c.FPDFPage_SetRotation(page, 0)
    pdfium_c.FPDFPage_SetMediaBox(page, 0.0, 0.0, *size)
    pdfium_c.FPDFPage_SetCropBox(page, 0.0, 0.0, *size)
    textpage.close()
    page.close()
    return pdf[index], shown
