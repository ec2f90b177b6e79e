"""Markdown reader: GitHub-flavoured Markdown (marko) into the document model.

Supported: ATX/Setext headings (with unique GitHub-style slug anchors), emphasis, strong,
strikethrough, inline code, links and autolinks, images (``src`` kept as written: the service
fetches them and calls :func:`attach_images`), ordered/bulleted/nested/task lists, GFM tables,
fenced and indented code, block quotes and GitHub alerts, thematic breaks, footnotes, ``$...$`` /
``$$...$$`` math, YAML-like front matter (simple ``key: value`` lines) and raw HTML. HTML blocks
become :class:`RawHtml`; inline HTML is interpreted (``<b>``, ``<i>``, ``<sub>``, ``<sup>``,
``<u>``, ``<s>``, ``<code>``, ``<a href>``, ``<img>``, ``<br>``) because the model has no inline
raw HTML; other inline tags are dropped and their text kept.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

import marko
from marko import inline, inline_parser
from marko.ext import footnote
from marko.helpers import MarkoExtension
from marko.parser import Parser
from marko.source import Source

from render_pool.engine.common.data_uri import decode_data_uri, image_extension
from render_pool.engine.common.slugs import Slugger
from render_pool.engine.markdown.limits import check_nesting
from render_pool.engine.model import (
    ALIGNMENTS,
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
    map_inlines,
    plain_text,
    walk_document,
)
from render_pool.errors import CorruptDocument

__all__ = ["attach_images", "markdown_image_sources", "read_markdown"]


# ------------------------------------------------------------------ marko math extension
class InlineMath(inline.InlineElement):
    """``$x$`` (inline) or ``$$x$$`` (display) math; ``$5 and $10`` stays text."""

    pattern = re.compile(
        r"(?<![\\$])(\$\$)((?:[^$\\]|\\.)+?)\$\$(?!\$)"
        r"|(?<![\\$])\$(?![\s$])((?:[^$\\\n]|\\.)+?)(?<![\s\\])\$(?![$\d])",
        re.S,
    )
    priority = 7  # like code spans: escapes inside must not split the formula
    parse_children = False

    def __init__(self, match: re.Match[str]) -> None:
        self.display = match.group(1) is not None
        self.children = match.group(2) if self.display else match.group(3)


class _FootnoteDef(footnote.FootnoteDef):
    """marko's footnote definition, but one may start right after a paragraph line, as on
    GitHub (consecutive ``[^a]: ...`` / ``[^b]: ...`` lines are separate notes)."""

    override = True
    breaks_paragraph = True


_MATH = MarkoExtension(elements=[InlineMath, _FootnoteDef])
_PARSER: marko.Markdown | None = None

# marko's own line patterns, compiled once: marko passes them as strings and compiles each
# on every use (tens of thousands of times for a short document); dropped when it grows
# past the bound (patterns built from a document's text, e.g. its code fences, also pass).
_PATTERNS: dict[str, re.Pattern[str]] = {}
_PATTERNS_MAX = 512


_LINE = r"(?m)[^\n]*$\n?"  # marko's pattern of the rest of a line, as marko spells it


class _Source(Source):
    """marko's parsing cursor with its two hottest helpers made cheaper, same results: a
    string pattern is looked up in :data:`_PATTERNS` instead of going through ``re.compile``
    (about a tenth of the parse), the line prefix is joined from a list, and
    :meth:`expect_re` skips or reuses the prefix match (a third of the rest)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        # (position, line prefix) -> where the prefix ends in that line (-1: it does not
        # match there) and the line's match: see expect_re
        self._prefix_ends: dict[tuple[int, str], tuple[int, re.Match[str]]] = {}

    def _expect_re(self, regexp: re.Pattern[str] | str, pos: int) -> re.Match[str] | None:
        if isinstance(regexp, str):
            pattern = _PATTERNS.get(regexp)
            if pattern is None:
                if len(_PATTERNS) >= _PATTERNS_MAX:
                    _PATTERNS.clear()
                pattern = _PATTERNS[regexp] = re.compile(regexp)
            regexp = pattern
        return regexp.match(self._buffer, pos)

    @property
    def prefix(self) -> str:
        return "".join([state._prefix for state in self._states])

    # Outside lists and quotes every block's line prefix is empty, and an empty prefix always
    # matches at the line's start (marko's ``match_prefix`` gives 0): the two helpers below
    # then skip reading the line and matching the prefix against it, same results. Inside
    # them, the line and where its prefix ends are kept per position and prefix: marko tries
    # every block type at a line, each asking again.
    def expect_re(self, regexp: re.Pattern[str] | str) -> re.Match[str] | None:
        prefix = self.prefix
        if not prefix:
            self.match = match = self._expect_re(regexp, self.pos)
            return match
        key = (self.pos, prefix)
        found = self._prefix_ends.get(key)
        if found is None:
            line = self._expect_re(_LINE, self.pos)
            assert line is not None  # the pattern matches anywhere, if only the empty string
            found = self._prefix_ends[key] = (self.match_prefix(prefix, line.group()), line)
        prefix_len, self.match = found  # marko leaves the line as the match when none
        if prefix_len < 0:
            return None
        self.match = match = self._expect_re(regexp, self.pos + prefix_len)
        return match

    @property
    def _current_pos(self) -> int:
        if self.prefix:
            pos: int = Source._current_pos.fget(self)  # type: ignore[attr-defined]
            return pos
        return self.pos


# What marko's link-and-emphasis scan acts on: an escape, a code span's backtick, a closing
# bracket, an opening bracket or emphasis run; every other character it steps over.
_INLINE_STOP = re.compile(r"[\\`\]!\[*_]")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)")
_DELIMITER = re.compile(r"(?:!?\[|\*+|_+)")


def _links_and_emphasis(text: str, link_ref_defs: dict[str, tuple[str, str]]) -> list[Any]:
    """marko's ``find_links_or_emphs`` (links, images, emphasis of one inline text), jumping
    from one character it acts on to the next instead of trying its patterns at every
    character: a tenth of the time, same matches (marko's own helpers do the rest)."""
    delimiters: list[Any] = []
    matches: list[Any] = []
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char == "\\":
            i += 2  # the escaped character is skipped whatever it is
        elif char == "`":
            code = _CODE_SPAN.match(text, i)
            i = code.end() if code else i + 1
        elif char == "]":
            node = inline_parser.look_for_image_or_link(text, delimiters, i, link_ref_defs,
                                                        matches)
            if node:
                matches.append(node)
                i = node.end()
            else:
                i += 1
        elif char in "![*_":
            run = _DELIMITER.match(text, i)
            if run:
                delimiters.append(inline_parser.Delimiter(run, text))
                i = run.end()
            else:
                i += 1
        else:
            stop = _INLINE_STOP.search(text, i)
            i = stop.start() if stop else end
    inline_parser.process_emphasis(text, delimiters, None, matches)
    return matches


class _Parser(Parser):
    """marko's parser reading through :class:`_Source` (``Parser.parse`` as marko 2.2 has
    it, with the cursor class swapped) and parsing inline text with
    :func:`_links_and_emphasis` (``inline_parser.parse`` as marko 2.2 has it, with the scan
    swapped and its link-or-emphasis element type made once per parser, not per text)."""

    def parse(self, text: str) -> Any:
        source = _Source(text)
        source.parser = self
        doc = self.block_elements["Document"]()
        doc.source_span = (0, len(source._buffer))
        with source.under_state(doc):
            doc.children = self.parse_source(source)
            self.parse_inline(doc, source)
        return doc

    def _link_or_emph(self) -> type[inline.InlineElement]:
        """The element type of a link-or-emphasis match: it makes the element the match names
        (link, image, emphasis) from this parser's element types."""
        made: type[inline.InlineElement] | None = self.__dict__.get("_link_or_emph_type")
        if made is None:
            parser = self

            class LinkOrEmph(inline.InlineElement):
                parse_children = True

                def __new__(cls, match: Any) -> Any:
                    return parser.inline_elements[match.etype](match)

            made = self.__dict__["_link_or_emph_type"] = LinkOrEmph
        return made

    def _parse_inline(self, text: str, source: Source,
                      positions: Any = None) -> list[inline.InlineElement]:
        fallback = self.inline_elements["RawText"]
        link_or_emph = self._link_or_emph()
        tokens = [inline_parser.Token(link_or_emph, m, text, fallback, positions)
                  for m in _links_and_emphasis(text, source.root.link_ref_defs)]
        for etype in self._build_inline_element_list():
            tokens.extend(inline_parser.Token(etype, m, text, fallback, positions)
                          for m in etype.find(text, source=source))
        tokens.sort()
        resolved = inline_parser._resolve_overlap(tokens)
        return inline_parser.make_elements(resolved, text, fallback=fallback,
                                           positions=positions)


def _parser() -> marko.Markdown:
    global _PARSER
    if _PARSER is None:
        _PARSER = marko.Markdown(parser=_Parser, extensions=["gfm", "footnote", _MATH])
    return _PARSER


# ------------------------------------------------------------------ front matter
_FRONT = re.compile(
    r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)
_META_LINE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:[ \t]*(.*)$")


def _split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split ``---`` front matter off; only blocks made of ``key: value`` lines count."""
    m = _FRONT.match(text)
    if not m:
        return {}, text
    meta: dict[str, str] = {}
    for line in m.group(1).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        km = _META_LINE.match(line)
        if km:
            value = km.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            meta[km.group(1)] = value
        elif line[:1] in " \t-":
            continue  # nested YAML (lists, maps): ignored, not an error
        else:
            return {}, text  # not front matter: a thematic break followed by text
    if not meta:
        return {}, text
    return meta, text[m.end():]


# ------------------------------------------------------------------ inline HTML
_TAG = re.compile(r"<\s*(/)?\s*([A-Za-z][\w:-]*)([^>]*?)(/)?\s*>", re.S)
_ATTR = re.compile(r"([A-Za-z_:][\w:.-]*)\s*(?:=\s*(\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?")
_IMG_TAG = re.compile(r"<img\b[^>]*>", re.I)
_WRAPPERS: dict[str, Any] = {
    "b": Strong, "strong": Strong, "i": Emph, "em": Emph, "cite": Emph, "var": Emph,
    "s": Strike, "del": Strike, "strike": Strike, "u": Underline, "ins": Underline,
    "sub": Subscript, "sup": Superscript, "code": "code", "kbd": "code", "tt": "code",
    "samp": "code", "a": "link",
}


def _attrs(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ATTR.finditer(raw):
        value = m.group(2) or ""
        if value[:1] in "\"'":
            value = value[1:-1]
        out.setdefault(m.group(1).lower(), html.unescape(value))
    return out


def _img_from_attrs(attrs: dict[str, str]) -> Image:
    def dim(name: str) -> int | None:
        v = attrs.get(name, "").strip().removesuffix("px")
        return int(v) if v.isdigit() and int(v) > 0 else None

    return Image(
        src=attrs.get("src", ""), alt=attrs.get("alt", ""), title=attrs.get("title", ""),
        width_px=dim("width"), height_px=dim("height"),
    )


# ------------------------------------------------------------------ AST conversion
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")


class _Converter:
    """Walks marko's AST once and builds model blocks."""

    def __init__(self, footnotes: dict[str, Any]) -> None:
        self.footnote_defs = footnotes
        self.slug = Slugger()
        self.note_order: list[str] = []

    # ---- blocks
    def blocks(self, elements: list[Any]) -> list[Block]:
        out: list[Block] = []
        for el in elements:
            out.extend(self.block(el))
        return out

    def block(self, el: Any) -> list[Block]:
        name = type(el).__name__
        if name in ("Heading", "SetextHeading"):
            children = self.inlines(el.children)
            return [Heading(el.level, children, self.slug(plain_text(children)))]
        if name == "Paragraph":
            return [self.paragraph(el)]
        if name == "List":
            items = [self.list_item(it) for it in el.children]
            return [ListBlock(bool(el.ordered), items, int(el.start) if el.ordered else 1)]
        if name == "Alert":
            title = Paragraph([Strong([Text(el.alert_type.title())])])
            return [BlockQuote([title, *self.blocks(el.children)])]
        if name == "Quote":
            return [BlockQuote(self.blocks(el.children))]
        if name in ("FencedCode", "CodeBlock"):
            text = el.children[0].children if el.children else ""
            lang = (el.lang or "").strip().split()[0] if (el.lang or "").strip() else ""
            return [CodeBlock(text.removesuffix("\n"), lang)]
        if name == "ThematicBreak":
            return [HorizontalRule()]
        if name == "HTMLBlock":
            return [RawHtml(el.body.rstrip("\n"))] if el.body.strip() else []
        if name == "Table":
            return [self.table(el)]
        # BlankLine, LinkRefDef, FootnoteDef (collected separately) and unknown: nothing
        return []

    def paragraph(self, el: Any, task_allowed: bool = False) -> Paragraph | MathBlock:
        children = self.inlines(el.children)
        checked = getattr(el, "checked", None)
        if checked is not None and not task_allowed:
            children.insert(0, Text("[x]" if checked else "[ ]"))
            children = _merge(children)
        if len(children) == 1 and isinstance(children[0], Math) and children[0].display:
            return MathBlock(children[0].tex)
        return Paragraph(children)

    def list_item(self, el: Any) -> ListItem:
        blocks: list[Block] = []
        checked: bool | None = None
        for i, child in enumerate(el.children):
            if i == 0 and type(child).__name__ == "Paragraph" and hasattr(child, "checked"):
                checked = bool(child.checked)
                para = self.paragraph(child, task_allowed=True)
                if isinstance(para, Paragraph) and para.children and isinstance(
                    para.children[0], Text
                ):
                    para.children[0].text = para.children[0].text.lstrip()
                blocks.append(para)
            else:
                blocks.extend(self.block(child))
        return ListItem(blocks, checked)

    def table(self, el: Any) -> Table:
        rows: list[TableRow] = []
        for r, row in enumerate(el.children):
            cells = []
            for cell in row.children:
                inl = self.inlines(cell.children)
                align = getattr(cell, "align", None)
                cells.append(TableCell([Paragraph(inl)] if inl else [], header=r == 0,
                                       align=align if align in ALIGNMENTS else ""))
            rows.append(TableRow(cells))
        return Table(rows, header_rows=1 if rows else 0)

    # ---- inlines
    def inlines(self, elements: Any) -> list[Inline]:
        if isinstance(elements, str):
            return [Text(elements)] if elements else []
        # a stack of (wrapper, children, tag, attrs) for inline HTML tags
        stack: list[tuple[Any, list[Inline], str, dict[str, str]]] = [(None, [], "", {})]
        for idx, el in enumerate(elements):
            name = type(el).__name__
            if name == "InlineHTML":
                self.inline_html(el.children, stack)
                continue
            if name == "LineBreak" and el.soft:
                prev_el = elements[idx - 1] if idx else None
                next_el = elements[idx + 1] if idx + 1 < len(elements) else None
                prev_s = prev_el.children if prev_el is not None and isinstance(
                    prev_el.children, str) else ""
                next_s = next_el.children if next_el is not None and isinstance(
                    next_el.children, str) else ""
                cjk = bool(prev_s and next_s and _CJK.match(prev_s[-1]) and _CJK.match(next_s[0]))
                stack[-1][1].append(Text("" if cjk else " "))
                continue
            stack[-1][1].extend(self.inline(el))
        while len(stack) > 1:  # unclosed tags: keep the content, wrap it anyway
            self._close(stack)
        return _merge(stack[0][1])

    def inline_html(self, raw: str, stack: list[tuple[Any, list[Inline], str, dict[str, str]]]
                    ) -> None:
        m = _TAG.fullmatch(raw.strip())
        if not m:
            return  # comments, processing instructions, CDATA: nothing visible
        closing, tag, rest, selfclosing = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
        if tag == "br" and not closing:
            stack[-1][1].append(LineBreak())
        elif tag == "img" and not closing:
            stack[-1][1].append(_img_from_attrs(_attrs(rest)))
        elif tag in _WRAPPERS and not closing and not selfclosing:
            stack.append((_WRAPPERS[tag], [], tag, _attrs(rest)))
        elif tag in _WRAPPERS and closing:
            if any(frame[2] == tag for frame in stack[1:]):
                while stack[-1][2] != tag:
                    self._close(stack)
                self._close(stack)

    @staticmethod
    def _close(stack: list[tuple[Any, list[Inline], str, dict[str, str]]]) -> None:
        wrapper, children, _tag, attrs = stack.pop()
        children = _merge(children)
        if wrapper == "code":
            node: Inline = Code(plain_text(children))
        elif wrapper == "link":
            if not attrs.get("href"):
                stack[-1][1].extend(children)
                return
            node = Link(children, attrs["href"], attrs.get("title", ""))
        else:
            node = wrapper(children)
        stack[-1][1].append(node)

    def inline(self, el: Any) -> list[Inline]:
        name = type(el).__name__
        if name == "RawText":
            return [Text(html.unescape(el.children) if el.escape else el.children)]
        if name == "Literal":
            return [Text(el.children)]
        if name == "LineBreak":
            return [LineBreak()]
        if name == "Emphasis":
            return [Emph(self.inlines(el.children))]
        if name == "StrongEmphasis":
            return [Strong(self.inlines(el.children))]
        if name == "Strikethrough":
            return [Strike(self.inlines(el.children))]
        if name == "CodeSpan":
            return [Code(el.children)]
        if name in ("Link", "AutoLink", "Url"):
            return [Link(self.inlines(el.children), html.unescape(el.dest), el.title or "")]
        if name == "Image":
            alt = plain_text(self.inlines(el.children))
            return [Image(src=html.unescape(el.dest), alt=alt, title=el.title or "")]
        if name == "FootnoteRef":
            if el.label not in self.note_order:
                self.note_order.append(el.label)
            return [NoteRef(el.label)]
        if name == "InlineMath":
            return [Math(el.children.strip(), display=el.display)]
        children = getattr(el, "children", "")
        if isinstance(children, str):
            return [Text(children)]
        return self.inlines(children)


def _merge(nodes: list[Inline]) -> list[Inline]:
    """Join adjacent Text nodes and drop empty ones."""
    out: list[Inline] = []
    for n in nodes:
        if isinstance(n, Text):
            if not n.text:
                continue
            if out and isinstance(out[-1], Text):
                out[-1] = Text(out[-1].text + n.text)
                continue
        out.append(n)
    return out


def _checked_body(text: str) -> tuple[dict[str, str], str]:
    """Front matter and the body the parser reads: line ends normalised, NULs replaced, the
    nesting limits checked (40003 before the parser meets hostile nesting)."""
    text = text.removeprefix("\ufeff").replace("\x00", "\ufffd")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    meta, body = _split_front_matter(text)
    check_nesting(body)
    return meta, body


def _parse(text: str) -> tuple[dict[str, str], Any]:
    meta, body = _checked_body(text)
    return meta, _parser().parse(body)


def read_markdown(text: str) -> Document:
    """Parse GitHub-flavoured Markdown into a :class:`Document`.

    Why: ``/md/convert`` renders Markdown to DOCX or PDF through the shared model, so the
    writers never see Markdown syntax. Footnotes go to ``Document.notes`` (in order of first
    reference) and front matter ``key: value`` lines to ``Document.meta``.
    """
    meta, root = _parse(text)
    footnotes: dict[str, Any] = getattr(root, "footnotes", {}) or {}
    conv = _Converter(footnotes)
    doc = Document(blocks=conv.blocks(root.children), meta=meta)
    done: set[str] = set()
    # notes may reference further notes: keep converting until no new label appears
    while True:
        pending = [label for label in conv.note_order if label not in done]
        if not pending:
            break
        for label in pending:
            done.add(label)
            if label in footnotes:
                doc.notes[label] = conv.blocks(footnotes[label].children)
    for label, definition in footnotes.items():  # defined but never referenced: kept last
        if label not in doc.notes:
            doc.notes[label] = conv.blocks(definition.children)
    return doc


# ------------------------------------------------------------------ images
def read_markdown_source(data: bytes | str) -> Document:
    """The registry's Markdown reader: :func:`read_markdown` of text, or of UTF-8 bytes
    (a BOM dropped; 40003 when they are not UTF-8)."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CorruptDocument("the Markdown is not UTF-8 text") from exc
    return read_markdown(data)


def _walk_marko(el: Any, found: list[str]) -> None:
    name = type(el).__name__
    if name == "Image":
        found.append(html.unescape(el.dest))
    elif name in ("InlineHTML", "HTMLBlock"):
        raw = el.children if name == "InlineHTML" else el.body
        for tag in _IMG_TAG.findall(raw):
            src = _attrs(tag[4:-1]).get("src")
            if src:
                found.append(src)
    children = getattr(el, "children", None)
    if isinstance(children, list):
        for child in children:
            _walk_marko(child, found)


_IMAGE_HINT = re.compile(r"!\[|<img", re.I)


def _may_have_images(text: str) -> bool:
    """False only when no image can be in ``text``: a Markdown image starts with ``![`` and
    an HTML one with ``<img`` (the tag :data:`_IMG_TAG` finds), whatever contains them."""
    return _IMAGE_HINT.search(text) is not None


def markdown_image_sources(text: str) -> list[str]:
    """Every image source the Markdown references, in order, without duplicates.

    Why: the service fetches remote images before rendering (writers never touch the
    network). Covers Markdown images (also in tables, lists and footnotes) and ``<img src>``
    in raw HTML. ``data:`` URIs are left out: :func:`attach_images` decodes them itself.

    Markdown without ``![`` and without ``<img`` has no image, so it is only checked, not
    parsed: the service asks this before every render, and the parse is most of the Python
    time of a short document.
    """
    if not _may_have_images(text):
        _checked_body(text)  # the same 40003 for hostile nesting as a parse
        return []
    _meta, root = _parse(text)
    found: list[str] = []
    _walk_marko(root, found)
    for definition in (getattr(root, "footnotes", {}) or {}).values():
        _walk_marko(definition, found)
    seen: set[str] = set()
    out = []
    for src in found:
        src = src.strip()
        if src and src not in seen and not src.lower().startswith("data:"):
            seen.add(src)
            out.append(src)
    return out


def _decode_data_uri(src: str) -> Resource | None:
    """An image embedded as a ``data:image/...`` URI (at most 20 MiB), else None."""
    decoded = decode_data_uri(src, max_bytes=_MAX_DATA_URI)
    if decoded is None or not decoded[0] or not decoded[1].startswith("image/"):
        return None
    return Resource(data=decoded[0], mime=decoded[1])


# one inline data: image; not a setting: MAX_MARKDOWN_BYTES already bounds the whole input
_MAX_DATA_URI = 20 * 1024 * 1024


def attach_images(doc: Document, fetched: dict[str, Resource],
                  refused: dict[str, str] | None = None) -> None:
    """Point every image at a resource, or replace it by its alt text with a warning.

    Why: writers are pure (no network); the service fetches sources listed by
    :func:`markdown_image_sources` and hands the results here. ``fetched`` maps a source as
    written to its bytes; ``refused`` maps a source to the reason it was not fetched (shown in
    the warning). ``data:`` image URIs are decoded here. Covers the body, tables, lists, notes
    and ``<img src>`` inside :class:`RawHtml`.
    """
    refused = refused or {}
    keys: dict[str, str] = {}

    def key_for(src: str) -> str | None:
        if src in doc.resources:
            return src
        if src in keys:
            return keys[src]
        res = fetched.get(src)
        if res is None and src.strip().lower().startswith("data:"):
            res = _decode_data_uri(src)
        if res is None:
            return None
        ext = image_extension(res.mime)
        digest = hashlib.sha1(res.data, usedforsecurity=False).hexdigest()[:12]
        key = f"image-{digest}.{ext}"
        doc.resources.setdefault(key, res)
        keys[src] = key
        return key

    def why(src: str) -> str:
        if src in refused:
            return refused[src]
        if src.strip().lower().startswith("data:"):
            return "not a readable data: image"
        return "not fetched" if src else "no source"

    def short(src: str) -> str:
        return src if len(src) <= 80 else src[:77] + "..."

    def fix_image(node: Inline) -> list[Inline] | None:
        if not isinstance(node, Image):
            return None
        key = key_for(node.src)
        if key is None:
            doc.warn(f"image {short(node.src)} left out: {why(node.src)}")
            return [Text(node.alt)]
        node.src = key
        return None

    def fix_html(raw: RawHtml) -> None:
        def repl(m: re.Match[str]) -> str:
            tag = m.group(0)
            attrs = _attrs(tag[4:-1])
            src = attrs.get("src", "")
            key = key_for(src)
            if key is None:
                doc.warn(f"image {short(src)} left out: {why(src)}")
                return html.escape(attrs.get("alt", ""))
            return re.sub(r"""(\bsrc\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)""",
                          lambda s: f'{s.group(1)}"{html.escape(key)}"', tag, count=1)

        raw.html = _IMG_TAG.sub(repl, raw.html)

    map_inlines(doc, fix_image)
    for node in walk_document(doc):
        if isinstance(node, RawHtml):
            fix_html(node)
