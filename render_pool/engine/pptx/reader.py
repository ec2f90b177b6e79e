"""PPTX (PowerPoint) to the document model, with python-pptx.

Why this shape: a slide is a section. It opens with a comment naming it (``<!-- slide 3
-->``: a boundary Markdown readers and chunkers can see, kept out of the heading text, which
stays the title alone), its title becomes a heading (level 1 for title and section-header
slides, level 2 for content slides, so a deck made from Markdown keeps its ``#``/``##``
nesting), and its shapes are read in reading order: placeholders first, then the other
shapes, each set in rows top to bottom and columns left to right
(:mod:`render_pool.engine.pptx.order`). A short body paragraph set wholly in bold with more
content after it is a heading one level below the slide's (pandoc writes ``###`` so).
Runs in a monospace font are inline code, and paragraphs set wholly in one (a code box)
are a code block with their line breaks and indentation kept. Bulleted paragraphs become
nested lists by their outline level, tables keep their merged cells as spans, pictures
keep their alt text, charts become data tables (as in the DOCX reader), grouped shapes are
read as their members, and speaker notes (the notes placeholder and any text box on the
notes page) follow the slide as a quoted block (``notes=false`` leaves them out). Every
block keeps its slide as provenance.

What a writer could only draw is read back from the drawing: a paragraph without a bullet
set off an inch or more at the first outline level is a block quote; unbulleted lines in a
smaller type under a bulleted point, starting where its text does, are its sub-points
(LibreOffice drops their outline level, not their indent); a slide with a body and no title
continues the one before (its first line is no title); raised digits that jump to a slide
of paragraphs numbered by exactly those digits are footnotes, and that slide their texts
(:mod:`render_pool.engine.pptx.footnotes`).

The package is re-packed from bytes read under the zip-bomb and XML-bomb guards before
python-pptx sees it (``safe_zip.verified_zip``); linked (external) pictures are never
fetched.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from render_pool.engine.common.data_uri import image_extension
from render_pool.engine.common.inlines import Seg, build_inlines, strip_edges
from render_pool.engine.common.ooxml_charts import chart_table, chart_title
from render_pool.engine.common.safe_zip import verified_zip
from render_pool.engine.common.slugs import Slugger, slugify
from render_pool.engine.docx.styles import is_mono_font
from render_pool.engine.model import (
    Block,
    BlockQuote,
    CodeBlock,
    Document,
    Heading,
    Image,
    Inline,
    LineBreak,
    ListBlock,
    ListItem,
    NoteRef,
    Paragraph,
    RawHtml,
    Resource,
    SlideRef,
    Strong,
    Table,
    TableCell,
    TableRow,
    Text,
    plain_text,
)
from render_pool.engine.pptx.footnotes import NoteSlides, find_note_slides, note_key
from render_pool.engine.pptx.order import reading_order
from render_pool.engine.provenance import locate
from render_pool.errors import CorruptDocument

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_A = f"{{{A}}}"
_TITLES = {"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"}
_SKIPPED = {"DATE", "FOOTER", "SLIDE_NUMBER", "HEADER", "SLIDE_IMAGE"}
_BULLETED_PLACEHOLDERS = {"BODY", "OBJECT", "VERTICAL_BODY", "VERTICAL_OBJECT"}
_QUOTE_MARGIN = 914400  # EMU: one inch
_NOTE_NUMBER = re.compile(r"^\s*\d{1,4}[.)]\s+")


@dataclass
class _Para:
    """One paragraph of a text frame: its inlines, and its list level when bulleted."""

    inlines: list[Inline]
    level: int | None  # None: not a list item
    ordered: bool = False
    code: str | None = None  # the paragraph's text when it is all in a monospace font
    quote: bool = False  # set off from the left margin like a quotation


@dataclass
class _Item:
    """A bulleted paragraph's outline level, where its text starts and its type size."""

    level: int
    start: int  # EMU from the frame's left edge
    size: int  # hundredths of a point

    @staticmethod
    def of(level: int, ppr: Any, p: Any) -> _Item | None:
        margin, size = _margin(ppr), _size(p)
        return None if margin is None or size is None else _Item(level, margin[0], size)

    def holds(self, ppr: Any, p: Any) -> bool:
        """Whether a paragraph without a bullet that follows this item is one of its
        sub-points: its text starts where the item's text does or further right, in a
        smaller type. Why: LibreOffice writes a sub-point of a numbered point so when the
        layout gives that outline level no bullet (pandoc's text-beside-a-table slides);
        the outline level itself is lost, its indent and size are not."""
        margin, size = _margin(ppr), _size(p)
        return (
            margin is not None
            and size is not None
            and sum(margin) >= self.start
            and size < self.size
        )


def _margin(ppr: Any) -> tuple[int, int] | None:
    """A paragraph's own left margin and first-line indent (EMU), when it sets them."""
    if ppr is None or ppr.get("marL") is None:
        return None
    try:
        return int(ppr.get("marL")), int(ppr.get("indent", "0"))
    except ValueError:
        return None


def _size(p: Any) -> int | None:
    """The type size a paragraph's first run (or its end mark) sets, if any."""
    runs = [r.find(_A + "rPr") for r in p.iterchildren(_A + "r")]
    for rpr in (*runs, p.find(_A + "endParaRPr")):
        if rpr is not None and rpr.get("sz", "").isdigit():
            return int(rpr.get("sz"))
    return None


def _mono(rpr: Any) -> bool:
    """Whether run properties (``a:rPr``, ``a:endParaRPr``) name a monospace font."""
    latin = rpr.find(_A + "latin") if rpr is not None else None
    return latin is not None and is_mono_font(latin.get("typeface"))


def _code_line(p: Any) -> str | None:
    """The text of a paragraph whose every visible run is in a monospace font (line breaks
    and indentation kept), or None. Why from the XML: the inlines have lost the runs'
    fonts and collapse nothing, but a code line needs its exact characters."""
    parts: list[str] = []
    seen = False
    for child in p:
        if child.tag == _A + "br":
            parts.append("\n")
        elif child.tag in (_A + "r", _A + "fld"):
            t = child.find(_A + "t")
            text = (t.text or "") if t is not None else ""
            if text.strip():
                if not _mono(child.find(_A + "rPr")):
                    return None
                seen = True
            parts.append(text)
    return "".join(parts).replace("\v", "\n").replace("\r\n", "\n") if seen else None


def _run_segs(r: Any) -> list[Seg]:
    """Segments of one ``a:r`` run: formatting from ``a:rPr``, a hyperlink if any."""
    t = r.find(_A + "t")
    text = (t.text or "") if t is not None else ""
    rpr = r.find(_A + "rPr")
    fmt: set[str] = set()
    link = None
    if rpr is not None:
        if rpr.get("b") in ("1", "true"):
            fmt.add("b")
        if rpr.get("i") in ("1", "true"):
            fmt.add("i")
        if rpr.get("u") not in (None, "none"):
            fmt.add("u")
        if rpr.get("strike") not in (None, "noStrike"):
            fmt.add("s")
        if _mono(rpr):
            fmt.add("code")
        baseline = rpr.get("baseline", "0").lstrip("-")
        if baseline not in ("", "0"):
            fmt.add("sup" if not rpr.get("baseline", "").startswith("-") else "sub")
        click = rpr.find(_A + "hlinkClick")
        if click is not None:
            link = (click.get(f"{{{R}}}id") or "", "")
            fmt.discard("u")  # links are drawn underlined; that is not emphasis
    return [Seg(Text(text), frozenset(fmt), link)] if text else []


class _SlideReader:
    """Reads the slides of one presentation into one document."""

    def __init__(self, doc: Document, notes: bool, note_slides: NoteSlides | None = None) -> None:
        self.doc = doc
        self.notes = notes
        self.note_slides = note_slides or NoteSlides()
        self.slugger = Slugger()
        self.images = 0

    # ------------------------------------------------------------ text
    def paragraph(self, p: Any, part: Any) -> list[Inline]:
        segs: list[Seg] = []
        for child in p:
            tag = child.tag
            if tag == _A + "r" and (note := self.note_slides.note_id(child, part)):
                segs.append(Seg(NoteRef(note)))
            elif tag in (_A + "r", _A + "fld"):
                segs.extend(_run_segs(child))
            elif tag == _A + "br":
                segs.append(Seg(LineBreak()))
        for s in segs:  # resolve hyperlink relationship ids to targets
            if s.link is not None:
                s.link = self.link_target(part, s.link[0])
        return strip_edges(build_inlines(segs))

    def link_target(self, part: Any, rid: str) -> tuple[str, str] | None:
        rel = part.rels.get(rid) if rid else None
        if rel is None:
            return None
        if rel.is_external:
            return (rel.target_ref, "")
        return None  # a jump to another slide: keep the text only

    def text_frame(self, frame: Any, part: Any, bulleted: bool) -> list[_Para]:
        out: list[_Para] = []
        item: _Item | None = None  # the last bulleted paragraph, while sub-points may follow
        for p in frame._txBody.iterchildren(_A + "p"):
            inl = self.paragraph(p, part)
            if not plain_text(inl).strip() and not any(isinstance(n, Image) for n in inl):
                if out and out[-1].code is not None:  # a blank line inside a code box
                    out.append(_Para([], None, code=""))
                continue
            ppr = p.find(_A + "pPr")
            # the format allows levels 0-8; a larger one from the file must not nest deeper
            level = min(max(int(ppr.get("lvl", "0")), 0), 8) if ppr is not None else 0
            explicit = (
                None
                if ppr is None
                else (
                    "none"
                    if ppr.find(_A + "buNone") is not None
                    else "ordered"
                    if ppr.find(_A + "buAutoNum") is not None
                    else "bullet"
                    if ppr.find(_A + "buChar") is not None or ppr.find(_A + "buBlip") is not None
                    else None
                )
            )
            if explicit == "none" or (explicit is None and not bulleted):
                code = _code_line(p)
                if code is None and item is not None and item.holds(ppr, p):
                    out.append(_Para(inl, item.level + 1, False))
                    continue
                item = None
                out.append(_Para(inl, None, code=code, quote=code is None and _set_off(ppr)))
            else:
                item = _Item.of(level, ppr, p)
                out.append(_Para(inl, level, explicit == "ordered"))
        return out

    # ------------------------------------------------------------ shapes
    def shape_blocks(self, shape: Any, part: Any) -> list[Block]:
        from pptx.enum.shapes import MSO_SHAPE_TYPE

        kind = _shape_type(shape)
        if kind == MSO_SHAPE_TYPE.GROUP:
            out: list[Block] = []
            for member in reading_order(list(shape.shapes)):
                out.extend(self.shape_blocks(member, part))
            return out
        if getattr(shape, "has_table", False) and shape.has_table:
            return [self.table(shape.table, part)]
        if getattr(shape, "has_chart", False) and shape.has_chart:
            return self.chart(shape)
        if _is_picture(shape):
            img = self.picture(shape)
            return [Paragraph([img])] if img is not None else []
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            bulleted = shape.is_placeholder and _placeholder_type(shape) in _BULLETED_PLACEHOLDERS
            return _blocks_of(self.text_frame(shape.text_frame, part, bulleted))
        if shape._element.tag.endswith("}graphicFrame"):
            self.doc.warn("A SmartArt diagram or embedded object was left out.")
        return []

    def table(self, table: Any, part: Any) -> Table:
        rows: list[TableRow] = []
        for r, row in enumerate(table.rows):
            cells: list[TableCell] = []
            for cell in row.cells:
                if cell.is_spanned:
                    continue
                blocks = _blocks_of(self.text_frame(cell.text_frame, part, False))
                span_r, span_c = (
                    (cell.span_height, cell.span_width) if cell.is_merge_origin else (1, 1)
                )
                cells.append(TableCell(blocks, span_r, span_c, header=r == 0 and table.first_row))
            rows.append(TableRow(cells))
        return Table(rows, header_rows=1 if table.first_row and rows else 0)

    def chart(self, shape: Any) -> list[Block]:
        root = shape.chart._chartSpace
        table = chart_table(root)
        if table is None:
            self.doc.warn("A chart without data was left out.")
            return []
        title = chart_title(root)
        if title:
            table.caption = [Text(title)]
        return [table]

    def picture(self, shape: Any) -> Image | None:
        cnv = shape._element.find(".//{*}cNvPr")
        alt = (cnv.get("descr") or cnv.get("title") or "") if cnv is not None else ""
        blip = shape._element.find(f".//{_A}blip")
        if blip is not None and not blip.get(f"{{{R}}}embed") and blip.get(f"{{{R}}}link"):
            self.doc.warn("A linked (external) picture was left out; it is never fetched.")
            return None
        from pptx.exc import InvalidXmlError

        try:
            image = shape.image
        except (KeyError, ValueError, AttributeError, InvalidXmlError):  # no <p:blipFill>
            self.doc.warn("A picture whose image is missing from the package was left out.")
            return None
        try:  # python-pptx asks PIL for the format; bytes PIL does not know raise
            mime = image.content_type or "image/png"  # (OSError, DecompressionBombError...)
        except Exception:  # PIL's errors have no common base
            self.doc.warn("A picture in a format that cannot be told was left out.")
            return None
        self.images += 1
        key = f"media/image{self.images}.{image_extension(mime)}"
        self.doc.resources[key] = Resource(image.blob, mime)
        return Image(key, alt.strip())

    # ------------------------------------------------------------ slides
    def slide(self, number: int, slide: Any) -> list[Block]:
        shapes = list(slide.shapes)
        title_shape = next(
            (s for s in shapes if s.is_placeholder and _placeholder_type(s) in _TITLES), None
        )
        others = [
            s
            for s in shapes
            if s is not title_shape and not (s.is_placeholder and _placeholder_type(s) in _SKIPPED)
        ]
        holders = reading_order([s for s in others if s.is_placeholder])
        rest = reading_order([s for s in others if not s.is_placeholder])
        body: list[Block] = []
        for shape in holders + rest:
            body.extend(self.shape_blocks(shape, slide.part))
        # the body placeholder of a slide without a title continues the slide before
        # (pandoc's writer carries what overflows, or follows a table, onto such a slide):
        # its first line is not a title
        continued = bool(body) and any(
            _placeholder_type(s) in _BULLETED_PLACEHOLDERS
            and s.has_text_frame
            and s.text_frame.text.strip()
            for s in holders
        )
        out: list[Block] = [RawHtml(f"<!-- slide {number} -->")]
        title: list[Inline] = []
        if title_shape is not None and title_shape.has_text_frame:
            paras = self.text_frame(title_shape.text_frame, slide.part, False)
            for i, p in enumerate(paras):
                title += ([LineBreak()] if i else []) + p.inlines
        elif (
            not continued
            and isinstance(lead := (body[0] if body else None), Paragraph)
            and _title_like(lead, body[1:])
        ):
            # no title placeholder (e.g. a legacy PPT's section slide): a lone short first
            # line standing above everything else is the title
            body.pop(0)
            title = lead.children
        if any(isinstance(n, Strong) for n in title) and all(
            isinstance(n, Strong | LineBreak) or (isinstance(n, Text) and not n.text.strip())
            for n in title
        ):  # a bold title (in one run or several) is just a title
            title = [m for n in title for m in (n.children if isinstance(n, Strong) else [n])]
        if plain_text(title).strip():
            text = plain_text(title).strip()
            section = (
                _placeholder_type(title_shape) == "CENTER_TITLE"
                or any(_placeholder_type(s) == "SUBTITLE" for s in holders)
                or (number == 1 and all(isinstance(b, Paragraph) for b in body))
                or not [b for b in body if plain_text([b]).strip() or isinstance(b, Table)]
            )
            level = 1 if section else 2
            out.append(Heading(level, title, self.slugger.unique(slugify(text))))
        else:
            level = 2
        out += self.subheadings(body, min(level + 1, 6))
        if self.notes and slide.has_notes_slide:
            paras = self.speaker_notes(slide.notes_slide)
            if paras:
                first = [Text("Notes: "), *paras[0].inlines]
                out.append(
                    BlockQuote([Paragraph(first), *(Paragraph(p.inlines) for p in paras[1:])])
                )
        return out

    def speaker_notes(self, notes_slide: Any) -> list[_Para]:
        """The paragraphs of a notes page: its notes placeholder, then any other text on
        it (LibreOffice writes the notes of an ODP page drawn in a text box of its own so),
        never the slide's picture or the page's header, footer, date and number."""
        frame = notes_slide.notes_text_frame
        paras = self.text_frame(frame, notes_slide.part, False) if frame is not None else []
        boxes = [
            s
            for s in notes_slide.shapes
            if s.has_text_frame
            and not (s.is_placeholder and _placeholder_type(s) in {"BODY", *_SKIPPED})
        ]
        for box in reading_order(boxes):
            paras += self.text_frame(box.text_frame, notes_slide.part, False)
        return paras

    def subheadings(self, body: list[Block], level: int) -> list[Block]:
        """``body`` with each short paragraph set wholly in bold, and followed by more of
        the slide, as a heading of ``level`` (one below the slide's). Why: pandoc and
        LibreOffice write a heading below the slide level so; the run format is all that
        is left of it."""
        out: list[Block] = []
        for i, b in enumerate(body):
            if (
                isinstance(b, Paragraph)
                and i + 1 < len(body)
                and len(b.children) == 1
                and isinstance(b.children[0], Strong)
                and _heading_text(b.children[0])
            ):
                inl = b.children[0].children
                out.append(
                    Heading(level, inl, self.slugger.unique(slugify(plain_text(inl).strip())))
                )
            else:
                out.append(b)
        return out


def _heading_text(node: Strong) -> bool:
    """Bold text that reads as a heading: one short line, not a sentence or a label."""
    text = plain_text([node]).strip()
    return (
        0 < len(text) <= 80
        and len(text.split()) <= 12
        and "\n" not in text
        and not text.endswith((".", ",", ";", ":", "!", "?"))
        and not any(isinstance(n, Image | LineBreak) for n in node.children)
    )


def _title_like(first: Paragraph, rest: list[Block]) -> bool:
    """A first paragraph that reads as a slide title: one short line, not a sentence."""
    text = plain_text(first.children).strip()
    return (
        0 < len(text) <= 80
        and "\n" not in text
        and not text.endswith((".", ":"))
        and not any(isinstance(n, Image) for n in first.children)
        and (
            not rest
            or not isinstance(rest[0], Paragraph)
            or len(plain_text(rest[0].children)) > len(text)
        )
    )


def _placeholder_type(shape: Any) -> str:
    try:
        return str(shape.placeholder_format.type).split(" ")[0].split(".")[-1]
    except (ValueError, AttributeError):
        return ""


def _shape_type(shape: Any) -> Any:
    """python-pptx's shape type, or None where it has none (it raises for some frames)."""
    try:
        return shape.shape_type
    except NotImplementedError:
        return None


def _is_picture(shape: Any) -> bool:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if _shape_type(shape) == MSO_SHAPE_TYPE.PICTURE:
        return True
    tag: str = shape._element.tag  # python-pptx: the lxml element of the shape
    return tag.endswith("}pic")


def _set_off(ppr: Any) -> bool:
    """Whether a paragraph without a bullet is set off from the margin as a quotation is:
    at the first outline level, its whole text indented by an inch or more (pandoc writes
    a block quote so, and LibreOffice keeps it). A deeper outline level is a sub-point,
    a negative first-line indent a hanging label: neither is a quotation."""
    if ppr is None or ppr.get("lvl", "0") != "0":
        return False
    try:
        margin, first = int(ppr.get("marL", "0")), int(ppr.get("indent", "0"))
    except ValueError:
        return False
    return margin >= _QUOTE_MARGIN and first >= 0


def _blocks_of(paras: list[_Para]) -> list[Block]:
    """Paragraphs, quotations and nested lists from a text frame's paragraphs."""
    out: list[Block] = []
    i = 0
    while i < len(paras):
        if paras[i].quote:
            j = i
            while j < len(paras) and paras[j].quote:
                j += 1
            out.append(BlockQuote([Paragraph(p.inlines) for p in paras[i:j]]))
            i = j
            continue
        if paras[i].code is not None:
            j = i
            while j < len(paras) and paras[j].code is not None:
                j += 1
            text = "\n".join(p.code or "" for p in paras[i:j]).rstrip("\n")
            out.append(CodeBlock(text))
            i = j
            continue
        if paras[i].level is None:
            out.append(Paragraph(paras[i].inlines))
            i += 1
            continue
        j = i
        while j < len(paras) and paras[j].level is not None:
            j += 1
        out.extend(_nest(paras[i:j]))
        i = j
    return out


def _nest(items: list[_Para]) -> list[ListBlock]:
    """Nested lists: a deeper item joins the list inside the previous item."""
    base = min(p.level or 0 for p in items)
    lists: list[ListBlock] = []
    k = 0
    while k < len(items):
        p = items[k]
        if (p.level or 0) > base and lists and lists[-1].items:
            m = k
            while m < len(items) and (items[m].level or 0) > base:
                m += 1
            lists[-1].items[-1].blocks.extend(_nest(items[k:m]))
            k = m
            continue
        if not lists or lists[-1].ordered != p.ordered:
            lists.append(ListBlock(p.ordered, []))
        lists[-1].items.append(ListItem([Paragraph(p.inlines)]))
        k += 1
    return lists


def _drop_number(first: Block) -> None:
    """Remove the leading ``1.`` of a note's first paragraph (it stands for the mark)."""
    inlines = first.children if isinstance(first, Paragraph) else []
    while inlines and not isinstance(inlines[0], Text) and hasattr(inlines[0], "children"):
        inlines = inlines[0].children
    if inlines and isinstance(inlines[0], Text):
        inlines[0] = Text(_NOTE_NUMBER.sub("", inlines[0].text, count=1))


def read_pptx(data: bytes, notes: bool = True) -> Document:
    """A PPTX presentation as a document: one section per slide (see the module doc)."""
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    safe = verified_zip(data, "The PPTX package")
    try:  # the slide list too: a slide its relationships do not name is damage
        prs = Presentation(io.BytesIO(safe))
        props = prs.core_properties
        slides = list(prs.slides)
    except (PackageNotFoundError, KeyError, ValueError, AttributeError) as exc:
        raise CorruptDocument(f"The PPTX package cannot be read: {exc}") from None
    except Exception as exc:  # lxml syntax errors and other damage in the parts
        raise CorruptDocument(f"The PPTX package is damaged: {type(exc).__name__}") from None
    doc = Document()
    if props.title:
        doc.meta["title"] = props.title
    if props.author:
        doc.meta["author"] = props.author
    note_slides = find_note_slides(slides)
    reader = _SlideReader(doc, notes, note_slides)
    for number, marks in note_slides.slides.items():
        for mark, paras in marks.items():
            blocks: list[Block] = [
                Paragraph(reader.paragraph(p, slides[number - 1].part)) for p in paras
            ]
            _drop_number(blocks[0])
            doc.notes[note_key(number, mark)] = locate(blocks, SlideRef(number))
    for number, slide in enumerate(slides, start=1):
        if number in note_slides.slides:
            continue  # read as the notes above
        try:
            doc.blocks.extend(locate(reader.slide(number, slide), SlideRef(number)))
        except (KeyError, ValueError, AttributeError, TypeError, NotImplementedError) as exc:
            doc.warn(f"Slide {number} could not be read ({type(exc).__name__}); left out.")
    return doc
