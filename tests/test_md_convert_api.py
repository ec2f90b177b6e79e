"""``POST /md/convert`` over HTTP: Markdown to PDF (real Chromium) and DOCX."""

from __future__ import annotations

import dataclasses
import io
import json
import urllib.parse

import docx
import pypdfium2 as pdfium
import pytest

from tests.conftest import post_form
from tests.local_http import LocalServer, body, hang
from tests.pdf_fixtures import tiny_png
from tornado_app.app import make_app

SAMPLE = """# Release notes

Intro paragraph with **bold** text and 中文字符.

## Install

1. Download
2. Run

| Name | Value |
|------|-------|
| a    | 1     |

## Usage

```python
print("hi")
```
"""


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


def _pdf_pages(data: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(data)
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _fail(reply, code):
    assert reply.status == 200 and reply.body["code"] == code, reply.body
    return reply.body["msg"]


async def test_markdown_text_to_pdf_with_cover_toc_header_footer(api):
    server = LocalServer({"/logo.png": body(tiny_png(), "image/png")})
    try:
        reply = await post_form(api, "/md/convert", {
            "markdown_text": SAMPLE, "target": "pdf", "toc": "true", "header_text": "ACME Docs",
            "footer_text": "Confidential", "product_name": "Widget", "product_version": "2.1",
            "document_name": "Release notes", "document_version": "7",
            "copyright_text": "(c) ACME", "logo_url": server.url("/logo.png"),
            "filename": "notes", "css_name": "github",
        }, {"cover_file": ("cover.png", tiny_png())})
    finally:
        server.close()
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "application/pdf"
    assert 'filename="notes.pdf"' in reply.headers["Content-Disposition"]
    raw = reply.raw
    pages = _pdf_pages(raw)
    squeeze = ["".join(p.split()) for p in pages]
    assert "WIDGET" in squeeze[0].upper() and "Releasenotes7" in squeeze[0]
    assert "ACMEDocs" not in squeeze[0]  # no header on the cover
    assert any("Contents" in p for p in squeeze[1:3])
    assert all("ACMEDocs" in p for p in squeeze[1:])
    assert any("中文字符" in p for p in squeeze)
    pdf = pdfium.PdfDocument(raw)
    titles = [item.get_title() for item in pdf.get_toc()]
    pdf.close()
    assert {"Release notes", "Install", "Usage"} <= set(titles)


async def test_markdown_file_to_docx(api):
    reply = await post_form(api, "/md/convert", {"target": "docx", "toc": "true",
                                                 "header_text": "Head"},
                            {"md_file": ("guide.md", SAMPLE.encode())})
    assert reply.status == 200
    assert reply.headers["Content-Type"].endswith("wordprocessingml.document")
    assert 'filename="guide.docx"' in reply.headers["Content-Disposition"]
    raw = reply.raw
    d = docx.Document(io.BytesIO(raw))
    styles = [(p.style.name, p.text) for p in d.paragraphs]
    assert ("Heading 1", "Release notes") in styles and ("Heading 2", "Install") in styles
    assert len(d.tables) == 1 and d.tables[0].cell(1, 1).text == "1"
    assert "Head" in d.sections[0].header.paragraphs[0].text
    assert "TOC" in d.element.xml


async def test_markdown_url_and_unicode_filename(api):
    server = LocalServer({"/doc.md": body(SAMPLE.encode(), "text/markdown")})
    try:
        reply = await post_form(api, "/md/convert", {
            "markdown_url": server.url("/doc.md"), "target": "docx", "filename": "说明 v1"})
    finally:
        server.close()
    assert reply.status == 200
    disposition = reply.headers["Content-Disposition"]
    assert "filename*=UTF-8''" + urllib.parse.quote("说明 v1.docx", safe="") in disposition
    assert disposition.isascii()


async def test_input_errors(api):
    _fail(await post_form(api, "/md/convert", {"target": "pdf"}), 40001)
    _fail(await post_form(api, "/md/convert", {"target": "pdf", "markdown_text": "# a",
                                               "markdown_url": "http://example.com/a.md"}), 40001)
    _fail(await post_form(api, "/md/convert", {"markdown_text": "# a"}), 40001)
    _fail(await post_form(api, "/md/convert", {"markdown_text": "# a", "target": "odt"}), 40002)
    _fail(await post_form(api, "/md/convert", {"markdown_text": "# a", "target": "pdf",
                                               "css_name": "neon"}), 40002)
    _fail(await post_form(api, "/md/convert", {"markdown_text": "# a", "target": "pdf"},
                          {"cover_file": ("c.png", b"not an image")}), 40002)
    _fail(await post_form(api, "/md/convert", {"markdown_text": "# a", "target": "pdf",
                                               "save": "true"}), 50201)


async def test_twenty_megabyte_markdown_is_refused(api):
    _fail(await post_form(api, "/md/convert", {"markdown_text": "a" * (20 << 20),
                                               "target": "pdf"}), 41301)
    assert (await api.call("GET", "/health")).status == 200


async def test_private_file_and_hanging_images_are_left_out_with_warnings(api, docs_services,
                                                                         monkeypatch):
    server = LocalServer({"/slow.png": hang(5)})
    monkeypatch.setattr(docs_services, "settings", dataclasses.replace(
        docs_services.settings, fetch_timeout_seconds=1.0, allow_private_urls=True))
    md = (f"# Pictures\n\n![slow]({server.url('/slow.png')})\n\n![local](file:///etc/passwd)\n\n"
          "![rel](images/a.png)\n\nText after.\n")
    try:
        reply = await post_form(api, "/md/convert", {"markdown_text": md, "target": "pdf"})
    finally:
        server.close()
    assert reply.status == 200 and reply.headers["Content-Type"] == "application/pdf"
    warnings = json.loads(urllib.parse.unquote(reply.headers["X-Conversion-Warnings"]))
    text = " ".join(warnings)
    assert "did not answer in time" in text and "file:///etc/passwd" in text
    assert "relative image paths" in text
    raw = reply.raw
    assert "Textafter." in "".join("".join(_pdf_pages(raw)).split())


async def test_private_image_refused_by_default(api, docs_services, monkeypatch):
    monkeypatch.setattr(docs_services, "settings",
                        dataclasses.replace(docs_services.settings, allow_private_urls=False))
    reply = await post_form(api, "/md/convert", {
        "markdown_text": "# X\n\n![a](http://10.0.0.1/a.png)\n", "target": "docx"})
    assert reply.status == 200
    warnings = json.loads(urllib.parse.unquote(reply.headers["X-Conversion-Warnings"]))
    assert any("10.0.0.1" in w and "refused" in w for w in warnings)


async def test_themes_endpoint(api):
    reply = await api.call("GET", "/md/themes")
    assert reply.status == 200 and {"default", "github", "academic"} <= set(reply.body["themes"])
