"""Hand-built sample Documents for the writer tests (every node type of the model).

No reader is involved, so the writer tests do not depend on the readers.
"""

from __future__ import annotations

import zlib

from render_pool.engine.model import (
    Anchor,
    BlockQuote,
    Code,
    CodeBlock,
    Document,
    Emph,
    Heading,
    HorizontalRule,
    Image,
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
)


def _png_1x1() -> bytes:
    """A valid 1x1 transparent PNG (every chunk with its CRC)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data).to_bytes(4, "big")
        return len(data).to_bytes(4, "big") + kind + data + crc

    header = (1).to_bytes(4, "big") * 2 + b"\x08\x06\x00\x00\x00"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00\x00")) + chunk(b"IEND", b""))


PNG = _png_1x1()

NASTY = [
    "*not emphasis* _nor this_ **nor** ~~this~~",
    "# not a heading",
    "1. not a list",
    "2) nor this",
    "- not a bullet",
    "+ nor a plus",
    "> not a quote",
    "[not a link](http://x) ![nor image](y)",
    "<b>not html</b> &amp; &copy; &#65;",
    "back\\slash \\* and `tick` and | pipe and $5 and $x$",
    "===",
    "---",
    "a_b_c snake_case 2*3*4",
    "[^1] not a footnote",
    "    four spaces",
    "trailing hash #",
]


def P(*children) -> Paragraph:
    """Paragraph from strings (Text) and inline nodes."""
    return Paragraph([Text(c) if isinstance(c, str) else c for c in children])


def cell(*children, rowspan: int = 1, colspan: int = 1, header: bool = False) -> TableCell:
    """Cell holding one paragraph (strings become Text)."""
    return TableCell([P(*children)] if children else [], rowspan, colspan, header)


def simple_table() -> Table:
    """3x3 table, one header row, a colspan and a rowspan, a pipe and code in cells."""
    return Table(
        rows=[
            TableRow([cell("Name", header=True), cell("Value", header=True, colspan=2)]),
            TableRow([cell("alpha", rowspan=2), cell("a|b"), cell(Code("x|y"))]),
            TableRow([cell(Strong([Text("bold")])), cell("two", LineBreak(), "lines")]),
        ],
        header_rows=1,
        caption=[Text("Table 1: sample")],
    )


def rich_table() -> Table:
    """Table with a list and a nested table in cells (cannot be a pipe table)."""
    inner = Table(rows=[TableRow([cell("inner 1"), cell("inner 2")])])
    return Table(
        rows=[
            TableRow([cell("H1", header=True), cell("H2", header=True)]),
            TableRow([
                TableCell([ListBlock(False, [ListItem([P("item a")]), ListItem([P("item b")])])]),
                TableCell([inner]),
            ]),
            TableRow([TableCell([P("para 1"), P("para 2")]), cell()]),
        ],
        header_rows=1,
    )


def full_document() -> Document:
    """A document using every block and inline type of the model."""
    nested = ListBlock(True, [ListItem([P("sub one")]), ListItem([P("sub two")])], start=3)
    doc = Document(
        blocks=[
            Heading(1, [Text("Main "), Emph([Text("Title")])], anchor=""),
            P("Plain ", Emph([Text("em")]), " ", Strong([Text("strong")]), " ",
              Strike([Text("gone")]), " ", Underline([Text("under")]), " H", Subscript([Text("2")]),
              "O x", Superscript([Text("2")]), " ", Code("a`b"), "."),
            P("Link ", Link([Text("site")], "https://example.com/a_b", 'say "hi"'), " and ",
              Image("img1", alt="a pic", title="pic title"), " and math ", Math("a^2+b^2"),
              " and display ", Math("E=mc^2", display=True), "."),
            P("Line one", LineBreak(), "line two", NoteRef("n1"), " more", NoteRef("n2")),
            Heading(2, [Text("Lists")], anchor="lists-anchor"),
            ListBlock(False, [
                ListItem([P("first")]),
                ListItem([P("second"), nested]),
                ListItem([P("done")], checked=True),
                ListItem([P("todo")], checked=False),
            ]),
            ListBlock(True, [ListItem([P("five")]), ListItem([P("six")])], start=5),
            Heading(2, [Text("Tables")]),
            simple_table(),
            rich_table(),
            Heading(3, [Text("Code")]),
            CodeBlock("print('```')\nx = 1\n", language="python"),
            BlockQuote([P("quoted ", Strong([Text("text")])), P("second para")]),
            HorizontalRule(),
            MathBlock("\\int_0^1 x\\,dx"),
            RawHtml("<div class=\"raw\">raw <b>html</b></div>"),
            P(Anchor("bm1"), "Bookmark here ", Placeholder("SmartArt"), " ",
              Link([Text("back")], "#bm1")),
            Heading(4, [Text("Lists")]),
        ],
        meta={"title": "Sample Document", "author": "Tester"},
        notes={
            "n1": [P("First note with ", Emph([Text("emphasis")]), ".")],
            "n2": [P("Second note."), P("Second paragraph.")],
        },
        resources={"img1": Resource(PNG, "image/png")},
        warnings=["sample warning"],
    )
    return doc
