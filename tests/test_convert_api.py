"""``POST /api/convert`` over HTTP: real engines in the real process pool."""

from __future__ import annotations

import base64
import dataclasses
import html as html_lib
import json
import re
import urllib.request
from pathlib import Path

import marko
import pypdfium2
import pytest

from tests.archive_fixtures import zip_of
from tests.conftest import post_form
from tests.docx_fixtures import build_feature_docx
from tests.local_http import LocalServer, body
from tests.pdf_fixtures import encrypted_pdf, scanned_pdf
from tornado_app.app import make_app

DATA = Path(__file__).parent / "data"


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


def _ok(reply):
    assert reply.status == 200, reply.body
    assert reply.body["code"] == 0 and reply.body["msg"] == "ok", reply.body
    return reply.body["data"]


def _fail(reply, code):
    assert reply.status == 200, reply.body
    assert reply.body["code"] == code, reply.body
    assert reply.body["data"] is None and reply.body["msg"]
    return reply.body["msg"]


async def test_docx_to_markdown_keeps_structure(api):
    data = _ok(await post_form(api, "/api/convert", {},
                               {"file": ("features.docx", build_feature_docx())}))
    assert data["media_type"] == "text/markdown; charset=utf-8"
    tree = marko.Markdown(extensions=["gfm"]).parse(data["content"])
    headings = [(c.level, c.children[0].children) for c in tree.children
                if c.get_type() == "Heading"]
    assert (1, "Introduction") in headings and (2, "Custom styled section") in headings
    assert "[the site](https://example.com/page)" in data["content"]
    assert "5. Five" in data["content"] and "[^1]: The footnote text." in data["content"]
    # images are placeholders by default in Markdown: alt text and name, no image bytes
    assert "data:image" not in data["content"]
    assert '![A tiny red dot](media/image1.png "Dot")' in data["content"]
    embedded = _ok(await post_form(api, "/api/convert", {"images": "embed"},
                                   {"file": ("features.docx", build_feature_docx())}))
    assert "data:image/png;base64," in embedded["content"]
    omitted = _ok(await post_form(api, "/api/convert", {"images": "omit"},
                                  {"file": ("features.docx", build_feature_docx())}))
    assert "![" not in omitted["content"] and "Introduction" in omitted["content"]


@pytest.mark.parametrize("export,media,probe", [
    ("html", "text/html; charset=utf-8", "<h1"),
    ("json", "application/json", '"schema"'),
    ("doctags", "text/plain; charset=utf-8", "<doctag>"),
])
async def test_every_export(api, export, media, probe):
    data = _ok(await post_form(api, "/api/convert", {"export": export},
                               {"file": ("f.docx", build_feature_docx())}))
    assert data["media_type"] == media and probe in data["content"]
    if export == "json":
        doc = json.loads(data["content"])
        assert any(b["type"] == "Heading" for b in doc["blocks"])


async def test_alt_engine(api):
    """``engine=alt_engine`` is honoured: its notes are a numbered list after a rule, linked
    as ``#note-N``, where the default engine writes Markdown footnotes."""
    alt = _ok(await post_form(api, "/api/convert", {"engine": "alt_engine"},
                              {"file": ("f.docx", build_feature_docx())}))["content"]
    default = _ok(await post_form(api, "/api/convert", {"engine": "word2markdown"},
                                  {"file": ("f.docx", build_feature_docx())}))["content"]
    assert alt.startswith("# Introduction") and "[the site](https://example.com/page)" in alt
    assert "](#note-1)" in alt and alt.rstrip().endswith("---\n\n1. The footnote text.")
    assert "[^1]" not in alt
    assert "[^1]: The footnote text." in default and "#note-1" not in default


async def test_pdf_to_markdown(api):
    pdf = (DATA / "pdf" / "multi_page.pdf").read_bytes()
    data = _ok(await post_form(api, "/api/convert", {}, {"file": ("multi_page.pdf", pdf)}))
    tree = marko.Markdown(extensions=["gfm"]).parse(data["content"])
    headings = {_plain(c) for c in tree.children if c.get_type() == "Heading"}
    assert {"Pre-Digital Era (19th - Early 20th Century)", "The Modern Era (1990s - Present)",
            "A Glimpse Into the Future"} <= headings, headings
    text = " ".join(data["content"].split())
    for page in pypdfium2.PdfDocument(pdf):  # every page's words reach the Markdown
        words = set(re.findall(r"[^\W\d_]{5,}", page.get_textpage().get_text_range()))
        missing = sorted(w for w in words if w not in text)
        assert words and len(missing) <= len(words) // 10, missing[:20]


def _plain(node) -> str:
    """The text of a parsed Markdown element."""
    children = getattr(node, "children", "")
    if isinstance(children, str):
        return children
    return "".join(_plain(c) for c in children)


async def test_source_url(api):
    server = LocalServer({"/doc.docx": body(build_feature_docx())})
    try:
        data = _ok(await post_form(api, "/api/convert",
                                   {"source_url": server.url("/doc.docx")}))
        assert "# Introduction" in data["content"]
    finally:
        server.close()


async def test_private_source_url_refused_unless_allowed(api, docs_services, monkeypatch):
    monkeypatch.setattr(docs_services, "settings",
                        dataclasses.replace(docs_services.settings, allow_private_urls=False))
    for url in ("http://127.0.0.1:9/x.docx", "http://169.254.169.254/latest", "file:///etc/passwd",
                "http://localhost/x.docx"):
        _fail(await post_form(api, "/api/convert", {"source_url": url}), 42201)


async def test_parameter_errors(api):
    docx_bytes = build_feature_docx()
    _fail(await post_form(api, "/api/convert", {}), 40001)
    _fail(await post_form(api, "/api/convert", {"source_url": "http://example.com/a.docx"},
                          {"file": ("a.docx", docx_bytes)}), 40001)
    _fail(await post_form(api, "/api/convert", {"export": "rtf"},
                          {"file": ("a.docx", docx_bytes)}), 40002)
    _fail(await post_form(api, "/api/convert", {"images": "inline"},
                          {"file": ("a.docx", docx_bytes)}), 40002)
    _fail(await post_form(api, "/api/convert", {"engine": "magic"},
                          {"file": ("a.docx", docx_bytes)}), 40002)
    _fail(await post_form(api, "/api/convert", {"save": "maybe"},
                          {"file": ("a.docx", docx_bytes)}), 40001)
    reply = await api.call("POST", "/api/convert", raw=b'{"file": 1}',
                           headers={"Content-Type": "application/json"})
    _fail(reply, 40001)


async def test_hostile_documents_get_codes_and_service_stays_up(api):
    bomb = zip_of({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<" + b"a" * (300 << 20)})
    cases = {
        "empty.docx": (b"", 40003),
        "corrupt.docx": (b"PK\x03\x04garbage-not-a-zip" * 10, 40003),
        "missing.docx": (zip_of({"[Content_Types].xml": b"<Types/>"}), 40003),
        "encrypted.pdf": (encrypted_pdf(), 40003),
        "scan.pdf": (scanned_pdf(), 40003),
        "notes.txt": (b"just some text", 40002),
        "legacy.doc": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, 40002),
        "bomb.docx": (bomb, 41301),
    }
    for name, (payload, code) in cases.items():
        msg = _fail(await post_form(api, "/api/convert", {}, {"file": (name, payload)}), code)
        assert "Traceback" not in msg, name
    assert (await api.call("GET", "/health")).status == 200


async def test_pdf_renamed_docx_is_read_by_content(api):
    pdf = (DATA / "pdf" / "multi_page.pdf").read_bytes()
    data = _ok(await post_form(api, "/api/convert", {}, {"file": ("looks-like.docx", pdf)}))
    assert "The Evolution of the Word Processor" in data["content"]
    assert "Christopher Latham Sholes" in data["content"]


async def test_upload_over_limit_is_refused_while_streaming(api, docs_services):
    assert docs_services.settings.max_upload_bytes == 50 << 20
    big = b"%PDF-1.7\n" + b"\0" * (80 << 20)
    _fail(await post_form(api, "/api/convert", {}, {"file": ("big.pdf", big)}), 41301)
    assert (await api.call("GET", "/health")).status == 200


async def test_save_without_storage(api):
    _fail(await post_form(api, "/api/convert", {"save": "true"},
                          {"file": ("a.docx", build_feature_docx())}), 50201)


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200
        return r.read()


_IMAGE_LINK = {
    "markdown": re.compile(r"!\[([^\]]*)\]\(([^)\s]+)"),
    "html": re.compile(r"<img src=\"([^\"]*)\"()"),
}


@pytest.mark.parametrize("engine,export", [("word2markdown", "markdown"),
                                           ("alt_engine", "markdown"), ("alt_engine", "html")])
async def test_saved_output_equals_inline_output(api, storage_services, engine, export):
    """``save=true`` stores exactly what ``save=false`` answers, except that each image is
    a link to its uploaded copy (same bytes) instead of a data URI."""
    docx_bytes = build_feature_docx()
    form = {"engine": engine, "export": export}
    inline = _ok(await post_form(api, "/api/convert", {**form, "images": "embed"},
                                 {"file": ("f.docx", docx_bytes)}))
    saved = _ok(await post_form(api, "/api/convert", {**form, "save": "true"},
                                {"file": ("f.docx", docx_bytes)}))
    stored = _download(saved["storage_presigned_url"]).decode("utf-8")
    assert saved["warnings"] == inline["warnings"]

    def links(text: str) -> list[str]:
        pattern = _IMAGE_LINK[export]
        return [html_lib.unescape(m.group(2) if export == "markdown" else m.group(1))
                for m in pattern.finditer(text)]

    inline_links, stored_links = links(inline["content"]), links(stored)
    assert inline_links and len(inline_links) == len(stored_links)
    assert all(u.startswith("data:image/") for u in inline_links)
    assert not [u for u in stored_links if "/assets/" not in u or u.startswith("data:")]
    for data_uri, url in zip(inline_links, stored_links, strict=True):
        assert _download(url) == base64.b64decode(data_uri.split(",", 1)[1])
    placeholder = "IMAGE"
    for u in inline_links:
        inline["content"] = inline["content"].replace(html_lib.escape(u), placeholder) \
            .replace(u, placeholder)
    for u in stored_links:
        stored = stored.replace(html_lib.escape(u), placeholder).replace(u, placeholder)
    assert stored == inline["content"]
