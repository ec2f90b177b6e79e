"""The DOCX reader's path for a paragraph whose only content is one run of text without
properties (``DocxReader._lone_text_entry``): most table cells, list items and headings.

That path must give what the general paths give (``simple_inlines`` for a paragraph, the
inline walk and ``_heading`` for a heading): the document model and the Markdown of every
shape below are compared with the reader's output when the path is switched off. And it must
be taken: a cell or heading of one plain run builds no ``Pieces`` and walks no inlines.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from render_pool.engine.docx import reader as reader_module
from render_pool.engine.docx import simple_inlines
from render_pool.engine.docx.reader import DocxReader, read_docx
from render_pool.engine.jobs import convert_document
from render_pool.engine.model import Document

# one paragraph each: (style, text); the text is written as one run without properties
SHAPES: dict[str, tuple[str | None, str]] = {
    "plain": (None, "A plain paragraph."),
    "edges": (None, "  spaces and a tab\tat the edges\t "),
    "blank": (None, "   "),
    "tab only": (None, "\t"),
    "checkbox": (None, "\u2610 a task"),
    "checked box": (None, "\u2612  done"),
    "lone box": (None, "\u2610"),
    "heading": ("Heading 2", "A heading"),
    "heading edges": ("Heading 1", " \tIntro\t "),
    "blank heading": ("Heading 3", "  "),
    "title": ("Title", "The title"),
    "quote": ("Quote", "Quoted words."),
    "bullet": ("List Bullet", "An item"),
    "number": ("List Number", "A numbered item"),
    "code style": ("Source Code", "x = f(1);"),
    "mono style": ("Mono Body", "plain words in a typewriter face"),
    "mono code": ("Mono Body", "if (x) { y(); }"),
}


def _document(shapes: list[str]) -> bytes:
    """A DOCX with one paragraph per shape and a table of the same texts, each written as
    one run of text without properties (python-docx writes ``add_paragraph(text)`` so)."""
    document = docx.Document()
    code = document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    code.font.name = "Courier New"
    mono = document.styles.add_style("Mono Body", WD_STYLE_TYPE.PARAGRAPH)
    mono.font.name = "Consolas"
    for shape in shapes:
        style, text = SHAPES[shape]
        document.add_paragraph(text, style=style)
    table = document.add_table(rows=1, cols=len(shapes))
    for cell, shape in zip(table.rows[0].cells, shapes, strict=True):
        cell.paragraphs[0].add_run(SHAPES[shape][1])
    numbered = document.add_paragraph("A heading with direct numbering", style="Heading 2")
    numbered._p.get_or_add_pPr().append(parse_xml(
        f'<w:numPr {nsdecls("w")}><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _without_lone_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the lone-text path off: every paragraph takes the general paths."""
    monkeypatch.setattr(reader_module, "_lone_text", lambda run: None)


def _both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, object]]:
    """(with the path, without it) for the model, the Markdown and the JSON of ``data``."""
    fast_doc = read_docx(data)
    fast_md = convert_document(data, "markdown")
    fast_json = convert_document(data, "json").content
    with monkeypatch.context() as patch:
        _without_lone_path(patch)
        slow_doc = read_docx(data)
        slow_md = convert_document(data, "markdown")
        slow_json = convert_document(data, "json").content
    yield _model(fast_doc), _model(slow_doc)
    yield (fast_md.content, fast_md.warnings), (slow_md.content, slow_md.warnings)
    yield fast_json, slow_json


def _model(doc: Document) -> tuple[object, ...]:
    """What a comparison of two readings looks at: blocks (with their locations), notes and
    metadata."""
    return (repr(doc.blocks), [b.prov for b in doc.blocks], doc.notes, doc.meta, doc.warnings)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_reads_as_the_general_paths_read_it(
        shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _document([shape])
    for fast, slow in _both(data, monkeypatch):
        assert fast == slow


def test_all_shapes_together_read_as_the_general_paths_read_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists, quotes and code lines join across paragraphs: all shapes in one document."""
    data = _document(sorted(SHAPES))
    for fast, slow in _both(data, monkeypatch):
        assert fast == slow


def test_cells_and_headings_of_one_plain_run_take_the_lone_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the one-pass collector nor the inline walk sees a paragraph of one plain
    run (a heading or a cell), and its output is still there."""
    data = _document(["plain", "heading", "bullet"])
    seen: list[str] = []
    collect, inlines = simple_inlines.collect, DocxReader._inlines

    def spy_collect(reader: object, kids: list[object]) -> object:
        seen.append("collect")
        return collect(reader, kids)  # type: ignore[arg-type]

    def spy_inlines(self: DocxReader, *args: object, **kwargs: object) -> None:
        seen.append("inlines")
        inlines(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(simple_inlines, "collect", spy_collect)
    monkeypatch.setattr(DocxReader, "_inlines", spy_inlines)
    markdown = convert_document(data, "markdown").content
    assert seen == []
    assert "## A heading" in markdown and "- An item" in markdown
    assert "| A plain paragraph. | A heading | An item |" in markdown
