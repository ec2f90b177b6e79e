"""DOCX reader of the ``word2markdown`` engine: a Word document into the document model.

Why a hand-written lxml walk rather than python-docx or pandoc: it must open Strict OOXML,
see through content controls, text boxes, fields and tracked changes, read numbering and
merged cells faithfully, and never crash or silently drop content on odd documents. Anything
it cannot convert becomes a visible ``Placeholder`` plus a warning.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from render_pool.engine.common.inlines import ParaState, Seg, build_inlines
from render_pool.engine.common.slugs import Slugger
from render_pool.engine.docx import part_cache, simple_inlines
from render_pool.engine.docx.drawings import Drawings
from render_pool.engine.docx.entries import (
    AnchorEntry,
    BlockEntry,
    CodeEntry,
    Entry,
    ItemEntry,
    QuoteEntry,
    assemble,
    locate_entries,
)
from render_pool.engine.docx.omml import omml_to_latex
from render_pool.engine.docx.package import NS, Package
from render_pool.engine.docx.simple_inlines import trimmed
from render_pool.engine.docx.styles import Style, first_children, is_mono_font, on
from render_pool.engine.docx.tables import first_child, read_table
from render_pool.engine.model import (
    Anchor,
    Block,
    BlockQuote,
    Code,
    Document,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    ListBlock,
    Math,
    MathBlock,
    NoteRef,
    Paragraph,
    PartRef,
    Placeholder,
    Text,
    plain_text,
    walk_document,
)
from render_pool.engine.provenance import roll_up
from render_pool.errors import (
    ConversionError,
    ConversionFailed,
    CorruptDocument,
    UnsupportedFormat,
)

_W = f"{{{NS['w']}}}"
_M = f"{{{NS['m']}}}"
_R = f"{{{NS['r']}}}"
_MC = f"{{{NS['mc']}}}"
_W14 = f"{{{NS['w14']}}}"
CHECKED, UNCHECKED = "☒", "☐"
_CHECK_CHARS = {"☐": False, "☒": True, "☑": True, "✓": True, "✔": True}
_WINGDINGS = {0xA8: "☐", 0x6F: "☐", 0x71: "☐", 0xFE: "☒", 0xFD: "☒", 0x78: "☒",
              0xFC: "✓", 0x9F: "•", 0xA7: "▪", 0xD8: "➢", 0xE0: "→", 0xE8: "➔", 0x6C: "●"}
_CODEISH = re.compile(r"[=;{}\[\]<>#\\|]|\w\(|\)\s*$|^\s{2,}\S|:\s*$|^\s*(def|class|import|"
                      r"return|if|for|while|select|from|#include|function|var|let|const)\b",
                      re.IGNORECASE | re.MULTILINE)
_TRACK_VALUES = ("accept", "all", "reject")
_NO_FMT: frozenset[str] = frozenset()
_BOLD = frozenset({"b"})
_NO_KIDS: dict[object, etree._Element] = {}
_ONE_FONT: set[str | None] = {None}  # the fonts of a text without run properties (read only)
_WP_ = _W + "p"  # the tags the walk meets most, compared whole before any other test
_WR = _W + "r"
_WT = _W + "t"
_WRPR = _W + "rPr"
_WPPR = _W + "pPr"
_WTCPR = _W + "tcPr"
_WHYPERLINK = _W + "hyperlink"
# properties and marks that hold no content (those _collect_one passes over, by full tag)
_NOT_CONTENT = frozenset(_W + local for local in (
    "tcPr", "sectPr", "bookmarkEnd", "proofErr", "tblPr", "tblGrid", "trPr"))
_WPSTYLE = _W + "pStyle"
_WOUTLINE = _W + "outlineLvl"
_WNUMPR = _W + "numPr"
_WNUMID = _W + "numId"
_WILVL = _W + "ilvl"
_WVAL = _W + "val"
# the same name as bytes, for the look-ups every paragraph makes: lxml takes either and
# answers alike, but encodes (and checks) a str key on every call, about a fifth of the cost
_WVAL_BYTES = _WVAL.encode()


def _local(el: Any) -> str:
    """The local name of an element's tag ("" for comments and processing instructions);
    string work rather than ``etree.QName``, which builds an object per call."""
    tag = el.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


_PARA_PROPS = frozenset({_WPSTYLE, _WOUTLINE, _WNUMPR})
# the body's blocks provenance.roll_up gives a location (tables have theirs: see read)
_ROLLED = (ListBlock, BlockQuote)


def _para_props(ppr: etree._Element) -> dict[object, etree._Element]:
    """The first ``w:pStyle``, ``w:outlineLvl`` and ``w:numPr`` of a paragraph's properties,
    by tag (what the reader asks of them), in one pass."""
    found: dict[object, etree._Element] = {}
    for child in ppr[:]:
        tag = child.tag
        if tag in _PARA_PROPS and tag not in found:
            found[tag] = child
    return found


def _lone_text(run: etree._Element) -> str | None:
    """The text of ``run`` when it is a ``w:r`` holding one ``w:t`` and nothing else (no
    properties) and the text is not empty; None for any other child of a paragraph (an
    empty text is left to the general walk, as :mod:`simple_inlines` leaves it)."""
    if run.tag != _WR or len(run) != 1:
        return None
    t = run[0]
    if t.tag != _WT:
        return None
    return t.text or None


def _props_key(el: etree._Element) -> tuple[object, ...]:
    """What a properties element (``w:rPr``) says, as a key: the tag and attributes of each
    child in order. Run formats depend on nothing else (``DocxReader._read_run_fmt`` reads
    the children's attributes, never what they hold), and this costs a fraction of
    ``etree.tostring``, which writes every namespace the document declares into each
    string."""
    out: list[object] = []
    for child in el[:]:
        out.append(child.tag)
        out.append(tuple(child.items()))
    return tuple(out)


def _plain_inlines(segs: list[Seg], heading: bool) -> list[Inline] | None:
    """The inlines of a paragraph none of whose segments has a format or a link (most
    paragraphs of a report), or None for any other: what ``build_inlines`` makes of them
    (adjacent texts joined, empty ones dropped, tabs as spaces, edges trimmed) without
    grouping by every format and link. A heading's bold counts as no format, and a note
    reference, bookmark or formula carries none (see ``DocxReader._clean_segs``)."""
    if len(segs) == 1:  # most plain paragraphs: their runs joined into one text
        return _plain_text_only(segs[0], heading)
    out: list[Inline] = []
    texts: list[str] = []
    for s in segs:
        if s.link is not None:
            return None
        node = s.node
        if type(node) is Text:
            if s.fmt and not (heading and s.fmt == _BOLD):
                return None
            texts.append(node.text)
            continue
        if type(node) is Code or (s.fmt and not isinstance(node, NoteRef | Anchor | Math)):
            return None
        if texts:
            _add_joined(out, texts)
            texts = []
        out.append(node)
    if texts:
        _add_joined(out, texts)
    return trimmed(out)


def _plain_text_only(seg: Seg, heading: bool) -> list[Inline] | None:
    """:func:`_plain_inlines` of a paragraph of one segment, without its lists: a text
    without format or link trimmed (tabs as spaces; nothing when blank), the one inline
    that carries no format, or None (the general tree)."""
    node = seg.node
    if seg.link is not None:
        return None
    if type(node) is Text:
        if seg.fmt and not (heading and seg.fmt == _BOLD):
            return None
        text = node.text
        if "\t" in text:
            text = text.replace("\t", " ")
        text = text.strip()
        return [Text(text)] if text else []
    if type(node) is Code or (seg.fmt and not isinstance(node, NoteRef | Anchor | Math)):
        return None
    return [node]


def _all_code(segs: list[Seg]) -> bool:
    """Whether every visible text of a paragraph is in a typewriter face."""
    for s in segs:  # the format first: it settles most paragraphs at their first segment
        if "code" not in s.fmt and isinstance(s.node, Text) and s.node.text.strip():
            return False
    return True


def _add_joined(out: list[Inline], texts: list[str]) -> None:
    """Adjacent texts as one ``Text`` (tabs as spaces), unless they are empty."""
    text = "".join(texts)
    if text:
        out.append(Text(text.replace("\t", " ") if "\t" in text else text))


def _add_text(state: ParaState, text: str, fmt: frozenset[str], font: str | None) -> None:
    """A run's text as a segment (what ``ParaState.add`` does, outside fields): joined to the
    segment before it when that one is a text with the same formats and link (pandoc writes
    the space between two words of different formats as a run of its own; build_inlines
    would join them anyway). A segment's text is this reader's own, made in this
    paragraph, so it is extended in place, its parts joined once the paragraph is read
    (``ParaState.join_texts``). The font counts when the text shows."""
    segs = state.segs
    links = state.links
    sfmt = fmt | frozenset(state.extra) if state.extra else fmt
    link = _innermost(links) if links else None
    last = segs[-1] if segs else None
    if last is not None and type(last.node) is Text and last.link == link and (
            last.fmt is sfmt or last.fmt == sfmt):
        state.extend_text(last, text)
    else:
        segs.append(Seg(Text(text), sfmt, link))
    if text.strip():
        state.fonts.add(font)


def _innermost(links: list[tuple[str, str] | None]) -> tuple[str, str] | None:
    """The innermost link target of the open hyperlinks and fields (None when none)."""
    for link in reversed(links):
        if link is not None:
            return link
    return None


def _wval(el: etree._Element | None, default: str | None = None) -> str | None:
    return default if el is None else el.get(_WVAL, default)


# a paragraph's style, heading level, whether a title, numbering instance and level, and
# whether it may be code when its texts are in no run font of their own (what
# DocxReader._maybe_code says of it with the fonts {None}: most paragraphs' question, and it
# depends on the style alone)
_ParaProps = tuple[Style | None, int | None, bool, str | None, int, bool]


def _heading_level(pkids: dict[object, etree._Element], style: Style | None
                   ) -> tuple[int | None, bool]:
    """A paragraph's heading level (a direct outline level before the style's; None for
    body text) and whether its style is a title."""
    outline = pkids.get(_WOUTLINE) if pkids else None
    if outline is not None:
        try:
            ol = int(_wval(outline, "9") or "9")
        except ValueError:
            ol = 9
        return (ol + 1 if ol < 9 else None), False
    if style is not None:
        return style.heading, style.title
    return None, False


class DocxReader:
    """One conversion: holds the package, styles, numbering and the document being built."""

    def __init__(self, data: bytes, include_furniture: bool, track_changes: str) -> None:
        if track_changes not in _TRACK_VALUES:
            raise UnsupportedFormat(
                f"track_changes must be one of {', '.join(_TRACK_VALUES)}, not {track_changes!r}"
            )
        self.pkg = Package(data)
        self.include_furniture = include_furniture
        self.track = track_changes
        self.doc = Document()
        self.part = self.pkg.main_part
        main_root = self.pkg.xml(self.part)
        self.body: etree._Element | None = None  # w:body, once reading starts
        if main_root is None or main_root.find(_W + "body") is None:
            raise CorruptDocument("Not a DOCX document: the main part has no w:body.")
        self.main_root: etree._Element = main_root
        styles_rel = self.pkg.rel_by_type(self.part, "styles")
        # both cached per worker by the parts' bytes (see part_cache)
        self.styles = part_cache.styles_for(
            self.pkg, styles_rel[0].target if styles_rel else None)
        num_rel = self.pkg.rel_by_type(self.part, "numbering")
        self.numbering = part_cache.numbering_for(
            self.pkg, num_rel[0].target if num_rel else None, self.styles)
        self.notes_src: dict[str, tuple[str, dict[str, etree._Element]]] = {}
        # the bookmarks hyperlinks and fields refer to, in the body and the notes parts
        self.referenced: set[str] = part_cache.referenced_bookmarks(main_root)
        for kind, prefix in (("footnotes", "fn"), ("endnotes", "en")):
            rels = self.pkg.rel_by_type(self.part, kind)
            target = rels[0].target if rels else ""
            items, names = part_cache.notes_for(self.pkg, target)  # cached when no notes
            self.notes_src[prefix] = (target, items)
            self.referenced |= names
        self.bookmark_heading: dict[str, str] = {}
        self.slugger = Slugger()
        self.depth = 0
        self.internal_links = False  # whether a hyperlink's target starts with "#"
        self._fmt_cache: dict[tuple[object, ...], tuple[frozenset[str], str | None]] = {}
        self._style_props: dict[str | None, _ParaProps] = {}  # see _props_of
        # see _numbered_props: (style id, numId, ilvl) -> what the properties say
        self._num_props: dict[tuple[str | None, str | None, str | None], _ParaProps] = {}
        self._item_kinds: dict[tuple[str, int], tuple[bool, str] | None] = {}  # _item_kind

    # ------------------------------------------------------------ entry point
    def read(self) -> Document:
        """Convert the whole package."""
        self._meta()
        body = self.main_root.find(_W + "body")
        self.body = body
        self.doc.blocks = self.blocks(body)
        # lists, quotes: the positions of their paragraphs. A table has its own (from
        # _collect) and nothing in one has any (only the body's children are located), so
        # the walk of its cells could only give the lists and tables inside the empty list
        # of positions they have: tables are left out of it.
        # Only lists and quotes hold blocks here: roll_up passes over any other block.
        roll_up([b for b in self.doc.blocks if type(b) in _ROLLED])
        if self.include_furniture:
            self._furniture()
        self._fix_internal_links()
        return self.doc

    def _meta(self) -> None:
        rels = [r for r in self.pkg.rels("").values() if r.type.endswith("core-properties")] \
            if self.pkg.has("_rels/.rels") else []
        name = rels[0].target if rels else "docProps/core.xml"
        try:
            root = self.pkg.xml(name)
        except CorruptDocument:
            self.doc.warn("Document properties (docProps/core.xml) are malformed; ignored.")
            return
        if root is None:
            return
        wanted = {"title": "title", "creator": "author", "subject": "subject",
                  "description": "description", "keywords": "keywords", "language": "language",
                  "created": "created", "modified": "modified",
                  "lastModifiedBy": "last_modified_by"}
        for el in root:
            local = _local(el)
            if local in wanted and (el.text or "").strip():
                self.doc.meta[wanted[local]] = el.text.strip()

    # ------------------------------------------------------------ blocks
    def blocks(self, container: etree._Element) -> list[Block]:
        """Blocks of a body, cell, note, header or text box."""
        self.depth += 1
        try:
            if self.depth > 40:
                self.doc.warn("Content nested too deeply was flattened.")
                text = "".join(container.itertext()).strip()
                return [Paragraph([Placeholder(text or "[nested content]")])]
            entries: list[Entry] = []
            self._collect(container, entries)
            return assemble(entries, self.bookmark_heading)
        finally:
            self.depth -= 1

    def _cell_blocks(self, tc: etree._Element) -> list[Block]:
        """The blocks of a table cell (``w:tc``). Most cells of a report hold (their
        properties and) one paragraph of one plain run, with neither numbering nor a heading
        level: that paragraph is made here, as :meth:`blocks` would make it, without its
        entries; any other cell, or one that may be code, a quote or a checkbox, takes
        :meth:`blocks`."""
        kids = tc[:]
        count = len(kids)
        if self.depth < 40 and (count == 1 or (count == 2 and kids[0].tag == _WTCPR)) and (
                kids[-1].tag == _WP_):
            pkids = kids[-1][:]  # as _paragraph reads them: the properties, a lone run
            size = len(pkids)
            ppr = pkids[0] if size == 2 and pkids[0].tag == _WPPR else None
            text = _lone_text(pkids[-1]) if ppr is not None or size == 1 else None
            if text is not None:
                para = self._plain_cell_paragraph(text, self._props_of(ppr))
                if para is not None:
                    return [para]
        return self.blocks(tc)

    def _plain_cell_paragraph(self, text: str, props: _ParaProps) -> Paragraph | None:
        """The paragraph :meth:`_lone_text_entry` makes of a cell's lone ``text`` when it
        makes one block entry of it, else None (headings, list items, quotes, checkboxes,
        possible code, nothing shown: :meth:`blocks` decides those)."""
        style, level, title, num_id, _, lone_code = props
        if title or level or num_id is not None or lone_code or (
                style is not None and style.quote):
            return None
        shown = (text.replace("\t", " ") if "\t" in text else text).strip()
        if not shown or shown[0] in _CHECK_CHARS:
            return None
        return Paragraph([Text(shown)])

    def _collect(self, container: etree._Element, entries: list[Entry]) -> None:
        """The entries of ``container``'s children; those of the body's children located at
        the child's position (``PartRef``: the main part, the child's index from 0)."""
        top = container is self.body
        if not top:
            for el in container[:]:
                tag = el.tag
                if tag == _WP_:  # most children: what _collect_one would do first
                    self._paragraph(el, entries)
                elif tag not in _NOT_CONTENT:
                    self._collect_one(el, entries)
            return
        for pos, el in enumerate(container[:]):
            before = len(entries)
            tag = el.tag
            if tag == _WP_:  # most children: what _collect_one would do first
                self._paragraph(el, entries)
            elif tag in _NOT_CONTENT:  # a bookmark's end, the section: no entry
                continue
            else:
                self._collect_one(el, entries)
            added = len(entries) - before
            if added == 1 and type(entry := entries[before]) is BlockEntry:
                if not entry.block.prov:  # most children: one block, as locate_entries does
                    entry.block.prov = [PartRef(self.part, pos)]
            elif added:
                locate_entries(entries[before:], PartRef(self.part, pos))

    def _collect_one(self, el: etree._Element, entries: list[Entry]) -> None:
        """The entries of one child of a container."""
        if el.tag == _WP_:
            self._paragraph(el, entries)
            return
        local = _local(el)
        if local == "tbl":
            keep = self.track == "all"
            table = read_table(el, self._cell_blocks, keep_deleted_rows=keep,
                               warn=self.doc.warn)
            if len(table.rows) == 1 and len(table.rows[0].cells) == 1:
                # a one-cell table is a layout frame: keep its content in the flow
                entries.extend(BlockEntry(b) for b in table.rows[0].cells[0].blocks)
            elif table.rows:
                entries.append(BlockEntry(table))
        elif local == "sdt":
            content = el.find(_W + "sdtContent")
            if content is not None:
                self._collect(content, entries)
        elif local in ("customXml", "smartTag", "ins", "moveTo", "txbxContent"):
            self._collect(el, entries)
        elif local in ("del", "moveFrom"):
            if self.track == "all":
                self._collect(el, entries)
        elif local == "AlternateContent":
            branch = el.find(_MC + "Choice")
            if branch is None or len(branch) == 0:
                branch = el.find(_MC + "Fallback")
            if branch is not None:
                self._collect(branch, entries)
        elif local == "bookmarkStart":
            name = el.get(_W + "name", "")
            if name in self.referenced:
                entries.append(AnchorEntry(name))
        elif local == "altChunk":
            self.doc.warn("An embedded foreign document (altChunk) was not converted.")
            entries.append(BlockEntry(Paragraph([Placeholder("[embedded document]")])))
        elif local in ("sectPr", "bookmarkEnd", "proofErr", "permStart", "permEnd",
                       "commentRangeStart", "commentRangeEnd", "tblPr", "tblGrid",
                       "trPr", "tcPr", "") or local.endswith("Pr"):
            return
        elif len(el):
            self._collect(el, entries)

    # ------------------------------------------------------------ paragraphs
    def _para_style(self, pkids: dict[object, etree._Element]) -> Style | None:
        """The paragraph's style (``pkids``: what :func:`_para_props` found in its
        ``w:pPr``), else the default paragraph style."""
        el = pkids.get(_WPSTYLE)
        sid = el.get(_WVAL) if el is not None else None
        by_id = self.styles.by_id  # Styles.get, without two calls per paragraph
        found = by_id.get(sid) if sid is not None else None
        if found is None and self.styles.default_para is not None:
            found = by_id.get(self.styles.default_para)
        return found

    def _paragraph(self, p: etree._Element, entries: list[Entry]) -> None:
        kids = p[:]  # the children, once: the properties and the inline walk both need them
        ppr = kids[0] if kids and kids[0].tag == _WPPR else first_child(p, _WPPR)
        props = self._props_of(ppr)
        style, level, title, num_id, ilvl, _ = props
        size = len(kids)
        if (size == 2 and ppr is kids[0]) or (size == 1 and ppr is None):
            text = _lone_text(kids[-1])  # most cells, list items and headings
            if text is not None and self._lone_text_entry(text, props, entries):
                return
        if not (title or level):  # most paragraphs: their content read in one pass
            pieces = simple_inlines.collect(self, kids)
            if pieces is not None and self._simple_paragraph(pieces, props, entries):
                return
        state = ParaState()
        self._inlines(p, state, style, kids)
        state.join_texts()
        segs = state.segs
        # paragraphs whose mark is a tracked deletion merge with the next one in Word; we
        # simply keep their content.
        has_content = False
        for s in segs:
            node = s.node
            if type(node) is Text:
                if node.text.strip():
                    has_content = True
                    break
            elif not isinstance(node, Anchor):
                has_content = True
                break
        if title or level:
            if has_content:
                self._heading(min(level or 1, 6), state.segs, state.bookmarks, num_id, ilvl,
                              entries, title)
            if state.pending:  # text boxes, charts: blocks after it
                entries.extend(BlockEntry(b) for b in state.pending)
            return
        if not has_content:
            anchors = [s.node for s in segs if isinstance(s.node, Anchor)]
            for a in anchors:
                entries.append(AnchorEntry(a.name))
            if state.pending:  # text boxes, charts: blocks after it
                entries.extend(BlockEntry(b) for b in state.pending)
            return
        # code paragraphs
        if self._is_code(style, state):
            text = "".join(self._code_text(s.node) for s in segs)
            entries.append(CodeEntry(text.rstrip("\n")))
            if state.pending:  # text boxes, charts: blocks after it
                entries.extend(BlockEntry(b) for b in state.pending)
            return
        if state.fonts and _all_code(segs):
            # a whole paragraph in a typewriter face is prose in that face, not code
            segs = [Seg(s.node, s.fmt - {"code"}, s.link) for s in segs]
        inlines = _plain_inlines(segs, heading=False)
        if inlines is None:  # formats or links: the general tree
            inlines = trimmed(build_inlines(self._clean_segs(segs)))  # its texts are joined
        checked = self._take_checkbox(inlines)
        # display math alone in a paragraph -> MathBlock
        maths = [n for n in inlines if type(n) is Math] if Math in map(type, inlines) else None
        if maths and len(maths) == sum(  # every visible inline is math
                1 for n in inlines if not (type(n) is Text and not n.text.strip())) and (
                len(maths) == 1 or all(n.display for n in maths)):
            for n in maths:
                entries.append(BlockEntry(MathBlock(n.tex)))
            if state.pending:  # text boxes, charts: blocks after it
                entries.extend(BlockEntry(b) for b in state.pending)
            return
        self._add_paragraph(Paragraph(inlines), num_id, ilvl, checked, style, entries)
        if state.pending:  # text boxes, charts: blocks after it
            entries.extend(BlockEntry(b) for b in state.pending)

    def _props_of(self, ppr: etree._Element | None) -> _ParaProps:
        """What a paragraph's properties say: its style, heading level, whether it is a
        title, its numbering instance and level. Without a direct outline level or
        numbering (most paragraphs) that depends on the style alone, and is kept per style
        id (styles and numbering do not change while reading); one pass over the
        properties finds which."""
        sid = None
        if ppr is not None:
            styled = False
            numpr = None
            try:
                child: etree._Element | None = ppr[0]
            except IndexError:  # empty properties
                child = None
            while child is not None:  # neighbour by neighbour: cheaper than lxml's list
                tag = child.tag
                if tag == _WPSTYLE:
                    if not styled:  # the first, as _para_props takes it
                        sid = child.get(_WVAL_BYTES)
                        styled = True
                elif tag == _WNUMPR:
                    if numpr is None:  # the first, as _para_props takes it
                        numpr = child
                elif tag == _WOUTLINE:
                    return self._read_props(_para_props(ppr))
                child = child.getnext()
            if numpr is not None:
                return self._numbered_props(sid, numpr, ppr)
        found = self._style_props.get(sid)
        if found is None:
            pkids = _para_props(ppr) if ppr is not None else _NO_KIDS
            found = self._style_props[sid] = self._read_props(pkids)
        return found

    def _numbered_props(self, sid: str | None, numpr: etree._Element, ppr: etree._Element
                        ) -> _ParaProps:
        """:meth:`_props_of` of properties with numbering (``numpr``, the first
        ``w:numPr``) and no direct outline level: what they say depends on the style id and
        the values of the numbering's first ``w:numId`` and ``w:ilvl`` alone, and is kept by
        those (a list of a report repeats a few of them over all its items)."""
        num_el = lvl_el = None
        for child in numpr[:]:
            tag = child.tag
            if tag == _WNUMID:
                if num_el is None:
                    num_el = child
            elif tag == _WILVL and lvl_el is None:
                lvl_el = child
        key = (sid, None if num_el is None else num_el.get(_WVAL_BYTES),
               None if lvl_el is None else lvl_el.get(_WVAL_BYTES))
        found = self._num_props.get(key)
        if found is None:
            found = self._num_props[key] = self._read_props(_para_props(ppr))
        return found

    def _read_props(self, pkids: dict[object, etree._Element]) -> _ParaProps:
        """:meth:`_props_of` of the properties ``pkids`` (see :func:`_para_props`)."""
        style = self._para_style(pkids)
        level, title = _heading_level(pkids, style)
        num_id, ilvl = self._numbering_of(pkids, style)
        return (style, level, title, num_id, ilvl, self._maybe_code(style, _ONE_FONT))

    def _simple_paragraph(self, pieces: simple_inlines.Pieces, props: _ParaProps,
                          entries: list[Entry]) -> bool:
        """The entry of a paragraph (not a heading) whose content ``pieces`` was read in
        one pass: what the general path makes of it, its notes read at the same point.
        False, having changed nothing, for a paragraph that may be code or is all in a
        typewriter face: the general path decides those."""
        fonts = pieces.fonts
        if not fonts and not pieces.notes:
            return True  # nothing shows, no anchor, nothing pending: no entry (general path)
        style, _, _, num_id, ilvl, lone_code = props
        if fonts and (not pieces.prose or (
                lone_code if len(fonts) == 1 and None in fonts  # most: no run font
                else self._maybe_code(style, fonts))):
            return False
        for kind, nid in pieces.notes:
            self._read_note(kind, nid)
        inlines = simple_inlines.build(pieces)
        if inlines is None:  # a piece with two formats: the general tree
            inlines = trimmed(build_inlines(self._clean_segs(pieces.segments())))
        checked = self._take_checkbox(inlines)
        self._add_paragraph(Paragraph(inlines), num_id, ilvl, checked, style, entries)
        return True

    def _lone_text_entry(self, text: str, props: _ParaProps, entries: list[Entry]) -> bool:
        """The entry of a paragraph whose only content is a run of ``text`` alone, without
        properties (see :func:`_lone_text`; most cells, list items and headings): what the
        general walk and :meth:`_heading` make of a heading, and what
        :func:`simple_inlines.collect` and :meth:`_simple_paragraph` make of another
        paragraph, without their lists. False, having changed nothing, for a paragraph that
        may be code: the general paths decide those."""
        style, level, title, num_id, ilvl, lone_code = props
        shown = (text.replace("\t", " ") if "\t" in text else text).strip()
        if title or level:
            if shown:  # else nothing shows: no heading (the general path)
                self._heading(min(level or 1, 6), [Seg(Text(text), _NO_FMT, None)], [],
                              num_id, ilvl, entries, title)
            return True
        if not shown:
            return True  # nothing shows: no entry (see _simple_paragraph)
        if lone_code:
            return False
        inlines: list[Inline] = [Text(shown)]
        checked = self._take_checkbox(inlines)
        self._add_paragraph(Paragraph(inlines), num_id, ilvl, checked, style, entries)
        return True

    def _maybe_code(self, style: Style | None, fonts: set[str | None]) -> bool:
        """Whether a paragraph with text in ``fonts`` passes the first tests of
        :meth:`_is_code` (a code style, or every font a typewriter face)."""
        if style is not None and style.code:
            return True
        para_font = (style.font if style else None) or self.styles.default_font
        for font in fonts:
            if not is_mono_font(font or para_font):
                return False
        return True

    def _add_paragraph(self, para: Paragraph, num_id: str | None, ilvl: int,
                       checked: bool | None, style: Style | None, entries: list[Entry]) -> None:
        """A paragraph's entry: a list item, a checkbox item, a quote or the block."""
        if num_id is not None and (kind := self._item_kind(num_id, ilvl)) is not None:
            value, _ = self.numbering.advance(num_id, ilvl)
            entries.append(ItemEntry(ilvl, kind[1], kind[0], value, [para], checked))
        elif checked is not None:
            entries.append(ItemEntry(0, "__checkbox__", False, 1, [para], checked))
        elif style is not None and style.quote:
            entries.append(QuoteEntry(para))
        else:
            entries.append(BlockEntry(para))

    def _item_kind(self, num_id: str, ilvl: int) -> tuple[bool, str] | None:
        """Whether an item of list ``num_id`` at level ``ilvl`` is ordered, and the list it
        belongs to; None when ``num_id`` is no list. The definitions do not change while
        reading (only the counters do): kept per (num_id, ilvl), as every item asks."""
        key = (num_id, ilvl)
        if key in self._item_kinds:
            return self._item_kinds[key]
        numbering = self.numbering
        found = None
        if numbering.is_list(num_id):
            lvl = numbering.level(num_id, ilvl)
            found = (lvl is not None and lvl.fmt not in ("bullet", "none"),
                     numbering.list_key(num_id))
        self._item_kinds[key] = found
        return found

    def _numbering_of(self, pkids: dict[object, etree._Element], style: Style | None
                      ) -> tuple[str | None, int]:
        num_id: str | None = None
        ilvl: int | None = None
        numpr = pkids.get(_WNUMPR) if pkids else None
        if numpr is None and (style is None or not style.num_id):
            return None, 0  # most paragraphs: no numbering, direct or by style
        if numpr is not None:
            num_id = _wval(first_child(numpr, _WNUMID))
            lv = _wval(first_child(numpr, _WILVL))
            if lv is not None:
                try:
                    ilvl = int(lv)
                except ValueError:
                    ilvl = 0
        if num_id is None and style is not None and style.num_id:
            num_id = style.num_id
            if ilvl is None:
                ilvl = style.ilvl
        if num_id is None or not self.numbering.is_list(num_id):
            return None, 0
        return num_id, max(0, min(ilvl or 0, 8))

    def _heading(self, level: int, all_segs: list[Seg], marks: list[str], num_id: str | None,
                 ilvl: int, entries: list[Entry], title: bool) -> None:
        """The entry of a heading of the segments ``all_segs`` (its anchors among them) with
        the bookmarks ``marks`` started in it."""
        segs = [s for s in all_segs if not isinstance(s.node, Anchor)]
        bookmarks = [s.node.name for s in all_segs if isinstance(s.node, Anchor)]
        inlines = _plain_inlines(segs, heading=True)
        if inlines is None:
            inlines = trimmed(build_inlines(self._clean_segs(segs, heading=True)))
        if num_id is not None:
            _, values = self.numbering.advance(num_id, ilvl)
            label = self.numbering.label(num_id, ilvl, values).strip()
            if label:
                inlines = [Text(label + " "), *inlines]
        if len(inlines) == 1 and type(only := inlines[0]) is Text:  # most headings
            text = only.text.strip()
        else:
            text = plain_text(inlines).strip()
        anchor = self.slugger(text)
        for name in bookmarks + marks:
            self.bookmark_heading.setdefault(name, anchor)
        if title and "title" not in self.doc.meta and text:
            self.doc.meta["title"] = text
        entries.append(BlockEntry(Heading(level=level, children=inlines, anchor=anchor)))

    @staticmethod
    def _clean_segs(segs: list[Seg], heading: bool = False) -> list[Seg]:
        out = []
        for s in segs:
            node = s.node
            if isinstance(node, Text):
                if "\t" in node.text:
                    node = Text(node.text.replace("\t", " "))
                if heading and "b" in s.fmt:
                    out.append(Seg(node, s.fmt - {"b"}, s.link))
                elif node is s.node:
                    out.append(s)  # nothing to clean: the segment as it is
                else:
                    out.append(Seg(node, s.fmt, s.link))
            elif isinstance(node, NoteRef | Anchor | Math):
                out.append(Seg(node, frozenset(), s.link))
            else:
                out.append(s)
        return out

    @staticmethod
    def _code_text(node: Inline) -> str:
        if isinstance(node, Text):
            return node.text
        if isinstance(node, LineBreak):
            return "\n"
        if isinstance(node, Math):
            return node.tex
        if isinstance(node, Placeholder):
            return node.text
        if isinstance(node, Image):
            return node.alt
        return ""

    def _is_code(self, style: Style | None, state: ParaState) -> bool:
        if not state.fonts:
            return False
        if style is not None and style.code:
            return True
        # the font test first: it settles most paragraphs (both tests must pass)
        if not self._maybe_code(style, state.fonts):
            return False
        if any(not isinstance(s.node, Text | LineBreak) for s in state.segs
               if not isinstance(s.node, Anchor)):
            return False
        text = "".join(self._code_text(s.node) for s in state.segs)
        return bool(_CODEISH.search(text))

    @staticmethod
    def _take_checkbox(inlines: list[Inline]) -> bool | None:
        if not inlines or not isinstance(inlines[0], Text):
            return None
        t = inlines[0].text.lstrip()
        if not t or t[0] not in _CHECK_CHARS:
            return None
        rest = t[1:].lstrip()
        if not rest and len(inlines) == 1:
            return None  # a lone box is kept as text
        checked = _CHECK_CHARS[t[0]]
        if rest:
            inlines[0] = Text(rest)
        else:
            inlines.pop(0)
            if inlines and isinstance(inlines[0], Text):
                inlines[0] = Text(inlines[0].text.lstrip())
        return checked

    # ------------------------------------------------------------ inlines
    def _inlines(self, el: etree._Element, state: ParaState, pstyle: Style | None,
                 kids: list[etree._Element] | None = None) -> None:
        """The segments of ``el``'s inline content (``kids``: its children, when the caller
        has them)."""
        for c in el[:] if kids is None else kids:  # lxml's list: cheaper than its iterator
            tag = c.tag
            if tag == _WR:  # most children are runs
                size = len(c)  # len: no list, no proxy per child
                if size == 1 and not state.fields:
                    t = c[0]
                    if t.tag == _WT:
                        # a text alone, without properties (most runs): what _run does of it
                        _add_text(state, t.text or "", _NO_FMT, None)
                        continue
                elif size == 2 and not state.fields:
                    t = c[1]
                    if t.tag == _WT and (rpr := c[0]).tag == _WRPR:
                        # properties and a text (most formatted runs): what _run does of it
                        fmt, font = self.run_fmt(rpr)
                        _add_text(state, t.text or "", fmt, font)
                        continue
                self._run(c, state, pstyle)
                continue
            if tag == _WHYPERLINK:  # most other children: what the branch below does
                self._open_link(state, self.hyperlink_target(c))
                self._inlines(c, state, pstyle)
                state.links.pop()
                continue
            if tag == _WPPR or not isinstance(tag, str):
                continue  # a paragraph's properties: read by _paragraph
            local = _local(c)
            if c.tag.startswith(_M):
                if local == "oMathPara":
                    for om in c.iter(_M + "oMath"):
                        state.add(Math(omml_to_latex(om), display=True))
                elif local == "oMath":
                    state.add(Math(omml_to_latex(c), display=False))
                continue
            if local == "r":
                self._run(c, state, pstyle)
            elif local == "hyperlink":
                self._open_link(state, self.hyperlink_target(c))
                self._inlines(c, state, pstyle)
                state.links.pop()
            elif local in ("ins", "moveTo"):
                if self.track == "all":
                    state.extra.append("u")
                    self._inlines(c, state, pstyle)
                    state.extra.pop()
                elif self.track == "accept":
                    self._inlines(c, state, pstyle)
            elif local in ("del", "moveFrom"):
                if self.track == "all":
                    state.extra.append("s")
                    was, state.in_delete = state.in_delete, True
                    self._inlines(c, state, pstyle)
                    state.in_delete = was
                    state.extra.pop()
                elif self.track == "reject":
                    was, state.in_delete = state.in_delete, True
                    self._inlines(c, state, pstyle)
                    state.in_delete = was
            elif local == "sdt":
                self._sdt_inline(c, state, pstyle)
            elif local == "fldSimple":
                self._open_link(state, self._field_link(c.get(_W + "instr", "")))
                self._inlines(c, state, pstyle)
                state.links.pop()
            elif local == "bookmarkStart":
                name = c.get(_W + "name", "")
                if name and name != "_GoBack":
                    state.bookmarks.append(name)
                    if name in self.referenced:
                        state.add(Anchor(name))
            elif local == "AlternateContent":
                branch = c.find(_MC + "Choice")
                if branch is None or len(branch) == 0:
                    branch = c.find(_MC + "Fallback")
                if branch is not None:
                    self._inlines(branch, state, pstyle)
            elif local in ("smartTag", "customXml", "dir", "bdo", "sdtContent"):
                self._inlines(c, state, pstyle)
            elif local in ("pPr", "proofErr", "bookmarkEnd", "commentRangeStart",
                           "commentRangeEnd", "permStart", "permEnd", "rPr",
                           "lastRenderedPageBreak"):
                continue
            elif len(c):
                self._inlines(c, state, pstyle)

    def _open_link(self, state: ParaState, target: tuple[str, str] | None) -> None:
        """Open a hyperlink (or a hyperlink field) to ``target``, noting whether it points
        into the document (see :meth:`_fix_internal_links`)."""
        if target is not None and target[0].startswith("#"):
            self.internal_links = True
        state.links.append(target)

    def _sdt_inline(self, sdt: etree._Element, state: ParaState, pstyle: Style | None) -> None:
        pr = sdt.find(_W + "sdtPr")
        box = pr.find(_W14 + "checkbox") if pr is not None else None
        if box is not None:
            checked_el = box.find(_W14 + "checked")
            val = checked_el.get(_W14 + "val", "0") if checked_el is not None else "0"
            state.add(Text(CHECKED if val in ("1", "true", "on") else UNCHECKED))
            return
        content = sdt.find(_W + "sdtContent")
        if content is not None:
            self._inlines(content, state, pstyle)

    def hyperlink_target(self, h: etree._Element) -> tuple[str, str] | None:
        """The target and title of hyperlink ``h`` (None when it has neither a
        relationship nor an anchor, or its relationship is missing: then a warning)."""
        rid = h.get(_R + "id")
        anchor = h.get(_W + "anchor")
        title = h.get(_W + "tooltip", "")
        if rid:
            rel = self.pkg.rels(self.part).get(rid)
            if rel is None:
                self.doc.warn(f"A hyperlink points to a missing relationship ({rid}).")
                return None
            target = rel.target
            if anchor:
                target += "#" + anchor
            return (target, title)
        if anchor:
            return ("#" + anchor, title)
        return None

    @staticmethod
    def _field_link(instr: str) -> tuple[str, str] | None:
        m = re.match(r"\s*HYPERLINK\b(.*)", instr, re.IGNORECASE | re.DOTALL)
        if not m:
            return None
        args = m.group(1)
        tokens = re.findall(r'\\[a-z]\s+"[^"]*"|\\[a-z]\s+\S+|"[^"]*"|\S+', args, re.IGNORECASE)
        url, anchor, title = "", "", ""
        for tok in tokens:
            if tok.lower().startswith("\\l"):
                anchor = tok[2:].strip().strip('"')
            elif tok.lower().startswith("\\o"):
                title = tok[2:].strip().strip('"')
            elif tok.startswith("\\"):
                continue
            elif not url:
                url = tok.strip('"')
        if url and anchor:
            return (url + "#" + anchor, title)
        if url:
            return (url, title)
        if anchor:
            return ("#" + anchor, title)
        return None

    def run_fmt(self, rpr: etree._Element | None) -> tuple[frozenset[str], str | None]:
        """A run's formats and font: its own properties, else its character style's. The
        answer depends only on the properties' XML (the styles are the document's): a
        document repeats a few property sets over hundreds of runs, so it is kept by that
        XML (what :func:`_props_key` says of it)."""
        if rpr is None:  # most runs: no properties, no character style
            return _NO_FMT, None
        key = _props_key(rpr)
        found = self._fmt_cache.get(key)
        if found is None:
            found = self._fmt_cache[key] = self._read_run_fmt(rpr)
        return found

    def _read_run_fmt(self, rpr: etree._Element) -> tuple[frozenset[str], str | None]:
        kids = first_children(rpr)  # one pass over the properties, not a find per property
        cstyle = self.styles.get(_wval(kids.get(_W + "rStyle")))
        fmt: set[str] = set()

        def prop(tag: str, attr: str) -> bool:
            val = on(kids.get(tag))
            if val is None and cstyle is not None:
                val = getattr(cstyle, attr)
            return bool(val)

        if prop(_W + "b", "bold"):
            fmt.add("b")
        if prop(_W + "i", "italic"):
            fmt.add("i")
        if prop(_W + "strike", "strike") or on(kids.get(_W + "dstrike")):
            fmt.add("s")
        u = kids.get(_W + "u")
        if u is not None:
            if u.get(_W + "val", "single") != "none":
                fmt.add("u")
        elif cstyle is not None and cstyle.underline:
            fmt.add("u")
        va = _wval(kids.get(_W + "vertAlign"))
        va = va or (cstyle.vert if cstyle else None)
        if va == "superscript":
            fmt.add("sup")
        elif va == "subscript":
            fmt.add("sub")
        font = None
        rf = kids.get(_W + "rFonts")
        if rf is not None:
            font = rf.get(_W + "ascii") or rf.get(_W + "hAnsi")
        if font is None and cstyle is not None:
            font = cstyle.font
        if (cstyle is not None and cstyle.inline_code) or is_mono_font(font):
            fmt.add("code")
        return frozenset(fmt), font

    def _run(self, r: etree._Element, state: ParaState, pstyle: Style | None) -> None:
        """The segments of run ``r``."""
        kids = r[:]  # lxml's list: a fraction of list(r) or a Python loop's iterator
        rpr = None
        if kids:
            if kids[0].tag == _WRPR:  # where the schema puts it
                rpr = kids[0]
            else:
                for c in kids:  # r.find(_WRPR), without lxml's path machinery
                    if c.tag == _WRPR:
                        rpr = c
                        break
        fmt, font = (_NO_FMT, None) if rpr is None else self.run_fmt(rpr)
        for c in kids:
            tag = c.tag
            if tag == _WT:  # text, most of a run's children
                if state.fields:  # in a field: what ParaState.add does, unless hidden
                    if not state.hidden:
                        state.add(Text(c.text or ""), fmt, font)
                    continue
                _add_text(state, c.text or "", fmt, font)
                continue
            if tag == _WRPR or not isinstance(tag, str):
                continue  # the properties: read above
            local = _local(c)
            if local == "fldChar":
                kind = c.get(_W + "fldCharType")
                if kind == "begin":
                    state.fields.append({"phase": "instr", "instr": "", "link": False})
                elif kind == "separate" and state.fields:
                    f = state.fields[-1]
                    f["phase"] = "result"
                    target = self._field_link(f["instr"])
                    if target is not None:
                        self._open_link(state, target)
                        f["link"] = True
                elif kind == "end" and state.fields:
                    f = state.fields.pop()
                    if f["link"]:
                        state.links.pop()
                continue
            if local == "instrText":
                if state.fields and state.fields[-1]["phase"] == "instr":
                    state.fields[-1]["instr"] += c.text or ""
                continue
            if state.hidden:
                continue
            if local == "t":
                state.add(Text(c.text or ""), fmt, font)
            elif local == "delText":
                if state.in_delete:
                    state.add(Text(c.text or ""), fmt, font)
            elif local in ("tab", "ptab"):
                state.add(Text("\t"), fmt, font)
            elif local in ("br", "cr"):
                if c.get(_W + "type") in ("page", "column"):
                    state.add(Text(" "), fmt)
                else:
                    state.add(LineBreak(), fmt)
            elif local == "noBreakHyphen":
                state.add(Text("-"), fmt, font)
            elif local == "sym":
                state.add(Text(self._sym(c)), fmt, font)
            elif local == "drawing":
                Drawings(self).drawing(c, state)  # made per use: a reader kept by the
                # reader would tie it to itself, and its parsed parts would outlive the
                # reading until the collector's next pass over old objects
            elif local == "pict":
                Drawings(self).vml(c, state)
            elif local == "object":
                if not Drawings(self).vml(c, state):
                    self.doc.warn("An embedded object (OLE) was not converted.")
                    state.add(Placeholder("[embedded object]"))
            elif local == "footnoteReference":
                self._note_ref("fn", c.get(_W + "id", ""), state)
            elif local == "endnoteReference":
                self._note_ref("en", c.get(_W + "id", ""), state)
            elif local == "AlternateContent":
                branch = c.find(_MC + "Choice")
                if branch is None or len(branch) == 0:
                    branch = c.find(_MC + "Fallback")
                if branch is not None:
                    fake = etree.Element(_W + "r")
                    if rpr is not None:
                        fake.append(etree.fromstring(etree.tostring(rpr)))
                    for child in branch:
                        fake.append(etree.fromstring(etree.tostring(child)))
                    self._run(fake, state, pstyle)
            elif local == "ruby":
                base = c.find(_W + "rubyBase")
                if base is not None:
                    self._inlines(base, state, pstyle)

    @staticmethod
    def _sym(c: etree._Element) -> str:
        font = (c.get(_W + "font") or "").lower()
        try:
            code = int(c.get(_W + "char", "0"), 16)
        except ValueError:
            return ""
        low = code - 0xF000 if code >= 0xF000 else code
        if "wingdings" in font or "webdings" in font:
            return _WINGDINGS.get(low, "•")
        try:
            return chr(low)
        except ValueError:
            return ""

    # ------------------------------------------------------------ notes
    def _note_ref(self, prefix: str, nid: str, state: ParaState) -> None:
        items = self.notes_src.get(prefix, ("", {}))[1]
        if nid not in items:
            self.doc.warn(f"A {'footnote' if prefix == 'fn' else 'endnote'} reference points to "
                          "a missing note.")
            state.add(Placeholder(f"[note {nid}]"))
            return
        state.add(NoteRef(f"{prefix}{nid}"))
        self._read_note(prefix, nid)

    def _read_note(self, prefix: str, nid: str) -> None:
        """The blocks of note ``nid`` (which exists) into the document, the first time it
        is referred to."""
        part, items = self.notes_src[prefix]
        note_id = f"{prefix}{nid}"
        if note_id not in self.doc.notes:
            self.doc.notes[note_id] = []  # guard against self-reference loops
            saved, self.part = self.part, part
            try:
                self.doc.notes[note_id] = self.blocks(items[nid])
            finally:
                self.part = saved

    # ------------------------------------------------------------ furniture
    def _furniture(self) -> None:
        main = self.pkg.main_part
        seen: set[str] = set()
        for kind in ("header", "footer"):
            for rel in sorted(self.pkg.rel_by_type(main, kind), key=lambda r: r.target):
                if rel.external or rel.target in seen:
                    continue
                seen.add(rel.target)
                root = self.pkg.xml(rel.target)
                if root is None:
                    continue
                saved, self.part = self.part, rel.target
                try:
                    blocks = self.blocks(root)
                finally:
                    self.part = saved
                if blocks and plain_text(blocks).strip():
                    self.doc.furniture.extend(blocks)
        for rel in self.pkg.rel_by_type(main, "comments"):
            root = self.pkg.xml(rel.target)
            if root is None:
                continue
            saved, self.part = self.part, rel.target
            try:
                for c in root.iter(_W + "comment"):
                    blocks = self.blocks(c)
                    author = c.get(_W + "author", "")
                    if author and blocks and isinstance(blocks[0], Paragraph):
                        blocks[0].children[:0] = [Text(f"{author}: ")]
                    self.doc.furniture.append(BlockQuote(blocks))
            finally:
                self.part = saved

    # ------------------------------------------------------------ internal links
    def _fix_internal_links(self) -> None:
        """Links to a bookmark that marks a heading point at the heading's id instead."""
        if not self.bookmark_heading or not self.internal_links:
            return  # no such bookmark or no link into the document: no need to walk it
        for node in walk_document(self.doc):
            if isinstance(node, Link) and node.target.startswith("#"):
                name = node.target[1:]
                if name in self.bookmark_heading:
                    node.target = "#" + self.bookmark_heading[name]


def read_docx(data: bytes, *, include_furniture: bool = False,
              track_changes: str = "accept") -> Document:
    """Read a DOCX file into a :class:`Document`.

    ``include_furniture`` puts headers, footers and comments into ``Document.furniture``;
    ``track_changes`` is ``"accept"`` (keep insertions, drop deletions), ``"reject"`` (the
    opposite) or ``"all"`` (insertions underlined, deletions struck through). Raises
    ``CorruptDocument``/``UnsupportedFormat``/``TooLarge`` for unusable input.
    """
    try:  # opening the package is guarded as reading it is: a fault in either is the same
        return DocxReader(data, include_furniture, track_changes).read()
    except ConversionError:
        raise
    except RecursionError:
        raise CorruptDocument("The DOCX document is nested too deeply to read.") from None
    except Exception as exc:  # a reader bug must still reach the caller as a service error
        raise ConversionFailed(f"The DOCX reader failed on this document "
                               f"({type(exc).__name__}: {exc!s:.200})") from exc

