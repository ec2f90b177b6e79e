"""Semantic HTML5 of document model nodes, shared by the HTML, PDF and Markdown writers.

``html_body`` gives the body fragment of a document (``writers/html.py`` wraps it into a
page, ``writers/pdf.py`` prints it, the Markdown writer uses :class:`HtmlRenderer` for tables
Markdown cannot hold). Every text and attribute is escaped, link and image targets are
checked against the allow-list of ``render_pool.engine.url_safety`` (``javascript:`` and friends are
neutralised) and HTML passed through by a reader (``RawHtml``) is cleaned with an allow-list,
so a hostile document cannot run script in the reader's browser.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Callable
from itertools import chain

from lxml import etree
from lxml import html as lxml_html

from render_pool.engine.common.image_links import ImageResolver, data_uri_resolver
from render_pool.engine.common.slugs import Slugger, slugify
from render_pool.engine.common.writing import NoteNumbering, is_tight_list, placeholder_label
from render_pool.engine.model import (
    ALIGNMENTS,
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
    Strike,
    Strong,
    Subscript,
    Superscript,
    Table,
    TableCell,
    Text,
    Underline,
    plain_text,
    walk,
)
from render_pool.engine.provenance import page_marker, page_starts
from render_pool.engine.url_safety import is_safe_url

__all__ = ["HtmlRenderer", "document_title", "html_attribute", "html_body", "sanitize_html"]


# ----------------------------------------------------------------- safety helpers
_ALLOWED_TAGS = {
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "center", "cite", "code",
    "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption",
    "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark",
    "ol", "p", "pre", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt",
    "u", "ul", "var", "wbr",
}
_DROP_WITH_CONTENT = {"script", "style", "iframe", "object", "embed", "template", "noscript",
                      "svg", "math", "frame", "frameset", "applet", "textarea", "select",
                      "title", "head", "meta", "link", "base"}
_ALLOWED_ATTRS = {"href", "src", "alt", "title", "width", "height", "colspan", "rowspan", "align",
                  "valign", "class", "id", "name", "start", "reversed", "type", "lang", "dir",
                  "open", "datetime", "cite", "span", "scope", "headers"}
_URL_ATTRS = {"href", "src", "cite"}


def sanitize_html(raw: str) -> str:
    """Clean passed-through HTML with an allow-list (tags, attributes, URL schemes).

    Script-like elements are removed with their content, other unknown elements are
    unwrapped (their text stays), event handlers and ``style`` attributes are dropped.
    """
    if not raw.strip():
        return ""
    try:
        root = lxml_html.fragment_fromstring(raw, create_parent="div")
    except (etree.ParserError, ValueError):
        return _html.escape(raw, quote=False)
    for el in list(root.iter()):
        if el is root:
            continue
        if not isinstance(el.tag, str):  # comments, processing instructions
            el.drop_tree()
            continue
        tag = el.tag.lower()
        if tag in _DROP_WITH_CONTENT:
            el.drop_tree()
        elif tag not in _ALLOWED_TAGS:
            el.drop_tag()
        else:
            for name in list(el.attrib):
                value = el.attrib[name]
                lname = name.lower()
                if lname not in _ALLOWED_ATTRS or (
                    lname in _URL_ATTRS and not is_safe_url(value, image=(lname == "src"))
                ):
                    del el.attrib[name]
    out = _html.escape(root.text or "", quote=False)
    out += "".join(lxml_html.tostring(child, encoding="unicode") for child in root)
    return out


_FORMAT_TAGS: dict[type, str] = {Emph: "em", Strong: "strong", Strike: "del", Underline: "u",
                                 Subscript: "sub", Superscript: "sup"}


def _esc(text: str) -> str:
    return _html.escape(text, quote=False)


def html_attribute(value: str) -> str:
    """``value`` escaped for a double-quoted attribute."""
    return _html.escape(value, quote=True)


_attr = html_attribute


def _is_blank_paragraph(block: Block) -> bool:
    return isinstance(block, Paragraph) and all(
        isinstance(c, Text) and not c.text.strip() for c in block.children
    )


class HtmlRenderer:
    """Renders model nodes to HTML strings; one instance per document."""

    def __init__(
        self,
        doc: Document,
        resolve_image: ImageResolver,
        notes: NoteNumbering | None = None,
        note_href: Callable[[int], str] | None = None,
    ) -> None:
        self.doc = doc
        self.resolve_image = resolve_image
        self.notes = notes or NoteNumbering(doc)
        self.note_href = note_href or (lambda n: f"#fn-{n}")
        self.used_ids: set[str] = set()
        self.heading_ids: dict[int, str] = {}
        self._assign_ids()

    # ------------------------------------------------------------- ids
    def _assign_ids(self) -> None:
        """Explicit heading anchors and bookmarks first, then unique slugs for the rest.
        One walk finds the headings (body and notes) and the bookmarks (the furniture's too)."""
        headings: list[Heading] = []
        self.anchor_names: set[str] = set()
        for node in walk(chain(self.doc.blocks, *self.doc.notes.values())):
            if isinstance(node, Heading):
                headings.append(node)
            elif isinstance(node, Anchor) and node.name:
                self.anchor_names.add(node.name)
        self.anchor_names.update(a.name for a in walk(self.doc.furniture)
                                 if isinstance(a, Anchor) and a.name)
        self.used_ids |= self.anchor_names
        self.emitted_anchors: set[str] = set()
        for h in headings:
            if h.anchor and h.anchor not in self.heading_ids.values():
                self.used_ids.add(h.anchor)
                self.emitted_anchors.add(h.anchor)  # the heading carries this id
                self.heading_ids[id(h)] = h.anchor
        slugger = Slugger(self.used_ids, taken=lambda slug: slug.startswith("fn-"))
        for h in headings:
            if id(h) in self.heading_ids:
                continue
            self.heading_ids[id(h)] = slugger.unique(slugify(plain_text(h.children)))

    # ------------------------------------------------------------- inlines
    def inlines(self, nodes: list[Inline], in_link: bool = False) -> str:
        """Render a list of inlines."""
        return "".join(self.inline(n, in_link) for n in nodes)

    def inline(self, node: Inline, in_link: bool = False) -> str:
        """Render one inline node."""
        if isinstance(node, Text):
            return _esc(node.text)
        tag = _FORMAT_TAGS.get(type(node))
        if tag and isinstance(node, (Emph, Strong, Strike, Underline, Subscript, Superscript)):
            return f"<{tag}>{self.inlines(node.children, in_link)}</{tag}>"
        if isinstance(node, Code):
            return f"<code>{_esc(node.text)}</code>"
        if isinstance(node, Link):
            body = self.inlines(node.children, True) or _esc(node.target)
            if in_link:
                return body
            if not is_safe_url(node.target):
                return f'<span class="unsafe-link">{body}</span>'
            title = f' title="{_attr(node.title)}"' if node.title else ""
            return f'<a href="{_attr(node.target)}"{title}>{body}</a>'
        if isinstance(node, Image):
            return self.image(node)
        if isinstance(node, LineBreak):
            return "<br>"
        if isinstance(node, Math):
            if node.display:
                return f'<span class="math display">\\[{_esc(node.tex)}\\]</span>'
            return f'<span class="math inline">\\({_esc(node.tex)}\\)</span>'
        if isinstance(node, NoteRef):
            n = self.notes.number(node.note_id)
            k = self.notes.next_ref(node.note_id)
            ref_id = f"fnref-{n}" if k == 1 else f"fnref-{n}-{k}"
            if in_link:
                return f"<sup>{n}</sup>"
            return (f'<sup class="footnote-ref"><a href="{_attr(self.note_href(n))}" '
                    f'id="{ref_id}" role="doc-noteref">{n}</a></sup>')
        if isinstance(node, Anchor):
            if not node.name or node.name in self.emitted_anchors:
                return ""
            self.emitted_anchors.add(node.name)
            return f'<a id="{_attr(node.name)}"></a>'
        if isinstance(node, Placeholder):
            return f'<span class="placeholder">{_esc(placeholder_label(node.text))}</span>'
        return ""

    def image(self, node: Image) -> str:
        """``<img>`` with alt text; the source goes through the resolver and the URL check."""
        src = self.resolve_image(node.src)
        attrs = [f'src="{_attr(src)}"' if is_safe_url(src, image=True) else 'src=""',
                 f'alt="{_attr(node.alt)}"']
        if node.title:
            attrs.append(f'title="{_attr(node.title)}"')
        if node.width_px:
            attrs.append(f'width="{int(node.width_px)}"')
        if node.height_px:
            attrs.append(f'height="{int(node.height_px)}"')
        return f"<img {' '.join(attrs)}>"

    # ------------------------------------------------------------- blocks
    def blocks(self, blocks: list[Block]) -> str:
        """Render blocks, one per line."""
        return "\n".join(s for s in (self.block(b) for b in blocks) if s)

    def block(self, node: Block) -> str:
        """Render one block node."""
        if isinstance(node, Paragraph):
            if _is_blank_paragraph(node):
                return ""
            return f"<p>{self.inlines(node.children)}</p>"
        if isinstance(node, Heading):
            level = min(max(node.level, 1), 6)
            hid = self.heading_ids.get(id(node)) or slugify(plain_text(node.children))
            return f'<h{level} id="{_attr(hid)}">{self.inlines(node.children)}</h{level}>'
        if isinstance(node, ListBlock):
            return self.list_block(node)
        if isinstance(node, Table):
            return self.table(node)
        if isinstance(node, CodeBlock):
            lang = re.sub(r"[^A-Za-z0-9_+#.\-]", "", node.language)
            cls = f' class="language-{_attr(lang)}"' if lang else ""
            text = node.text[:-1] if node.text.endswith("\n") else node.text
            return f"<pre><code{cls}>{_esc(text)}</code></pre>"
        if isinstance(node, BlockQuote):
            return f"<blockquote>\n{self.blocks(node.blocks)}\n</blockquote>"
        if isinstance(node, HorizontalRule):
            return "<hr>"
        if isinstance(node, MathBlock):
            return f'<div class="math display">\\[{_esc(node.tex)}\\]</div>'
        if isinstance(node, RawHtml):
            return sanitize_html(node.html)
        return ""

    def list_block(self, node: ListBlock) -> str:
        """``<ul>``/``<ol start>`` with task-list checkboxes; tight items without ``<p>``."""
        tight = is_tight_list(node.items)
        tag = "ol" if node.ordered else "ul"
        start = f' start="{int(node.start)}"' if node.ordered and node.start != 1 else ""
        has_tasks = any(it.checked is not None for it in node.items)
        cls = ' class="contains-task-list"' if has_tasks else ""
        parts = [f"<{tag}{start}{cls}>"]
        for item in node.items:
            parts.append(self.list_item(item, tight))
        parts.append(f"</{tag}>")
        return "\n".join(parts)

    def list_item(self, item: ListItem, tight: bool) -> str:
        """One ``<li>``; a checkbox first for task items."""
        box = ""
        li = "<li>"
        if item.checked is not None:
            li = '<li class="task-list-item">'
            box = ('<input type="checkbox" disabled' + (" checked" if item.checked else "")
                   + "> ")
        blocks = item.blocks
        if tight and blocks and isinstance(blocks[0], Paragraph):
            head = box + self.inlines(blocks[0].children)
            rest = self.blocks(blocks[1:])
            return li + head + ("\n" + rest if rest else "") + "</li>"
        if box:
            if blocks and isinstance(blocks[0], Paragraph):
                first = f"<p>{box}{self.inlines(blocks[0].children)}</p>"
                rest = self.blocks(blocks[1:])
                return li + first + ("\n" + rest if rest else "") + "</li>"
            return li + box + self.blocks(blocks) + "</li>"
        return li + self.blocks(blocks) + "</li>"

    def cell(self, cell: TableCell, tag: str) -> str:
        """``<th>``/``<td>`` with spans; one paragraph renders inline."""
        attrs = ""
        if cell.rowspan > 1:
            attrs += f' rowspan="{int(cell.rowspan)}"'
        if cell.colspan > 1:
            attrs += f' colspan="{int(cell.colspan)}"'
        if cell.align in ALIGNMENTS:  # a class (themes set text-align on th/td; it wins)
            attrs += f' class="align-{cell.align}"'
        blocks = [b for b in cell.blocks if not _is_blank_paragraph(b)]
        if len(blocks) == 1 and isinstance(blocks[0], Paragraph):
            body = self.inlines(blocks[0].children)
        else:
            body = self.blocks(blocks)
        return f"<{tag}{attrs}>{body}</{tag}>"

    def table(self, node: Table) -> str:
        """``<table>`` with caption, ``<thead>`` for the header rows and ``<tbody>``."""
        out = ["<table>"]
        if node.caption:
            out.append(f"<caption>{self.inlines(node.caption)}</caption>")
        head = node.rows[: node.header_rows]
        body = node.rows[node.header_rows:]
        if head:
            out.append("<thead>")
            for row in head:
                cells = "".join(self.cell(c, "th") for c in row.cells)
                out.append(f"<tr>{cells}</tr>")
            out.append("</thead>")
        if body:
            out.append("<tbody>")
            for row in body:
                cells = "".join(self.cell(c, "th" if c.header else "td") for c in row.cells)
                out.append(f"<tr>{cells}</tr>")
            out.append("</tbody>")
        out.append("</table>")
        return "\n".join(out)

    # ------------------------------------------------------------- notes
    def footnotes(self) -> str:
        """``section.footnotes``: an ordered list of notes, each with back links to its refs."""
        if not self.doc.notes:
            return ""

        def item(n: int, nid: str) -> str:
            blocks = self.doc.notes.get(nid, [])
            refs = self.notes.ref_counts.get(nid, 0)
            backs = " ".join(
                f'<a href="#fnref-{n}{"" if k == 1 else f"-{k}"}" class="footnote-back" '
                f'role="doc-backlink" aria-label="Back to reference {n}">\u21a9</a>'
                for k in range(1, refs + 1)
            )
            body = self.blocks(blocks)
            if backs:
                if body.endswith("</p>"):
                    body = body[:-4] + " " + backs + "</p>"
                else:
                    body += f"\n<p>{backs}</p>"
            return f'<li id="fn-{n}">{body}</li>'

        items = self.notes.render_all(item)
        return ('<section class="footnotes" role="doc-endnotes">\n<ol>\n'
                + "\n".join(items) + "\n</ol>\n</section>")


def html_body(doc: Document, resolve_image: ImageResolver | None = None,
              page_markers: bool = False) -> str:
    """Body fragment of ``doc`` as semantic HTML5 (no ``<html>``/``<body>`` wrapper).

    Footnotes come last in ``section.footnotes``; ``doc.furniture`` (headers, footers,
    comments a reader kept on request) in an ``aside.furniture`` before them. With
    ``page_markers`` a comment ``<!-- page N -->`` stands before the first block of each PDF
    page.
    """
    r = HtmlRenderer(doc, resolve_image or data_uri_resolver(doc))
    starts = page_starts(doc.blocks) if page_markers else {}
    parts = ["\n".join(s for pos, b in enumerate(doc.blocks)
                       for s in ((page_marker(starts[pos]),) if pos in starts else ())
                       + (r.block(b),) if s)]
    if doc.furniture:
        parts.append(f'<aside class="furniture">\n{r.blocks(doc.furniture)}\n</aside>')
    notes = r.footnotes()
    if notes:
        parts.append(notes)
    return "\n".join(p for p in parts if p) + "\n"


def document_title(doc: Document) -> str:
    """``doc.meta["title"]``, else the text of the first heading, else "Document"."""
    title = (doc.meta.get("title") or "").strip()
    if title:
        return title
    for b in doc.blocks:
        if isinstance(b, Heading):
            text = plain_text(b.children).strip()
            if text:
                return text
    return "Document"
