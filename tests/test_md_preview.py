"""``POST /md/preview`` over HTTP: the browser app's live preview is the service's own Markdown
reader and HTML writer, made in the pool, script-free, loading nothing; hostile bodies get
the v2 failures."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from render_pool.engine import registry
from render_pool.engine.common.images import resolver_for
from tests.conftest import post_form
from tornado_app.app import make_app

GOLDEN = Path(__file__).parent / "golden"
# Markdown of the golden set with tables, lists, code, math and footnotes, and no images
GOLDEN_MARKDOWN = ["docx__docling__word_tables.docx.md", "docx__docling__docx_lists.docx.md",
                   "docx__docling__docx_code_blocks.docx.md",
                   "docx__docling__equations.docx.md", "docx__mammoth__footnotes.docx.md",
                   "pdf__code_and_formula.pdf.md"]
PNG_DATA_URI = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlE"
                "QVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


def writer_body(markdown: str) -> str:
    """What ``export=html`` writes for ``markdown`` (images embedded), without the page."""
    doc = registry.read(markdown.encode("utf-8"), kind="markdown")
    page = registry.write("html", doc, resolve_image=resolver_for(doc, "embed"))
    return page.split("<body>\n", 1)[1].rsplit("</body>", 1)[0]


async def preview(api, markdown: str) -> dict:
    reply = await api.call("POST", "/md/preview", {"markdown": markdown})
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


def failure(reply, code: int) -> str:
    assert reply.status == 200 and reply.body["code"] == code, reply.body
    assert reply.body["data"] is None
    return reply.body["msg"]


@pytest.mark.slow
@pytest.mark.parametrize("name", GOLDEN_MARKDOWN)
async def test_preview_is_what_the_html_writer_writes(api, name):
    markdown = (GOLDEN / name).read_text(encoding="utf-8")
    data = await preview(api, markdown)
    assert data["html"] == writer_body(markdown)
    assert data["html"].strip() and "<body" not in data["html"]


@pytest.mark.slow
async def test_preview_renders_tables_headings_and_data_images(api):
    data = await preview(api, f"# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![dot]({PNG_DATA_URI})\n")
    html = data["html"]
    assert '<h1 id="title">Title</h1>' in html
    assert "<th>a</th>" in html and "<td>2</td>" in html
    assert f'<img src="{PNG_DATA_URI}" alt="dot">' in html
    assert data["warnings"] == []


@pytest.mark.slow
async def test_preview_loads_no_remote_image(api):
    data = await preview(api, "![logo](https://example.com/logo.png)\n\n"
                              '<p><img src="http://127.0.0.1:9/x.png" alt="raw"></p>\n')
    html = data["html"]
    assert "<img" not in html
    assert ('<span class="placeholder">[image logo: https://example.com/logo.png, '
            "not loaded in the preview]</span>") in html
    assert any("127.0.0.1:9/x.png" in w for w in data["warnings"])


@pytest.mark.slow
async def test_preview_of_hostile_markdown_is_script_free(api):
    hostile = ("<script>window.pwned = 1</script>\n\n"
               '<img src="x" onerror="window.pwned = 2">\n\n'
               "[click](javascript:window.pwned=3)\n\n"
               '<a href="javascript:alert(1)" onclick="alert(2)">a</a>\n\n'
               '<div><iframe src="https://example.com"></iframe><svg onload="alert(3)"></svg>'
               "<style>body{display:none}</style></div>\n")
    html = (await preview(api, hostile))["html"].lower()
    for marker in ("<script", "onerror", "onclick", "onload", "javascript:", "<iframe", "<svg",
                   "<style"):
        assert marker not in html, (marker, html)


@pytest.mark.slow
async def test_malformed_and_mistyped_bodies_are_40001(api):
    headers = {"Content-Type": "application/json"}
    for raw in (b"", b"{", b"[1]", b'"text"', b"\xff\xfe", b"[" * 100 + b"]" * 100):
        failure(await api.call("POST", "/md/preview", raw=raw, headers=headers), 40001)
    for body in ({}, {"markdown": 3}, {"markdown": None}, {"markdown": ["# a"]}):
        assert "must be a string" in failure(await api.call("POST", "/md/preview", body), 40001)
    msg = failure(await api.call("POST", "/md/preview", {"markdown": "# a", "css_name": "x"}),
                  40001)
    assert "css_name" in msg
    lone_surrogate = b'{"markdown": "a\\ud800b"}'
    failure(await api.call("POST", "/md/preview", raw=lone_surrogate, headers=headers), 40001)
    # a form is not the preview's body
    failure(await post_form(api, "/md/preview", {"markdown": "# a"}), 40001)


@pytest.mark.slow
async def test_markdown_past_the_limit_is_41301(api, docs_services):
    docs_services.settings = dataclasses.replace(docs_services.settings, max_markdown_bytes=1000)
    failure(await api.call("POST", "/md/preview", {"markdown": "é" * 501}), 41301)
    assert (await preview(api, "é" * 500))["html"] == "<p>" + "é" * 500 + "</p>\n"
    # a body past six times the limit is not kept at all
    huge = json.dumps({"markdown": "x" * 8000}).encode()
    failure(await api.call("POST", "/md/preview", raw=huge,
                           headers={"Content-Type": "application/json"}), 41301)


@pytest.mark.slow
async def test_costly_markdown_is_refused_before_parsing(api):
    msg = failure(await api.call("POST", "/md/preview", {"markdown": "[a](b)" * 100}), 40003)
    assert re.search(r"link openers .* the limit is \d+", msg)


@pytest.mark.slow
async def test_preview_needs_a_caller(api):
    reply = await api.call("POST", "/md/preview", {"markdown": "# a"}, anon=True)
    assert reply.status == 401 and reply.body["code"] == 40101
