"""A chunk holding a footnote's definition carries the pages and boxes of that footnote.

The bug: a chunk holding only a definition ("[^2]: ...", the note of a block in the chunk
before) had ``"pages": []`` and ``"prov": []``: the chunker took locations from the body
blocks only, never from ``Document.notes``. Now a note's unit takes the locations of the
note's own blocks as the reader recorded them, or, where the reader recorded none (the PDF
reader keeps no boxes for the notes it takes from a page's foot), those of the node citing
it. Documents are built here as the readers build them: no file, no process.
"""

from __future__ import annotations

from typing import Any

from render_pool.engine.chunks.writer import chunk_document
from render_pool.engine.model import (
    Block,
    Document,
    ListBlock,
    ListItem,
    Location,
    NoteRef,
    PageBox,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
    location_to_dict,
)
from render_pool.engine.options import WriterOptions

BUDGET = 40  # words: the citing paragraph and the note do not fit in one chunk
BODY = " ".join(f"body{i}" for i in range(30)) + " cites a note"
NOTE = "The White House, National Cybersecurity Strategy. " + " ".join(
    f"note{i}" for i in range(20)) + "."
CITING_BOX = PageBox(3, (25.0, 514.24, 291.77, 659.07))
NOTE_BOX = PageBox(4, (30.0, 700.5, 290.25, 730.0))


def _chunks(doc: Document) -> list[dict[str, Any]]:
    return chunk_document(doc, options=WriterOptions(chunk_tokens=BUDGET))


def _note_chunk(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The chunk opening with the note's definition, checked to hold nothing else."""
    [chunk] = [c for c in chunks if c["text"].startswith("[^1]: ")]
    assert "body0" not in chunk["text"], "the note must be in a chunk of its own"
    return chunk


def _citing(prov: list[Location]) -> Paragraph:
    return Paragraph([Text(BODY), NoteRef("p3-1"), Text(".")], prov=prov)


def _prov(*boxes: Location) -> list[dict[str, Any]]:
    return [location_to_dict(b) for b in boxes]


def test_a_note_alone_in_its_chunk_carries_the_box_the_reader_recorded_for_it() -> None:
    doc = Document([_citing([CITING_BOX])],
                   notes={"p3-1": [Paragraph([Text(NOTE)], prov=[NOTE_BOX])]})
    chunks = _chunks(doc)
    note = _note_chunk(chunks)
    assert note["pages"] == [4]
    assert note["prov"] == _prov(NOTE_BOX)
    assert note["blocks"] == [0]
    # the chunk of the citing paragraph is as before: its own page and box only
    assert chunks[0]["pages"] == [3] and chunks[0]["prov"] == _prov(CITING_BOX)


def test_a_note_of_several_blocks_carries_their_boxes_joined() -> None:
    first = PageBox(4, (30.0, 700.0, 290.0, 715.0))
    second = PageBox(4, (40.0, 716.0, 280.0, 731.0))
    doc = Document([_citing([CITING_BOX])],
                   notes={"p3-1": [Paragraph([Text(NOTE)], prov=[first]),
                                   Paragraph([Text("More.")], prov=[second])]})
    note = _note_chunk(_chunks(doc))
    assert note["pages"] == [4]
    assert note["prov"] == _prov(PageBox(4, (30.0, 700.0, 290.0, 731.0)))


def test_a_note_read_without_a_location_takes_that_of_the_block_citing_it() -> None:
    """The PDF reader's notes (``pdf/notes.py``) have no ``prov``: the case of the bug."""
    doc = Document([_citing([CITING_BOX])], notes={"p3-1": [Paragraph([Text(NOTE)])]})
    note = _note_chunk(_chunks(doc))
    assert note["pages"] == [3]
    assert note["prov"] == _prov(CITING_BOX)


def test_a_note_cited_from_a_page_spanning_block_takes_all_its_pages() -> None:
    """As block 175 of the Intel 5-level paging PDF: its body spans pages 21 and 22."""
    span: list[Location] = [PageBox(21, (143.5, 436.9, 529.5, 619.9)),
                            PageBox(22, (167.5, 94.9, 524.9, 145.9))]
    doc = Document([_citing(span)], notes={"p3-1": [Paragraph([Text(NOTE)])]})
    note = _note_chunk(_chunks(doc))
    assert note["pages"] == [21, 22]
    assert note["prov"] == _prov(*span)


def test_a_note_without_a_location_cited_deep_takes_the_innermost_location() -> None:
    item_box = PageBox(5, (50.0, 300.0, 400.0, 320.0))
    cell_box = PageBox(6, (60.0, 100.0, 200.0, 120.0))
    outer = PageBox(5, (40.0, 100.0, 500.0, 600.0))
    nested: list[Block] = [
        ListBlock(False, [ListItem([_citing([item_box])])], prov=[outer]),
        Table([TableRow([TableCell([Paragraph([Text("Head")])])]),
               TableRow([TableCell([Paragraph([Text(BODY), NoteRef("t-1")])],
                                   prov=[cell_box])])],
              header_rows=1, prov=[PageBox(6, (10.0, 10.0, 500.0, 700.0))]),
    ]
    doc = Document(nested, notes={"p3-1": [Paragraph([Text(NOTE)])],
                                  "t-1": [Paragraph([Text("Cell " + NOTE)])]})
    chunks = _chunks(doc)
    note = _note_chunk(chunks)
    assert note["prov"] == _prov(item_box)
    [cell_note] = [c for c in chunks if c["text"].startswith("[^2]: Cell ")]
    assert cell_note["pages"] == [6] and cell_note["prov"] == _prov(cell_box)


def test_no_chunk_of_a_paged_document_with_notes_is_left_without_pages() -> None:
    blocks: list[Block] = []
    notes: dict[str, list[Block]] = {}
    for page in range(1, 6):
        nid = f"p{page}-1"
        blocks.append(Paragraph([Text(BODY), NoteRef(nid)],
                                prov=[PageBox(page, (20.0, 100.0, 500.0, 300.0))]))
        notes[nid] = [Paragraph([Text(NOTE)])]
    chunks = _chunks(Document(blocks, notes=notes))
    assert len(chunks) == 10
    assert all(c["pages"] and c["prov"] for c in chunks), [c["text"][:20] for c in chunks
                                                           if not c["pages"]]
    assert [c["pages"] for c in chunks] == [[p] for p in range(1, 6) for _ in (0, 1)]


def test_where_a_note_is_cited_locates_no_chunk_that_holds_located_text() -> None:
    """The citing block's box stands in for a note read without one only in a chunk with
    nothing else located: beside located text it would widen the chunk's box over a block
    the chunk does not hold."""
    after_box = PageBox(4, (20.0, 90.0, 300.0, 110.0))
    after = Paragraph([Text("A short closing paragraph.")], prov=[after_box])
    doc = Document([_citing([CITING_BOX]), after], notes={"p3-1": [Paragraph([Text(NOTE)])]})
    [note] = [c for c in _chunks(doc) if c["text"].startswith("[^1]: ")]
    assert note["text"].endswith("A short closing paragraph.")
    assert note["pages"] == [4] and note["prov"] == _prov(after_box)
    # a note the reader located is located in its chunk, whatever else it holds
    doc.notes["p3-1"][0].prov = [NOTE_BOX]
    [note] = [c for c in _chunks(doc) if c["text"].startswith("[^1]: ")]
    assert note["pages"] == [4]
    assert note["prov"] == _prov(PageBox(4, (20.0, 90.0, 300.0, 730.0)))
