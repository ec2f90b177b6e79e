"""Model blocks of a tagged PDF page, built from its structure tree.

The tree (:mod:`struct`) says what each piece of marked content is; the characters of
the page (:mod:`chars`) carry the marked-content id they were drawn in. Each id's
characters are used once, at the first element that references them: a tree that lists an
id twice cannot duplicate text, and ids no element references are left for the layout
reader (the caller reads them by layout), so no character is lost.

Mapping: H/H1-H6/Title -> Heading; P and other text elements -> Paragraph; L/LI/Lbl/LBody ->
ListBlock (ordered from the ListNumbering attribute or the labels); Table/TR/TH/TD ->
Table with RowSpan/ColSpan; Figure -> Image with the alt text; Code -> CodeBlock (or a
Code span inside a paragraph); BlockQuote -> BlockQuote; Link -> Link with the URI of the
link annotation under its characters; Note -> a footnote in ``Document.notes``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from render_pool.engine.model import (
    Block,
    BlockQuote,
    CodeBlock,
    Heading,
    Image,
    Inline,
    Link,
    ListBlock,
    ListItem,
    NoteRef,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
    plain_text,
)
from render_pool.engine.pdf.bidi import logical_order
from render_pool.engine.pdf.chars import Char, is_rtl, mono_glyph, reads_as_prose
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.links import is_internal
from render_pool.engine.pdf.notes import MARK, place_marks
from render_pool.engine.pdf.prov import chars_prov
from render_pool.engine.pdf.struct import StructNode
from render_pool.engine.provenance import merged

_HEADING = re.compile(r"^H([1-6])$")
_CONTAINERS = {"Document", "DocumentFragment", "Part", "Art", "Sect", "Div", "NonStruct",
               "Private", "Aside", "Index", "Form", "Annot", "Span", "Quote", "Reference",
               "BibEntry", "Em", "Strong", "Sub", "Ruby", "Warichu", "THead", "TBody",
               "TFoot", "Link", "FENote"}
_BLOCKS = {"P", "H", "H1", "H2", "H3", "H4", "H5", "H6", "Title", "L", "LI", "Lbl", "LBody",
           "Table", "TR", "TH", "TD", "Figure", "Formula", "BlockQuote", "Caption", "TOC",
           "TOCI", "Note", "Code", "Sect", "Div", "Part", "Art", "Document", "Aside"}
_ORDERED = {"decimal", "upperroman", "lowerroman", "upperalpha", "loweralpha", "ordered"}
_LABEL = re.compile(r"^\(?(\d{1,4}|[a-zA-Z]|[ivxlcIVXLC]{1,6})[.)]?$")
_BULLETS = "\u2022\u25e6\u25aa\u2023\u25cf\u25cb\u25a0\u25a1\u25ab\u2043\u2219\u00b7-\u2013*"
# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_TABLE_CELLS = 20_000


@dataclass
class PageImageRef:
    """An image resource placed on the page, with the marked-content id it was drawn in."""

    name: str
    mcid: int
    width_px: int
    height_px: int


@dataclass
class TaggedPage:
    """What the tree of one page gave: blocks, the ids it used and footnotes found."""

    blocks: list[Block] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    notes: dict[str, list[Block]] = field(default_factory=dict)
    images_used: set[str] = field(default_factory=set)
    boxes: dict[int, tuple[float, float]] = field(default_factory=dict)  # id(block) -> span


class _Builder:
    def __init__(self, chars: dict[int, list[Char | None]], images: list[PageImageRef],
                 page: int) -> None:
        self.chars = chars
        # monospaced text of the whole page that reads as prose (a transcript) is never code
        mono = [c for cs in chars.values() for c in [*cs, None]
                if c is None or (mono_glyph(c))]
        self.mono_prose = reads_as_prose([ln for ln in _code_text(mono, 0.0).splitlines()
                                          if ln.strip()])
        self.images = {i.mcid: i for i in images if i.mcid >= 0}
        self.page = page
        self.taken: list[Char | None] = []  # every character taken, in order (provenance)
        self.out = TaggedPage()
        self.has_block: dict[int, bool] = {}
        self.sect_depth = 0
        self.last_box: tuple[float, float] | None = None
        self.in_list = 0  # depth of the lists being read
        self.tags_headings = False
        self.list_x: dict[int, float] = {}
        self.refs: set[str] = set()  # note ids referenced from the text
        self.marks: list[str] = []  # note ids of markers not yet placed, in order
        sizes = sorted(c.size for cs in chars.values() for c in cs
                       if c is not None and c.text.strip())
        self.body = sizes[len(sizes) // 2] if sizes else 10.0
        self.left = min((c.x0 for cs in chars.values() for c in cs
                         if c is not None and c.text.strip()), default=0.0)

    # ------------------------------------------------------------ structure facts
    def compute_has_block(self, roots: list[StructNode]) -> None:
        """Whether each node holds block-level content (iterative, post-order)."""
        order: list[StructNode] = []
        stack = list(roots)
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(k for k in node.kids if isinstance(k, StructNode))
        for node in reversed(order):
            self.has_block[id(node)] = any(
                isinstance(k, StructNode) and ((k.type in _BLOCKS and k.type != "Code")
                                               or self.has_block.get(id(k), False))
                for k in node.kids)

    def is_block(self, node: StructNode) -> bool:
        return node.type in _BLOCKS or self.has_block.get(id(node), False)

    # ------------------------------------------------------------ characters
    def take(self, mcid: int) -> list[Char | None]:
        """The characters of a marked-content id, once (a second reference gets none)."""
        if mcid in self.out.used:
            return []
        self.out.used.add(mcid)
        got = self.chars.get(mcid, [])
        self.taken.extend(got)
        return got

    def node_chars(self, node: StructNode) -> list[Char | None]:
        """All characters under a node in tree order (line breaks as None)."""
        out: list[Char | None] = []
        stack: list[StructNode | int] = [node]
        while stack:
            cur = stack.pop()
            if isinstance(cur, StructNode) and cur is not node and cur.type in (
                    "Link", "Reference"):
                marker = self.note_marker(cur)
                if marker is not None:
                    out.append(marker)
                    continue
            if isinstance(cur, int):
                got = self.take(cur)
                if got and out and out[-1] is not None and got[0] is not None \
                        and _apart(out[-1], got[0]):
                    out.append(None)
                out.extend(got)
                continue
            stack.extend(reversed(cur.kids))
        return out

    def note_marker(self, node: StructNode) -> Char | None:
        """A footnote reference: a Link/Reference of one to three digits (or * † ‡), set
        smaller than the body text, with no web address. Its characters are consumed; a
        marker character stands in its place (``_place_notes`` makes it a NoteRef)."""
        chars = self.peek_chars(node)
        text = "".join(c.text for c in chars).strip()
        if not _NOTE_MARK.match(text) \
                or any(c.link and not is_internal(c.link) for c in chars) \
                or max(c.size for c in chars) > 0.9 * self.body:
            return None  # a page number link or a web link, not a raised note marker
        for k in _walk(node):
            if isinstance(k, int):
                self.take(k)
        first = chars[0]
        note_id = f"p{self.page + 1}-{text}"
        self.refs.add(note_id)
        self.marks.append(note_id)
        return Char(_MARK, first.x0, first.x1, first.top, first.bottom, first.baseline,
                    first.size, False, False, first.mcid)

    def inlines(self, node: StructNode, keep_style: bool = True) -> list[Inline]:
        """Inline content of a node: its characters, links and images, with notes."""
        if node.actual.strip() and len(node.actual) < 10_000:
            self.node_chars(node)  # consume the ids; the actual text replaces them
            return [Text(" ".join(node.actual.split()))]
        chars = self.node_chars(node)
        vis = [c for c in chars if c is not None and c.text.strip()]
        self.last_box = (min(c.top for c in vis), max(c.bottom for c in vis)) if vis else None
        inl = to_inlines(join_lines(_lines(chars)), keep_style)
        return _place_notes(inl, self.marks) if self.marks else inl

    # ------------------------------------------------------------ blocks
    def blocks(self, roots: list[StructNode]) -> list[Block]:
        self.compute_has_block(roots)
        self.tags_headings = any(
            isinstance(k, StructNode) and (_HEADING.match(k.type) or k.type in ("H", "Title"))
            for r in roots for k in [r, *_walk(r)])
        out: list[Block] = []
        for r in roots:
            out.extend(self.block(r, 0))
        return out

    def container(self, node: StructNode, depth: int) -> list[Block]:
        """Blocks of a container: loose inline content between block kids becomes paragraphs."""
        return self.tidy(self._container(node, depth))

    def tidy(self, blocks: list[Block]) -> list[Block]:
        """Join consecutive code lines, and lists a producer wrote flat (LibreOffice 7
        tags a nested list as the next sibling L) by the x position of their text."""
        out: list[Block] = []
        stack: list[tuple[float, ListBlock]] = []
        for b in blocks:
            if isinstance(b, CodeBlock) and out and isinstance(out[-1], CodeBlock):
                out[-1].text += "\n" + b.text
                out[-1].prov = merged(out[-1].prov, b.prov)
                continue
            x = self.list_x.get(id(b)) if isinstance(b, ListBlock) else None
            if x is not None and stack and out and isinstance(out[-1], ListBlock):
                assert isinstance(b, ListBlock)
                nested = len(stack) > 1  # back out of a sublist: the outer list goes on
                while len(stack) > 1 and x < stack[-1][0] - 3:
                    stack.pop()
                top_x, top = stack[-1]
                joined = (abs(x - top_x) <= 3 and top.ordered == b.ordered and nested) or (
                    x > top_x + 3 and bool(top.items))
                if joined:  # the lists holding ``b`` now reach over its box too
                    for _, holder in stack:
                        holder.prov = merged(holder.prov, b.prov)
                if abs(x - top_x) <= 3 and top.ordered == b.ordered and nested:
                    top.items.extend(b.items)
                    continue
                if x > top_x + 3 and top.items:
                    top.items[-1].blocks.append(b)
                    stack.append((x, b))
                    continue
            stack = [(x, b)] if x is not None and isinstance(b, ListBlock) else []
            out.append(b)
        return out

    def _container(self, node: StructNode, depth: int) -> list[Block]:
        out: list[Block] = []
        loose = StructNode("P")
        rows = StructNode("Table")  # table rows tagged without their Table element
        for at, kid in enumerate(node.kids):
            if isinstance(kid, StructNode) and kid.type == "Code" and self.code_in_line(
                    kid, loose, node.kids[at + 1] if at + 1 < len(node.kids) else None):
                loose.kids.append(kid)  # a code span in running text, not a code block
                continue
            if isinstance(kid, StructNode) and kid.type == "TR" and node.type != "Table":
                if loose.kids:
                    out.extend(self.paragraph(loose, code=True))
                    loose = StructNode("P")
                rows.kids.append(kid)
                continue
            if rows.kids:
                out.extend(self.orphan_rows(rows, depth + 1))
                rows = StructNode("Table")
            if isinstance(kid, StructNode) and self.is_block(kid):
                if loose.kids:
                    out.extend(self.paragraph(loose, code=True))
                    loose = StructNode("P")
                out.extend(self.block(kid, depth + 1))
            else:
                loose.kids.append(kid)
        if rows.kids:
            out.extend(self.orphan_rows(rows, depth + 1))
        if loose.kids:
            out.extend(self.paragraph(loose, code=True))
        return out

    def code_in_line(self, code: StructNode, before: StructNode,
                     after: StructNode | int | None) -> bool:
        """Whether a Code element sits on a line of running text: its first or last
        character shares a line with the loose text just before it or just after it (a
        list item's body holds its text and its code spans without a P around them)."""
        own = [c for c in self.peek_chars(code) if c.text.strip()]
        if not own:
            return False
        prev: list[Char] = []
        for kid in reversed(before.kids):  # from the end: the loose text read so far is long
            prev = [c for c in self.peek_chars(StructNode("Span", kids=[kid]))
                    if c.text.strip()][-1:]
            if prev:
                break
        nxt: list[Char] = []
        if after is not None and not (isinstance(after, StructNode) and self.is_block(after)):
            nxt = [c for c in self.peek_chars(StructNode("Span", kids=[after]))
                   if c.text.strip()][:1]
        return bool(prev and _same_line(prev[0], own[0])) or bool(
            nxt and _same_line(own[-1], nxt[0]))

    def paragraph(self, node: StructNode, code: bool = False,
                  promote: bool = True) -> list[Block]:
        """A paragraph, a heading (see ``heading_level``) or, with ``code``, a code block
        when every character is set in a monospaced font; with the box of its glyphs."""
        start = len(self.taken)
        out = self._paragraph(node, code, promote)
        if len(out) == 1 and not out[0].prov:
            out[0].prov = chars_prov(self.taken[start:], self.page)
        return out

    def _paragraph(self, node: StructNode, code: bool, promote: bool) -> list[Block]:
        if code and not self.mono_prose and _all_mono(self.peek_chars(node)):
            text = _code_text(self.node_chars(node), self.left)
            return [CodeBlock(text)] if text.strip() else []
        figures = [k for k in _walk(node) if isinstance(k, StructNode) and k.type == "Figure"]
        level = 0 if self.tags_headings or figures or not promote or self.in_list else \
            self.heading_level(node)
        inl = self.inlines(node, keep_style=not level)
        box = self.last_box
        if level and inl:
            return [self.placed(Heading(level, inl), box)]
        for fig in figures:
            inl.extend(self.figure_inlines(fig))
        if not inl:
            return []
        para = Paragraph(inl)
        if box is not None and not figures:
            self.out.boxes[id(para)] = box
        return [para]

    def placed(self, heading: Heading, box: tuple[float, float] | None) -> Heading:
        """``heading``, its span on the page noted (internal links find it by position)."""
        if box is not None:
            self.out.boxes[id(heading)] = box
        return heading

    def block(self, node: StructNode, depth: int) -> list[Block]:
        """The blocks of ``node``; a single block is given the box of the glyphs it was read
        from (the blocks of a container got theirs where they were read)."""
        start = len(self.taken)
        out = self._block(node, depth)
        if len(out) == 1 and not out[0].prov:
            out[0].prov = chars_prov(self.taken[start:], self.page)
        return out

    def _block(self, node: StructNode, depth: int) -> list[Block]:
        if depth > 200:
            return []
        t = node.type
        m = _HEADING.match(t)
        if m or t in ("H", "Title"):
            level = int(m.group(1)) if m else (1 if t == "Title" else
                                               min(6, max(1, self.sect_depth + 1)))
            inl = self.inlines(node, keep_style=False)
            return [self.placed(Heading(level, inl), self.last_box)] if inl else []
        if t == "L":
            lb = self.list_block(node, depth)
            return [lb] if lb.items else []
        if t in ("TOC",):
            return self.container(node, depth)
        if t == "Table":
            return self.table(node, depth)
        if t == "Figure":
            inl = self.figure_inlines(node)
            return [Paragraph(inl)] if inl else []
        if t == "Code":
            text = _code_text(self.node_chars(node), self.left)
            return [CodeBlock(text)] if text.strip() else []
        if t == "BlockQuote" or (t == "Quote" and self.is_block(node)):
            inner = self.container(node, depth)
            return [BlockQuote(inner)] if inner else []
        if t in ("Note", "FENote"):
            return self.note(node, depth)
        if t in ("Sect", "Part", "Art", "Chapter", "Section"):
            self.sect_depth += 1
            try:
                return self.container(node, depth)
            finally:
                self.sect_depth -= 1
        if t in ("P", "Caption", "TOCI", "Lbl", "LBody", "Formula") or not self.is_block(node):
            if self.has_block.get(id(node), False):
                return self.container(node, depth)
            return self.paragraph(node, code=True)
        return self.container(node, depth)

    def heading_level(self, node: StructNode) -> int:
        """Level for a P that looks like a heading, in a tree that tags none as H.

        Some producers tag every text block as P; a short P set larger than the body text,
        or entirely bold or italic, without a closing full stop, is a heading there.
        """
        vis = [c for c in self.peek_chars(node) if c.text.strip()]
        if not vis or len(vis) > 120:
            return 0
        text = "".join(c.text for c in self.peek_chars(node))
        words = text.split()
        if not words or len(words) > 12 or text.rstrip().endswith((".", ",", ";", ":")) \
                or not any(ch.isalpha() for ch in text):
            return 0
        size = sorted(c.size for c in vis)[len(vis) // 2]
        if size >= 1.5 * self.body:
            return 1
        if size >= 1.15 * self.body:
            return 2
        letters = [c for c in vis if c.text.isalnum()] or vis
        if all(c.bold for c in letters) or (all(c.italic for c in letters)
                                            and size >= 0.95 * self.body):
            return 3
        return 0

    def peek_chars(self, node: StructNode) -> list[Char]:
        out: list[Char] = []
        for k in _walk(node):
            if isinstance(k, int) and k not in self.out.used:
                out.extend(c for c in self.chars.get(k, []) if c is not None)
        return out

    def figure_inlines(self, node: StructNode) -> list[Inline]:
        out: list[Inline] = []
        for k in _walk(node):
            if isinstance(k, int) and k in self.images and k not in self.out.used:
                img = self.images[k]
                self.out.used.add(k)
                self.out.images_used.add(img.name)
                out.append(Image(img.name, alt=node.alt, width_px=img.width_px,
                                 height_px=img.height_px))
        text = self.inlines(node)
        if text:
            out.extend([Text(" "), *text] if out else text)
        return out

    def note(self, node: StructNode, depth: int) -> list[Block]:
        blocks = self.container(node, depth)
        if not blocks:
            return []
        first = blocks[0]
        if isinstance(first, Paragraph) and first.children \
                and isinstance(first.children[0], Link) and is_internal(first.children[0].target):
            # the leading marker links back to the reference: keep its text only
            head = [*first.children[0].children, *first.children[1:]]
            text = ""
            while head and isinstance(piece := head[0], Text):
                text += piece.text
                head.pop(0)
            first.children = [Text(text), *head] if text else head
        lead = _NOTE_LEAD.match(plain_text(blocks[:1]))
        note_id = f"p{self.page + 1}-{lead.group(1)}" if lead else \
            f"p{self.page + 1}n{len(self.out.notes) + 1}"
        if note_id in self.out.notes:
            note_id += f"n{len(self.out.notes) + 1}"
        if isinstance(first, Paragraph) and first.children and isinstance(
                first.children[0], Text):
            # drop the leading marker ("1", "1." or "*") the note repeats
            text = first.children[0].text
            stripped = _NOTE_LEAD.sub("", text, count=1)
            first.children[0] = Text(stripped)
        self.out.notes[note_id] = blocks
        # a note whose reference was seen in the text needs no anchor of its own here
        return [] if note_id in self.refs else [Paragraph([NoteRef(note_id)])]

    def list_block(self, node: StructNode, depth: int) -> ListBlock:
        xs = [c.x0 for c in self.peek_chars(node) if c.text.strip()]
        self.in_list += 1  # a list item's larger or bolder first entry is no heading
        try:
            lb = self._list_block(node, depth)
        finally:
            self.in_list -= 1
        if xs:
            self.list_x[id(lb)] = min(xs)
        return lb

    def _list_block(self, node: StructNode, depth: int) -> ListBlock:
        numbering = str(node.attrs.get("ListNumbering", "")).lower()
        ordered = numbering in _ORDERED
        items: list[ListItem] = []
        start = 0
        for kid in node.kids:
            if not isinstance(kid, StructNode):
                continue
            if kid.type == "L" and items:  # a nested list right under L
                items[-1].blocks.append(self.list_block(kid, depth + 1))
                continue
            if kid.type != "LI":
                blocks = self.block(kid, depth + 1)
                if blocks:
                    items.append(ListItem(blocks))
                continue
            label = ""
            blocks = []
            body = StructNode("LBody")
            for part in kid.kids:
                if isinstance(part, StructNode) and part.type == "Lbl":
                    label += "".join(c.text for c in self.node_chars(part) if c is not None)
                elif isinstance(part, StructNode) and part.type == "L":
                    if body.kids:
                        blocks.extend(self.container(body, depth + 1))
                        body = StructNode("LBody")
                    blocks.append(self.list_block(part, depth + 1))
                else:
                    body.kids.append(part)
            if body.kids:
                blocks.extend(self.container(body, depth + 1))
            label = label.strip()
            m = _LABEL.match(label)
            if m and not numbering:
                ordered = True
                if not items and m.group(1).isdigit():
                    start = int(m.group(1))
            _strip_bullet(blocks)
            items.append(ListItem(blocks))
        if not ordered and items and not numbering:
            numbers = [_label_number(it.blocks) for it in items]
            if all(n is not None for n in numbers):
                ordered, start = True, numbers[0] or 1
                for it in items:
                    _strip_label(it.blocks)
        return ListBlock(ordered, items, start or 1)

    def orphan_rows(self, rows: StructNode, depth: int) -> list[Block]:
        """Table rows tagged without a Table (some report producers): one table, with
        leading and trailing rows of a single cell (a headnote, a source note) read as
        the paragraphs they are."""
        def single(row: StructNode | int) -> bool:
            return isinstance(row, StructNode) and sum(
                1 for k in row.kids if isinstance(k, StructNode) and k.type in ("TD", "TH")) == 1

        kids = list(rows.kids)
        head: list[StructNode | int] = []
        tail: list[StructNode | int] = []
        while len(kids) > 2 and single(kids[0]):
            head.append(kids.pop(0))
        while len(kids) > 2 and single(kids[-1]):
            tail.insert(0, kids.pop())

        def loose(part: list[StructNode | int]) -> list[Block]:
            out: list[Block] = []
            for row in part:
                assert isinstance(row, StructNode)
                for cell in row.kids:
                    if isinstance(cell, StructNode):
                        out.extend(self.container(cell, depth + 1))
            return out

        return [*loose(head), *self.table(StructNode("Table", kids=kids), depth),
                *loose(tail)]

    def table(self, node: StructNode, depth: int) -> list[Block]:
        rows: list[TableRow] = []
        header_rows = 0
        in_header = True
        caption: list[Inline] = []
        cells_total = 0
        stack: list[tuple[StructNode | int, bool]] = [(k, False) for k in reversed(node.kids)]
        while stack:
            kid, thead = stack.pop()
            if not isinstance(kid, StructNode):
                continue
            if kid.type in ("THead", "TBody", "TFoot"):
                stack.extend((k, kid.type == "THead") for k in reversed(kid.kids))
                continue
            if kid.type == "Caption":
                caption = self.inlines(kid)
                continue
            if kid.type != "TR":
                continue
            cells: list[TableCell] = []
            for cell in kid.kids:
                if not isinstance(cell, StructNode) or cell.type not in ("TH", "TD"):
                    continue
                cells_total += 1
                if cells_total > MAX_TABLE_CELLS:
                    break
                start = len(self.taken)
                blocks = self.container(cell, depth + 1) if self.has_block.get(
                    id(cell), False) else self.paragraph(cell, promote=False)
                cells.append(TableCell(
                    blocks, rowspan=_span(cell.attrs.get("RowSpan")),
                    colspan=_span(cell.attrs.get("ColSpan")), header=cell.type == "TH",
                    prov=chars_prov(self.taken[start:], self.page)))
            if not cells:
                continue
            if in_header and (thead or all(c.header for c in cells)):
                header_rows += 1
            else:
                in_header = False
            rows.append(TableRow(cells))
        if not rows:
            return []
        if header_rows == len(rows) and len(rows) > 1:
            header_rows = 1
        return [Table(rows, header_rows, caption)]


_MARK = MARK  # stands for a footnote reference inside a character stream
_NOTE_MARK = re.compile(r"^(\d{1,3}|[*\u2020\u2021])$")
_NOTE_LEAD = re.compile(r"^\s*(\d{1,3}|[*\u2020\u2021])[.)]?\s+")


def _place_notes(inlines: list[Inline], marks: list[str]) -> list[Inline]:
    """Replace each marker character in the inlines by a NoteRef (ids taken from ``marks``
    in order; a marker left without one is dropped)."""
    holder = Paragraph(inlines)
    place_marks([holder], lambda _: marks.pop(0) if marks else "", numbered=False)
    return holder.children


def _span(value: object) -> int:
    try:
        # any PDF object: what float() refuses is caught below
        return max(1, min(int(float(value)), 1000))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1


def _walk(node: StructNode) -> list[StructNode | int]:
    """All descendants of a node (iterative pre-order)."""
    out: list[StructNode | int] = []
    stack: list[StructNode | int] = list(reversed(node.kids))
    while stack:
        cur = stack.pop()
        out.append(cur)
        if isinstance(cur, StructNode):
            stack.extend(reversed(cur.kids))
    return out


def _apart(a: Char, b: Char) -> bool:
    """True when b does not continue a's line (a new line or a jump back)."""
    em = max(a.size, b.size, 1.0)
    return abs(a.baseline - b.baseline) > 0.5 * em or (
        b.x0 < a.x0 - 0.5 * em and not is_rtl(a.text) and not is_rtl(b.text))


def _lines(chars: list[Char | None]) -> list[list[Char]]:
    """Characters split at line breaks and baseline jumps, with spaces kept; a line with
    right-to-left letters in logical order (bidi)."""
    return [logical_order(ln) if any(is_rtl(c.text) for c in ln) else ln
            for ln in _ltr_lines(chars)]


def _ltr_lines(chars: list[Char | None]) -> list[list[Char]]:
    lines: list[list[Char]] = [[]]
    for c in chars:
        if c is None:
            if lines[-1]:
                lines.append([])
            continue
        cur = lines[-1]
        last = next((x for x in reversed(cur) if x.text.strip()), None)
        if last is not None and c.text.strip() and _apart(last, c):
            lines.append([c])
            continue
        if last is not None and c.text.strip() and cur[-1].text.strip() \
                and c.x0 - last.x1 > 0.25 * max(c.size, 1.0):
            cur.append(Char(" ", last.x1, last.x1, last.top, last.bottom, last.baseline,
                            last.size, last.bold, last.italic, last.mcid, last.mono, last.link))
        elif last is not None and c.text.strip() and cur[-1].text.strip() \
                and is_rtl(c.text) and last.x0 - c.x1 > 0.15 * max(c.size, 1.0):
            # right to left: the gap is on the left of the last letter
            cur.append(Char(" ", c.x1, last.x0, last.top, last.bottom, last.baseline,
                            last.size, last.bold, last.italic, last.mcid, last.mono, last.link))
        cur.append(c)
    return [ln for ln in lines if ln]


def _all_mono(chars: list[Char]) -> bool:
    vis = [c for c in chars if c.text.strip()]
    return len(vis) >= 3 and all(mono_glyph(c) for c in vis)


def _code_text(chars: list[Char | None], left: float) -> str:
    """Lines of a code block, indented by their distance from ``left`` (the page's text
    edge) in character widths; the common indentation is removed at the end (``dedent_code``)."""
    lines = _lines(chars)
    vis = [c for ln in lines for c in ln if c.text.strip()]
    if not vis:
        return ""
    widths = sorted(c.x1 - c.x0 for c in vis if c.x1 > c.x0)
    cw = widths[len(widths) // 2] if widths else 6.0
    out = []
    for ln in lines:
        first = next((c for c in ln if c.text.strip()), None)
        if first is None:
            continue
        text = "".join(c.text for c in ln).replace("\u00a0", " ")
        indent = round((first.x0 - left) / max(cw, 1.0))
        out.append(" " * max(0, min(indent, 80)) + text.strip())
    return "\n".join(out)


_NUMBER_LABEL = re.compile(r"^\(?(\d{1,4})[.)]\s+")


def _label_number(blocks: list[Block]) -> int | None:
    """The number an item's text starts with ("3. ..."), when its label is not tagged."""
    if blocks and isinstance(blocks[0], Paragraph) and blocks[0].children:
        first = blocks[0].children[0]
        if isinstance(first, Text):
            m = _NUMBER_LABEL.match(first.text)
            if m:
                return int(m.group(1))
    return None


def _strip_label(blocks: list[Block]) -> None:
    # called only for a first block that is a paragraph starting with Text (the label)
    first = blocks[0].children[0]  # type: ignore[union-attr]
    blocks[0].children[0] = Text(_NUMBER_LABEL.sub("", first.text, count=1))  # type: ignore[union-attr]


def _strip_bullet(blocks: list[Block]) -> None:
    """Remove a bullet character the item's text starts with (an untagged label)."""
    if blocks and isinstance(blocks[0], Paragraph) and blocks[0].children:
        first = blocks[0].children[0]
        if isinstance(first, Text) and first.text[:1] in _BULLETS and \
                first.text[1:2] in (" ", "\u00a0"):
            blocks[0].children[0] = Text(first.text[2:].lstrip())


def tagged_page(roots: list[StructNode], chars: list[Char | None],
                images: list[PageImageRef], page: int) -> TaggedPage:
    """Blocks for one page from its structure tree; see the module docstring."""
    by_mcid: dict[int, list[Char | None]] = {}
    current = -1
    for c in chars:
        if c is not None:
            current = c.mcid
        if current >= 0:
            by_mcid.setdefault(current, []).append(c)
    b = _Builder(by_mcid, images, page)
    b.out.blocks = b.blocks(roots)
    return b.out


def _same_line(a: Char, b: Char) -> bool:
    """Whether two characters overlap vertically (are set on one line)."""
    return a.top < b.bottom and b.top < a.bottom


def dedent_code(blocks: list[Block]) -> None:
    """Remove the indentation all lines of each top-level code block share."""
    for b in blocks:
        if isinstance(b, CodeBlock):
            b.text = textwrap.dedent(b.text)


_SENTENCE_END = (".", "!", "?", ":", "\u3002", "\"", "\u201d")


def join_pages(prev: Block, nxt: Block) -> bool:
    """Append ``nxt`` to ``prev`` when both are one block cut by a page break.

    Paragraphs join when the first does not end a sentence and the second starts in lower
    case; lists of the same kind join; tables with the same column count join, dropping
    the second's header rows when they repeat the first's.
    """
    if isinstance(prev, Paragraph) and isinstance(nxt, Paragraph):
        a, b = plain_text(prev.children).rstrip(), plain_text(nxt.children).lstrip()
        if a and b and not a.endswith(_SENTENCE_END) and b[:1].islower():
            prev.children.extend([Text(" "), *nxt.children])
            return True
        return False
    if isinstance(prev, CodeBlock) and isinstance(nxt, CodeBlock):
        prev.text += "\n" + nxt.text
        return True
    if isinstance(prev, ListBlock) and isinstance(nxt, ListBlock):
        if prev.ordered == nxt.ordered and (not nxt.ordered or nxt.start in (
                1, prev.start + len(prev.items))):
            prev.items.extend(nxt.items)
            return True
        return False
    if isinstance(prev, Table) and isinstance(nxt, Table) and prev.rows and nxt.rows:
        def width(t: Table) -> int:
            return sum(c.colspan for c in t.rows[0].cells)
        if width(prev) != width(nxt):
            return False
        rows = nxt.rows
        if nxt.header_rows and prev.header_rows and [
                plain_text(c.blocks) for r in rows[: nxt.header_rows] for c in r.cells] == [
                plain_text(c.blocks) for r in prev.rows[: prev.header_rows] for c in r.cells]:
            rows = rows[nxt.header_rows:]
        prev.rows.extend(rows)
        return True
    return False
