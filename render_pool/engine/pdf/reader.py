"""PDF reader: a PDF's text layer, tables and images as a :class:`Document`.

Built on pypdfium2. Per page: the page is first turned so that its text runs left to right
(rotation: ``/Rotate`` and text set sideways), then characters with boxes, font style and
marked-content ids (chars; turned text in the minority read as runs of its own), links
(links), ruling lines and images (graphics, forms' matrices applied). A tagged page
(one with a usable structure tree, pdf_struct) is read from its tree (tagged); the
characters the tree does not reference, and every untagged page, are read by layout: ruled
tables (tables), columns and reading order (layout). Then, for the whole document:
running headers/footers and page numbers are removed (furniture), lines become
headings, paragraphs, lists, quotes and tables (blocks), tagged blocks cut by a page
break are joined again (tagged), and internal links are pointed at the headings at
their destinations (links).

Lines holding Arabic or Hebrew are put in logical order (bidi). A file pdfium refuses for
a broken page tree or cross-references is read from its page objects (repair).

Bad input never surfaces as a pdfium error: empty, non-PDF, corrupt and encrypted files,
and scans without a text layer that OCR cannot read (or with ``ocr="off"``) raise
:class:`CorruptDocument`; too many pages raise :class:`TooLarge`, and so do decompression
bombs (bombs), before pdfium reads them. Pages without usable text are read by OCR
(ocr) into the same layout logic.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from render_pool.engine.model import (
    Block,
    Document,
    Heading,
    Image,
    PageBox,
    Paragraph,
    Resource,
    walk,
)
from render_pool.engine.page_ranges import PageRanges, pages_in
from render_pool.engine.pdf.blocks import build_blocks
from render_pool.engine.pdf.bombs import check_pdf_streams
from render_pool.engine.pdf.chars import (
    ARTIFACT,
    Char,
    TurnedRun,
    page_chars,
    segments_of,
    take_turned,
)
from render_pool.engine.pdf.columns import ColumnMemory, Gutter, gutter_left_of, text_tables
from render_pool.engine.pdf.flow_bullets import drawn_bullets
from render_pool.engine.pdf.furniture import furniture_blocks, remove_furniture
from render_pool.engine.pdf.graphics import PageImage, page_images, page_rules
from render_pool.engine.pdf.layout import Block as FlowBlock
from render_pool.engine.pdf.layout import Item, order_page
from render_pool.engine.pdf.links import attach_links, page_links, resolve_internal_links
from render_pool.engine.pdf.notes import place_notes, take_endnotes, take_notes
from render_pool.engine.pdf.ocr import MODES as OCR_MODES
from render_pool.engine.pdf.ocr import (
    OcrPages,
    PageOcr,
    image_objects,
    needs_ocr,
    pages_alone,
)
from render_pool.engine.pdf.prov import PageFrame, to_shown_frames
from render_pool.engine.pdf.repair import rebuilt
from render_pool.engine.pdf.rotation import upright_page
from render_pool.engine.pdf.struct import BrokenTree, StructNode, page_tree
from render_pool.engine.pdf.tables import build_grid_table, cell_blocks, find_grids, widen_grid
from render_pool.engine.pdf.tagged import PageImageRef, dedent_code, join_pages, tagged_page
from render_pool.engine.pdf.turn import Page as TurnPage
from render_pool.engine.pdf.turn import turn_page
from render_pool.engine.provenance import merged
from render_pool.errors import CorruptDocument, OcrPending, TooLarge

log = logging.getLogger(__name__)

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_PAGES = 2000
MAX_IMAGES = 500
MIN_TREE_COVERAGE = 0.5  # below this share of the page's text, a tree is ignored
# list bullets some producers (Chromium) draw outside both the tree and /Artifact: the
# tree's L/LI already says there is a list, so the bare glyphs are not text left over
_LABEL_GLYPHS = set("\u2022\u25e6\u25aa\u25cf\u25cb\u25a0\u25a1\u2023\u2043")
_META_KEYS = {"Title": "title", "Author": "author", "Subject": "subject", "Keywords": "keywords"}


def _open(data: bytes) -> tuple[pdfium.PdfDocument, bool]:
    """Open the bytes with pdfium, turning every failure into a CorruptDocument; True with
    the document when its pages had to be found by scanning the file (repair)."""
    if not data:
        raise CorruptDocument("The PDF file is empty (0 bytes)")
    if b"%PDF-" not in data[:1024]:
        raise CorruptDocument("The file is not a PDF (no %PDF- header)")
    check_pdf_streams(data)  # decompression bombs: refused before pdfium inflates them
    try:
        return pdfium.PdfDocument(data), False
    except pdfium.PdfiumError as exc:
        if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
            raise CorruptDocument(
                "The PDF is encrypted and needs a password; remove the protection and try "
                "again") from None
        if exc.err_code == pdfium_c.FPDF_ERR_SECURITY:
            raise CorruptDocument(
                "The PDF is encrypted with an unsupported security handler") from None
        log.info("pdfium refused the PDF (%s); scanning it for its pages", exc)
    except Exception as exc:
        log.info("pdfium refused the PDF (%s); scanning it for its pages", exc)
    fixed = rebuilt(data, MAX_PAGES)  # a broken page tree or xref: pages found by scanning
    if fixed is not None:
        try:
            pdf = pdfium.PdfDocument(fixed)
            if len(pdf) > 0:
                return pdf, True
            pdf.close()
        except Exception as exc:
            log.info("the scanned PDF could not be opened either: %s", exc)
    raise CorruptDocument("The PDF is corrupt or unreadable")


def _metadata(pdf: pdfium.PdfDocument) -> dict[str, str]:
    try:
        raw = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # metadata is optional; a broken Info dictionary is not fatal
        return {}
    meta = {}
    for key, name in _META_KEYS.items():
        value = " ".join(str(raw.get(key, "")).replace("\x00", "").split())
        if value:
            meta[name] = value
    return meta


class _PageResult:
    __slots__ = ("frame", "height", "image_count", "index", "items", "tagged", "text_chars",
                 "upright", "wants_ocr", "width")

    def __init__(self, index: int = 0) -> None:
        self.index = index  # the page's number from 0
        self.items: list[Item] = []
        self.width = 0.0  # the page as read (its boxes' frame), in points
        self.height = 0.0
        self.frame: PageFrame | None = None  # the reading frame to the page as shown
        self.upright = 0  # clockwise degrees from the page turned upright to the page as shown
        self.text_chars = 0
        self.image_count = 0
        self.tagged: set[int] = set()  # id() of the items built from the structure tree
        self.wants_ocr = False  # the page is to be read by OCR (ocr.needs_ocr)


def _image_block(img: PageImage, name: str) -> FlowBlock:
    para = Paragraph([Image(name, alt="", width_px=img.width_px, height_px=img.height_px)])
    return FlowBlock(img.x0, img.x1, img.top, img.bottom, para)


def _tagged_items(tree: list[StructNode], chars: list[Char | None], images: list[PageImage],
                  names: list[str], index: int, width: float, height: float, doc: Document,
                  res: _PageResult) -> bool:
    """Fill ``res.items`` from the structure tree; False when the tree covers too little.

    Characters the tree does not reference (and are not artifacts) and images no Figure
    claims are read by layout and follow the tagged blocks, so nothing is lost.
    """
    refs = [PageImageRef(n, img.mcid, img.width_px, img.height_px)
            for n, img in zip(names, images, strict=True)]
    got = tagged_page(tree, chars, refs, index)
    visible = [c for c in chars if c is not None and c.text.strip() and c.mcid != ARTIFACT]
    covered = sum(1 for c in visible if c.mcid in got.used)
    if visible and covered < MIN_TREE_COVERAGE * len(visible):
        return False
    if not visible and not got.blocks:
        return False
    doc.notes.update(got.notes)
    _figure_boxes(got.blocks, {n: img for n, img in zip(names, images, strict=True)}, index)
    rest = [c for c in chars if c is None or (c.mcid not in got.used and c.mcid != ARTIFACT
                                              and c.text not in _LABEL_GLYPHS)]
    rest_images = [_image_block(img, n) for n, img in zip(names, images, strict=True)
                   if n not in got.images_used]
    items: list[Item] = [FlowBlock(0.0, width, *got.boxes.get(id(b), (0.0, 0.0)), b, index)
                         for b in got.blocks]
    leftover = order_page(segments_of(rest), rest_images, index, height)
    res.items = _interleave(items, leftover)
    res.tagged = {id(it) for it in items}
    return True


def _figure_boxes(blocks: list[Block], images: dict[str, PageImage], index: int) -> None:
    """Blocks of the tree without glyphs of their own (a Figure) given the boxes of the
    images they show."""
    for node in walk(blocks):
        if isinstance(node, Paragraph) and not node.prov:
            node.prov = merged(*([PageBox(index + 1, (img.x0, img.top, img.x1, img.bottom))]
                                 for n in node.children if isinstance(n, Image)
                                 and (img := images.get(n.src)) is not None))


def _interleave(tagged: list[Item], leftover: list[Item]) -> list[Item]:
    """Put layout-read items between the tagged blocks by their vertical position.

    Only when the tagged blocks with a known position run top to bottom (one column);
    otherwise the leftovers follow the tagged blocks.
    """
    tops = [it.top for it in tagged if it.bottom > it.top]
    if not leftover or any(b < a - 1 for a, b in itertools.pairwise(tops)):
        return tagged + leftover
    out = list(tagged)
    ids = {id(t) for t in tagged}
    for it in leftover:
        at = next((i for i, t in enumerate(out) if t.bottom > t.top and t.top > it.top
                   and id(t) in ids), len(out))
        out.insert(at, it)
    return out


def _first_page_again(pdf: pdfium.PdfDocument, results: list[_PageResult],
                      first: tuple[int, list[Gutter]], doc: Document, budget: list[int],
                      ocr: str, columns: ColumnMemory) -> None:
    """Read the first page again with the second page's gutters when the second page found
    more columns: a first page whose column is all table (short cells, no prose) hides that
    column's gutter from :func:`layout.find_gutters`. The gutters stand only where the first
    page's text leaves them empty (columns.py); its images are counted once."""
    spent, gutters = first
    if results[0].wants_ocr or len(columns.gutters) <= len(gutters):
        return
    budget[0] += spent
    results[0] = _read_page(pdf, results[0].index, doc, budget, ocr,
                            ColumnMemory(list(columns.gutters)))


def _read_page(pdf: pdfium.PdfDocument, index: int, doc: Document, budget: list[int],
               ocr: str = "off", columns: ColumnMemory | None = None) -> _PageResult:
    """Ordered items (lines, tables, images) of one page; the page is closed afterwards.

    A page to be read by OCR under ``ocr`` (``wants_ocr``) keeps no images: its picture is
    the scan itself, and extracting it (decoding and re-encoding a page-sized image) cost
    about 0.5 s of CPU a page. Should its OCR fail, the page is read again without OCR.
    ``columns`` carries the gutters of the pages before (columns.py)."""
    if columns is None:
        columns = ColumnMemory()
    res = _PageResult(index)
    page = pdf[index]
    tree: list[StructNode] | None = None
    try:
        rotation, crop = page.get_rotation(), page.get_cropbox()
        textpage = page.get_textpage()
        turned, shown = upright_page(pdf, index, page, textpage)
        if turned is not None:
            page = turned
            textpage = page.get_textpage()
        if shown:
            doc.note(f"page {index + 1}: its text shows turned {shown} degrees; it was "
                     "read upright")
        width, height = page.get_size()
        res.width, res.height = width, height
        # a page turned upright lost its crop offset and /Rotate; the others keep both
        shift = (0.0, 0.0, (-shown) % 360) if turned is not None else (
            -crop[0], crop[3] - height, rotation % 360)
        res.frame = PageFrame(width, height, 0, *shift)
        res.upright = shift[2] if turned is not None else 0
        try:
            chars = page_chars(textpage, height)
            chars += drawn_bullets(page, height, chars)  # list discs drawn as shapes
            attach_links(chars, page_links(pdf, page, textpage, height))
        finally:
            textpage.close()
        try:
            tree = page_tree(page)
        except BrokenTree as exc:
            doc.warn(f"page {index + 1}: the structure tree is unusable ({exc}); the page "
                     "was read by layout")
        rules, fills = page_rules(page, height)
        res.text_chars = sum(1 for c in chars if c is not None and c.text.strip())
        drawn = image_objects(page)
        res.wants_ocr = needs_ocr(page, res.text_chars, drawn, ocr)
        images, skipped = ([], 0) if res.wants_ocr else page_images(page, height, budget)
    finally:
        page.close()
    if skipped:
        doc.warn(f"page {index + 1}: {skipped} image(s) skipped (too large, too many or "
                 "unreadable)")
    res.image_count = max(drawn, len(images) + skipped)
    names = [f"page{index + 1}-img{n}.png" for n in range(1, len(images) + 1)]
    for name, img in zip(names, images, strict=True):
        doc.resources[name] = Resource(img.png, "image/png")
    chars, runs = take_turned(chars)
    if tree and _tagged_items(tree, _with_runs(chars, runs), images, names, index, width,
                              height, doc, res):
        return res
    # a page rotation.py left alone whose glyphs still advance up or down the page (no text
    # matrix says so): read in the text's own frame
    sideways = turn_page(TurnPage(chars, rules, fills, images, width, height))
    chars, rules, fills, images = sideways.chars, sideways.rules, sideways.fills, sideways.images
    width, height = sideways.width, sideways.height
    res.width, res.height = width, height
    if sideways.turn:
        res.frame = dataclasses.replace(res.frame or PageFrame(width, height), width=width,
                                        height=height, unturn=(360 - sideways.turn) % 360)
    blocks: list[FlowBlock] = []
    segs = segments_of(chars)  # made again only when a table takes characters
    before = columns.peek(segs, height)
    gridded = False
    for grid in find_grids(rules, width, height):
        grid = widen_grid(grid, chars, gutter_left_of(grid.box[0], before))
        inside: list[Char | None] = [c for c in chars if c is None or grid.contains(c)]
        held = [r for r in runs if all(grid.contains(c) for c in r.flat())]
        table = build_grid_table(grid, _with_runs(inside, held), fills)
        if table is None:
            continue
        chars = [c for c in chars if c is None or not grid.contains(c)]
        gridded = True
        runs = [r for r in runs if all(r is not h for h in held)]
        x0, x1, top, bottom = grid.box
        blocks.append(FlowBlock(x0, x1, top, bottom, table))
    if gridded:
        segs = segments_of(chars)
    found = text_tables(segs, columns, height)
    if found:
        used = set().union(*(t.used for t in found))
        chars = [c for c in chars if c is None or id(c) not in used]
        blocks.extend(FlowBlock(t.x0, t.x1, t.top, t.bottom, t.table) for t in found)
        segs = segments_of(chars)
    blocks.extend(_image_block(img, name) for name, img in zip(names, images, strict=True))
    turned = _turned_blocks(runs)
    if segs:  # turned text beside all the upright text is a margin note: it ends the page
        left, right = min(s.x0 for s in segs), max(s.x1 for s in segs)
        for b in turned:
            b.margin = b.x1 <= left or b.x0 >= right
    blocks.extend(b for b in turned if not b.margin)
    res.items = order_page(segs, blocks, index, height,
                           columns.after_tables(segs, height, before))
    for b in turned:
        if b.margin:
            b.page = index
            res.items.append(b)
    return res


def _with_runs(chars: list[Char | None], runs: list[TurnedRun]) -> list[Char | None]:
    """The characters followed by the turned runs, each as a horizontal line of its own."""
    out = list(chars)
    for run in runs:
        out.append(None)
        out.extend(run.flat())
    return out


def _turned_blocks(runs: list[TurnedRun]) -> list[FlowBlock]:
    """Turned text outside tables (a margin stamp, a sideways caption) as paragraphs
    placed at its box: consecutive runs side by side (the lines of one turned paragraph)
    make one paragraph, read in the runs' order."""
    groups: list[list[TurnedRun]] = []
    for run in runs:
        if groups:
            last = groups[-1][-1]
            em = max(max(c.size for c in run.chars), 1.0)
            if min(abs(run.x0 - last.x1), abs(last.x0 - run.x1)) < 1.5 * em \
                    and min(run.bottom, last.bottom) > max(run.top, last.top):
                groups[-1].append(run)
                continue
        groups.append([run])
    out: list[FlowBlock] = []
    for group in groups:
        for para in cell_blocks(_with_runs([], group)):
            out.append(FlowBlock(min(r.x0 for r in group), max(r.x1 for r in group),
                                 min(r.top for r in group), max(r.bottom for r in group),
                                 para))
    return out


def _join_tagged_pages(pages: list[_PageResult]) -> None:
    """Join a tagged paragraph, list or table that a page break cut in two."""
    prev: _PageResult | None = None
    for page in pages:
        if prev is not None and page.items and id(prev.items[-1]) in prev.tagged \
                and id(page.items[0]) in page.tagged and page.index == prev.index + 1:
            a, b = prev.items[-1], page.items[0]
            assert isinstance(a, FlowBlock) and isinstance(b, FlowBlock)
            if join_pages(a.payload, b.payload):
                page.items.pop(0)
                a.payload.prov = merged(a.payload.prov, b.payload.prov)
        prev = page if page.items else prev


def _apply_ocr(runner: PageOcr, targets: dict[int, _PageResult], doc: Document,
               pdf: pdfium.PdfDocument, budget: list[int]) -> None:
    """Replace the items of the OCR'd pages by what OCR read, and say so in a note (a
    failed page in a warning); a page whose OCR failed is read again without OCR (its text
    layer and images)."""
    done: list[int] = []
    confidence = 0.0
    for index, got in runner.results().items():
        res = targets[index]
        if isinstance(got, Exception):
            log.info("page %d: OCR failed: %s", index + 1, got)
            doc.warn(f"page {index + 1}: OCR failed ({got}); the page was read without it")
            again = _read_page(pdf, index, doc, budget)
            for name in _PageResult.__slots__:
                setattr(res, name, getattr(again, name))
            continue
        res.items, res.width, res.height, res.tagged = got.items, got.width, got.height, set()
        # OCR reads the page as rendered (as shown, or as turned upright), turned clockwise
        # by ``rotation`` first when its text ran sideways
        res.frame = PageFrame(got.width, got.height, (360 - got.ocr.rotation) % 360,
                              rotate=res.upright)
        res.text_chars = got.visible
        if got.visible:
            done.append(index + 1)
            confidence += got.ocr.confidence
        if got.ocr.rotation:
            doc.note(f"page {index + 1}: turned {got.ocr.rotation} degrees for OCR")
    if done:
        doc.note(f"OCR read page(s) {', '.join(map(str, done[:50]))} "
                 f"(mean confidence {confidence / len(done):.0f}%)")


def read_pdf(data: bytes, ocr: str = "auto", ocr_languages: str = "",
             ocr_fanout: bool = False, ocr_pages: OcrPages | None = None,
             pages: PageRanges | None = None, include_furniture: bool = False) -> Document:
    """Read a PDF's text layer into a Document (headings, paragraphs, lists, tables, images).

    ``pages`` (``render_pool.engine.page_ranges``) limits the work to those pages: the others are
    never laid out, rendered or recognised; a range past the last page is 40001. Every block
    carries the box it was read from on its page (``prov``), and ``Document.pages`` the size
    of each page read.

    ``ocr`` ("auto", "force", "off") says which pages are read by OCR (ocr) in
    ``ocr_languages`` (Tesseract names joined by "+"). With ``ocr_fanout`` and several pages
    to OCR, raises :class:`OcrPending` naming them instead (the caller recognises them in
    the pool and reads again with ``ocr_pages``, see ocr); otherwise they are recognised
    here. ``include_furniture`` keeps the running headers/footers, page numbers and margin
    stamps taken from the pages (furniture) in ``Document.furniture``, each text once.
    Raises CorruptDocument for empty, non-PDF, corrupt or encrypted input and for scans
    without text that OCR could read, and TooLarge above ``MAX_PAGES`` pages.
    """
    if ocr not in OCR_MODES:
        ocr = "auto"
    pdf, repaired = _open(data)
    doc = Document()
    if repaired:
        doc.warn("The PDF is damaged (its page tree or cross-references are broken); its "
                 "pages were found by scanning the file")
    try:
        count = len(pdf)
        if count > MAX_PAGES:
            raise TooLarge(f"The PDF has {count} pages; the limit is {MAX_PAGES}")
        doc.meta.update(_metadata(pdf))
        budget = [MAX_IMAGES]
        wanted = [p - 1 for p in pages_in(pages, count)] if pages else range(count)
        results: list[_PageResult] = []
        runner = PageOcr(ocr_languages)
        targets: dict[int, _PageResult] = {}
        columns = ColumnMemory()
        later = ocr_fanout or ocr_pages is not None  # no rendering while reading the layer
        try:
            for index in wanted:
                try:
                    spent = budget[0]
                    results.append(_read_page(pdf, index, doc, budget, ocr, columns))
                    spent -= budget[0]
                    if len(results) == 1:
                        first = (spent, list(columns.gutters))
                    elif len(results) == 2:
                        _first_page_again(pdf, results, first, doc, budget, ocr, columns)
                    if results[-1].wants_ocr:
                        targets[index] = results[-1]
                        if not later:
                            runner.submit(pdf, index)
                except pdfium.PdfiumError as exc:
                    log.info("page %d unreadable: %s", index + 1, exc)
                    doc.warn(f"page {index + 1} could not be read and was skipped")
            if ocr_pages is None and ocr_fanout and len(targets) > 1:
                raise OcrPending(sorted(targets), page_pdfs=pages_alone(
                    pdf, sorted(targets), budget=2 * len(data) + (1 << 20)))
            for index in targets if later else ():
                if ocr_pages is not None and index in ocr_pages:
                    runner.given(index, ocr_pages[index])
                else:
                    runner.submit(pdf, index)
        finally:
            _apply_ocr(runner, targets, doc, pdf, budget)
    finally:
        pdf.close()
    frames = {p.index + 1: p.frame or PageFrame(p.width, p.height) for p in results}
    doc.pages = {n: (round(f.shown_size()[0], 2), round(f.shown_size()[1], 2))
                 for n, f in frames.items()}
    text_total = sum(p.text_chars for p in results)
    if text_total == 0:
        if any(p.image_count for p in results):
            if ocr == "off":
                raise CorruptDocument(
                    "The PDF has no text layer (scanned?) and OCR is turned off (ocr=off)")
            raise CorruptDocument(
                "The PDF has no text layer (scanned?) and OCR found no text in its images")
        doc.warn("The PDF contains no text")
        return doc
    scanned = [p.index + 1 for p in results if not p.text_chars and p.image_count]
    if scanned:
        doc.warn("page(s) " + ", ".join(map(str, scanned[:20]))
                 + " have no text layer (scanned?); only their images were kept")
    _join_tagged_pages(results)
    page_items = [p.items for p in results]
    taken: list[Item] = []
    remove_furniture(page_items, [p.height for p in results], taken)
    footnotes: dict[str, list[Block]] = {}
    for page in results:
        if not page.tagged:
            take_notes(page.items, page.height, page.index, footnotes)
    take_endnotes([p.items for p in results if not p.tagged], footnotes)
    flow = [it for items in page_items for it in items]
    places: list[tuple[int, float | None, Heading]] = []
    doc.blocks = build_blocks(flow, places)
    if targets and not doc.blocks:  # a scan must give text or a clear refusal
        raise CorruptDocument("The PDF has no readable text: OCR found none in its images "
                              "and no visible text layer is left")
    if footnotes:
        place_notes(doc.blocks, list(footnotes))
        doc.notes.update(footnotes)
    dedent_code(doc.blocks)
    resolve_internal_links(doc.blocks, doc.notes, places)
    if include_furniture:
        doc.furniture = furniture_blocks(taken)
    to_shown_frames([*doc.blocks, *doc.furniture], frames)
    return doc
