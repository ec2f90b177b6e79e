"""alt_engine: DOCX -> semantic HTML -> Markdown, and its safety on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from render_pool.alt_engine import docx_to_html, docx_to_markdown
from render_pool.errors import CorruptDocument, UnsupportedFormat
from render_pool.model import Heading, Image, ListBlock, Table
from render_pool.readers.html import read_html
from tests.docx_fixtures import build_feature_docx

DATA = Path(__file__).parent / "data" / "docx"


@pytest.fixture(scope="module")
def feature_html():
    return docx_to_html(build_feature_docx())


def test_html_structure(feature_html):
    html, warnings = feature_html
    assert "<h1>Introduction</h1>" in html
    assert "<h2>Custom styled section</h2>" in html
    assert '<a href="https://example.com/page">the site</a>' in html
    assert "<strong>bold</strong>" in html and "<em>italic</em>" in html
    assert 'colspan="2"' in html and 'rowspan="2"' in html
    assert 'src="data:image/png;base64,' in html and 'alt="A tiny red dot"' in html
    assert "deleted" not in html  # tracked deletion dropped
    assert warnings == []


def test_html_reads_back_into_model(feature_html):
    doc = read_html(feature_html[0])
    assert [b.level for b in doc.blocks if isinstance(b, Heading)][:2] == [1, 2]
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert any(isinstance(b, ListBlock) for b in lists[0].items[0].blocks)  # nesting kept
    assert any(b.ordered for b in lists)
    assert any(isinstance(b, Table) for b in doc.blocks)
    assert any(r.mime == "image/png" for r in doc.resources.values())
    assert all(not isinstance(n, Image) or n.src in doc.resources for n in doc.blocks)


def test_markdown_output():
    md, _ = docx_to_markdown(build_feature_docx())
    assert "# Introduction" in md
    assert "[the site](https://example.com/page)" in md
    assert "**bold**" in md
    assert "- Bullet one" in md
    assert "1. Number one" in md
    assert "The footnote text." in md


@pytest.mark.parametrize("path", sorted((DATA / "docling").glob("*.docx"))
                         + sorted((DATA / "mammoth").glob("*.docx")), ids=lambda p: p.name)
def test_corpus_never_crashes(path):
    md, warnings = docx_to_markdown(path.read_bytes())
    assert isinstance(md, str) and isinstance(warnings, list)


def test_bad_input_raises_service_errors():
    with pytest.raises(CorruptDocument):
        docx_to_html(b"")
    with pytest.raises(UnsupportedFormat):
        docx_to_markdown(b"%PDF-1.4 fake")
    with pytest.raises(CorruptDocument):
        docx_to_markdown(b"PK\x03\x04broken")


def test_images_inside_table_cells_are_kept():
    from pathlib import Path

    data = (Path(__file__).parent / "data" / "docx" / "docling" / "docx_rich_cells.docx").read_bytes()
    markdown, _ = docx_to_markdown(data)
    html, _ = docx_to_html(data)
    assert html.count("<img") == 2
    assert markdown.count("](data:image/") == 2
