"""The DOCX reader's path for a table cell of one paragraph of one plain run
(``DocxReader._cell_blocks``): most cells of a report.

That path must give what :meth:`DocxReader.blocks` gives for the cell: the document model,
the Markdown and the JSON of a table of every cell shape below are compared with the
reader's output when the path is switched off. And it must be taken: a table of plain cells
reads none of them through ``blocks``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn

from render_pool.engine.docx.reader import DocxReader, read_docx
from render_pool.engine.jobs import convert_document
from render_pool.engine.model import Block, Document

# one cell each: (paragraph style, text); the text is written as one run without properties
CELLS: dict[str, tuple[str | None, str]] = {
    "plain": (None, "A plain cell."),
    "edges": (None, "  spaces at the edges "),
    "tab": (None, "a\ttab"),  # python-docx writes a tab as w:tab: not a lone run
    "blank": (None, "   "),
    "tab only": (None, "\t"),
    "checkbox": (None, "\u2610 a task"),
    "lone box": (None, "\u2610"),
    "styled": ("Body Text", "A styled cell."),
    "heading": ("Heading 2", "A heading"),
    "title": ("Title", "The title"),
    "quote": ("Quote", "Quoted words."),
    "bullet": ("List Bullet", "An item"),
    "number": ("List Number", "A numbered item"),
    "code style": ("Source Code", "x = f(1);"),
    "mono style": ("Mono Body", "plain words in a typewriter face"),
}
# the cells of other shapes, which the path must leave to ``blocks``
OTHERS = ("no cell properties", "two paragraphs", "run properties", "two runs", "bookmark")


def _cell_xml(kind: str) -> str:
    """A cell's paragraph XML for a shape of :data:`OTHERS` (beside the first)."""
    run = '<w:r><w:t xml:space="preserve">words</w:t></w:r>'
    if kind == "two paragraphs":
        return f"<w:p>{run}</w:p><w:p>{run}</w:p>"
    if kind == "run properties":
        return "<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r></w:p>"
    if kind == "two runs":
        return f"<w:p>{run}{run}</w:p>"
    return f'<w:p><w:bookmarkStart w:id="1" w:name="mark"/>{run}</w:p>'


def _document(cells: list[str]) -> bytes:
    """A DOCX whose one table has a cell per shape of ``cells``, with a paragraph after it
    (lists, quotes and code join across cells only if the path got them wrong)."""
    document = docx.Document()
    code = document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    code.font.name = "Courier New"
    mono = document.styles.add_style("Mono Body", WD_STYLE_TYPE.PARAGRAPH)
    mono.font.name = "Consolas"
    table = document.add_table(rows=2, cols=len(cells))
    for cell, shape in zip(table.rows[1].cells, cells, strict=True):
        tc = cell._tc
        if shape in CELLS:
            style, text = CELLS[shape]
            paragraph = cell.paragraphs[0]
            if style is not None:
                paragraph.style = document.styles[style]
            paragraph.add_run(text)
            continue
        tc.remove(tc.find(qn("w:p")))
        if shape == "no cell properties":
            tc.remove(tc.find(qn("w:tcPr")))
            tc.append(parse_xml(f'<w:p {nsdecls("w")}><w:r><w:t>bare</w:t></w:r></w:p>'))
            continue
        holder = parse_xml(f'<w:tc {nsdecls("w")}>{_cell_xml(shape)}</w:tc>')
        for child in list(holder):
            tc.append(child)
    document.add_paragraph("After the table.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _model(doc: Document) -> tuple[object, ...]:
    """What a comparison of two readings looks at: blocks (with their locations), notes and
    metadata."""
    return (repr(doc.blocks), [b.prov for b in doc.blocks], doc.notes, doc.meta, doc.warnings)


def _both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[object, object]]:
    """(with the path, without it) for the model, the Markdown and the JSON of ``data``."""
    fast_doc = read_docx(data)
    fast_md = convert_document(data, "markdown")
    fast_json = convert_document(data, "json").content
    with monkeypatch.context() as patch:
        patch.setattr(DocxReader, "_cell_blocks", DocxReader.blocks)  # the path switched off
        slow_doc = read_docx(data)
        slow_md = convert_document(data, "markdown")
        slow_json = convert_document(data, "json").content
    yield _model(fast_doc), _model(slow_doc)
    yield (fast_md.content, fast_md.warnings), (slow_md.content, slow_md.warnings)
    yield fast_json, slow_json


@pytest.mark.parametrize("shape", sorted(CELLS) + list(OTHERS))
def test_each_cell_reads_as_blocks_reads_it(shape: str, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    data = _document([shape])
    for fast, slow in _both(data, monkeypatch):
        assert fast == slow


def test_all_cells_together_read_as_blocks_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _document(sorted(CELLS) + list(OTHERS))
    for fast, slow in _both(data, monkeypatch):
        assert fast == slow


def test_plain_cells_do_not_go_through_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the body is read by ``blocks`` when every cell is plain (empty ones included:
    python-docx writes an empty paragraph in each cell of the first row), and the cells'
    text is still there."""
    data = _document(["plain", "styled"])
    containers: list[str] = []
    blocks = DocxReader.blocks

    def spy(self: DocxReader, container: object) -> list[Block]:
        containers.append(getattr(container, "tag", "").rpartition("}")[2])
        return blocks(self, container)

    monkeypatch.setattr(DocxReader, "blocks", spy)
    markdown = convert_document(data, "markdown").content
    assert containers.count("tc") == 2  # the first row's empty cells only
    assert "| A plain cell. | A styled cell. |" in markdown
