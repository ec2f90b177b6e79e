"""DocTags writer: Docling's DocTags vocabulary for a :class:`render_pool.engine.model.Document`.

The output follows what Docling itself writes (docling-core's DocTags serializer and its
ground truth): ``<doctag>`` root, one element per line, ``<title>``,
``<section_header_level_N>``, ``<text>``, ``<unordered_list>``/``<ordered_list>`` of
``<list_item>``, ``<otsl>`` tables (``<fcel> <ecel> <ched> <rhed> <lcel> <ucel> <xcel> <nl>``
and a trailing ``<caption>``), ``<picture>``, ``<code><_Language_>``, ``<formula>``,
``<footnote>``, ``<page_header>``, ``<checkbox_selected>``/``<checkbox_unselected>`` and
``<inline>`` groups where a paragraph mixes text with inline code or formulas.

Location tokens as Docling writes them: a block read from a PDF page (its ``prov`` holds a
``PageBox`` and ``Document.pages`` the page's size) gets ``<loc_x0><loc_top><loc_x1><loc_bottom>``
right after its opening tag, the box on a 0..499 grid of the page (each list item its own, a
table on ``<otsl>``), and ``<page_break>`` stands between the top-level blocks of two pages.

Differences from Docling's output, by necessity or choice:
- Inputs without page geometry (DOCX, slides, sheets) carry no location tokens and no page
  breaks.
- DocTags has no emphasis/link tags; formatted runs become plain text (Docling splits
  them into ``<text>`` parts of an ``<inline>`` group; we keep one ``<text>``).
- Text is written verbatim like Docling does (``&``, ``>`` and ``a < b`` stay as they
  are), except that a ``<`` followed by a letter, ``_`` or ``/`` becomes ``&lt;`` so that
  text can never be read as a tag.
- A level-1 heading that opens the document and is its only level-1 heading becomes
  ``<title>``, and the other headings then move up one level (``##`` is
  ``section_header_level_1``, as in Docling's Markdown); otherwise ``#`` is level 1.
- Footnotes become ``<footnote>[n] text</footnote>`` after the body, and a reference reads
  ``[n]`` in the text; furniture (headers/footers kept on request) becomes ``<page_header>``
  before the body. Horizontal rules are dropped; block quotes are flattened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree
from lxml import html as lxml_html

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.common.writing import NoteNumbering, placeholder_label, table_grid
from render_pool.engine.model import (
    Block,
    BlockQuote,
    Code,
    CodeBlock,
    Document,
    Heading,
    HorizontalRule,
    Image,
    Inline,
    LineBreak,
    ListBlock,
    ListItem,
    Math,
    MathBlock,
    NoteRef,
    PageBox,
    Paragraph,
    Placeholder,
    RawHtml,
    Table,
    TableCell,
    Text,
    plain_text,
    walk,
)
from render_pool.engine.provenance import first_page

__all__ = ["CODE_LANGUAGES", "write_doctags"]

# Docling's code language tokens (docling_core.types.doc.tokens._CodeLanguageToken)
CODE_LANGUAGES = [
    "Ada", "Awk", "Bash", "bc", "C", "C#", "C++", "CMake", "COBOL", "CSS", "Ceylon", "Clojure",
    "Crystal", "Cuda", "Cython", "D", "Dart", "dc", "Dockerfile", "Elixir", "Erlang", "FORTRAN",
    "Forth", "Go", "HTML", "Haskell", "Haxe", "Java", "JavaScript", "Julia", "Kotlin", "Lisp",
    "Lua", "Matlab", "MoonScript", "Nim", "OCaml", "ObjectiveC", "Octave", "PHP", "Pascal",
    "Perl", "Prolog", "Python", "Racket", "Ruby", "Rust", "SML", "SQL", "Scala", "Scheme",
    "Swift", "TypeScript", "unknown", "VisualBasic", "XML", "YAML",
]
_LANG_BY_KEY = {name.lower(): name for name in CODE_LANGUAGES}
_LANG_BY_KEY.update({
    "py": "Python", "python3": "Python", "js": "JavaScript", "jsx": "JavaScript",
    "node": "JavaScript", "ts": "TypeScript", "tsx": "TypeScript", "sh": "Bash", "shell": "Bash",
    "zsh": "Bash", "console": "Bash", "cpp": "C++", "cxx": "C++", "cc": "C++", "h": "C",
    "cs": "C#", "csharp": "C#", "yml": "YAML", "rb": "Ruby", "rs": "Rust", "kt": "Kotlin",
    "golang": "Go", "objc": "ObjectiveC", "objective-c": "ObjectiveC", "vb": "VisualBasic",
    "vbnet": "VisualBasic", "f90": "FORTRAN", "fortran": "FORTRAN", "cu": "Cuda",
    "ml": "OCaml", "hs": "Haskell", "pl": "Perl", "m": "Matlab", "xhtml": "HTML",
    "htm": "HTML", "svg": "XML", "postgresql": "SQL", "mysql": "SQL", "pas": "Pascal",
    "cobol": "COBOL", "docker": "Dockerfile", "scss": "CSS",
})


def code_language_token(language: str) -> str:
    """``<_Python_>`` etc. for a code block's language; ``<_unknown_>`` when not in the list."""
    name = _LANG_BY_KEY.get(language.strip().lower(), "unknown")
    return f"<_{name}_>"


_TAG_START = re.compile(r"<(?=/?[A-Za-z_])")


def _esc(text: str) -> str:
    """Text as Docling writes it (unescaped), except a ``<`` that would start a tag."""
    return _TAG_START.sub("&lt;", text)


def _wrap(tag: str, body: str) -> str:
    return f"<{tag}>{body}</{tag}>"


@dataclass
class _Seg:
    kind: str  # "text", "code", "formula", "picture"
    value: str = ""
    node: Image | None = None


LOC_GRID = 500  # Docling's location tokens: 0..499 across the page and down it


def location_tokens(box: tuple[float, float, float, float], width: float, height: float
                    ) -> str:
    """``<loc_x0><loc_y0><loc_x1><loc_y1>`` of a box (points, top-left origin) on a page of
    ``width`` x ``height`` points, as docling-core computes them."""
    def token(value: float, size: float) -> str:
        return f"<loc_{max(0, min(LOC_GRID - 1, round(LOC_GRID * value / size)))}>"

    x0, top, x1, bottom = box
    return (token(min(x0, x1), width) + token(min(top, bottom), height)
            + token(max(x0, x1), width) + token(max(top, bottom), height))


_FIRST_TAG = re.compile(r"^<[a-z_0-9]+>")


def _with_loc(element: str, loc: str) -> str:
    """``element`` with ``loc`` right after its opening tag."""
    m = _FIRST_TAG.match(element) if loc else None
    return element[:m.end()] + loc + element[m.end():] if m else element


class _DocTagsWriter:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.notes = NoteNumbering(doc)
        self.title_heading: int | None = None
        self.level_shift = 0
        h1 = [b for b in doc.blocks if isinstance(b, Heading) and b.level == 1]
        first = next((b for b in doc.blocks if not _is_empty_para(b)), None)
        if len(h1) == 1 and first is h1[0]:
            self.title_heading = id(h1[0])
            self.level_shift = 1

    # ------------------------------------------------------------- inlines
    def segments(self, nodes: list[Inline]) -> list[_Seg]:
        """Flatten inlines into text, code, formula and picture segments."""
        segs: list[_Seg] = []

        def add_text(s: str) -> None:
            if segs and segs[-1].kind == "text":
                segs[-1].value += s
            else:
                segs.append(_Seg("text", s))

        for n in walk(nodes):  # formatting and links: their children follow them
            if isinstance(n, Text):
                add_text(n.text)
            elif isinstance(n, Code):
                segs.append(_Seg("code", n.text))
            elif isinstance(n, Math):
                segs.append(_Seg("formula", n.tex))
            elif isinstance(n, Image):
                segs.append(_Seg("picture", node=n))
            elif isinstance(n, LineBreak):
                add_text("\n")
            elif isinstance(n, NoteRef):
                add_text(f"[{self.notes.number(n.note_id)}]")
            elif isinstance(n, Placeholder):
                add_text(placeholder_label(n.text))
        return segs

    def _group(self, segs: list[_Seg], tag: str | None) -> str:
        """One run of text/code/formula segments: plain text, or an ``<inline>`` group."""
        if all(s.kind == "text" for s in segs):
            text = _esc("".join(s.value for s in segs).strip())
            if not text:
                return ""
            return _wrap(tag, text) if tag else text
        parts = []
        for s in segs:
            if s.kind == "text":
                text = _esc(s.value.strip())
                if text:
                    parts.append(_wrap("text", text))
            elif s.kind == "code":
                parts.append(_wrap("code", "<_unknown_>" + _esc(s.value)))
            else:
                parts.append(_wrap("formula", _esc(s.value.strip())))
        group = _wrap("inline", "\n".join(parts) + "\n")
        # a paragraph *is* the inline group (as in Docling); titles, headers, checkboxes wrap it
        return _wrap(tag, group) if tag and tag != "text" else group

    def picture(self, image: Image) -> str:
        """``<picture>`` with the image title as caption (no classification, no location)."""
        caption = _wrap("caption", _esc(image.title.strip())) if image.title.strip() else ""
        return _wrap("picture", caption)

    def para_elements(self, nodes: list[Inline], tag: str | None) -> list[str]:
        """Elements for a paragraph-like run: text groups split by pictures."""
        out: list[str] = []
        run: list[_Seg] = []
        for seg in [*self.segments(nodes), _Seg("end")]:
            if seg.kind in ("picture", "end"):
                if run:
                    group = self._group(run, tag)
                    if group:
                        out.append(group)
                    run = []
                if seg.node is not None:
                    out.append(self.picture(seg.node))
            else:
                run.append(seg)
        return out

    # ------------------------------------------------------------- locations
    def loc(self, node: Block | None) -> str:
        """The location tokens of a block's first page box ("" when it has none)."""
        box = next((p for p in getattr(node, "prov", None) or [] if isinstance(p, PageBox)),
                   None)
        size = self.doc.pages.get(box.page) if box is not None else None
        if box is None or size is None or min(size) <= 0:
            return ""
        return location_tokens(box.bbox, *size)

    # ------------------------------------------------------------- blocks
    def blocks(self, blocks: list[Block]) -> list[str]:
        out: list[str] = []
        for b in blocks:
            out.extend(self.block(b))
        return out

    def block(self, node: Block) -> list[str]:
        if isinstance(node, (ListBlock, BlockQuote)):  # their items and blocks say
            return self._block(node)
        loc = self.loc(node)
        return [_with_loc(e, loc) for e in self._block(node)]

    def _block(self, node: Block) -> list[str]:
        if isinstance(node, Paragraph):
            return self.para_elements(node.children, "text")
        if isinstance(node, Heading):
            if id(node) == self.title_heading:
                tag = "title"
            else:
                tag = f"section_header_level_{max(1, min(node.level, 6) - self.level_shift)}"
            return [e for e in self.para_elements(node.children, tag)
                    if not e.startswith("<picture>")] or []
        if isinstance(node, ListBlock):
            return [self.list_block(node)] if node.items else []
        if isinstance(node, Table):
            return [self.table(node)]
        if isinstance(node, CodeBlock):
            text = node.text[:-1] if node.text.endswith("\n") else node.text
            return [_wrap("code", code_language_token(node.language) + _esc(text))]
        if isinstance(node, MathBlock):
            return [_wrap("formula", _esc(node.tex.strip()))] if node.tex.strip() else []
        if isinstance(node, BlockQuote):
            return self.blocks(node.blocks)
        if isinstance(node, RawHtml):
            text = _html_text(node.html)
            return [_wrap("text", _esc(text))] if text else []
        if isinstance(node, HorizontalRule):
            return []
        return []

    def list_block(self, node: ListBlock) -> str:
        parts: list[str] = []
        for item in node.items:
            loc = self.loc(item.blocks[0] if item.blocks else None)
            parts.extend(loc + p for p in self.list_item(item))
        tag = "ordered_list" if node.ordered else "unordered_list"
        return _wrap(tag, "\n".join(_wrap("list_item", p) for p in parts) + "\n")

    def list_item(self, item: ListItem) -> list[str]:
        """Parts of one item, each becoming a ``<list_item>`` (as Docling does for children)."""
        blocks = list(item.blocks)
        parts: list[str] = []
        first = blocks[0] if blocks else None
        if isinstance(first, Paragraph):
            blocks.pop(0)
            tag = None
            if item.checked is not None:
                tag = "checkbox_selected" if item.checked else "checkbox_unselected"
            parts.extend(self.para_elements(first.children, tag))
        parts.extend(self.blocks(blocks))
        return parts or [""]

    def cell_content(self, cell: TableCell) -> str:
        blocks = [b for b in cell.blocks if not _is_empty_para(b)]
        if len(blocks) == 1 and isinstance(blocks[0], Paragraph):
            return "".join(self.para_elements(blocks[0].children, None))
        return "\n".join(self.blocks(blocks))

    def table(self, node: Table) -> str:
        grid = table_grid(node)
        body = []
        contents: dict[int, str] = {}
        for r, row in enumerate(grid):
            for c, slot in enumerate(row):
                if slot is None:
                    body.append("<ecel>")
                    continue
                r0, c0, cell = slot
                if (r0, c0) != (r, c):
                    body.append("<lcel>" if r0 == r else "<ucel>" if c0 == c else "<xcel>")
                    continue
                if id(cell) not in contents:
                    contents[id(cell)] = self.cell_content(cell)
                text = contents[id(cell)]
                if not text:
                    body.append("<ecel>")
                elif r < node.header_rows:
                    body.append("<ched>" + text)
                elif cell.header:
                    body.append("<rhed>" + text)
                else:
                    body.append("<fcel>" + text)
            body.append("<nl>")
        caption = self.para_elements(node.caption, None) if node.caption else []
        cap = _wrap("caption", " ".join(e for e in caption if not e.startswith("<picture>")))
        return _wrap("otsl", "".join(body) + (cap if caption else ""))

    def footnotes(self) -> list[str]:
        def footnote(n: int, nid: str) -> str:
            body = self.text_of(self.doc.notes.get(nid, []))
            return _wrap("footnote", f"[{n}] {body}".strip())

        return self.notes.render_all(footnote)

    def text_of(self, blocks: list[Block]) -> str:
        """The text of ``blocks`` on one line, escaped, for an element that holds text only
        (a footnote, a page header): from the model, so text that looks like a tag stays."""
        parts: list[str] = []
        for n in walk(blocks):
            if isinstance(n, Text | Code | CodeBlock):
                parts.append(n.text)
            elif isinstance(n, Math | MathBlock):
                parts.append(f" {n.tex} ")
            elif isinstance(n, NoteRef):
                parts.append(f"[{self.notes.number(n.note_id)}]")
            elif isinstance(n, Placeholder):
                parts.append(placeholder_label(n.text))
            elif isinstance(n, Image):
                parts.append(f" {n.title} ")
            elif isinstance(n, RawHtml):
                parts.append(f" {_html_text(n.html)} ")
            elif not isinstance(n, Inline):  # a new block, item, row or cell: a space
                parts.append(" ")
            elif isinstance(n, LineBreak):
                parts.append(" ")
        return _esc(re.sub(r"\s+", " ", "".join(parts)).strip())


def _unquoted(blocks: list[Block]) -> list[Block]:
    """``blocks`` with block quotes replaced by their blocks (DocTags has no quotes)."""
    out: list[Block] = []
    for b in blocks:
        out.extend(_unquoted(b.blocks) if isinstance(b, BlockQuote) else [b])
    return out


def _html_text(raw: str) -> str:
    try:
        root = lxml_html.fragment_fromstring(raw, create_parent="div")
    except (etree.ParserError, ValueError):
        return raw.strip()
    for bad in root.xpath("//script|//style"):
        bad.drop_tree()
    return re.sub(r"\s+", " ", root.text_content()).strip()


def _is_empty_para(block: Block) -> bool:
    return isinstance(block, Paragraph) and not plain_text(block.children).strip() and not any(
        isinstance(c, (Image, Math, Code)) for c in block.children
    )


def write_doctags(doc: Document, resolve_image: ImageResolver | None = None) -> str:
    """Serialise ``doc`` as DocTags (Docling's vocabulary; location tokens and page breaks
    where the blocks were read from PDF pages).

    ``resolve_image`` is accepted for a uniform writer signature; DocTags does not carry
    image data, so it is not used.
    """
    del resolve_image
    w = _DocTagsWriter(doc)
    parts: list[str] = []
    for block in _unquoted(doc.furniture):  # one element per block, as in the body
        text = w.text_of([block])
        if text:
            parts.append(_wrap("page_header", text))
    page = None
    for block in doc.blocks:  # a page break where the next block starts on a later page
        first = first_page(block)
        if first is not None:
            if page is not None and first > page:
                parts.append("<page_break>")
            page = max(first, page or first)
        parts.extend(w.block(block))
    parts.extend(w.footnotes())
    return "<doctag>" + "\n".join(parts) + "\n</doctag>\n"
