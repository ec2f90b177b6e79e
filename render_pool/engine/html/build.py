"""Lenient HTML to document model reader.

Why: the ``alt_engine`` produces HTML and its JSON/DocTags exports need the document model;
uploaded HTML files (``readers/html_file.py``) and the HTML files of a batch
(``render_pool.batch.jobs``) take this one path into the model. Browsers accept any tag
soup, so this reader does too: unknown containers are looked through, loose inline content
between blocks becomes a paragraph, and ``data:`` images move into ``Document.resources``.
Link and image destinations pass the allow-list of ``render_pool.engine.url_safety`` here, so no
writer meets a ``javascript:`` link: a refused link keeps its text, a refused image its alt.

This path was chosen over markdownify (HTML to Markdown, then the Markdown reader) by
``bench/html_paths.py``: on the same pages it keeps spanned table cells (markdownify's pipe
tables cannot), links and emphasis better, and takes a tenth of the time or less.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import lxml.html
from lxml import etree

from render_pool.engine.common.data_uri import decode_data_uri, image_extension
from render_pool.engine.common.inlines import merge_texts, strip_edges
from render_pool.engine.common.slugs import Slugger, slugify
from render_pool.engine.html import notes as html_notes
from render_pool.engine.html.foster import stray_content
from render_pool.engine.html.unclosed import close_open_elements
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
    ListItem,
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
    TableCell,
    TableRow,
    Text,
    Underline,
    map_blocks,
    plain_text,
)
from render_pool.engine.url_safety import is_safe_image_src, is_safe_link
from render_pool.errors import CorruptDocument

_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "pre", "blockquote",
               "hr", "div", "section", "article", "main", "header", "footer", "aside", "nav",
               "figure", "figcaption", "dl", "dt", "dd", "li", "body", "html", "form",
               "fieldset", "details", "summary", "address", "center", "tbody", "thead", "tr"}
_DROP = {"script", "style", "head", "template", "noscript", "iframe", "object", "embed",
         "svg", "canvas", "button", "select", "textarea"}
_WRAP: dict[str, Callable[[list[Inline]], Inline]] = {
    "strong": Strong, "b": Strong, "em": Emph, "i": Emph, "cite": Emph, "dfn": Emph,
    "var": Emph, "s": Strike, "del": Strike, "strike": Strike, "u": Underline,
    "ins": Underline, "sub": Subscript, "sup": Superscript}
_WS = re.compile(r"[ \t\r\n\f]+")


class _HtmlReader:
    def __init__(self, doc: Document | None = None) -> None:
        self.doc = doc if doc is not None else Document()
        self.slugger = Slugger()
        self.images = 0
        # notes (footnotes, endnotes: ``readers/html_notes.py``) by (part, id), the model
        # note id of each read so far, and the ids of their references (links back to a
        # reference are no content of a note); ``part``/``base``: the part being read and
        # its folder (an EPUB chapter's path; "" for one page)
        self.note_els: dict[html_notes.NoteKey, etree._Element] = {}
        self.note_ids: dict[html_notes.NoteKey, str] = {}
        self.ref_ids: set[html_notes.NoteKey] = set()
        self.part = ""
        self.base = ""

    # ------------------------------------------------------------ notes
    def collect_notes(self, root: etree._Element) -> None:
        """Remember the notes of ``root`` (the part ``self.part``) before it is read, so a
        reference before its note (the common case) finds it."""
        for el in root.iter():
            if html_notes.is_note(el):
                self.note_els.setdefault((self.part, el.get("id", "")), el)
            elif html_notes.is_note_ref(el) and el.get("id"):
                self.ref_ids.add((self.part, el.get("id", "")))

    def note_ref(self, el: etree._Element) -> list[Inline] | None:
        """A :class:`NoteRef` for a link to a known note (its body read on first use, as
        the DOCX reader does), or None when ``el`` is no reference to one."""
        key = html_notes.target_key(el.get("href", ""), self.part, self.base)
        if key is None or key not in self.note_els or not (
                html_notes.is_note_ref(el) or any(html_notes.is_note_ref(a)
                                                  for a in el.iterancestors())):
            return None
        return [NoteRef(self.read_note(key))]

    def read_note(self, key: html_notes.NoteKey) -> str:
        """The model id of note ``key``, reading its blocks into ``doc.notes`` once."""
        nid = self.note_ids.get(key)
        if nid is None:
            nid = base = key[1] or "note"
            n = 1
            while nid in self.doc.notes:
                n += 1
                nid = f"{base}-{n}"
            self.note_ids[key] = nid
            self.doc.notes[nid] = []  # guard against a note that refers to itself
            saved, self.part = self.part, key[0]
            try:
                self.doc.notes[nid] = self.blocks(self.note_els[key], in_note=True)
            finally:
                self.part = saved
        return nid

    def finish_notes(self) -> None:
        """Notes nobody refers to: kept as notes of the document (after the others), not
        dropped with the body text they were taken out of."""
        for key in list(self.note_els):
            if key not in self.note_ids:
                self.read_note(key)

    # ------------------------------------------------------------ blocks
    def blocks(self, el: etree._Element, in_note: bool = False) -> list[Block]:
        """Blocks of ``el``'s content; notes inside it are left to ``read_note`` (the note
        itself when ``in_note``), and a notes section's rule and emptied lists dropped."""
        items: list[etree._Element | str] = [el.text] if el.text else []
        for c in el:
            items.append(c)
            if c.tail:
                items.append(c.tail)
        return self.items_blocks(items, html_notes.is_notes_section(el))

    def items_blocks(self, items: list[etree._Element | str],
                     notes_section: bool = False) -> list[Block]:
        """Blocks of a run of sibling content (elements and the text between them): block
        elements as blocks, the inline content between them as paragraphs."""
        out: list[Block] = []
        pending: list[Inline] = []

        def flush() -> None:
            inl = strip_edges(merge_texts(pending))
            if inl and (plain_text(inl).strip() or any(
                    not isinstance(n, Text | LineBreak) for n in inl)):
                out.append(Paragraph(inl))
            pending.clear()

        for c in items:
            if isinstance(c, str):
                pending.append(Text(_WS.sub(" ", c)))
                continue
            tag = c.tag.lower() if isinstance(c.tag, str) else ""
            if tag in _DROP or not tag or (self.note_els and self._no_content(c, notes_section)):
                pass
            elif tag in _BLOCK_TAGS or (tag == "span" and "math display" in c.get("class", "")):
                flush()
                out.extend(self.block(c, tag))
            else:
                pending.extend(self.inlines_of(c))
        flush()
        return out

    def _no_content(self, c: etree._Element, notes_section: bool) -> bool:
        """A note (read apart), or a notes section's rule or list holding only notes."""
        if (self.part, c.get("id", "")) in self.note_els and html_notes.is_note(c):
            return True
        tag = c.tag.lower() if isinstance(c.tag, str) else ""
        if tag in ("ol", "ul") and len(c) and all(html_notes.is_note(li) for li in c):
            return True
        return notes_section and tag == "hr"

    def block(self, c: etree._Element, tag: str) -> list[Block]:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            inl = strip_edges(self.inline_children(c))
            text = plain_text(inl).strip()
            anchor = self.slugger.unique(c.get("id") or slugify(text))
            return [Heading(int(tag[1]), inl, anchor)] if text or inl else []
        if tag == "p":
            inl = strip_edges(self.inline_children(c))
            return [Paragraph(inl)] if inl else []
        if tag in ("ul", "ol"):
            return [self.list_block(c, tag == "ol")]
        if tag == "table":  # what it holds outside its cells first, as a browser shows it
            return [*self.items_blocks(stray_content(c)), self.table(c)]
        if tag == "pre":
            code = c.find(".//code")
            cls = (code.get("class", "") if code is not None else "") + " " + c.get("class", "")
            m = re.search(r"(?:language|lang)-([\w+#.-]+)", cls)
            text = "".join(c.itertext())
            return [CodeBlock(text.rstrip("\n"), m.group(1) if m else "")]
        if tag == "blockquote":
            return [BlockQuote(self.blocks(c))]
        if tag == "hr":
            return [HorizontalRule()]
        if tag == "span":
            return [MathBlock(_math_tex("".join(c.itertext())))]
        if tag == "dt":
            inl = strip_edges(self.inline_children(c))
            return [Paragraph([Strong(inl)])] if inl else []
        return self.blocks(c)

    def list_block(self, el: etree._Element, ordered: bool) -> ListBlock:
        try:
            start = int(el.get("start", "1"))
        except ValueError:
            start = 1
        items: list[ListItem] = []
        for li in el:
            if not isinstance(li.tag, str):
                continue
            if li.tag.lower() in ("ul", "ol") and items:
                items[-1].blocks.append(self.list_block(li, li.tag.lower() == "ol"))
                continue
            if li.tag.lower() != "li" or (self.note_els and html_notes.is_note(li)):
                continue
            checked = None
            box = li.find("input")
            if box is None and len(li) and li[0].tag == "p":
                box = li[0].find("input")
            if box is not None and box.get("type", "").lower() == "checkbox":
                checked = box.get("checked") is not None
            blocks = self.blocks(li)
            if checked is not None and blocks and isinstance(blocks[0], Paragraph):
                first = blocks[0].children
                if first and isinstance(first[0], Text) and first[0].text[:1] in "☒☐":
                    first[0] = Text(first[0].text[1:].lstrip())
                    if not first[0].text:
                        first.pop(0)
            items.append(ListItem(blocks, checked))
        return ListBlock(ordered, items, start if ordered else 1)

    def table(self, el: etree._Element) -> Table:
        rows: list[TableRow] = []
        header_rows = 0
        caption: list[Inline] = []
        counting = True
        for tr in el.iter("tr", "caption"):
            if tr.tag == "caption":
                caption = strip_edges(self.inline_children(tr))
                continue
            # skip rows of nested tables
            anc = tr.getparent()
            while anc is not None and anc.tag != "table":
                anc = anc.getparent()
            if anc is not el:
                continue
            cells = []
            in_head = tr.getparent() is not None and tr.getparent().tag == "thead"
            all_th = True
            for td in tr:
                if not isinstance(td.tag, str) or td.tag.lower() not in ("td", "th"):
                    continue
                all_th = all_th and td.tag.lower() == "th"
                cells.append(TableCell(self.blocks(td), _span(td.get("rowspan")),
                                       _span(td.get("colspan")), td.tag.lower() == "th"))
            if not cells:
                continue
            rows.append(TableRow(cells))
            if counting and (in_head or all_th):
                header_rows += 1
            else:
                counting = False
        return Table(rows, header_rows, caption)

    # ------------------------------------------------------------ inlines
    def inline_children(self, el: etree._Element) -> list[Inline]:
        out: list[Inline] = []
        if el.text:
            out.append(Text(_WS.sub(" ", el.text)))
        for c in el:
            out.extend(self.inlines_of(c))
            if c.tail:
                out.append(Text(_WS.sub(" ", c.tail)))
        return merge_texts(out)

    def inlines_of(self, c: etree._Element) -> list[Inline]:
        if not isinstance(c.tag, str):
            return []
        tag = c.tag.lower()
        if tag in _DROP:
            return []
        if tag in _WRAP:
            kids = self.inline_children(c)
            if len(kids) == 1 and isinstance(kids[0], NoteRef):
                return kids  # a reference in <sup>: the note mark is superscript already
            return [_WRAP[tag](kids)] if kids else []
        if tag == "a":
            if self.note_els and (ref := self.note_ref(c)) is not None:
                return ref
            if self.note_els and (html_notes.is_back_link(c) or (
                    html_notes.target_key(c.get("href", ""), self.part, self.base)
                    in self.ref_ids)):
                return []
            kids = self.inline_children(c)
            href = c.get("href")
            if not href:
                name = c.get("id") or c.get("name")
                return ([Anchor(name)] if name else []) + kids
            if not is_safe_link(href):
                return kids
            return [Link(kids or [Text(href)], href, c.get("title", ""))]
        if tag in ("code", "kbd", "samp", "tt"):
            return [Code("".join(c.itertext()))]
        if tag == "br":
            return [LineBreak()]
        if tag == "img":
            return [self.image(c)]
        if tag == "input" and c.get("type", "").lower() == "checkbox":
            return [Text("☒ " if c.get("checked") is not None else "☐ ")]
        if tag == "span" and "math" in c.get("class", ""):
            display = "display" in c.get("class", "")
            return [Math(_math_tex("".join(c.itertext())), display)]
        if tag == "math":  # MathML: its TeX annotation when it has one
            tex = next((a.text or "" for a in c.iter("annotation")
                        if "tex" in a.get("encoding", "").lower()), "").strip()
            if tex:
                return [Math(tex, c.get("display", "").lower() == "block")]
            return [Placeholder("".join(c.itertext()))]
        if tag in _BLOCK_TAGS:  # a block inside an inline context: keep its text
            return self.inline_children(c)
        return self.inline_children(c)

    def image(self, c: etree._Element) -> Inline:
        src = c.get("src", "")
        alt = c.get("alt", "")
        w, h = _positive_int(c.get("width")), _positive_int(c.get("height"))
        if src.startswith("data:"):
            key = self._data_uri(src)
            if key is None:
                self.doc.warn("An embedded image (data URI) could not be decoded.")
                return Placeholder(f"[image{': ' + alt if alt else ''}]")
            src = key
        elif not is_safe_image_src(src):
            return Text(alt)
        return Image(src=src, alt=alt, title=c.get("title", ""), width_px=w, height_px=h)

    def _data_uri(self, uri: str) -> str | None:
        decoded = decode_data_uri(uri)
        if decoded is None:
            return None
        data, mime = decoded
        for key, res in self.doc.resources.items():
            if res.data == data:
                return key
        key = ""
        while not key or key in self.doc.resources:
            self.images += 1
            key = f"media/image{self.images}.{image_extension(mime)}"
        self.doc.resources[key] = Resource(data, mime)
        return key


def _positive_int(value: str | None) -> int | None:
    """An attribute such as ``3`` or ``120px`` as a whole number from 1, None otherwise."""
    try:
        n = int(str(value).strip().rstrip("px"))
    except (TypeError, ValueError):
        return None
    return n if n >= 1 else None


def _span(value: str | None) -> int:
    """A ``rowspan`` / ``colspan``: 1 unless the attribute holds a whole number from 1."""
    n = _positive_int(value)
    return 1 if n is None else n


def _math_tex(text: str) -> str:
    text = text.strip()
    for a, b in (("\\[", "\\]"), ("\\(", "\\)"), ("$$", "$$"), ("$", "$")):
        if text.startswith(a) and text.endswith(b) and len(text) >= len(a) + len(b):
            return text[len(a): len(text) - len(b)].strip()
    return text


MAX_HTML_DEPTH = 200  # elements inside each other


def _check_depth(root: etree._Element) -> None:
    """Raise :class:`CorruptDocument` (40003) for HTML nested deeper than ``MAX_HTML_DEPTH``
    levels, measured without recursion. Why: libxml2 stops nesting at 255 levels and drops
    what lies deeper without a word, and this reader recurses once per level."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_HTML_DEPTH:
            raise CorruptDocument(f"the HTML nests elements deeper than {MAX_HTML_DEPTH} "
                                  f"levels; the limit is {MAX_HTML_DEPTH}")
        stack.extend((child, depth + 1) for child in node)


def read_html(html: str) -> Document:
    """Read an HTML string (fragment or page) into a :class:`Document`, leniently; 40003
    for HTML nested deeper than ``MAX_HTML_DEPTH``. An element left open does not take the
    rest of the page with it (``readers/html_unclosed.py``; a warning names it)."""
    reader = _HtmlReader()
    if not html or not html.strip():
        return reader.doc
    html, warnings = close_open_elements(html)
    for warning in warnings:
        reader.doc.warn(warning)
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return reader.doc
    _check_depth(root)
    title = root.find(".//title")
    if title is not None and (title.text or "").strip():
        reader.doc.meta["title"] = title.text.strip()
    for meta in root.iter("meta"):
        if meta.get("name", "").lower() == "author" and meta.get("content"):
            reader.doc.meta["author"] = meta.get("content", "")
    body = root.find("body")
    reader.collect_notes(root)
    reader.doc.blocks = reader.blocks(body if body is not None else root)
    reader.finish_notes()
    return reader.doc


def read_html_blocks(html: str, doc: Document) -> list[Block]:
    """Blocks of an HTML fragment that stands inside ``doc`` (read by another reader);
    its ``data:`` images join ``doc.resources``."""
    if not html.strip():
        return []
    html, warnings = close_open_elements(html)
    for warning in warnings:
        doc.warn(warning)
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return [Paragraph([Text(html)])]
    _check_depth(root)
    return _HtmlReader(doc).blocks(root)


def expand_raw_html(doc: Document) -> None:
    """Replace every :class:`RawHtml` block of ``doc`` (body, notes, furniture, nested in
    lists, quotes and cells) by the blocks the HTML reader reads from it, for writers of
    formats that cannot hold HTML (DOCX)."""
    map_blocks(doc, lambda b: read_html_blocks(b.html, doc) if isinstance(b, RawHtml) else None)
