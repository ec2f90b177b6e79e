"""Markdown rendering of model nodes, shared by the Markdown writer and the chunks writer.

Why a module of its own: the chunks writer writes each chunk's text as Markdown, and no
writer imports another (``writers/common.py`` and ``writers/html_render.py`` are the other
shared helpers). The rules are the Markdown writer's; see ``writers/markdown.py``.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.common.slugs import Slugger, slugify
from render_pool.engine.common.writing import (
    NoteNumbering,
    is_tight_list,
    placeholder_label,
    table_grid,
)
from render_pool.engine.html.render import HtmlRenderer
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
    Strike,
    Strong,
    Subscript,
    Superscript,
    Table,
    TableCell,
    Text,
    Underline,
    plain_text,
)
from render_pool.engine.url_safety import is_safe_image_src, is_safe_link

__all__ = ["MarkdownRenderer", "pipe_ok"]


# ----------------------------------------------------------------- inline helpers
_FORMATS = (Emph, Strong, Strike)
_FORMATS_OR_LINK = (*_FORMATS, Link)
# "&" that a CommonMark parser (entity with ";") or a browser (numeric, even without ";")
# would decode inside a destination
_DEST_AMP = re.compile(r"&(?=#|[A-Za-z][A-Za-z0-9]{1,31};)")
_LINE_START_NUM = re.compile(r"^(\d{1,9})([.)])")
# a destination holding any of these is written in <...>, where "\", "<" and ">" are escaped
_DEST_BRACKETED = re.compile(r"[\s<>()\\\x00-\x1f]").search
_DEST_ESCAPE = re.compile(r"([\\<>])").sub


# the ASCII characters of Unicode categories P and S (most edges of emphasis are ASCII: no
# look-up in the Unicode database for them)
_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    if ch < "\x80":
        return ch in _ASCII_PUNCT
    return unicodedata.category(ch)[0] in "PS"


def _is_space(ch: str | None) -> bool:
    return ch is None or ch.isspace()


def _trim_edges(children: list[Inline]) -> tuple[list[Inline], list[Inline], list[Inline]]:
    """Split leading/trailing whitespace and line breaks off a formatted run."""
    kids = list(children)
    lead: list[Inline] = []
    trail: list[Inline] = []
    while kids:
        c = kids[0]
        if isinstance(c, LineBreak):
            lead.append(kids.pop(0))
        elif isinstance(c, Text) and c.text[:1].isspace():
            s = c.text.lstrip()
            lead.append(Text(c.text[: len(c.text) - len(s)]))
            if s:
                kids[0] = Text(s)
                break
            kids.pop(0)
        else:
            break
    while kids:
        c = kids[-1]
        if isinstance(c, LineBreak):
            trail.insert(0, kids.pop())
        elif isinstance(c, Text) and c.text[-1:].isspace():
            s = c.text.rstrip()
            trail.insert(0, Text(c.text[len(s):]))
            if s:
                kids[-1] = Text(s)
                break
            kids.pop()
        else:
            break
    return lead, kids, trail


def _normalize(nodes: list[Inline], active: frozenset[type] = frozenset()) -> list[Inline]:
    """Prepare inlines for Markdown: hoist edge whitespace out of emphasis, merge neighbours.

    Emphasis nested in the same emphasis (``Emph(Emph(x))``) is flattened: ``**`` would
    otherwise read as strong.
    """
    if len(nodes) == 1 and type(nodes[0]) is Text:  # a plain paragraph or cell: as it is
        return list(nodes) if nodes[0].text else []
    out: list[Inline] = []
    for node in nodes:
        if type(node) is Text or type(node) is Code:  # most nodes: nothing to do
            out.append(node)
        elif isinstance(node, _FORMATS) and type(node) in active:
            out.extend(_normalize(node.children, active))
        elif isinstance(node, _FORMATS_OR_LINK) and _one_trimmed_text(node.children):
            out.append(node)  # what the branches below make of it: an equal node
        elif isinstance(node, _FORMATS):
            kids = _normalize(node.children, active | {type(node)})
            lead, kids, trail = _trim_edges(kids)
            out.extend(lead)
            if kids:
                out.append(type(node)(kids))
            out.extend(trail)
        elif isinstance(node, (Underline, Subscript, Superscript)):
            out.append(type(node)(_normalize(node.children, active)))
        elif isinstance(node, Link):
            out.append(Link(_normalize(node.children, active), node.target, node.title))
        else:
            out.append(node)
    merged: list[Inline] = []
    prev: Inline | None = None  # merged[-1]; the model's node types have no subclasses
    for node in out:
        if type(node) is Text:
            if type(prev) is Text:
                merged[-1] = prev = Text(prev.text + node.text)
            elif node.text:
                merged.append(node)
                prev = node
        elif type(node) is Code and type(prev) is Code:  # `a``b` would be one span
            merged[-1] = prev = Code(prev.text + node.text)
        elif isinstance(node, _FORMATS) and type(prev) is type(node):
            merged[-1] = prev = type(node)(prev.children + node.children)
        else:
            merged.append(node)
            prev = node
    return merged


def _one_trimmed_text(children: list[Inline]) -> bool:
    """Whether ``children`` is one text, not empty, with no space at either end (most
    emphasis and links): :func:`_normalize` leaves such a node as it is, unless it is nested
    in the same emphasis."""
    if len(children) != 1 or type(children[0]) is not Text:
        return False
    text = children[0].text
    return bool(text) and not text[0].isspace() and not text[-1].isspace()


def _blank_edge(node: Inline) -> bool:
    return isinstance(node, LineBreak) or (isinstance(node, Text) and not node.text.strip())


def _strip_breaks(nodes: list[Inline]) -> list[Inline]:
    """Drop leading/trailing hard breaks (a trailing ``\\`` would show as a backslash) and
    blank texts; ``nodes`` itself when there are none (most paragraphs: no copy)."""
    if not nodes:
        return nodes
    first, last = nodes[0], nodes[-1]
    if (type(first) is Text and first.text and not first.text[0].isspace()
            and type(last) is Text and last.text and not last.text[-1].isspace()):
        return nodes  # most paragraphs: text at both ends, not blank
    start, end = 0, len(nodes)
    while start < end and _blank_edge(nodes[start]):
        start += 1
    while end > start and _blank_edge(nodes[end - 1]):
        end -= 1
    return nodes if start == 0 and end == len(nodes) else nodes[start:end]


@dataclass(frozen=True)
class _Ctx:
    in_table: bool = False
    in_link: bool = False
    in_heading: bool = False


# the contexts blocks start in (made once: a paragraph of a long document is no reason to
# make another)
_BODY = _Ctx()
_HEADING = _Ctx(in_heading=True)
_TABLE_CELL = _Ctx(in_table=True)
# the context of a link's text, by (in_table, in_heading) of the context around the link
_IN_LINK = {(table, heading): _Ctx(table, True, heading)
            for table in (False, True) for heading in (False, True)}


# an emphasis run whose delimiters are chosen once its neighbours are known: (mark, HTML
# fallback tag, body); a tuple, not a class, as one is made per emphasis run
_Delim = tuple[str, str, str]

_DELIMS: dict[type, tuple[str, str]] = {Emph: ("*", "em"), Strong: ("**", "strong"),
                                         Strike: ("~~", "del")}


# the delimiter characters a neighbour of an emphasis run must not be (tuple: None is no
# neighbour)
_DELIM_CHARS = ("*", "~")
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)


def _flanks_ok(mark: str, body: str, before: str | None, after: str | None) -> bool:
    """Would ``mark + body + mark`` between ``before`` and ``after`` parse as emphasis?"""
    if body[:1] in _ASCII_ALNUM and body[-1:] in _ASCII_ALNUM:
        # most runs: an ASCII letter or digit at both edges is neither space, punctuation,
        # a backslash nor a delimiter, so only the neighbours can spoil the match
        return before not in _DELIM_CHARS and after not in _DELIM_CHARS
    ch = mark[0]
    if not body:
        return False
    if before == ch or after == ch:  # would merge with a neighbouring delimiter run
        return False
    first, last = body[0], body[-1]
    if last == "\\":  # a trailing backslash would escape the closing delimiter
        return False
    if first in "*~" or last in "*~" or before in ("*", "~") or after in ("*", "~"):
        return False  # runs of different delimiters side by side: parsers disagree
    if ch == "~" and (_is_punct(first) or _is_punct(last)):
        return False  # strikethrough parsers differ on punctuation edges: use <del>
    # in the `or`s below, before/after are not None: _is_space(None) is True (mypy can't tell)
    left_ok = not first.isspace() and (not _is_punct(first) or _is_space(before)
                                       or _is_punct(before))  # type: ignore[arg-type]
    right_ok = not last.isspace() and (not _is_punct(last) or _is_space(after)
                                       or _is_punct(after))  # type: ignore[arg-type]
    return left_ok and right_ok


def _place_emphasis(pieces: list[str | _Delim]) -> str:
    """Join ``pieces``, each emphasis run between delimiters where CommonMark's flanking rules
    let them match its neighbours (the last character written, the next piece's first),
    else between HTML tags."""
    out: list[str] = []
    before: str | None = None  # the last character written so far
    last = len(pieces) - 1
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            if piece:
                out.append(piece)
                before = piece[-1]
            continue
        nxt = pieces[i + 1] if i < last else None
        if isinstance(nxt, tuple):
            after: str | None = nxt[0][0]
        else:
            after = nxt[0] if nxt else None
        before = _close(out, piece, before, after)
    return "".join(out)


def _close(out: list[str], run: _Delim, before: str | None, after: str | None) -> str:
    """Write the emphasis run ``run`` to ``out`` between ``before`` (the last character
    written) and ``after`` (the next piece's first), as :func:`_place_emphasis` does; the
    last character written."""
    mark, tag, body = run
    if _flanks_ok(mark, body, before, after):
        out += (mark, body, mark)
        return mark[0]
    out += ("<", tag, ">", body, "</", tag, ">")
    return ">"


# the inlines _normalize would rebuild when they hold more than one text (and whose writers
# call :meth:`MarkdownRenderer.inlines` again on their children)
_WRAPPERS = (Underline, Subscript, Superscript)


def _normal_texts(nodes: list[Inline]) -> list[str] | None:
    """The texts :meth:`MarkdownRenderer._normal_inlines` would escape (texts and emphasis
    bodies), or None where :func:`_normalize` would change more of ``nodes`` than joining
    neighbouring texts and dropping empty ones: an emphasis or link with more than one
    trimmed text, a wrapper with more than one text, two codes or two runs of the same
    emphasis side by side (few paragraphs)."""
    texts: list[str] = []
    prev: type | None = None  # the kind of the last node _normalize would keep
    for node in nodes:
        kind = type(node)
        if kind is Text:
            text = node.text  # type: ignore[union-attr]  # checked: a Text
            if text:
                texts.append(text)
                prev = kind
            continue
        if kind in _DELIMS:
            kids = node.children  # type: ignore[union-attr]  # checked: an emphasis
            if kind is prev or len(kids) != 1 or type(kids[0]) is not Text:
                return None
            text = kids[0].text
            if not text or text[0].isspace() or text[-1].isspace():
                return None
            texts.append(text)
        elif kind is Code:
            if prev is Code:
                return None
        elif kind is Link:
            if not _one_trimmed_text(node.children):  # type: ignore[union-attr]
                return None
        elif kind in _WRAPPERS:
            kids = node.children  # type: ignore[union-attr]
            if len(kids) != 1 or type(kids[0]) is not Text:
                return None
        prev = kind
    return texts


def _needs_escape(text: str) -> bool:
    """Whether ``text`` holds a character :func:`_escape_text` may rewrite (most texts do
    not). A chain of ``in`` tests, not a regex search: each is a ``memchr`` over the text,
    together about half the cost of one search of a character class."""
    return ("\\" in text or "*" in text or "_" in text or "[" in text or "]" in text
            or "<" in text or "|" in text or "$" in text or "&" in text or "`" in text
            or "~" in text or "\n" in text or "\r" in text)


# the backtick runs of a code span's text (the fence must be longer than the longest)
_BACKTICKS = re.compile(r"`+").findall


def _code_span(text: str, in_table: bool) -> str:
    text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    if not text:
        return ""
    if "`" not in text:  # most spans: a one-backtick fence, no runs to measure
        fence = "`"
    else:
        fence = "`" * (max(map(len, _BACKTICKS(text))) + 1)
    if text.startswith("`") or text.endswith("`") or (
        text.startswith(" ") and text.endswith(" ") and text.strip()
    ):
        text = f" {text} "
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}"


def _link_dest(url: str, in_table: bool) -> str:
    """``url`` as a link or image destination that reads back as the same URL: ``&`` before
    something a parser or browser decodes as a character reference becomes ``&amp;`` (else
    ``<jav&#x61;script:...>`` would read back as ``javascript:``), line breaks are
    percent-encoded, and a URL with spaces, brackets or controls is written in ``<...>``."""
    if "\n" in url or "\r" in url:
        url = url.replace("\n", "%0A").replace("\r", "%0D")
    if "&" in url:
        url = _DEST_AMP.sub("&amp;", url)
    if url == "" or _DEST_BRACKETED(url) is not None:
        url = "<" + _DEST_ESCAPE(r"\\\1", url) + ">"
    if in_table:
        url = url.replace("|", "\\|")
    return url


def _link_title(title: str, in_table: bool) -> str:
    if not title:
        return ""
    t = re.sub(r"\s+", " ", title).replace("\\", "\\\\").replace('"', '\\"')
    if in_table:
        t = t.replace("|", "\\|")
    return f' "{t}"'


# what _escape_text may rewrite: one character class for the whole text, not a test per
# character (a class alone lets the regex engine skip ahead to the next candidate; an "&" is
# rewritten only before an entity, :data:`_ENTITY_REST`)
_TEXT_SPECIAL = re.compile(r"[`~\\*_\[\]<|$&]")
_ENTITY_REST = re.compile(r"#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};")
_TEXT_REPLACEMENT = {"`": "&#96;",  # an entity can never open a code span, in any parser
                     "~": "&#126;"}  # nor a strikethrough (some parsers ignore "\~" there)
_NEWLINES = re.compile(r"[\r\n]+")


def _escape_special(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "&":  # only an "&" that would start an entity
        return "\\&" if _ENTITY_REST.match(m.string, m.end()) else "&"
    return _TEXT_REPLACEMENT.get(ch) or "\\" + ch


def _escape_text(text: str) -> str:
    """``text`` so that it reads back as the same text: line breaks become spaces, ``\\ * _
    [ ] < | $`` and an ``&`` that starts an entity get a backslash, a backtick and a tilde
    become entities."""
    if not _needs_escape(text):  # most texts: as they are
        return text
    if "\r" in text or "\n" in text:
        text = _NEWLINES.sub(" ", text)
    return _TEXT_SPECIAL.sub(_escape_special, text)


def _escape_line_starts(text: str) -> str:
    """Escape what would start a block (heading, list, quote, setext line) at a line start."""
    if "\n" not in text:  # most paragraphs: one line
        return _escape_line_start(text)
    return "\n".join([_escape_line_start(line) for line in text.split("\n")])


# the characters a line must start with for _escape_line_start to change it
_LINE_START_SPECIAL = frozenset("0123456789#+-=> \t")


def _escape_line_start(line: str) -> str:
    """One line of :func:`_escape_line_starts`, its indentation dropped."""
    if not line or line[0] not in _LINE_START_SPECIAL:  # most lines: as they are
        return line
    line = line.lstrip(" \t")
    m = _LINE_START_NUM.match(line)
    if m:
        return m.group(1) + "\\" + line[len(m.group(1)):]
    if line[:1] in ("#", "+", "-", "=", ">"):
        return "\\" + line
    return line


class MarkdownRenderer:
    def __init__(self, doc: Document, resolve_image: ImageResolver) -> None:
        self.doc = doc
        self.resolve_image = resolve_image
        self.notes = NoteNumbering(doc)
        self.emitted_anchors: set[str] = set()
        # the ids a GitHub-like renderer gives the headings by itself (``intro``, ``intro-1``):
        # a heading whose anchor is one of them needs no ``<a id>`` in its text
        self.heading_ids = Slugger()

    @functools.cached_property
    def html(self) -> HtmlRenderer:
        """The HTML renderer for tables a pipe table cannot hold, made on first use: it walks
        the whole document to assign ids, which most documents never need."""
        return HtmlRenderer(self.doc, self.resolve_image, self.notes)

    # ------------------------------------------------------------- inlines
    def inlines(self, nodes: list[Inline], ctx: _Ctx) -> str:
        if len(nodes) == 1 and type(nodes[0]) is Text:  # a plain paragraph or cell
            return _escape_text(nodes[0].text)
        texts = _normal_texts(nodes)
        if texts is not None:  # most paragraphs: nothing for _normalize to change
            return self._normal_inlines(nodes, ctx, not _needs_escape("".join(texts)))
        return self._normalized_inlines(nodes, ctx)

    def _normalized_inlines(self, nodes: list[Inline], ctx: _Ctx) -> str:
        """The general path of :meth:`inlines`: ``nodes`` normalised, each written, then the
        emphasis runs placed."""
        writer = _INLINE_WRITERS.get  # a text, the most common node, is escaped here
        pieces: list[str | _Delim] = [
            _escape_text(n.text) if type(n) is Text else writer(type(n), _nothing)(self, n, ctx)
            for n in _normalize(nodes)]
        if tuple not in map(type, pieces):  # no emphasis to place
            return "".join(pieces)  # type: ignore[arg-type]  # all str: checked above
        return _place_emphasis(pieces)

    def _normal_inlines(self, nodes: list[Inline], ctx: _Ctx, plain: bool) -> str:
        """What the general path of :meth:`inlines` makes of ``nodes`` that
        :func:`_normal_texts` passed, in one pass: neighbouring texts joined and escaped
        (unless ``plain``: none of them has a character to escape), each node written, and
        each emphasis run's delimiters chosen as soon as the piece after it is known (no
        list of pieces, no second pass)."""
        out: list[str] = []
        before: str | None = None  # the last character written so far
        held: _Delim | None = None  # an emphasis run waiting for the piece after it
        text = ""  # neighbouring texts not yet written (merged, as _normalize merges them)
        piece: str | _Delim
        for node in nodes:
            kind = type(node)
            if kind is Text:
                text += node.text  # type: ignore[union-attr]  # checked: a Text
                continue
            if text:
                piece = text if plain else _escape_text(text)
                text = ""
                if held is not None:
                    before = _close(out, held, before, piece[0])
                    held = None
                out.append(piece)
                before = piece[-1]
            delims = _DELIMS.get(kind)
            if delims is not None:  # one trimmed text (_normal_texts): its body
                body = node.children[0].text  # type: ignore[union-attr]
                piece = (*delims, body if plain else _escape_text(body))
            else:
                piece = _INLINE_WRITERS.get(kind, _nothing)(self, node, ctx)
            if held is not None:
                if type(piece) is tuple:
                    after: str | None = piece[0][0]
                else:
                    after = piece[0] if piece else None
                before = _close(out, held, before, after)
                held = None
            if type(piece) is tuple:
                held = piece  # a _Delim: checked
            elif piece:
                out.append(piece)  # type: ignore[arg-type]  # checked: a str
                before = piece[-1]
        if text:
            piece = text if plain else _escape_text(text)
            if held is not None:
                before = _close(out, held, before, piece[0])
                held = None
            out.append(piece)
        if held is not None:
            _close(out, held, before, None)
        return "".join(out)

    def _format(self, node: Emph | Strong | Strike, ctx: _Ctx) -> _Delim:
        mark, tag = _DELIMS[type(node)]
        return (mark, tag, self.inlines(node.children, ctx))

    def _note_ref(self, node: NoteRef, ctx: _Ctx) -> str:
        return f"[^{self.notes.number(node.note_id)}]"

    def _underline(self, node: Underline, ctx: _Ctx) -> str:
        return f"<u>{self.inlines(node.children, ctx)}</u>"

    def _subscript(self, node: Subscript, ctx: _Ctx) -> str:
        return f"<sub>{self.inlines(node.children, ctx)}</sub>"

    def _superscript(self, node: Superscript, ctx: _Ctx) -> str:
        return f"<sup>{self.inlines(node.children, ctx)}</sup>"

    def _code(self, node: Code, ctx: _Ctx) -> str:
        return _code_span(node.text, ctx.in_table)

    def _link(self, node: Link, ctx: _Ctx) -> str:
        if ctx.in_link:
            return self.inlines(node.children, ctx)
        inner = _IN_LINK[ctx.in_table, ctx.in_heading]
        text = self.inlines(_strip_breaks(node.children), inner) or _escape_text(node.target)
        if not is_safe_link(node.target):
            return text
        return (f"[{text}]({_link_dest(node.target, ctx.in_table)}"
                f"{_link_title(node.title, ctx.in_table)})")

    def _image(self, node: Image, ctx: _Ctx) -> str:
        src = self.resolve_image(node.src)
        if not is_safe_image_src(src):
            return _escape_text(node.alt)
        return (f"![{_escape_text(node.alt)}]({_link_dest(src, ctx.in_table)}"
                f"{_link_title(node.title, ctx.in_table)})")

    def _line_break(self, node: LineBreak, ctx: _Ctx) -> str:
        if ctx.in_table:
            return "<br>"
        if ctx.in_heading:
            return " "
        return "\\\n"

    def _math(self, node: Math, ctx: _Ctx) -> str:
        tex = re.sub(r"\s*\n\s*", " ", node.tex.strip())
        if not tex:
            return ""
        if ctx.in_table:
            tex = tex.replace("|", "\\|")
        return f"$${tex}$$" if node.display else f"${tex}$"

    def _anchor(self, node: Anchor, ctx: _Ctx) -> str:
        if not node.name or node.name in self.emitted_anchors:
            return ""
        self.emitted_anchors.add(node.name)
        return f'<a id="{_attr(node.name)}"></a>'

    def _placeholder(self, node: Placeholder, ctx: _Ctx) -> str:
        return _escape_text(placeholder_label(node.text))

    # ------------------------------------------------------------- blocks
    def blocks(self, blocks: list[Block], tight: bool = False) -> str:
        out: list[str] = []
        prev_list: ListBlock | None = None
        prev_char: dict[bool, str] = {}
        for b in blocks:
            if type(b) is ListBlock:
                # two lists in a row would merge: switch the bullet/delimiter character
                first, second = ("-", "*") if not b.ordered else (".", ")")
                if prev_list is not None and prev_list.ordered == b.ordered:
                    ch = second if prev_char.get(b.ordered) == first else first
                else:
                    ch = first
                prev_char[b.ordered] = ch
                text = self.list_block(b, ch)
                prev_list = b
                if text and tight and out and not _can_interrupt(b):
                    text = "\n" + text  # it could not interrupt the paragraph above
            else:
                write = _BLOCK_WRITERS.get(type(b))  # what self.block does, without its call
                text = write(self, b) if write is not None else ""
                if text:
                    prev_list = None
            if text:
                out.append(text)
        return ("\n" if tight else "\n\n").join(out)

    def block(self, node: Block) -> str:
        write = _BLOCK_WRITERS.get(type(node))
        return write(self, node) if write is not None else ""

    def _paragraph(self, node: Paragraph) -> str:
        children = node.children
        if len(children) == 1 and type(children[0]) is Text:  # most paragraphs: one text
            text = children[0].text
            # what the general path makes of it: a blank text is dropped, an escaped text
            # has no line break
            # (blank: empty or all space, tested without the copy strip would make)
            return _escape_line_start(_escape_text(text)) if text and not text.isspace() else ""
        nodes = _strip_breaks(children)
        texts = _normal_texts(nodes) if len(nodes) > 1 else None
        if texts is not None:  # most paragraphs: what self.inlines would do, one call less
            body = self._normal_inlines(nodes, _BODY, not _needs_escape("".join(texts)))
        else:
            body = self.inlines(nodes, _BODY)
        return _escape_line_starts(body).strip("\n")

    def _heading(self, node: Heading) -> str:
        level = min(max(node.level, 1), 6)
        body = self.inlines(_strip_breaks(node.children), _HEADING).strip()
        if body.endswith("#"):
            body = body[:-1] + "\\#"
        anchor = ""
        kids = node.children
        # the visible text: of most headings, their one text (plain_text walks the nodes)
        shown = kids[0].text if len(kids) == 1 and type(kids[0]) is Text else plain_text(kids)
        automatic = self.heading_ids.unique(slugify(shown))
        if node.anchor and node.anchor not in self.emitted_anchors:
            self.emitted_anchors.add(node.anchor)
            if node.anchor != automatic:
                anchor = f'<a id="{_attr(node.anchor)}"></a>'
        return ("#" * level + " " + anchor + body).rstrip()

    def _list(self, node: ListBlock) -> str:
        return self.list_block(node, "." if node.ordered else "-")

    def _code_block(self, node: CodeBlock) -> str:
        text = node.text[:-1] if node.text.endswith("\n") else node.text
        longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
        fence = "`" * max(3, longest + 1)
        lang = re.sub(r"[`\s]", "", node.language)
        return f"{fence}{lang}\n{text}\n{fence}" if text else f"{fence}{lang}\n{fence}"

    def _block_quote(self, node: BlockQuote) -> str:
        inner = self.blocks(node.blocks)
        return "\n".join("> " + line if line else ">" for line in inner.split("\n"))

    def _rule(self, node: HorizontalRule) -> str:
        return "---"

    def _math_block(self, node: MathBlock) -> str:
        tex = node.tex.strip("\n")
        return f"$$\n{tex}\n$$" if tex.strip() else ""

    def _raw_html(self, node: RawHtml) -> str:
        return node.html.strip("\n")

    def list_block(self, node: ListBlock, ch: str) -> str:
        tight = is_tight_list(node.items)
        start = max(0, min(node.start, 999_999_999))
        items = []
        for i, item in enumerate(node.items):
            marker = f"{start + i}{ch}" if node.ordered else ch
            items.append(self.list_item(item, marker, tight))
        return ("\n" if tight else "\n\n").join(items)

    def list_item(self, item: ListItem, marker: str, tight: bool) -> str:
        task = "" if item.checked is None else ("[x] " if item.checked else "[ ] ")
        blocks = item.blocks
        if len(blocks) == 1 and type(blocks[0]) is Paragraph:
            body = self._paragraph(blocks[0])  # most items: what blocks() makes of it
        else:
            body = self.blocks(blocks, tight=tight)
        if not body:
            return (marker + " " + task).rstrip()
        if "\n" not in body:  # most items: one line, nothing to indent
            return f"{marker} {task}{'___' if body == '---' else body}"
        lines = body.split("\n")
        if lines[0] == "---":
            lines[0] = "___"  # "- ---" would be a thematic break, not an item
        indent = " " * (len(marker) + 1)
        first = f"{marker} {task}{lines[0]}"
        rest = [indent + line if line else "" for line in lines[1:]]
        return "\n".join([first, *rest])

    # ------------------------------------------------------------- tables
    def _pipe_cell(self, cell: TableCell) -> str:
        parts = []
        for b in cell.blocks:
            if type(b) is Paragraph:
                kids = b.children
                if len(kids) == 1 and type(kids[0]) is Text:  # most cells: one text
                    text = _escape_text(kids[0].text).strip()  # blank: dropped by strip
                else:
                    text = self.inlines(_strip_breaks(kids), _TABLE_CELL).strip()
            elif isinstance(b, MathBlock):
                tex = re.sub(r"\s*\n\s*", " ", b.tex.strip()).replace("|", "\\|")
                text = f"$${tex}$$" if tex else ""
            else:  # pragma: no cover - filtered by _pipe_ok
                text = ""
            if text:
                parts.append(text)
        return "<br>".join(parts)

    def table(self, node: Table) -> str:
        if not node.rows:
            return ""
        texts = _cell_texts(node)
        if texts is not None:  # most tables: a text per cell, no spans
            return self._text_table(node, texts)
        return self._grid_table(node)

    def _grid_table(self, node: Table) -> str:
        """The general path of :meth:`table`: an HTML table where a pipe table cannot hold
        ``node``, else a pipe table of its grid (spans repeated)."""
        if not pipe_ok(node):
            html = self.html.table(node)
            # an HTML block ends at a blank line: keep the table free of blank lines
            return re.sub(r"\n(?=[ \t]*\n)", "&#10;", html)
        grid = table_grid(node)
        width = len(grid[0]) if grid else 0
        if width == 0:
            return ""
        rendered: dict[int, str] = {}
        lines = []
        for r, row in enumerate(grid):
            cells = []
            for slot in row:
                if slot is None:
                    cells.append("")
                    continue
                cell = slot[2]
                if id(cell) not in rendered:
                    rendered[id(cell)] = self._pipe_cell(cell)
                cells.append(rendered[id(cell)])
            lines.append("| " + " | ".join([c or " " for c in cells]) + " |")
            if r == 0:
                lines.append("|" + "|".join(["---"] * width) + "|")
        return self._captioned(node, "\n".join(lines))

    def _text_table(self, node: Table, texts: list[list[str]]) -> str:
        """What :meth:`table` makes of a table :func:`_cell_texts` passed: each cell's text
        escaped and trimmed (escaped only if some text of the table needs it), rows as
        long as the longest."""
        if _needs_escape("".join(["".join(row) for row in texts])):
            texts = [[_escape_text(text) for text in row] for row in texts]
        width = max(map(len, texts))
        if width == 0:
            return ""
        lines = []
        for row in texts:
            cells = [text.strip() or " " for text in row]
            if len(cells) < width:
                cells += [" "] * (width - len(cells))
            lines.append("| " + " | ".join(cells) + " |")
        lines.insert(1, "|" + "|".join(["---"] * width) + "|")
        return self._captioned(node, "\n".join(lines))

    def _captioned(self, node: Table, table: str) -> str:
        """A pipe table's text after its caption's paragraph, if it has one."""
        if not node.caption:
            return table
        return (_escape_line_starts(self.inlines(_strip_breaks(node.caption), _BODY))
                + "\n\n" + table)

    # ------------------------------------------------------------- notes
    def footnotes(self) -> str:
        def definition(n: int, nid: str) -> str:
            body = self.blocks(self.doc.notes.get(nid, []))
            lines = body.split("\n") if body else [""]
            text = f"[^{n}]: {lines[0]}".rstrip()
            rest = ["    " + line if line else "" for line in lines[1:]]
            return "\n".join([text, *rest])

        return "\n\n".join(self.notes.render_all(definition))


def _attr(value: str) -> str:
    return (value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def _can_interrupt(node: ListBlock) -> bool:
    """CommonMark lets a list interrupt a paragraph only if it is bulleted or starts at 1."""
    first = node.items[0].blocks if node.items else []
    return (not node.ordered or node.start == 1) and bool(first)


# how each kind of node is written (the model's node types have no subclasses: a look-up by
# type, not a chain of isinstance tests); a text is written by MarkdownRenderer.inlines itself
_INLINE_WRITERS: dict[type, Callable[[MarkdownRenderer, Any, _Ctx], str | _Delim]] = {
    Emph: MarkdownRenderer._format,
    Strong: MarkdownRenderer._format, Strike: MarkdownRenderer._format,
    NoteRef: MarkdownRenderer._note_ref, Underline: MarkdownRenderer._underline,
    Subscript: MarkdownRenderer._subscript, Superscript: MarkdownRenderer._superscript,
    Code: MarkdownRenderer._code, Link: MarkdownRenderer._link, Image: MarkdownRenderer._image,
    LineBreak: MarkdownRenderer._line_break, Math: MarkdownRenderer._math,
    Anchor: MarkdownRenderer._anchor, Placeholder: MarkdownRenderer._placeholder,
}
_BLOCK_WRITERS: dict[type, Callable[[MarkdownRenderer, Any], str]] = {
    Paragraph: MarkdownRenderer._paragraph, Heading: MarkdownRenderer._heading,
    ListBlock: MarkdownRenderer._list, Table: MarkdownRenderer.table,
    CodeBlock: MarkdownRenderer._code_block, BlockQuote: MarkdownRenderer._block_quote,
    HorizontalRule: MarkdownRenderer._rule, MathBlock: MarkdownRenderer._math_block,
    RawHtml: MarkdownRenderer._raw_html,
}


def _nothing(renderer: MarkdownRenderer, node: object, ctx: _Ctx) -> str:
    """What a node of a kind the tables above do not know is written as: nothing."""
    return ""


def _cell_texts(table: Table) -> list[list[str]] | None:
    """Each cell's text, row by row, when no cell spans and every cell holds nothing, an
    empty paragraph or a paragraph of one text (most tables): such a table is a pipe table,
    each cell at its index, and writing a cell has no side effect (no anchor, note or
    image). None otherwise."""
    rows: list[list[str]] = []
    for row in table.rows:
        texts: list[str] = []
        for cell in row.cells:
            if cell.rowspan > 1 or cell.colspan > 1:
                return None
            blocks = cell.blocks
            if not blocks:
                texts.append("")
                continue
            if len(blocks) != 1 or type(blocks[0]) is not Paragraph:
                return None
            kids = blocks[0].children
            if not kids:
                texts.append("")
            elif len(kids) == 1 and type(kids[0]) is Text:
                texts.append(kids[0].text)
            else:
                return None
        rows.append(texts)
    return rows


def pipe_ok(table: Table) -> bool:
    """A pipe table can hold the table when every cell has only paragraphs or display math."""
    for row in table.rows:
        for cell in row.cells:
            for b in cell.blocks:
                if not isinstance(b, (Paragraph, MathBlock)):
                    return False
    return True
