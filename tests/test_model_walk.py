"""The one tree walk of the model (``walk``, ``map_inlines``, ``map_blocks``) and the note
markers both PDF readers place with it."""

from __future__ import annotations

from render_pool.engine.model import (
    BlockQuote,
    Document,
    Emph,
    Heading,
    Image,
    Link,
    ListBlock,
    ListItem,
    NoteRef,
    Paragraph,
    RawHtml,
    Table,
    TableCell,
    TableRow,
    Text,
    map_blocks,
    map_inlines,
    plain_text,
    walk,
    walk_document,
)
from render_pool.engine.pdf.notes import MARK, place_notes
from render_pool.engine.pdf.tagged import _place_notes


def _doc() -> Document:
    table = Table([TableRow([TableCell([Paragraph([Text("cell "), Image("c.png", "C")])])])],
                  caption=[Text("cap "), Image("t.png", "T")])
    return Document(
        blocks=[Heading(1, [Text("H")]), ListBlock(False, [ListItem([Paragraph(
            [Emph([Link([Image("l.png", "L")], "https://x.test")])])])]), table,
                BlockQuote([RawHtml("<p>raw</p>")])],
        notes={"n": [Paragraph([Image("n.png", "N")])]},
        furniture=[Paragraph([Image("f.png", "F")])])


def test_walk_finds_nodes_everywhere_in_document_order():
    doc = _doc()
    assert [n.src for n in walk_document(doc) if isinstance(n, Image)] == [
        "l.png", "c.png", "t.png", "n.png", "f.png"]  # the caption after the rows
    deep = Paragraph([Text("x")])
    for _ in range(5000):  # no recursion limit
        deep = Paragraph([Emph(deep.children)])
    assert plain_text([deep]) == "x" and sum(1 for _ in walk([deep])) == 5002


def test_map_inlines_reaches_captions_cells_notes_and_furniture_in_order():
    doc = _doc()
    seen: list[str] = []

    def alt_for_image(node):
        if isinstance(node, Image):
            seen.append(node.src)
            return [Text(node.alt)]
        return None

    map_inlines(doc, alt_for_image)
    assert seen == ["l.png", "c.png", "t.png", "n.png", "f.png"]
    assert not [n for n in walk_document(doc) if isinstance(n, Image)]
    assert plain_text(doc.blocks) == "HLcell Ccap T"


def test_map_blocks_replaces_nested_blocks_once():
    doc = _doc()
    map_blocks(doc, lambda b: [Paragraph([Text("was raw")]), RawHtml("kept")]
               if isinstance(b, RawHtml) and b.html.startswith("<p>") else None)
    quote = doc.blocks[3]
    assert isinstance(quote, BlockQuote)
    assert [type(b).__name__ for b in quote.blocks] == ["Paragraph", "RawHtml"]


def test_note_markers_take_their_ids_in_document_order_in_both_pdf_readers():
    """A marker inside emphasis comes before the one after it, in the tagged reader (ids
    in marker order) as in the untagged one (ids by number)."""
    inl = [Text(f"a{MARK}"), Emph([Text(f"b{MARK}")]), Text(f"c{MARK}d")]
    out = _place_notes(inl, ["p1-1", "p1-2", "p1-3"])
    refs = [n.note_id for n in walk(out) if isinstance(n, NoteRef)]
    assert refs == ["p1-1", "p1-2", "p1-3"] and plain_text(out) == "abcd"
    blocks = [Paragraph([Text(f"a{MARK}1"), Emph([Text(f"b{MARK}1")]), Text(f"c{MARK}17x")])]
    place_notes(blocks, ["p1-1", "p2-1"])
    refs = [n.note_id for n in walk(blocks) if isinstance(n, NoteRef)]
    assert refs == ["p1-1", "p2-1"] and plain_text(blocks) == "abc17x"  # no note 17: text
