"""DOCX writer: the document model to a Word file with real Word structures (python-docx).

Headings use "Heading 1..6" (navigation pane, TOC), lists use numbering definitions (every list
its own ``w:num`` so numbering restarts), tables get a repeating header row and merged cells,
links are real ``w:hyperlink`` elements (internal ones point at bookmarks on the headings),
images are embedded and scaled to the text width, notes become real footnotes. Options add a
cover page, a TOC field Word fills when the file is opened, header/footer text and
"Page N of M" fields. Nothing here touches the network: images must already be resources.
"""

from __future__ import annotations

import copy
import io
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import docx
from docx.blkcntnr import BlockItemContainer
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.oxml.table import CT_Tbl
from docx.shared import Emu, Length, Mm, Pt, Twips
from docx.table import Table as DocxTable
from docx.table import _Cell
from docx.text.paragraph import Paragraph as DocxParagraph
from docx.text.run import Run
from lxml import etree

from render_pool.engine.common.cover import CoverPage
from render_pool.engine.common.writing import place_cells
from render_pool.engine.docx.writer_images import UnsupportedImage, fitted_size
from render_pool.engine.docx.writer_notes import Footnotes, add_reference
from render_pool.engine.docx.writer_numbering import ListNumbering, indent_twips, set_num_pr
from render_pool.engine.docx.writer_styles import (
    ensure_styles,
    ensure_toc_styles,
    register_mono_font,
)
from render_pool.engine.docx.writer_xml import (
    add_bookmark,
    add_field,
    cant_split_row,
    clean,
    el,
    field_begin,
    field_end,
    new_hyperlink,
    remove_preview_picture,
    repeat_header_row,
    set_border,
    settings_east_asian_language,
    settings_update_fields,
)
from render_pool.engine.model import (
    Anchor,
    Block,
    BlockQuote,
    Code,
    CodeBlock,
    Document,
    Emph,
    Heading,
    HorizontalRule,
    Image,
    Inline,
    LineBreak,
    Link,
    ListBlock,
    Math,
    MathBlock,
    NoteRef,
    Paragraph,
    Placeholder,
    RawHtml,
    Resource,
    Strike,
    Strong,
    Subscript,
    Superscript,
    Table,
    Text,
    Underline,
    plain_text,
)
from render_pool.engine.options import WriterOptions
from render_pool.engine.url_safety import is_safe_link
from render_pool.errors import ConversionFailed

__all__ = ["CoverPage", "WriterOptions", "write_docx"]

TOC_PLACEHOLDER = "Right-click to update the table of contents."
_QUOTE_INDENT = 360  # twips per block quote level
_EMU_PER_TWIP = 635
_END_BOOKMARK = "_BodyEnd"  # hidden (leading "_"); heading bookmarks start with a letter


@dataclass(frozen=True)
class _Fmt:
    bold: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    sub: bool = False
    sup: bool = False
    code: bool = False
    link: bool = False


@dataclass
class _Ctx:
    """Where blocks go and how they are indented."""

    container: Any
    max_width: int  # EMU available for images
    base_style: str | None = None
    quote_depth: int = 0
    list_level: int = 0
    list_indent: int = 0  # twips from list nesting
    bold: bool = False  # table header cells
    in_note: bool = False
    reuse: list[Any] = field(default_factory=list)  # a cell's initial empty paragraph


_CELL_ALIGN = {"left": WD_ALIGN_PARAGRAPH.LEFT, "center": WD_ALIGN_PARAGRAPH.CENTER,
               "right": WD_ALIGN_PARAGRAPH.RIGHT}


def _safe_url(target: str) -> str:
    return quote(clean(target).strip(), safe=":/?#[]@!$&'()*+,;=%~")


class _Writer:
    def __init__(self, doc: Document, options: WriterOptions) -> None:
        self.doc = doc
        self.opts = options
        self.d = docx.Document()
        self._drop_thumbnail()
        remove_preview_picture(self.d.settings.element)
        ensure_styles(self.d)
        register_mono_font(self.d)
        self.numbering = ListNumbering(self.d)
        self.footnotes = Footnotes(self.d)
        self.bookmarks: dict[str, str] = {}
        self.bookmark_names: set[str] = set()
        self.bookmark_id = 0
        self._style_ids: dict[str, str] = {}
        self._link_rels: dict[tuple[int, str], str] = {}
        self.note_style_id = self.style_id("Footnote Reference")
        section = self.d.sections[0]
        if options.page_size.lower() == "letter":
            section.page_width, section.page_height = Twips(12240), Twips(15840)
        else:
            section.page_width, section.page_height = Mm(210), Mm(297)
        for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
            setattr(section, side, Mm(25.4))
        # read back from the XML (whole twips), not the values set above
        self.text_width = _between_margins(section.page_width, section.left_margin,
                                           section.right_margin)
        self.text_height = _between_margins(section.page_height, section.top_margin,
                                            section.bottom_margin)

    # ------------------------------------------------------------ document level
    def write(self) -> bytes:
        cover = self.opts.cover if self.opts.cover and not self.opts.cover.is_empty() else None
        self._core_properties(cover)
        self._east_asian_language()
        if cover:
            self._cover(cover)
        if self.opts.toc:
            self._toc()
        body = _Ctx(container=_FastBody(self.d), max_width=self.text_width)
        self.blocks(self.doc.blocks, body)
        self._header_footer(has_cover=cover is not None)
        out = io.BytesIO()
        self.d.save(out)
        return out.getvalue()

    def _drop_thumbnail(self) -> None:
        rels = self.d.part.package.rels
        for r_id, rel in list(rels.items()):
            if rel.reltype == RT.THUMBNAIL:
                del rels[r_id]

    def _core_properties(self, cover: CoverPage | None) -> None:
        meta = self.doc.meta
        cp = self.d.core_properties
        title = meta.get("title") or (cover.document_name if cover else "") or ""
        cp.title = clean(title)[:255]
        cp.author = clean(meta.get("author", ""))[:255]
        cp.subject = clean(meta.get("subject") or meta.get("description", ""))[:255]
        cp.keywords = clean(meta.get("keywords", ""))[:255]
        cp.comments = ""
        cp.last_modified_by = ""
        cp.revision = 1
        now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
        cp.created = now
        cp.modified = now
        version = meta.get("version") or (cover.document_version if cover else "")
        if version:
            cp.version = clean(version)[:255]

    def _east_asian_language(self) -> None:
        text = plain_text(self.doc.blocks)
        if re.search(r"[\u3040-\u30ff]", text):
            lang = "ja-JP"
        elif re.search(r"[\uac00-\ud7af]", text):
            lang = "ko-KR"
        elif re.search(r"[\u4e00-\u9fff]", text):
            lang = "zh-CN"
        else:
            return
        settings_east_asian_language(self.d.settings.element, lang)

    def _cover(self, cover: CoverPage) -> None:
        body = _Ctx(container=self.d._body, max_width=self.text_width)
        last = None
        if cover.logo is not None:
            p = self.d.add_paragraph()
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
            self._picture(p, p._p, cover.logo, "logo", int(Mm(50)), int(Mm(25)))
            last = p
        for text, style in ((cover.product_name, "Cover Subtitle"),
                            (_version(cover.product_version), "Cover Subtitle")):
            if text.strip():
                last = self.d.add_paragraph(clean(text), style=style)
        if cover.cover_image is not None:
            p = self.d.add_paragraph()
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
            p.paragraph_format.space_before = Pt(24)
            self._picture(p, p._p, cover.cover_image, "cover image", self.text_width,
                          int(self.text_height * 0.45))
            last = p
        if cover.document_name.strip():
            last = self.d.add_paragraph(clean(cover.document_name), style="Cover Title")
            last.paragraph_format.space_before = Pt(36)
        if cover.document_version.strip():
            last = self.d.add_paragraph(clean(_version(cover.document_version)),
                                        style="Cover Subtitle")
        if cover.copyright_text.strip():
            last = self.d.add_paragraph(clean(cover.copyright_text), style="Cover Small")
            last.paragraph_format.space_before = Pt(72)
        if last is None:
            last = self.d.add_paragraph()
        self._end_cover_section(last)
        del body

    def _end_cover_section(self, last: DocxParagraph) -> None:
        """Make the cover its own section: a copy of the body's page setup (size, margins)
        in the last cover paragraph, a section break to a new page (the default type). The
        body section then restarts page numbering, as the PDF does."""
        body_sect = self.d.sections[-1]._sectPr
        cover_sect = copy.deepcopy(body_sect)
        for child in list(cover_sect):
            if child.tag in (qn("w:headerReference"), qn("w:footerReference"),
                             qn("w:titlePg"), qn("w:pgNumType")):
                cover_sect.remove(child)
        last._p.get_or_add_pPr().append(cover_sect)

    def _toc(self) -> None:
        """The TOC field with its entries already written as its result (one linked line
        per heading, styled "toc N"), so LibreOffice and Word show it without an update;
        Word still refreshes it (adding page numbers, which only a layout knows) on open."""
        self.d.add_paragraph(clean(self.opts.toc_title), style="TOC Heading")
        levels = max(1, min(9, self.opts.toc_depth))
        instr = f'TOC \\o "1-{levels}" \\h \\z \\u'
        entries = self._toc_entries(levels)
        if not entries:
            p = self.d.add_paragraph()
            add_field(p, instr, TOC_PLACEHOLDER, dirty=True)
        else:
            ensure_toc_styles(self.d, levels)
            for i, (level, text, bookmark) in enumerate(entries):
                p = self.d.add_paragraph(style=f"toc {level}")
                if i == 0:
                    field_begin(p, instr, dirty=True)
                link = new_hyperlink(p, anchor=bookmark)
                run = OxmlElement("w:r")
                t = el("w:t")
                t.set(qn("xml:space"), "preserve")
                t.text = text
                run.append(t)
                link.append(run)
            field_end(p)
        p.add_run().add_break(WD_BREAK.PAGE)
        settings_update_fields(self.d.settings.element)

    def _toc_entries(self, levels: int) -> list[tuple[int, str, str]]:
        """(level, text, bookmark) of the body's headings the TOC lists; a heading without
        an anchor gets one here, so its entry can link to it."""
        entries = []
        for n, block in enumerate(self.doc.blocks):
            if not isinstance(block, Heading) or not 1 <= block.level <= levels:
                continue
            text = clean(plain_text(block.children)).strip()
            if not text:
                continue
            if not block.anchor:
                block.anchor = f"_toc_{n}"
            entries.append((block.level, text[:500], self.bookmark_name(block.anchor)))
        return entries

    def _header_footer(self, has_cover: bool) -> None:
        """Header/footer text and "Page N of M" on the body pages. With a cover, the cover is
        section 1 with an empty header and footer; the body section (TOC included) restarts
        numbering at 1 and counts only its own pages, as the PDF does."""
        section = self.d.sections[-1]
        header_text = clean(self.opts.header_text).strip()
        footer_text = clean(self.opts.footer_text).strip()
        page_fmt = clean(self.opts.page_number_format)
        if not (header_text or footer_text or page_fmt):
            return
        if has_cover:
            # own (empty) definitions for the cover, and for the body so it does not inherit
            for sect in self.d.sections:
                sect.header.is_linked_to_previous = False
                sect.footer.is_linked_to_previous = False
            _set_page_start(self.d.sections[0]._sectPr, 0)  # the cover, unnumbered
            _set_page_start(section._sectPr, 1)
        if header_text:
            p = section.header.paragraphs[0]
            p.text = header_text
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        footer = section.footer
        first = footer.paragraphs[0]
        if footer_text:
            first.text = footer_text
            first.alignment = WD_ALIGN_PARAGRAPH.CENTER
        if page_fmt:
            p = footer.add_paragraph(style="Footer") if footer_text else first
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
            for part in re.split(r"(\{page\}|\{pages\})", page_fmt):
                if part == "{page}":
                    add_field(p, "PAGE", "1")
                elif part == "{pages}":
                    add_field(p, self._body_pages_field() if has_cover else "NUMPAGES", "1")
                elif part:
                    p.add_run(part)

    def _body_pages_field(self) -> str:
        """Field for the body's page count when a cover comes first: a reference to the page of
        a bookmark at the very end of the body. That page number restarts at 1 in the body
        section, so it counts only the body pages, in Word and in LibreOffice alike.
        SECTIONPAGES would do in Word, but LibreOffice 7.4 keeps its cached result ("1"), and
        NUMPAGES counts the cover (in LibreOffice also a blank page it inserts when page 1
        follows page 1, which the cover's start at 0 avoids)."""
        field = f"PAGEREF {_END_BOOKMARK}"
        if _END_BOOKMARK in self.bookmark_names:  # "{pages}" twice in the format
            return field
        self.bookmark_names.add(_END_BOOKMARK)
        body = self.d.element.body
        last = body[-2] if len(body) > 1 else None  # body[-1] is the final w:sectPr
        if last is None or last.tag != qn("w:p"):
            last = OxmlElement("w:p")
            body[-1].addprevious(last)
        self.bookmark_id += 1  # empty bookmark after the last run: on the last page
        last.append(el("w:bookmarkStart", id=str(self.bookmark_id), name=_END_BOOKMARK))
        last.append(el("w:bookmarkEnd", id=str(self.bookmark_id)))
        return field

    # ------------------------------------------------------------ blocks
    def blocks(self, blocks: list[Block], ctx: _Ctx) -> None:
        for block in blocks:
            self.block(block, ctx)

    def block(self, b: Block, ctx: _Ctx) -> None:
        if isinstance(b, Paragraph):
            p = self.new_par(ctx)
            self.inlines(p, p._p, b.children, _Fmt(bold=ctx.bold), ctx)
        elif isinstance(b, Heading):
            self.heading(b, ctx)
        elif isinstance(b, ListBlock):
            self.list_block(b, ctx)
        elif isinstance(b, Table):
            self.table(b, ctx)
        elif isinstance(b, CodeBlock):
            p = self.new_par(ctx, style="Code")
            lines = clean(b.text.expandtabs(4)).rstrip("\n").split("\n")
            for i, line in enumerate(lines):
                if i:
                    p.add_run().add_break()
                if line:
                    p.add_run(line)
        elif isinstance(b, BlockQuote):
            self.blocks(b.blocks, replace(ctx, quote_depth=ctx.quote_depth + 1))
        elif isinstance(b, HorizontalRule):
            p = self.new_par(ctx)
            set_border(p, "bottom", size=6, color="A0A0A0", space=1)
        elif isinstance(b, MathBlock):
            p = self.new_par(ctx)
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
            self.text_run(p, p._p, b.tex, _Fmt(code=True))
        elif isinstance(b, RawHtml):  # registry.write expands it first (Writer.holds_html)
            self.doc.warn("raw HTML is not written to DOCX")

    def new_par(self, ctx: _Ctx, style: str | None = None, numbered: bool = False) -> Any:
        """A new paragraph in the context's container, styled and indented for it."""
        if ctx.reuse:
            p = ctx.reuse.pop()
        else:
            p = ctx.container.add_paragraph()
        quote_indent = _QUOTE_INDENT * ctx.quote_depth
        chosen = style or ("Block Quote" if ctx.quote_depth else None) or ctx.base_style
        if chosen:
            p._p.get_or_add_pPr().style = self.style_id(chosen)
        pf = p.paragraph_format
        if numbered:
            if quote_indent:
                pf.left_indent = Twips(quote_indent + indent_twips(ctx.list_level))
                pf.first_line_indent = Twips(-360)
        elif quote_indent + ctx.list_indent:
            pf.left_indent = Twips(quote_indent + ctx.list_indent)
        if ctx.quote_depth:
            set_border(p, "left", size=12, color="C8C8C8", space=8)
        return p

    def external_rel(self, part: Any, url: str) -> str:
        """Relationship id of a hyperlink target, one per distinct URL and part.

        python-docx's ``relate_to`` scans every relationship of the part on each call.
        """
        key = (id(part), url)
        r_id = self._link_rels.get(key)
        if r_id is None:
            rels = part.rels
            r_id = f"rId{len(rels) + 1}"
            while r_id in rels:
                r_id = f"rId{int(r_id[3:]) + 1}"
            rels.add_relationship(RT.HYPERLINK, url, r_id, is_external=True)
            self._link_rels[key] = r_id
        return r_id

    def style_id(self, name: str) -> str:
        """Style id for a style name, cached (python-docx scans all styles on each lookup)."""
        sid = self._style_ids.get(name)
        if sid is None:
            sid = self._style_ids[name] = self.d.styles[name].style_id
        return sid

    def heading(self, h: Heading, ctx: _Ctx) -> None:
        if ctx.in_note:
            p = self.new_par(ctx)
            self.inlines(p, p._p, h.children, _Fmt(bold=True), ctx)
            return
        level = max(1, min(9, h.level))
        p = self.new_par(ctx, style=f"Heading {level}")
        self.inlines(p, p._p, h.children, _Fmt(), ctx)
        if h.anchor:
            self.bookmark_id += 1
            add_bookmark(p, self.bookmark_name(h.anchor), self.bookmark_id)

    def bookmark_name(self, anchor: str) -> str:
        """Word bookmark name for an anchor: a letter first, word characters, 40 at most."""
        if anchor in self.bookmarks:
            return self.bookmarks[anchor]
        base = re.sub(r"\W", "_", anchor)
        if not base or not base[0].isalpha():
            base = "h_" + base
        base = base[:36]
        name, n = base, 1
        while name in self.bookmark_names:
            n += 1
            name = f"{base[:33]}_{n}"
        self.bookmarks[anchor] = name
        self.bookmark_names.add(name)
        return name

    def list_block(self, lst: ListBlock, ctx: _Ctx) -> None:
        level = ctx.list_level
        num_id = self.numbering.new_list(lst.ordered, level, lst.start)
        item_ctx = replace(ctx, list_level=level + 1, list_indent=indent_twips(level))
        for item in lst.items:
            task = item.checked is not None
            blocks = list(item.blocks)
            head = blocks[0] if blocks else None
            first = head if isinstance(head, Paragraph) else None
            if first is not None:
                blocks.pop(0)
            if task and not lst.ordered:
                p = self.new_par(item_ctx)
            else:
                p = self.new_par(replace(ctx, list_level=level), style="List Paragraph",
                                 numbered=True)
                set_num_pr(p, num_id, level)
            if task:
                self.text_run(p, p._p, "\u2612 " if item.checked else "\u2610 ", _Fmt())
            if first is not None:
                self.inlines(p, p._p, first.children, _Fmt(bold=ctx.bold), ctx)
            self.blocks(blocks, item_ctx)

    def table(self, t: Table, ctx: _Ctx) -> None:
        placed, nrows, ncols = _layout(t)
        if not nrows or not ncols:
            return
        if t.caption:
            p = self.new_par(ctx, style="Caption")
            self.inlines(p, p._p, t.caption, _Fmt(), ctx)
        if ctx.reuse:  # a table first in a cell: keep the initial paragraph before it
            ctx.reuse.pop()
        if isinstance(ctx.container, _Cell):
            table = ctx.container.add_table(nrows, ncols)
        else:
            width = ctx.max_width - (ctx.list_indent + _QUOTE_INDENT * ctx.quote_depth) * 635
            table = ctx.container.add_table(nrows, ncols, Emu(max(width, ctx.max_width // 3)))
        table._tbl.tblPr.style = self.style_id("Table Grid")
        indent = ctx.list_indent + _QUOTE_INDENT * ctx.quote_depth
        if indent:
            tbl_pr = table._tbl.tblPr
            tbl_pr.append(el("w:tblInd", w=str(indent), type="dxa"))
        header_rows = min(max(t.header_rows, 0), nrows)
        rows = table.rows
        for r in range(header_rows):
            repeat_header_row(rows[r])
            cant_split_row(rows[r])
        col_width = ctx.max_width // ncols
        grid = [list(tr.tc_lst) for tr in table._tbl.tr_lst]
        for (r, c, rs, cs), cell in placed:
            top = grid[r][c]
            for dr in range(rs):
                row = grid[r + dr]
                tc = row[c]
                if cs > 1:
                    tc.width = Emu(sum(int(row[c + k].width or 0) for k in range(cs)))
                    tc.grid_span = cs
                    for k in range(1, cs):
                        row[c + k].getparent().remove(row[c + k])
                if rs > 1:
                    tc.vMerge = "restart" if dr == 0 else "continue"
            target = _Cell(top, table)
            cell_ctx = _Ctx(container=target, max_width=max(col_width * cs - 144 * 635, 1),
                            bold=cell.header or r < header_rows, in_note=ctx.in_note,
                            reuse=[target.paragraphs[0]])
            self.blocks(cell.blocks, cell_ctx)
            if cell.align in _CELL_ALIGN:  # Markdown ``:---:`` / ``---:`` columns
                for par in target.paragraphs:
                    par.alignment = _CELL_ALIGN[cell.align]
            if top[-1].tag == qn("w:tbl"):
                top.append(OxmlElement("w:p"))

    # ------------------------------------------------------------ inlines
    def inlines(self, p: Any, target: Any, nodes: list[Inline], fmt: _Fmt, ctx: _Ctx) -> None:
        for node in nodes:
            self.inline(p, target, node, fmt, ctx)

    def inline(self, p: Any, target: Any, n: Inline, fmt: _Fmt, ctx: _Ctx) -> None:
        if isinstance(n, Text):
            self.text_run(p, target, n.text, fmt)
        elif isinstance(n, Emph):
            self.inlines(p, target, n.children, replace(fmt, italic=True), ctx)
        elif isinstance(n, Strong):
            self.inlines(p, target, n.children, replace(fmt, bold=True), ctx)
        elif isinstance(n, Strike):
            self.inlines(p, target, n.children, replace(fmt, strike=True), ctx)
        elif isinstance(n, Underline):
            self.inlines(p, target, n.children, replace(fmt, underline=True), ctx)
        elif isinstance(n, Subscript):
            self.inlines(p, target, n.children, replace(fmt, sub=True, sup=False), ctx)
        elif isinstance(n, Superscript):
            self.inlines(p, target, n.children, replace(fmt, sup=True, sub=False), ctx)
        elif isinstance(n, Code):
            self.text_run(p, target, n.text, replace(fmt, code=True))
        elif isinstance(n, Math):
            self.text_run(p, target, n.tex, replace(fmt, code=True))
        elif isinstance(n, Link):
            self.link(p, target, n, fmt, ctx)
        elif isinstance(n, Image):
            self.image(p, target, n, fmt, ctx)
        elif isinstance(n, LineBreak):
            self.new_run(p, target, fmt).add_break()
        elif isinstance(n, NoteRef):
            self.note_ref(p, target, n, fmt, ctx)
        elif isinstance(n, Anchor):
            self.bookmark_id += 1
            target.append(el("w:bookmarkStart", id=str(self.bookmark_id),
                             name=self.bookmark_name(n.name)))
            target.append(el("w:bookmarkEnd", id=str(self.bookmark_id)))
        elif isinstance(n, Placeholder):
            self.text_run(p, target, f"[{n.text}]", replace(fmt, italic=True))

    def new_run(self, p: Any, target: Any, fmt: _Fmt) -> Run:
        r = OxmlElement("w:r")
        target.append(r)
        run = Run(r, p)
        if fmt.link:
            r.get_or_add_rPr().style = self.style_id("Hyperlink")
            if fmt.code:
                run.font.name = "Consolas"
        elif fmt.code:
            r.get_or_add_rPr().style = self.style_id("Inline Code")
        font = run.font
        if fmt.bold:
            font.bold = True
        if fmt.italic:
            font.italic = True
        if fmt.underline and not fmt.link:
            font.underline = True
        if fmt.strike:
            font.strike = True
        if fmt.sub:
            font.subscript = True
        if fmt.sup:
            font.superscript = True
        return run

    def text_run(self, p: Any, target: Any, text: str, fmt: _Fmt) -> None:
        text = clean(text)
        if not text:
            return
        run = self.new_run(p, target, fmt)
        if "\t" in text or "\n" in text or "\r" in text:
            run.text = text
            return
        t = OxmlElement("w:t")
        t.text = text
        if text[0].isspace() or text[-1].isspace():
            t.set(qn("xml:space"), "preserve")
        run._r.append(t)

    def link(self, p: Any, target: Any, n: Link, fmt: _Fmt, ctx: _Ctx) -> None:
        dest = n.target.strip()
        if fmt.link or not dest or not is_safe_link(dest):
            self.inlines(p, target, n.children, fmt, ctx)
            return
        if dest.startswith("#"):
            hl = new_hyperlink(p, anchor=self.bookmark_name(dest[1:]), tooltip=n.title)
        else:
            r_id = self.external_rel(p.part, _safe_url(dest))
            hl = new_hyperlink(p, r_id=r_id, tooltip=n.title)
        if target is not p._p:  # keep document order when called inside another element
            p._p.remove(hl)
            target.append(hl)
        children = n.children or [Text(dest)]
        self.inlines(p, hl, children, replace(fmt, link=True), ctx)

    def image(self, p: Any, target: Any, n: Image, fmt: _Fmt, ctx: _Ctx) -> None:
        res = self.doc.resources.get(n.src)
        if res is None:
            self.doc.warn(f"image {_short(n.src)} not embedded: not fetched")
            self.text_run(p, target, n.alt, fmt)
            return
        max_h = int(self.text_height * 0.9)
        if not self._picture(p, target, res, n.src, ctx.max_width, max_h, n, fmt):
            self.text_run(p, target, n.alt, fmt)

    def _picture(self, p: Any, target: Any, res: Resource, name: str, max_w: int, max_h: int,
                 n: Image | None = None, fmt: _Fmt | None = None) -> bool:
        try:
            cx, cy = fitted_size(res.data, max_w, max_h, n.width_px if n else None,
                                 n.height_px if n else None)
        except UnsupportedImage:
            self.doc.warn(f"image {_short(name)} not embedded: {res.mime} is not a format "
                          "Word can show (PNG, JPEG, GIF, BMP, TIFF)")
            return False
        run = self.new_run(p, target, fmt or _Fmt())
        run.add_picture(io.BytesIO(res.data), width=cx, height=cy)
        alt = clean(n.alt if n else name)
        for doc_pr in run._r.iter(qn("wp:docPr")):
            doc_pr.set("descr", alt)
            if n and n.title:
                doc_pr.set("title", clean(n.title))
        return True

    def note_ref(self, p: Any, target: Any, n: NoteRef, fmt: _Fmt, ctx: _Ctx) -> None:
        blocks = self.doc.notes.get(n.note_id)
        if blocks is None or ctx.in_note:  # Word has no notes inside notes
            self.text_run(p, target, f"[{n.note_id}]", replace(fmt, sup=True))
            return
        container = self.footnotes.new_container()
        note_ctx = _Ctx(container=container, max_width=self.text_width,
                        base_style="Footnote Text", in_note=True)
        self.blocks(blocks, note_ctx)
        note_id = self.footnotes.commit(container)
        add_reference(self.new_run(p, target, _Fmt()), note_id, self.note_style_id)


class _FastBody(BlockItemContainer):
    """The document body, appending before ``w:sectPr`` directly.

    python-docx looks for the ``w:sectPr`` by scanning the body on every paragraph it adds,
    which makes long documents quadratic.
    """

    def __init__(self, document: Any) -> None:
        body = document._body
        super().__init__(body._element, body)
        self._sect_pr = body._element.sectPr

    def add_paragraph(self, text: str = "", style: Any = None) -> Any:
        p = OxmlElement("w:p")
        self._sect_pr.addprevious(p)
        paragraph = DocxParagraph(p, self)
        if text:
            paragraph.add_run(text)
        if style is not None:
            paragraph.style = style
        return paragraph

    def add_table(self, rows: int, cols: int, width: Any) -> Any:
        tbl = CT_Tbl.new_tbl(rows, cols, width)
        self._sect_pr.addprevious(tbl)
        return DocxTable(tbl, self)


def _between_margins(extent: Length | None, start: Length | None, end: Length | None) -> int:
    """The page width or height less its two margins, in EMU. python-docx types a section's
    sizes as optional (absent from the XML); the writer sets all of them first."""
    if extent is None or start is None or end is None:
        raise ValueError("The section has no page size or margin.")
    return int(extent - start - end)


def _set_page_start(sect_pr: Any, start: int) -> None:
    """``w:pgNumType w:start`` in its schema place (before ``w:cols`` and the rest)."""
    restart = el("w:pgNumType", start=str(start))
    later = ("w:cols", "w:formProt", "w:vAlign", "w:noEndnote", "w:titlePg", "w:textDirection",
             "w:bidi", "w:rtlGutter", "w:docGrid", "w:printerSettings", "w:sectPrChange")
    for child in sect_pr:
        if child.tag in {qn(t) for t in later}:
            child.addprevious(restart)
            return
    sect_pr.append(restart)


def _version(text: str) -> str:
    text = text.strip()
    return f"Version {text}" if text[:1].isdigit() else text


def _short(src: str) -> str:
    return src if len(src) <= 80 else src[:77] + "..."


def _layout(t: Table) -> tuple[list[tuple[tuple[int, int, int, int], Any]], int, int]:
    """Grid positions ((row, col, rowspan, colspan), cell) honouring spans; rows, cols
    (Word allows at most 63 columns)."""
    placed = place_cells(t, max_colspan=63)
    ncols = min(max((p.col + p.colspan for p in placed), default=0), 63)
    fitted = [((p.row, p.col, p.rowspan, min(p.colspan, ncols - p.col)), p.cell)
              for p in placed if p.col < ncols]
    return fitted, len(t.rows), ncols


def write_docx(doc: Document, options: WriterOptions | None = None) -> bytes:
    """Render ``doc`` as a DOCX file (bytes).

    Why: ``/md/convert`` with ``target=docx`` needs a Word file that behaves like one written in
    Word: styles, numbering, bookmarks, fields and footnotes rather than look-alike formatting.
    Images must already be in ``doc.resources`` (the service fetches them); others are replaced
    by their alt text with a warning in ``doc.warnings``, as is the notice that CSS options
    (``css_name``, ``css_text``) shape PDF output only.
    """
    options = options or WriterOptions()
    try:
        data = _Writer(doc, options).write()
    except (ValueError, etree.LxmlError, KeyError, IndexError) as exc:
        raise ConversionFailed(f"could not write DOCX: {exc}") from exc
    if options.asks_for_css():
        doc.warn("css_name and css_text apply to PDF output only")
    return data
