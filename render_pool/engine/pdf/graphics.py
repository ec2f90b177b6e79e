"""Page graphics the PDF reader uses: ruling lines (for tables) and raster images.

Rules come from path objects: stroked axis-aligned segments, and thin filled rectangles
(many producers, Chromium included, draw borders as filled bars). Images are rendered
through pdfium (so masks and transforms apply) and encoded as PNG.
"""

from __future__ import annotations

import ctypes
import itertools
import logging
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.engine.pdf.png import encode_png

log = logging.getLogger(__name__)

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_IMAGE_PIXELS = 25_000_000
MIN_IMAGE_SIDE_PT = 12.0
THIN = 2.5


@dataclass(slots=True)
class Rule:
    """A horizontal (``horizontal=True``: y = a, from b0 to b1 in x) or vertical rule."""

    horizontal: bool
    a: float
    b0: float
    b1: float


@dataclass(slots=True)
class PageImage:
    """A raster image placed on the page (top-down box) with its PNG bytes."""

    x0: float
    x1: float
    top: float
    bottom: float
    png: bytes
    width_px: int
    height_px: int
    mcid: int = -1  # marked-content id (tagged PDFs), -1 when none


@dataclass(slots=True)
class FillRect:
    """A filled, non-thin rectangle (cell shading), top-down box."""

    x0: float
    x1: float
    top: float
    bottom: float


Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def _own_matrix(obj: pdfium.PdfObject) -> Matrix:
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return _IDENTITY
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _compose(inner: Matrix, outer: Matrix) -> Matrix:
    """The matrix applying ``inner`` first, then ``outer`` (PDF row-vector convention)."""
    a, b, c, d, e, f = inner
    a2, b2, c2, d2, e2, f2 = outer
    return (a * a2 + b * c2, a * b2 + b * d2, c * a2 + d * c2, c * b2 + d * d2,
            e * a2 + f * c2 + e2, e * b2 + f * d2 + f2)


def page_matrix(obj: pdfium.PdfObject) -> Matrix:
    """An object's matrix to page space: pdfium gives an object inside a form XObject its
    matrix within the form, so the forms' own matrices are applied on the way out (a
    figure placed as a form would otherwise land at the page's origin, over the text)."""
    m = _own_matrix(obj)
    form = obj.container
    depth = 0
    while form is not None and depth < 16:
        m = _compose(m, _own_matrix(form))
        form = form.container
        depth += 1
    return m


def _subpaths(obj: pdfium.PdfObject) -> list[tuple[list[tuple[float, float]], bool]]:
    """Polylines of a path object in page coordinates; curves make a subpath unusable."""
    ma, mb, mc, md, me, mf = page_matrix(obj)
    out: list[tuple[list[tuple[float, float]], bool]] = []
    pts: list[tuple[float, float]] = []
    closed = False
    curved = False
    x, y = ctypes.c_float(), ctypes.c_float()
    n = pdfium_c.FPDFPath_CountSegments(obj)
    for i in range(max(0, min(n, 2000))):
        seg = pdfium_c.FPDFPath_GetPathSegment(obj, i)
        if not seg or not pdfium_c.FPDFPathSegment_GetPoint(seg, x, y):
            continue
        px = ma * x.value + mc * y.value + me
        py = mb * x.value + md * y.value + mf
        kind = pdfium_c.FPDFPathSegment_GetType(seg)
        if kind == pdfium_c.FPDF_SEGMENT_MOVETO:
            if len(pts) > 1 and not curved:
                out.append((pts, closed))
            pts, closed, curved = [(px, py)], False, False
        else:
            if kind == pdfium_c.FPDF_SEGMENT_BEZIERTO:
                curved = True
            pts.append((px, py))
        if pdfium_c.FPDFPathSegment_GetClose(seg):
            closed = True
    if len(pts) > 1 and not curved:
        out.append((pts, closed))
    return out


def page_rules(page: pdfium.PdfPage, height: float) -> tuple[list[Rule], list[FillRect]]:
    """Axis-aligned ruling lines and shaded rectangles of a page (top-down coordinates)."""
    rules: list[Rule] = []
    fills: list[FillRect] = []
    count = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2):
        count += 1
        if count > 20000:
            break
        fill_mode = ctypes.c_int(0)
        stroke = ctypes.c_int(0)
        pdfium_c.FPDFPath_GetDrawMode(obj, ctypes.byref(fill_mode), ctypes.byref(stroke))
        for pts, closed in _subpaths(obj):
            xs = [p[0] for p in pts]
            ys = [height - p[1] for p in pts]
            w, h = max(xs) - min(xs), max(ys) - min(ys)
            is_rect = len(pts) in (4, 5) and all(
                abs(pts[i][0] - pts[i - 1][0]) < 0.5 or abs(pts[i][1] - pts[i - 1][1]) < 0.5
                for i in range(1, len(pts)))
            if is_rect and (fill_mode.value or closed) and min(w, h) <= THIN and max(w, h) > 3:
                if w >= h:
                    rules.append(Rule(True, (min(ys) + max(ys)) / 2, min(xs), max(xs)))
                else:
                    rules.append(Rule(False, (min(xs) + max(xs)) / 2, min(ys), max(ys)))
                continue
            if is_rect and fill_mode.value and not stroke.value:
                fills.append(FillRect(min(xs), max(xs), min(ys), max(ys)))
                continue
            if not stroke.value:
                continue
            seq = [*pts, pts[0]] if closed else pts
            for (xa, ya), (xb, yb) in itertools.pairwise(seq):
                ya, yb = height - ya, height - yb
                if abs(ya - yb) < 0.5 and abs(xa - xb) > 3:
                    rules.append(Rule(True, ya, min(xa, xb), max(xa, xb)))
                elif abs(xa - xb) < 0.5 and abs(ya - yb) > 3:
                    rules.append(Rule(False, xa, min(ya, yb), max(ya, yb)))
    return rules, fills


def page_images(page: pdfium.PdfPage, height: float, budget: list[int]) -> tuple[
        list[PageImage], int]:
    """Raster images of a page as PNG; returns (images, count of images skipped).

    ``budget`` is a one-element list: the number of images the document may still take.
    Tiny images (rules, spacers) are ignored; huge ones and failures are skipped.
    """
    images: list[PageImage] = []
    skipped = 0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        if obj.container is None:
            try:
                left, bottom, right, top = obj.get_bounds()
            except pdfium.PdfiumError:
                continue
        else:  # inside a form XObject: its bounds are in the form's space
            ma, mb, mc, md, me, mf = page_matrix(obj)
            xs = [ma * u + mc * v + me for u, v in ((0, 0), (1, 0), (0, 1), (1, 1))]
            ys = [mb * u + md * v + mf for u, v in ((0, 0), (1, 0), (0, 1), (1, 1))]
            left, right, bottom, top = min(xs), max(xs), min(ys), max(ys)
        if right - left < MIN_IMAGE_SIDE_PT or top - bottom < MIN_IMAGE_SIDE_PT:
            continue
        if budget[0] <= 0:
            skipped += 1
            continue
        try:
            pw, ph = obj.get_px_size()
            if pw * ph > MAX_IMAGE_PIXELS or pw <= 0 or ph <= 0:
                skipped += 1
                continue
            try:
                bitmap = obj.get_bitmap(render=True)
            except pdfium.PdfiumError:
                bitmap = obj.get_bitmap(render=False)
            # the bitmap's buffer belongs to pdfium: it is released with the wrapper
            if bitmap.width * bitmap.height > MAX_IMAGE_PIXELS:
                skipped += 1
                continue
            png = encode_png(bitmap.buffer, bitmap.width, bitmap.height, bitmap.stride,
                             bitmap.format)
            w_px, h_px = bitmap.width, bitmap.height
            del bitmap
        except (pdfium.PdfiumError, ValueError, KeyError, OSError) as exc:
            log.debug("image skipped: %s", exc)
            skipped += 1
            continue
        budget[0] -= 1
        mcid = pdfium_c.FPDFPageObj_GetMarkedContentID(obj.raw)
        images.append(PageImage(left, right, height - top, height - bottom, png, w_px, h_px,
                                mcid))
    return images, skipped
