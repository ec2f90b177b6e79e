"""OCR of PDF pages into the same characters the text-layer path reads.

Which pages: ``ocr="auto"`` reads a page by OCR when it has no usable text (no text layer
but images, glyphs that do not map to Unicode, or only an invisible OCR layer of poor
quality), ``"force"`` reads every page by OCR, ``"off"`` never. A page is rendered with
pdfium at about 300 dpi (capped by pixel count) and recognised by the engine behind
:mod:`render_pool.engine.ocr`, each page with its own time limit. Where the pages are recognised:

- spread over the render pool (the service's ``/api/convert``): the reader, called with
  ``ocr_fanout``, stops at :class:`OcrPending` naming the pages when there are several; the
  caller runs :func:`recognise_pdf_page` for each as a pool job of its own (so the pool's
  per-company turns, time limit and memory bound apply per page) and reads the document again
  with the results (``ocr_pages``);
- inside the reading job otherwise (batches, in-process use, a single page): in parallel
  threads, up to the number of cores, while the next pages render.

The recognised words become :class:`Char` objects in page points (top-down) with a size
from the engine's line size estimate and a baseline shared by the whole line, then
:func:`segments_of` and :func:`order_page` build the lines exactly as for a text layer, so
columns, headings, lists and tables come from the same logic.
"""

from __future__ import annotations

import io
import math
import os
import re
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from render_pool.engine.ocr import OcrPage, OcrWord, recognise
from render_pool.engine.pdf.borderless import find_text_tables
from render_pool.engine.pdf.chars import Char, segments_of
from render_pool.engine.pdf.graphics import Rule
from render_pool.engine.pdf.layout import Block as FlowBlock
from render_pool.engine.pdf.layout import Item, Line, order_page
from render_pool.engine.pdf.ocr_faces import line_sizes, word_faces
from render_pool.engine.pdf.tables import build_grid_table, find_grids

MODES = ("auto", "force", "off")
DEFAULT_LANGUAGES = "eng"
DPI = 300.0
MAX_PIXELS = 12_000_000  # about A4 at 300 dpi plus margin; bigger pages render coarser
PAGE_TIMEOUT = 60.0  # seconds of recognition per page
SIZE_TOLERANCE = 0.05  # line size estimates closer than this are one font size
MIN_TEXT_CHARS = 10  # fewer visible characters than this is "no text layer"
RAISED_SIZE = 0.6  # a raised note mark's size and rise, as shares of its line's size
RAISED_RISE = 0.35
BULLET_MAX = 0.45  # a bullet is smaller than this share of the line size both ways
_HOLLOW = set("°oO◦○")
_LEADERS = "•◦·*¢«»°©®.,"  # characters an engine makes of a bullet glued to the word
_WORDLIKE = re.compile(r"^[^\W\d_]{2,}$|^\d[\d.,:/%-]*$")
_VOWELS = set("aeiouyäöüéèêáàíóúâôîûAEIOUYÄÖÜÉÈÁÀÍÓÚ")


# what the caller recognised: per page index, (engine reading, pixels per point) or the
# message of the failure that page met (time limit, crash...)
OcrPages = dict[int, "tuple[OcrPage, float] | str"]


@dataclass(slots=True)
class OcrResult:
    """What OCR made of one page: its chars in points, the page size in points (after
    turning it upright) and the engine's reading."""

    items: list[Item]
    width: float
    height: float
    visible: int
    ocr: OcrPage


def _invisible_poor_layer(page: pdfium.PdfPage, text: str) -> bool:
    """True when every text object is invisible (an OCR layer) and its words look poor."""
    seen = False
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=4):
        seen = True
        mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw)
        if mode != pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE:
            return False
    if not seen:
        return False
    tokens = [t.strip(".,;:!?()[]\"'") for t in text.split()]
    tokens = [t for t in tokens if t]
    if not tokens:
        return True
    good = sum(1 for t in tokens if _WORDLIKE.match(t) and (
        t[0].isdigit() or any(c in _VOWELS for c in t) or not t.isascii()))
    return good < 0.6 * len(tokens)


def image_objects(page: pdfium.PdfPage) -> int:
    """How many image objects the page draws (in form XObjects too)."""
    return sum(1 for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4))


def needs_ocr(page: pdfium.PdfPage, text_chars: int, image_count: int, mode: str) -> bool:
    """Whether the open ``page`` should be read by OCR under ``mode`` (see the module doc),
    given its visible characters and image objects."""
    if mode == "off":
        return False
    if mode == "force":
        return True
    if text_chars >= MIN_TEXT_CHARS and not image_count:
        return False  # the common born-digital page: no second look
    if text_chars < MIN_TEXT_CHARS:
        if image_count:
            return True
        textpage = page.get_textpage()  # glyphs there but none mapped to Unicode?
        try:
            mapped: int = textpage.count_chars()
            return mapped >= MIN_TEXT_CHARS
        finally:
            textpage.close()
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
    finally:
        textpage.close()
    return _invisible_poor_layer(page, text)


def render_page(pdf: pdfium.PdfDocument, index: int) -> tuple[Image.Image, float, float]:
    """The page as a greyscale image at about ``DPI`` (fewer when above ``MAX_PIXELS``), its
    scale in pixels per point and the share of those pixels its content fills with detail
    (:func:`content_detail`)."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = DPI / 72.0  # a 200 dpi scan too: upscaled, Tesseract reads it much better
        if width * height * scale * scale > MAX_PIXELS:
            scale = math.sqrt(MAX_PIXELS / max(width * height, 1.0))
        detail = content_detail(page, scale)
        bitmap = page.render(scale=scale, grayscale=True)
        try:
            return bitmap.to_pil().convert("L"), scale, detail
        finally:
            bitmap.close()
    finally:
        page.close()


def content_detail(page: pdfium.PdfPage, scale: float) -> float:
    """The resolution of the finest image ``page`` draws as a share of a rendering at
    ``scale`` pixels per point (a 100 dpi scan rendered at 300 dpi: 1/3), at most 1; 1 when
    the page draws anything else (text, vector graphics: sharp at every resolution) or no
    image. Recognition reads a page coarser when this says the pixels hold nothing finer."""
    finest = 0.0
    try:
        for obj in page.get_objects(max_depth=4):
            if obj.type == pdfium_c.FPDF_PAGEOBJ_FORM:
                continue  # its contents are listed after it
            if obj.type != pdfium_c.FPDF_PAGEOBJ_IMAGE:
                return 1.0
            meta = obj.get_metadata()
            finest = max(finest, float(meta.horizontal_dpi), float(meta.vertical_dpi))
    except pdfium.PdfiumError:
        return 1.0
    return min(1.0, finest / (72.0 * scale)) if finest > 0 else 1.0


def snap_sizes(sizes: list[float], tolerance: float = SIZE_TOLERANCE,
               weights: list[int] | None = None) -> list[float]:
    """Sizes measured with noise, each replaced by the (weighted) median of its cluster
    (sizes within ``tolerance`` of their neighbour) rounded to half a point.

    The layout reader ranks headings by distinct sizes; without this a 13.0 pt and a
    13.2 pt estimate of the same heading style would become two heading levels."""
    weight = weights or [1] * len(sizes)
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    out = list(sizes)
    group: list[int] = []
    for i in [*order, -1]:
        if group and (i < 0 or sizes[i] > sizes[group[-1]] * (1 + tolerance)):
            half, seen, median = sum(weight[j] for j in group) / 2, 0, sizes[group[-1]]
            for j in group:  # sorted by size
                seen += weight[j]
                if seen > half:
                    median = sizes[j]
                    break
            for j in group:
                out[j] = round(median * 2) / 2
            group = []
        if i >= 0:
            group.append(i)
    return out


def snap_document(pages: list[OcrResult]) -> None:
    """The character sizes of all recognised pages of a document snapped together, in
    place (:func:`snap_sizes` over every line's size): one heading style measured 14.7 pt
    on one page and 15.4 pt on another is one size, so the layout reader, which ranks
    heading styles over the whole document, gives both one level."""
    chars = [c for page in pages for it in page.items if isinstance(it, Line)
             for c in it.chars]
    sizes = sorted({c.size for c in chars})
    if len(sizes) < 2:
        return
    weights: dict[float, int] = {}
    for c in chars:
        weights[c.size] = weights.get(c.size, 0) + 1
    snapped = dict(zip(sizes, snap_sizes(sizes, weights=[weights[s] for s in sizes]),
                       strict=True))
    for c in chars:
        c.size = snapped[c.size]


def _bullet(word: OcrWord, size: float) -> tuple[str, str]:
    """(bullet, rest of the word) when a line's first word is or starts with a list bullet
    the engine misread ("e", "°", "¢«", "*", "°.Green"...), else ("", word). Size is the
    line's, in pixels."""
    text = word.text
    small = word.bottom - word.top <= BULLET_MAX * size and word.x1 - word.x0 <= 0.8 * size
    if len(text) <= 2 and small and not any(c.isdigit() for c in text) and (
            len(text) == 1 or not any(c.isalnum() for c in text)):
        return ("\u25e6" if text[0] in _HOLLOW else "\u2022"), ""
    lead = len(text) - len(text.lstrip(_LEADERS))
    if 1 <= lead <= 2 and text[lead:lead + 1].isalpha() and text[0] not in "-.":
        return ("\u25e6" if text[0] in _HOLLOW else "\u2022"), text[lead:]
    return "", text


def ocr_chars(ocr: OcrPage, scale: float) -> list[Char | None]:
    """The recognised words as characters in points, a line break (None) after each line.

    A word's letters share its box evenly; every word of a line sits on the line's baseline
    with a box from the line's size, so a skewed line stays one line. Its style comes from
    its image (:func:`word_faces`); a raised note mark is set small and raised, glued to
    the word before it, as a text layer sets it.
    """
    out: list[Char | None] = []
    measured = line_sizes(ocr)
    sizes = snap_sizes([max(measured[id(line)] / scale, 1.0) for line in ocr.lines])
    # the boxes keep the engine's line height (where the words sit), the size is the type's
    heights = snap_sizes([max(line.size / scale, 1.0) for line in ocr.lines])
    faces = word_faces(ocr, measured)
    for line, size, height in zip(ocr.lines, sizes, heights, strict=True):
        base = line.baseline / scale
        top, bottom = base - 0.8 * height, base + 0.2 * height
        after_mark = False
        for n, word in enumerate(line.words):
            x0, x1 = word.x0 / scale, word.x1 / scale
            bold, italic, mono = faces[id(word)]
            if n == 0:
                mark, rest = _bullet(word, line.size)
                if mark:  # the bullet as a word of its own, then the rest of the word
                    side = min(x1 - x0, 0.35 * height)
                    for i, ch in enumerate((mark, " ")):
                        out.append(Char(ch, x0 + i * side, x0 + (i + 1) * side, top, bottom,
                                        base, size, False, False))
                    x0 = max(x0 + side, x1 - (x1 - x0) * len(rest) / len(word.text))
                    if not rest:
                        continue
                    word = OcrWord(rest, word.x0, word.top, word.x1, word.bottom,
                                   word.confidence)
            text = word.text
            w_size, w_base, w_top, w_bottom = size, base, top, bottom
            glued = word.raised or (after_mark and all(c in ".,;:" for c in text))
            if word.raised:
                w_size, w_base = RAISED_SIZE * size, base - RAISED_RISE * size
                w_top, w_bottom = w_base - 0.8 * w_size, w_base + 0.2 * w_size
            after_mark = word.raised
            if n and not glued:
                prev = out[-1]
                assert prev is not None
                out.append(Char(" ", prev.x1, prev.x1, top, bottom, base, size,
                                bold and prev.bold, italic and prev.italic,
                                mono=mono and prev.mono))
            step = (x1 - x0) / len(text)
            for i, ch in enumerate(text):
                out.append(Char(ch, x0 + i * step, x0 + (i + 1) * step, w_top, w_bottom, w_base,
                                w_size, bold, italic, mono=mono))
        out.append(None)
    return out


def page_from_ocr(ocr: OcrPage, scale: float, index: int) -> OcrResult:
    """Ordered items of one recognised page, built by the text-layer layout logic."""
    chars = ocr_chars(ocr, scale)
    visible = sum(1 for c in chars if c is not None and c.text.strip())  # tables' included
    width, height = ocr.width / scale, ocr.height / scale
    rules = [Rule(horizontal, pos / scale, a / scale, b / scale)
             for horizontal, pos, a, b in ocr.rules]
    blocks: list[FlowBlock] = []
    for grid in find_grids(rules, width, height):  # ruled tables, as from vector rules
        inside: list[Char | None] = [c for c in chars if c is None or grid.contains(c)]
        table = build_grid_table(grid, inside, [])
        if table is None:
            continue
        chars = [c for c in chars if c is None or not grid.contains(c)]
        x0, x1, top, bottom = grid.box
        blocks.append(FlowBlock(x0, x1, top, bottom, table))
    found = find_text_tables(segments_of(chars))  # tables without rules, as on a text layer
    if found:
        used = set().union(*(t.used for t in found))
        chars = [c for c in chars if c is None or id(c) not in used]
        blocks.extend(FlowBlock(t.x0, t.x1, t.top, t.bottom, t.table) for t in found)
    items = order_page(segments_of(chars), blocks, index, height)
    return OcrResult(items, width, height, visible, ocr)


def _recognise_page(image: Image.Image, scale: float, detail: float, index: int,
                    languages: str) -> OcrResult:
    return page_from_ocr(recognise(image, languages, PAGE_TIMEOUT, detail), scale, index)


def recognise_pdf_page(data: bytes, index: int, languages: str = DEFAULT_LANGUAGES
                       ) -> tuple[OcrPage, float]:
    """Render page ``index`` of the PDF ``data`` and recognise it: the engine's reading and
    the scale (pixels per point). One page's work, for a pool job of its own; the PDF was
    checked (bombs, page count) by the reading job that asked for it."""
    pdf = pdfium.PdfDocument(data)
    try:
        image, scale, detail = render_page(pdf, index)
    finally:
        pdf.close()
    return recognise(image, languages or DEFAULT_LANGUAGES, PAGE_TIMEOUT, detail), scale


def pages_alone(pdf: pdfium.PdfDocument, indexes: list[int], budget: int) -> dict[int, bytes]:
    """Each page of ``indexes`` as a one-page PDF of its own (its content, resources and
    rotation), for a pool job that recognises it; a page pdfium cannot copy is left out
    (its job is then sent the whole document). The pages stop at ``budget`` bytes in all:
    pages sharing one large image would each carry a copy of it, so past the budget the
    remaining pages' jobs are sent the whole document instead."""
    out: dict[int, bytes] = {}
    total = 0
    for index in indexes:
        if total > budget:
            break
        alone = pdfium.PdfDocument.new()
        try:
            alone.import_pages(pdf, [index])
            buffer = io.BytesIO()
            alone.save(buffer)
            out[index] = buffer.getvalue()
            total += len(out[index])
        except pdfium.PdfiumError:
            continue
        finally:
            alone.close()
    return out


class PageOcr:
    """Recognises pages in parallel while the caller goes on reading the document.

    ``submit`` renders the page at once (pdfium is not thread-safe, so rendering stays on
    the caller's thread) and queues the recognition; ``results`` waits for all of them.
    """

    def __init__(self, languages: str = DEFAULT_LANGUAGES, workers: int = 0) -> None:
        self.languages = languages or DEFAULT_LANGUAGES
        self.workers = workers or max(1, min(os.cpu_count() or 1, 4))
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[int, Future[OcrResult]] = {}
        self._given: dict[int, OcrResult | Exception] = {}

    def given(self, index: int, got: tuple[OcrPage, float] | str) -> None:
        """Take page ``index`` as recognised elsewhere (a pool job): its reading and scale,
        or the message of its failure."""
        if isinstance(got, str):
            self._given[index] = RuntimeError(got)
        else:
            self._given[index] = page_from_ocr(got[0], got[1], index)

    def submit(self, pdf: pdfium.PdfDocument, index: int) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ocr")
        pending = [f for f in self._futures.values() if not f.done()]
        if len(pending) >= 2 * self.workers:  # bound the rendered images held in memory
            wait(pending, return_when=FIRST_COMPLETED)  # a page's failure stays its own
        image, scale, detail = render_page(pdf, index)
        self._futures[index] = self._pool.submit(_recognise_page, image, scale, detail, index,
                                                 self.languages)

    def results(self) -> dict[int, OcrResult | Exception]:
        """Each submitted page's result, or the exception its recognition raised."""
        out: dict[int, OcrResult | Exception] = dict(self._given)
        try:
            for index, future in self._futures.items():
                try:
                    out[index] = future.result()
                except Exception as exc:  # a page's failure must not lose the others
                    out[index] = exc
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
        snap_document([r for r in out.values() if isinstance(r, OcrResult)])
        return out
