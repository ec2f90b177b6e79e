"""HTML writer: structure checked with lxml, and no way for a document to inject script."""

from __future__ import annotations

import re

from lxml import html as lxml_html

from render_pool.engine.html.render import html_body, sanitize_html
from render_pool.engine.html.writer import write_html
from render_pool.engine.model import (
    Anchor,
    Document,
    Heading,
    Image,
    Link,
    ListBlock,
    ListItem,
    RawHtml,
    Resource,
    Text,
)
from render_pool.engine.options import WriterOptions
from render_pool.engine.url_safety import is_safe_url
from tests.model_samples import PNG, P, full_document


def body(doc: Document, resolve=None):
    return lxml_html.fragment_fromstring(html_body(doc, resolve), create_parent="div")


def test_headings_get_unique_ids():
    root = body(full_document())
    heads = [(h.tag, h.get("id"), h.text_content()) for h in root.xpath("//h1|//h2|//h3|//h4")]
    assert heads == [("h1", "main-title", "Main Title"), ("h2", "lists-anchor", "Lists"),
                     ("h2", "tables", "Tables"), ("h3", "code", "Code"), ("h4", "lists", "Lists")]
    doc = Document([Heading(2, [Text("Intro")]), Heading(2, [Text("Intro")]),
                    Heading(2, [Text("Intro")], anchor="intro"), Heading(1, [Text("!!!")])])
    ids = [h.get("id") for h in body(doc).xpath("//h1|//h2")]
    assert ids[2] == "intro" and len(set(ids)) == 4 and all(ids)


def test_inline_formatting_elements():
    root = body(full_document())
    p = root.findall("p")[0]
    assert [e.tag for e in p] == ["em", "strong", "del", "u", "sub", "sup", "code"]
    assert p.find("code").text == "a`b"


def test_lists_with_start_nesting_and_checkboxes():
    root = body(full_document())
    ul = root.find("ul")
    items = ul.findall("li")
    assert len(items) == 4
    nested = items[1].find("ol")
    assert nested.get("start") == "3" and [li.text for li in nested.findall("li")] == [
        "sub one", "sub two"]
    box_done = items[2].find("input")
    box_todo = items[3].find("input")
    assert box_done.get("type") == "checkbox" and box_done.get("checked") is not None
    assert box_todo.get("checked") is None and box_todo.get("disabled") is not None
    assert root.find("ol").get("start") == "5"


def test_table_structure_spans_and_caption():
    root = body(full_document())
    table = root.findall("table")[0]
    assert table.findtext("caption") == "Table 1: sample"
    head = table.find("thead")
    assert [th.get("colspan") for th in head.iter("th")] == [None, "2"]
    rows = table.find("tbody").findall("tr")
    assert rows[0].find("td").get("rowspan") == "2"
    assert rows[0].findall("td")[1].text == "a|b"
    assert rows[1].findall("td")[1].find("br") is not None
    rich = root.findall("table")[1]
    assert rich.find(".//td/ul") is not None and rich.find(".//td/table") is not None
    assert [p.text for p in rich.findall(".//td/p")] == ["para 1", "para 2"]


def test_code_quote_hr_math_placeholder():
    root = body(full_document())
    code = root.find(".//pre/code")
    assert code.get("class") == "language-python" and code.text == "print('```')\nx = 1"
    assert len(root.find("blockquote").findall("p")) == 2
    assert root.find("hr") is not None
    inline = root.xpath('//span[@class="math inline"]')[0].text
    assert inline == "\\(a^2+b^2\\)"
    assert root.xpath('//div[@class="math display"]')[0].text == "\\[\\int_0^1 x\\,dx\\]"
    assert root.xpath('//span[@class="math display"]')[0].text == "\\[E=mc^2\\]"
    assert root.xpath('//span[@class="placeholder"]')[0].text == "[unsupported: SmartArt]"
    assert root.xpath('//a[@id="bm1"]') and root.xpath('//a[@href="#bm1"]')


def test_footnotes_link_both_ways():
    root = body(full_document())
    refs = root.xpath('//sup[@class="footnote-ref"]/a')
    assert [(a.get("href"), a.get("id"), a.text) for a in refs] == [
        ("#fn-1", "fnref-1", "1"), ("#fn-2", "fnref-2", "2")]
    section = root.xpath('//section[@class="footnotes"]')[0]
    assert section is root[-1]
    notes = section.findall("ol/li")
    assert [li.get("id") for li in notes] == ["fn-1", "fn-2"]
    assert notes[0].xpath('.//a[@class="footnote-back"]/@href') == ["#fnref-1"]
    assert "First note with" in notes[0].text_content()


def test_images_resolve_and_keep_alt():
    doc = Document([P(Image("k", alt="dot", width_px=10))],
                   resources={"k": Resource(PNG, "image/png")})
    img = body(doc).find(".//img")
    assert img.get("src").startswith("data:image/png;base64,") and img.get("alt") == "dot"
    assert img.get("width") == "10"
    img = body(doc, lambda s: f"https://cdn.test/{s}").find(".//img")
    assert img.get("src") == "https://cdn.test/k"


EVIL = "<script>alert(1)</script>"


def _assert_inert(page: str) -> None:
    root = lxml_html.document_fromstring(page)
    assert not root.xpath("//script|//iframe|//object|//embed")
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), (el.tag, name)
            if name in ("href", "src"):
                cleaned = re.sub(r"[\x00-\x20]", "", value).lower()
                assert not cleaned.startswith(("javascript:", "vbscript:", "data:text")), value


def test_no_script_injection():
    doc = Document(
        blocks=[
            Heading(1, [Text(EVIL)], anchor='x" onclick="alert(1)'),
            P(EVIL, Link([Text("click")], "javascript:alert(1)")),
            P(Link([Text("a")], "JaVaScRiPt:alert(1)"), Link([Text("b")], "java\tscript:x"),
              Link([Text("c")], " vbscript:x"), Link([Text("d")], "data:text/html,<script>"),
              Link([Text("t")], "https://ok.test/", title='" onmouseover="alert(1)')),
            P(Image("javascript:alert(1)", alt='"><script>alert(1)</script>'),
              Image("data:image/svg+xml,<svg onload=alert(1)>")),
            ListBlock(False, [ListItem([P(EVIL)])]),
            RawHtml('<p onclick="alert(1)">ok <a href="javascript:x">l</a>'
                    '<img src=x onerror=alert(1)><script>bad()</script><style>*{}</style>'
                    '<iframe src="https://evil.test"></iframe><b style="x">bold</b></p>'),
            P(Anchor('"><script>alert(1)</script>')),
        ],
        meta={"title": "</title><script>alert(1)</script>"},
        notes={"n": [P(EVIL)]},
    )
    page = write_html(doc, options=WriterOptions(css_text="</style><script>alert(1)</script>"))
    _assert_inert(page)
    root = lxml_html.document_fromstring(page)
    assert root.findtext(".//title") == "</title><script>alert(1)</script>"
    assert root.find(".//h1").text_content() == EVIL
    hrefs = root.xpath("//a/@href")
    assert "https://ok.test/" in hrefs and not any("script" in h.lower() for h in hrefs)
    assert root.xpath('//span[@class="unsafe-link"]')[0].text == "click"
    assert root.xpath("//b")[0].text == "bold" and root.xpath("//b")[0].get("style") is None
    ok_link = root.xpath('//a[@href="https://ok.test/"]')[0]
    assert ok_link.get("title") == '" onmouseover="alert(1)'


def test_url_check():
    assert is_safe_url("https://a.test/x") and is_safe_url("#frag") and is_safe_url("rel/p.png")
    assert is_safe_url("mailto:a@b.test")
    assert not is_safe_url("javascript:alert(1)") and not is_safe_url(" \tjavascript:x")
    assert not is_safe_url("data:text/html,x")
    assert is_safe_url("data:image/png;base64,AAAA", image=True)
    assert not is_safe_url("data:image/svg+xml,<svg>", image=True)
    assert sanitize_html("<em>x</em><script>y</script>") == "<em>x</em>"


def test_write_html_page():
    page = write_html(full_document())
    assert page.startswith("<!DOCTYPE html>")
    root = lxml_html.document_fromstring(page)
    assert root.xpath("//meta/@charset") == ["utf-8"]
    assert root.findtext(".//title") == "Sample Document"
    assert root.xpath('//meta[@name="author"]/@content') == ["Tester"]
    assert "font" in root.findtext(".//style")
    assert root.find(".//body/h1").get("id") == "main-title"
    # no metadata title: the first heading; explicit title wins
    doc = Document([P("x"), Heading(2, [Text("First head")])])
    assert lxml_html.document_fromstring(write_html(doc)).findtext(".//title") == "First head"
    titled = write_html(doc, options=WriterOptions(title="Given", css_text="h2 { color: red }"))
    root = lxml_html.document_fromstring(titled)
    assert root.findtext(".//title") == "Given"
    assert root.findtext(".//style").rstrip().endswith("h2 { color: red }")
    assert "<title>Document</title>" in write_html(Document())
