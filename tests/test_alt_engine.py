"""alt_engine: DOCX -> semantic HTML -> the HTML reader -> the model, and its safety on bad
input; both engines keep hostile link targets out of every export."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import lxml.html
import marko
import pytest

from render_pool.engine.docx.alt import docx_to_html
from render_pool.engine.html.build import read_html
from render_pool.engine.jobs import EXPORTS, ConvertOptions, convert_document
from render_pool.engine.model import Heading, Image, ListBlock, Table
from render_pool.engine.url_safety import is_safe_link
from render_pool.errors import CorruptDocument, UnsupportedFormat
from tests.docx_fixtures import (
    HOSTILE_TARGETS,
    body_words,
    build_feature_docx,
    build_hostile_links_docx,
)

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
    images = _nodes(doc.blocks, Image)
    assert images and {n.alt for n in images} >= {"A tiny red dot"}
    assert all(n.src in doc.resources for n in images)


def _nodes(node: object, cls: type) -> list:
    """Every ``cls`` node anywhere under ``node`` (blocks nest inlines nest blocks)."""
    if isinstance(node, list):
        return [n for child in node for n in _nodes(child, cls)]
    if not dataclasses.is_dataclass(node):
        return []
    own = [node] if isinstance(node, cls) else []
    return own + [n for f in dataclasses.fields(node) for n in _nodes(getattr(node, f.name), cls)]


def _markdown(data: bytes) -> tuple[str, list[str]]:
    out = convert_document(data, "markdown", "alt_engine")
    return out.content, out.warnings


def test_markdown_output():
    md, _ = _markdown(build_feature_docx())
    assert "# Introduction" in md
    assert "[the site](https://example.com/page)" in md
    assert "**bold**" in md
    assert "- Bullet one" in md
    assert "1. Number one" in md
    assert "The footnote text." in md


@pytest.mark.parametrize("path", sorted((DATA / "docling").glob("*.docx"))
                         + sorted((DATA / "mammoth").glob("*.docx")), ids=lambda p: p.name)
def test_corpus_never_crashes(path):
    """Every corpus file converts, and most words of its body text reach the Markdown."""
    md, warnings = _markdown(path.read_bytes())
    assert all(isinstance(w, str) and w for w in warnings)
    words = body_words(path.read_bytes())
    missing = sorted(w for w in words if w not in md)
    assert len(missing) <= len(words) // 10, missing[:20]


def test_bad_input_raises_service_errors():
    with pytest.raises(CorruptDocument):
        docx_to_html(b"")
    with pytest.raises(UnsupportedFormat):
        docx_to_html(b"%PDF-1.4 fake")
    with pytest.raises(CorruptDocument):
        convert_document(b"PK\x03\x04broken", "markdown", "alt_engine")


def test_images_inside_table_cells_are_kept():
    from pathlib import Path

    data = (Path(__file__).parent / "data" / "docx" / "docling" / "docx_rich_cells.docx").read_bytes()
    markdown = convert_document(data, "markdown", "alt_engine",
                                ConvertOptions(images="embed")).content
    html, _ = docx_to_html(data)
    assert html.count("<img") == 2
    assert markdown.count("](data:image/") == 2


def _live(url: str) -> bool:
    """What a browser or Word would run: the scheme with blanks and controls removed."""
    squeezed = "".join(ch for ch in url if ord(ch) > 0x20 and ch != "\x7f").lower()
    return squeezed.startswith(("javascript:", "vbscript:", "data:text"))


def _hrefs_of_html(html: str) -> list[str]:
    root = lxml.html.document_fromstring(html)
    return [v for el in root.iter() if isinstance(el.tag, str)
            for k, v in el.attrib.items() if k in ("href", "src", "action", "formaction")]


@pytest.mark.parametrize("engine", ["word2markdown", "alt_engine"])
@pytest.mark.parametrize("export", list(EXPORTS))
def test_hostile_link_targets_are_never_live(engine, export):
    """No export of either engine carries a live ``javascript:``/``vbscript:``/``data:``
    link, the link texts stay, and a safe ``https`` link stays a link."""
    content = convert_document(build_hostile_links_docx(), export, engine).content
    assert all(f"hostile-{i}" in content for i in range(len(HOSTILE_TARGETS)))
    if export == "html":
        targets = _hrefs_of_html(content)
    elif export == "markdown":
        targets = _hrefs_of_html(marko.Markdown(extensions=["gfm"]).convert(content))
    elif export == "json":
        targets = [n["target"] for n in _json_nodes(json.loads(content), "Link")]
    elif export == "chunks":  # each chunk's text is Markdown
        text = "\n\n".join(chunk["text"] for chunk in json.loads(content))
        targets = _hrefs_of_html(marko.Markdown(extensions=["gfm"]).convert(text))
    else:  # DocTags carries no link targets at all
        targets = []
        assert "script:" not in content.lower() and "data:text" not in content.lower()
    assert targets or export == "doctags"
    assert not [t for t in targets if _live(t)], targets
    if export != "doctags":
        assert "https://example.com/ok" in targets


def _json_nodes(data: object, kind: str) -> list[dict]:
    if isinstance(data, list):
        return [n for d in data for n in _json_nodes(d, kind)]
    if isinstance(data, dict):
        own = [data] if data.get("type") == kind else []
        return own + [n for v in data.values() for n in _json_nodes(v, kind)]
    return []


@pytest.mark.parametrize("url", [*HOSTILE_TARGETS, "java\x01script:x", "\x00javascript:x",
                                 "javascript\x7f:x", "jav&#x09;ascript:x", "tel:123",
                                 "file:///etc/passwd", "ftp://host/x"])
def test_allow_list_refuses_every_other_scheme(url):
    assert not is_safe_link(url) or url.startswith("jav&")  # "jav&..." is a relative path
    assert not _live(url) or not is_safe_link(url)


@pytest.mark.parametrize("url", ["https://a.test/x", "http://a.test", "MAILTO:a@b.test",
                                 "#frag", "rel/p.html", "/abs", "//host/p", "?q=1"])
def test_allow_list_keeps_ordinary_links(url):
    assert is_safe_link(url)
