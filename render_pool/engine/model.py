"""The document model every reader builds and every writer serialises.

The shape follows Pandoc's AST: a document is a list of blocks; blocks hold
inlines or other blocks. Readers (DOCX, PDF, Markdown, HTML) never know which
writer will run, and writers (Markdown, HTML, JSON, DocTags, DOCX, PDF) never
know which reader ran. Binary assets (images) live in ``Document.resources``
keyed by a name that ``Image.src`` refers to, so a writer can embed them as
data URIs or the service can upload them and rewrite the links.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from itertools import chain
from typing import Any

# 1.1: the optional ``prov`` of blocks and table cells and the optional top-level ``pages``
SCHEMA_VERSION = "1.1"


# ---------------------------------------------------------------- provenance
@dataclass(frozen=True)
class PageBox:
    """Where on a PDF page a block was read: ``page`` from 1, ``bbox`` ``(x0, top, x1,
    bottom)`` in PDF points with the origin at the top-left corner of the page as read
    (after its ``/Rotate``), from the text layer, the structure tree or OCR words alike."""

    page: int
    bbox: tuple[float, float, float, float]


@dataclass(frozen=True)
class SlideRef:
    """The slide (from 1) of a presentation a block was read from."""

    slide: int


@dataclass(frozen=True)
class SheetRange:
    """The sheet and cell range (``A1:D20``, or one cell ``B3``) a block was read from."""

    sheet: str
    range: str


@dataclass(frozen=True)
class PartRef:
    """The part of a package (``word/document.xml``, an EPUB spine item, ``body`` of an HTML
    page) and the position (from 0) of the element a block was read from in it."""

    part: str
    index: int


Location = PageBox | SlideRef | SheetRange | PartRef


# The ``prov`` field of blocks and table cells: where the node came from (a list: a block can
# span pages). Not compared (two blocks with the same content are equal wherever they were
# read), not in the repr, and left out of the JSON when empty.
_PROV = {"omit_empty": True, "locations": True}


def location_to_dict(loc: Location) -> dict[str, Any]:
    """A location as JSON data: ``{"page", "bbox"}``, ``{"slide"}``, ``{"sheet", "range"}``
    or ``{"part", "index"}`` (the keys tell the kind; boxes rounded to 0.01 pt)."""
    if isinstance(loc, PageBox):
        return {"page": loc.page, "bbox": [round(v, 2) for v in loc.bbox]}
    if isinstance(loc, SlideRef):
        return {"slide": loc.slide}
    if isinstance(loc, SheetRange):
        return {"sheet": loc.sheet, "range": loc.range}
    return {"part": loc.part, "index": loc.index}


def location_from_dict(data: dict[str, Any]) -> Location:
    """Inverse of :func:`location_to_dict`."""
    if "page" in data:
        x0, top, x1, bottom = (float(v) for v in data["bbox"])
        return PageBox(int(data["page"]), (x0, top, x1, bottom))
    if "slide" in data:
        return SlideRef(int(data["slide"]))
    if "sheet" in data:
        return SheetRange(str(data["sheet"]), str(data["range"]))
    return PartRef(str(data["part"]), int(data["index"]))


# ---------------------------------------------------------------- inlines
@dataclass
class Text:
    """Plain text run."""

    text: str


@dataclass
class Emph:
    """Italic / emphasised text."""

    children: list[Inline]


@dataclass
class Strong:
    """Bold / strong text."""

    children: list[Inline]


@dataclass
class Strike:
    """Struck-through text (also tracked deletions when shown)."""

    children: list[Inline]


@dataclass
class Underline:
    """Underlined text (also tracked insertions when shown)."""

    children: list[Inline]


@dataclass
class Subscript:
    children: list[Inline]


@dataclass
class Superscript:
    children: list[Inline]


@dataclass
class Code:
    """Inline code span."""

    text: str


@dataclass
class Link:
    """Hyperlink; ``target`` is a URL or ``#anchor`` for an internal link."""

    children: list[Inline]
    target: str
    title: str = ""


@dataclass
class Image:
    """Image; ``src`` is a key of ``Document.resources`` or an external URL."""

    src: str
    alt: str = ""
    title: str = ""
    width_px: int | None = None
    height_px: int | None = None


@dataclass
class LineBreak:
    """Hard line break inside a paragraph."""


@dataclass
class Math:
    """Formula as LaTeX; ``display`` for a formula on its own line."""

    tex: str
    display: bool = False


@dataclass
class NoteRef:
    """Reference to a footnote or endnote held in ``Document.notes``."""

    note_id: str


@dataclass
class Anchor:
    """Named target for internal links (a bookmark)."""

    name: str


@dataclass
class Placeholder:
    """Content the reader could not convert; writers show it visibly."""

    text: str


Inline = (
    Text | Emph | Strong | Strike | Underline | Subscript | Superscript | Code | Link | Image
    | LineBreak | Math | NoteRef | Anchor | Placeholder
)


# ---------------------------------------------------------------- blocks
@dataclass
class Paragraph:
    children: list[Inline]
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class Heading:
    level: int
    children: list[Inline]
    anchor: str = ""
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class ListItem:
    blocks: list[Block]
    checked: bool | None = None


@dataclass
class ListBlock:
    """Bulleted (``ordered=False``) or numbered list; ``start`` for numbered."""

    ordered: bool
    items: list[ListItem]
    start: int = 1
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


ALIGNMENTS = ("left", "center", "right")


@dataclass
class TableCell:
    blocks: list[Block]
    rowspan: int = 1
    colspan: int = 1
    header: bool = False
    # "left", "center" or "right" when the source says so (Markdown ``:---:``); "" otherwise.
    # Left out of the JSON when empty, so documents without it serialise as before.
    align: str = field(default="", metadata={"omit_empty": True})
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class TableRow:
    cells: list[TableCell]


@dataclass
class Table:
    """Table; the first ``header_rows`` rows form the header."""

    rows: list[TableRow]
    header_rows: int = 0
    caption: list[Inline] = field(default_factory=list)
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class CodeBlock:
    text: str
    language: str = ""
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class BlockQuote:
    blocks: list[Block]
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class HorizontalRule:
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class MathBlock:
    tex: str
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


@dataclass
class RawHtml:
    """HTML passed through by the Markdown reader; writers may drop it."""

    html: str
    prov: list[Location] = field(default_factory=list, compare=False, repr=False,
                                  metadata=_PROV)


Block = (
    Paragraph | Heading | ListBlock | Table | CodeBlock | BlockQuote | HorizontalRule | MathBlock
    | RawHtml
)


@dataclass
class Resource:
    """A binary asset, such as an image, referenced from the body."""

    data: bytes
    mime: str


@dataclass
class Document:
    """One converted document: body, notes, metadata, assets and warnings."""

    blocks: list[Block] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[Block]] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    furniture: list[Block] = field(default_factory=list)  # headers/footers/comments when asked
    # page number (from 1) -> (width, height) in points of the page as its boxes are given
    # (``PageBox``): set by the PDF reader, for the pages it read
    pages: dict[int, tuple[float, float]] = field(default_factory=dict)

    # facts about how the document was read that are no problem ("converted by LibreOffice",
    # "OCR read page 1 (mean confidence 95%)"): the answer's ``notes``, apart from warnings
    read_notes: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        """Record a warning once; warnings reach the caller in the response."""
        if message not in self.warnings:
            self.warnings.append(message)

    def note(self, message: str) -> None:
        """Record a note once: a fact about the reading, not a problem (``notes`` of the
        response, shown apart from the warnings)."""
        if message not in self.read_notes:
            self.read_notes.append(message)


# ---------------------------------------------------------------- helpers
_NODE_TYPES: dict[str, type] = {}
for _cls in (
    Text, Emph, Strong, Strike, Underline, Subscript, Superscript, Code, Link, Image, LineBreak,
    Math, NoteRef, Anchor, Placeholder, Paragraph, Heading, ListItem, ListBlock, TableCell,
    TableRow, Table, CodeBlock, BlockQuote, HorizontalRule, MathBlock, RawHtml,
):
    _NODE_TYPES[_cls.__name__] = _cls


Node = Inline | Block | ListItem | TableRow | TableCell

# the list-valued fields of each node type, in field order (``Table``: rows, then caption),
# and which of them hold inlines or blocks: what :func:`walk` follows and the maps rewrite
_LISTS: dict[type, tuple[str, ...]] = {
    cls: names for cls in _NODE_TYPES.values()
    if (names := tuple(f.name for f in fields(cls) if str(f.type).startswith("list[")
                       and not f.metadata.get("locations")))
}
_INLINE_LISTS: dict[type, tuple[str, ...]] = {
    cls: names for cls in _NODE_TYPES.values()
    if (names := tuple(f.name for f in fields(cls) if str(f.type) == "list[Inline]"))
}
_BLOCK_LISTS: dict[type, tuple[str, ...]] = {
    cls: names for cls in _NODE_TYPES.values()
    if (names := tuple(f.name for f in fields(cls) if str(f.type) == "list[Block]"))
}


def _children(node: Node) -> Iterator[Node]:
    return chain.from_iterable(getattr(node, name) for name in _LISTS.get(type(node), ()))


def walk(nodes: Iterable[Node]) -> Iterator[Node]:
    """Every node in and below ``nodes``, depth first and in document order: blocks, list
    items, table rows and cells (then the caption), inlines.

    Why one walk: readers and writers that look for nodes anywhere (images, anchors,
    headings, raw HTML) each had their own recursion, with different ideas of where nodes
    can be (captions, notes). This one has no recursion limit, and a node's children are
    looked up only after the caller is done with the node, so the caller may replace them."""
    stack: list[Iterator[Node]] = [iter(nodes)]
    while stack:
        for node in stack[-1]:
            yield node
            stack.append(_children(node))
            break
        else:
            stack.pop()


def document_blocks(doc: Document) -> list[list[Block]]:
    """The block lists of a document: body, each note (in note order), furniture."""
    return [doc.blocks, *doc.notes.values(), doc.furniture]


def walk_document(doc: Document) -> Iterator[Node]:
    """:func:`walk` over the body, the notes and the furniture of ``doc``."""
    return walk(chain.from_iterable(document_blocks(doc)))


def _replace_each(items: list[Any], fn: Callable[[Any], list[Any] | None]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        replaced = fn(item)
        out.extend([item] if replaced is None else replaced)
    return out


def _roots(where: Document | list[Block]) -> list[list[Block]]:
    return document_blocks(where) if isinstance(where, Document) else [where]


def _map_inline_list(items: list[Inline], fn: Callable[[Inline], list[Inline] | None]
                     ) -> list[Inline]:
    """``items`` with ``fn`` applied to every inline at any depth, in document order (a
    node's children before its next sibling), without recursion."""
    out: list[Inline] = []
    # frames: (inlines to go, where they go, whether fn is still to be applied to them)
    frames: list[tuple[Iterator[Inline], list[Inline], bool]] = [(iter(items), out, True)]
    while frames:
        todo, dest, mapping = frames[-1]
        item = next(todo, None)
        if item is None:
            frames.pop()
        elif mapping:
            replaced = fn(item)
            frames.append((iter([item] if replaced is None else replaced), dest, False))
        else:
            dest.append(item)
            for name in _INLINE_LISTS.get(type(item), ()):
                kids: list[Inline] = []
                frames.append((iter(getattr(item, name)), kids, True))
                setattr(item, name, kids)
    return out


def map_inlines(where: Document | list[Block],
                fn: Callable[[Inline], list[Inline] | None]) -> None:
    """Replace, in place, every inline anywhere in ``where`` (a document: body, notes and
    furniture; or a block list) by ``fn(inline)``: a list of inlines (empty to drop it) or
    ``None`` to keep it. ``fn`` sees the inlines in document order (a node before its
    children, its children before its next sibling); the children of inlines it returns
    pass through ``fn`` too."""
    def parts(node: Node) -> Iterator[Node | tuple[Node, str]]:
        """The node's lists in field order: a block list's nodes, an inline list whole."""
        inline = _INLINE_LISTS.get(type(node), ())
        for name in _LISTS.get(type(node), ()):
            if name in inline:
                yield node, name
            else:
                yield from getattr(node, name)

    # the walk of :func:`walk`, but an inline list is mapped whole where the walk reaches it
    stack: list[Iterator[Node | tuple[Node, str]]] = [chain.from_iterable(_roots(where))]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, tuple):
            node, name = item
            setattr(node, name, _map_inline_list(getattr(node, name), fn))
        else:
            stack.append(parts(item))


def map_blocks(where: Document | list[Block], fn: Callable[[Block], list[Block] | None]
               ) -> None:
    """Replace, in place, every block anywhere in ``where`` (top level, list items, quotes,
    table cells; a document's notes and furniture too) by ``fn(block)``: a list of blocks
    (empty to drop it) or ``None`` to keep it. Blocks ``fn`` returns are not passed to
    ``fn`` again, but the blocks inside them are."""
    for blocks in _roots(where):
        blocks[:] = _replace_each(blocks, fn)
        for node in walk(blocks):
            for name in _BLOCK_LISTS.get(type(node), ()):
                setattr(node, name, _replace_each(getattr(node, name), fn))


def plain_text(nodes: Iterable[Node]) -> str:
    """Concatenated visible text of inlines or blocks (for ids, alt text, tests)."""
    out: list[str] = []
    for node in walk(nodes):
        if isinstance(node, (Text, Code, Placeholder, CodeBlock)):
            out.append(node.text)
        elif isinstance(node, Math):
            out.append(node.tex)
        elif isinstance(node, LineBreak):
            out.append("\n")
        elif isinstance(node, Image):
            out.append(node.alt)
    return "".join(out)


def to_dict(node: Any) -> Any:
    """Serialise a model node (or list of nodes) to JSON-ready data with a ``type`` tag."""
    if isinstance(node, list):
        return [to_dict(n) for n in node]
    if is_dataclass(node) and not isinstance(node, type):
        data: dict[str, Any] = {"type": type(node).__name__}
        for f in fields(node):
            value = getattr(node, f.name)
            if f.metadata.get("omit_empty") and not value:
                continue
            if f.metadata.get("locations"):
                data[f.name] = [location_to_dict(loc) for loc in value]
                continue
            data[f.name] = to_dict(value)
        return data
    return node


def from_dict(data: Any) -> Any:
    """Inverse of :func:`to_dict` for body nodes."""
    if isinstance(data, list):
        return [from_dict(d) for d in data]
    if isinstance(data, dict) and "type" in data:
        cls = _NODE_TYPES[data["type"]]
        kwargs = {k: [location_from_dict(loc) for loc in v] if k == "prov" else from_dict(v)
                  for k, v in data.items() if k != "type"}
        return cls(**kwargs)
    return data
