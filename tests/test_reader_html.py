"""Lenient HTML reader: structure of the model built from HTML (alt_engine output, files)."""

from __future__ import annotations

import base64

from render_pool.engine.html.build import read_html
from render_pool.engine.model import (
    BlockQuote,
    Code,
    CodeBlock,
    Emph,
    Heading,
    Image,
    Link,
    ListBlock,
    Paragraph,
    Strong,
    Table,
    plain_text,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def test_headings_paragraphs_and_inlines():
    doc = read_html("<html><head><title>T</title></head><body><h2>Intro <em>now</em></h2>"
                    "<p>a <strong>b</strong> <i>c</i> <code>x()</code> "
                    '<a href="https://e.com" title="t">link</a></p></body></html>')
    h, p = doc.blocks
    assert isinstance(h, Heading) and h.level == 2 and h.anchor == "intro-now"
    assert isinstance(p, Paragraph)
    assert isinstance(p.children[1], Strong) and plain_text([p.children[1]]) == "b"
    assert isinstance(p.children[3], Emph) and Code("x()") in p.children
    link = next(n for n in p.children if isinstance(n, Link))
    assert link.target == "https://e.com" and link.title == "t"
    assert doc.meta["title"] == "T"


def test_nested_lists_start_and_checkboxes():
    doc = read_html('<ol start="4"><li>four<ul><li>sub</li></ul></li><li>five</li></ol>'
                    '<ul><li><input type="checkbox" checked> done</li>'
                    '<li><input type="checkbox"> todo</li></ul>')
    ol, ul = doc.blocks
    assert isinstance(ol, ListBlock) and ol.ordered and ol.start == 4
    assert isinstance(ol.items[0].blocks[1], ListBlock)
    assert plain_text(ol.items[0].blocks[1].items[0].blocks) == "sub"
    assert [i.checked for i in ul.items] == [True, False]
    assert plain_text(ul.items[0].blocks) == "done"


def test_table_with_spans_and_header():
    doc = read_html("<table><thead><tr><th>A</th><th>B</th></tr></thead><tbody>"
                    '<tr><td rowspan="2">x</td><td>y</td></tr><tr><td>z</td></tr>'
                    '<tr><td colspan="2">wide</td></tr></tbody></table>')
    (t,) = doc.blocks
    assert isinstance(t, Table) and t.header_rows == 1
    assert t.rows[1].cells[0].rowspan == 2
    assert t.rows[3].cells[0].colspan == 2
    assert all(c.header for c in t.rows[0].cells)


def test_data_uri_images_become_resources():
    doc = read_html(f'<p><img src="data:image/png;base64,{PNG}" alt="dot">'
                    f'<img src="data:image/png;base64,{PNG}" alt="again">'
                    '<img src="https://e.com/x.png" alt="remote"></p>')
    imgs = [n for n in doc.blocks[0].children if isinstance(n, Image)]
    assert imgs[0].src == imgs[1].src == "media/image1.png"
    assert doc.resources["media/image1.png"].mime == "image/png"
    assert imgs[2].src == "https://e.com/x.png"


def test_pre_blockquote_and_loose_text():
    doc = read_html('<div>loose <b>text</b><pre><code class="language-python">x = 1\n'
                    "</code></pre><blockquote><p>quoted</p></blockquote></div>")
    p, code, quote = doc.blocks
    assert plain_text([p]) == "loose text"
    assert isinstance(code, CodeBlock) and code.text == "x = 1" and code.language == "python"
    assert isinstance(quote, BlockQuote) and plain_text(quote.blocks) == "quoted"


def test_garbage_and_empty_input():
    assert read_html("").blocks == []
    doc = read_html("<p>unclosed <b>bold<script>alert(1)</script><p>next")
    assert "alert" not in plain_text(doc.blocks)
    assert "next" in plain_text(doc.blocks)


def test_mathml_with_a_tex_annotation_becomes_a_formula():
    """Docling and MathJax pages carry the TeX of a MathML formula in an annotation."""
    from render_pool.engine.model import Math, Placeholder

    doc = read_html('<p>Energy: <math display="inline"><mrow><mi>E</mi></mrow>'
                    '<annotation encoding="TeX">E=mc^2</annotation></math> and '
                    "<math><mi>x</mi></math></p>")
    (p,) = doc.blocks
    assert Math("E=mc^2") in p.children and Placeholder("x") in p.children
