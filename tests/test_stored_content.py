"""Stored content never runs script on the storage origin (issue 30, item 3): every path that
writes objects (convert with ``save=true`` and its images, ``/md/convert``, archives, staged
archives run as jobs, folders) stores SVG, HTML and anything unknown, also an SVG named
``.png``, as an ``application/octet-stream`` attachment, checked by fetching each stored
object's link from the real SeaweedFS; the download proxy adds ``nosniff``. And the one
decision (:func:`store.stored_content.stored_form`) on its own, case by case."""

from __future__ import annotations

import base64
import dataclasses
import io
import re
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import docx
import pytest

from store.stored_content import OPAQUE, StoredForm, attachment, stored_form
from tests.archive_fixtures import tgz_of, zip_of
from tests.conftest import DOCS_CALLER_COMPANY, docs_caller_company, post_form
from tests.docx_fixtures import PNG_1PX
from tests.waiting import eventually
from tornado_app.app import make_app

SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">'
       b"<script>alert(document.domain)</script><rect width=\"4\" height=\"4\"/></svg>")
HTML = b"<!doctype html><html><body><script>alert(document.domain)</script></body></html>"
SVG_URI = "data:image/svg+xml;base64," + base64.b64encode(SVG).decode()
PNG_URI = "data:image/png;base64," + base64.b64encode(PNG_1PX).decode()
ACTIVE_TYPES = ("image/svg+xml", "text/html", "application/xhtml+xml", "text/xml",
                "application/xml", "application/javascript", "text/javascript")


# --------------------------------------------------------------------------- the decision


@pytest.mark.parametrize("name,declared,head", [
    ("v.svg", None, SVG),
    ("image1.svg", "image/svg+xml", SVG),
    ("image1.png", "image/svg+xml", SVG),        # declared type says SVG
    ("image1.png", "image/png", SVG),            # only the bytes say SVG
    ("logo.png", None, b"\xef\xbb\xbf  \n" + SVG),  # after a BOM and blanks
    ("logo.png", None, "<svg onload=alert(1)>".encode("utf-16")),  # UTF-16 with a BOM
    ("photo.jpg", None, b"GIF? no: hello <svg onload=alert(1)>"),  # markup further in
    ("x.html", "text/html; charset=utf-8", HTML),
    ("x.xhtml", None, HTML), ("x.xml", None, b"<?xml version='1.0'?><a/>"),
    ("x.xsl", None, b"<xsl:stylesheet/>"), ("x.js", None, b"alert(1)"),
    ("x.shtml", None, b"hi"), ("x.css", None, b"body{}"),
    ("README", None, b"plain words"),            # nothing says what it is
    ("x.unknownext", None, b"plain words"),
    ("x.docx", None, HTML),                       # an office name holding HTML
])
def test_active_or_unknown_content_is_an_opaque_attachment(name, declared, head):
    form = stored_form(name, declared, head)
    assert form.content_type == OPAQUE and form.opaque, (name, form)
    assert form.disposition is not None and form.disposition.startswith("attachment")


@pytest.mark.parametrize("name,declared,head,content_type", [
    ("p.png", None, PNG_1PX, "image/png"),
    ("image1.png", "image/png", PNG_1PX, "image/png"),
    ("p.jpg", None, b"\xff\xd8\xff\xe0 <svg", "image/jpeg"),  # magic first: an image
    ("a.gif", None, b"GIF89a<svg>", "image/gif"),
    ("w.webp", None, b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
    ("x.pdf", "application/pdf", b"%PDF-1.7\n<</Type/Catalog>>", "application/pdf"),
    ("t.txt", None, b"text", "text/plain; charset=utf-8"),
    ("doc.md", "text/markdown; charset=utf-8", b"# Title\n", "text/markdown; charset=utf-8"),
])
def test_raster_pdf_and_passive_text_stay_inline(name, declared, head, content_type):
    assert stored_form(name, declared, head) == StoredForm(content_type, None)


def test_text_holding_markup_keeps_its_type_as_an_attachment():
    form = stored_form("notes.txt", None, b"  <html><script>alert(1)</script>")
    assert form.content_type == "text/plain; charset=utf-8"
    assert form.disposition is not None and form.disposition.startswith("attachment")


def test_opaque_keys_and_attachment_names():
    opaque = stored_form("v.svg", None, SVG)
    # SeaweedFS replaces application/octet-stream with a guess from the key's extension
    assert opaque.key("t/1/assets/ab/v.svg") == "t/1/assets/ab/v.svg.bin"
    assert opaque.key("t/1/_staging/0123abcd") == "t/1/_staging/0123abcd"
    assert opaque.key("t/1/x.bin") == "t/1/x.bin"
    assert stored_form("p.png", None, PNG_1PX).key("a/p.png") == "a/p.png"
    header = attachment('报告 "x".svg')
    assert header.isascii() and header.startswith('attachment; filename="')
    assert '"x"' not in header and "filename*=UTF-8''" in header
    assert attachment("") == "attachment"


# --------------------------------------------------------------------------- every path


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


def _ok(reply):
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=15) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, b""


def assert_attachment(url: str, body: bytes | None = None) -> None:
    """The stored object behind ``url`` cannot run script when opened."""
    status, headers, data = _get(url)
    assert status == 200, url
    ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    assert ctype not in ACTIVE_TYPES, (url, headers)
    assert headers.get("content-disposition", "").startswith("attachment"), (url, headers)
    if body is not None:
        assert data == body


def assert_inline(url: str, content_type: str) -> None:
    status, headers, _ = _get(url)
    assert status == 200 and headers["content-type"] == content_type, (url, headers)
    assert "content-disposition" not in headers, (url, headers)


_MD_IMAGES = re.compile(r"!\[[^\]]*\]\((\S+?)\)")
_HTML_IMAGES = re.compile(r'<img src="([^"]+)"')


async def test_convert_save_html_with_svg_data_uri(api):
    page = (f'<html><body><h1>Page</h1><p><img src="{SVG_URI}" alt="svg">'
            f'<img src="{PNG_URI}" alt="png"></p></body></html>').encode()
    saved = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "page"},
                                {"file": ("page.html", page)}))
    text = _get(saved["storage_presigned_url"])[2].decode()
    svg_link, png_link = _MD_IMAGES.findall(text)
    assert_attachment(svg_link, SVG)
    assert_inline(png_link, "image/png")
    # the HTML output itself is active content too
    saved = _ok(await post_form(api, "/api/convert",
                                {"save": "true", "export": "html", "filename": "page"},
                                {"file": ("page.html", page)}))
    assert_attachment(saved["storage_presigned_url"])
    status, headers, body = _get(saved["storage_presigned_url"])
    assert 'filename="page.html"' in headers["content-disposition"]
    for link in _HTML_IMAGES.findall(body.decode()):
        status, headers, _ = _get(link.replace("&amp;", "&"))
        assert status == 200
        assert headers["content-type"] in ("image/png", OPAQUE), headers


def _docx_with_svg_named_png() -> bytes:
    """A DOCX whose picture part is ``word/media/image1.png`` holding SVG bytes."""
    document = docx.Document()
    document.add_paragraph("Picture:")
    document.add_picture(io.BytesIO(PNG_1PX))
    plain = io.BytesIO()
    document.save(plain)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(plain.getvalue())) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            dst.writestr(info, SVG if info.filename.startswith("word/media/") else body)
    return out.getvalue()


async def test_convert_save_docx_image_with_svg_bytes(api):
    saved = _ok(await post_form(api, "/api/convert", {"save": "true"},
                                {"file": ("pic.docx", _docx_with_svg_named_png())}))
    text = _get(saved["storage_presigned_url"])[2].decode()
    links = _MD_IMAGES.findall(text)
    assert links, text
    for link in links:
        assert_attachment(link, SVG)


ARCHIVE = {
    "doc.md": (f"# Doc\n\n![v](img/v.svg) ![p](img/p.png) ![fake](img/fake.png) "
               f"![inline]({SVG_URI})\n\n[page](page.html) [h](raw.html)\n").encode(),
    "page.html": f'<html><body><h1>P</h1><img src="{SVG_URI}"><img src="img/v.svg"></body>'
                 f"</html>".encode(),
    "raw.html": HTML,
    "img/v.svg": SVG,
    "img/p.png": PNG_1PX,
    "img/fake.png": SVG,
}


def _check_batch(files: list[dict]) -> None:
    entries = {e["source"]: e for e in files}
    doc = entries["doc.md"]
    assert_inline(doc["storage_presigned_url"], "text/markdown; charset=utf-8")
    text = _get(doc["storage_presigned_url"])[2].decode()
    linked = dict(re.findall(r"!\[([^\]]*)\]\((\S+?)\)", text))
    assert set(linked) == {"v", "p", "fake", "inline"}, text
    assert_attachment(linked["v"], SVG)
    assert_attachment(linked["fake"], SVG)  # the name says PNG, the bytes SVG
    assert_attachment(linked["inline"], SVG)  # an inline data: image
    assert_inline(linked["p"], "image/png")
    page = _get(entries["page.html"]["storage_presigned_url"])[2].decode()
    page_links = _MD_IMAGES.findall(page)
    assert len(page_links) == 2, page
    for link in page_links:
        assert_attachment(link, SVG)


async def test_archive_markdown_and_html_assets(api):
    data = _ok(await post_form(api, "/api/upload-archive", {"prefix": "site"},
                               {"file": ("site.zip", zip_of(ARCHIVE))}))
    _check_batch(data["files"])


async def test_staged_archive_run_as_a_job(api, job_consumer):
    staged = _ok(await post_form(api, "/api/archive/stage", {},
                                 {"file": ("site.tgz", tgz_of(ARCHIVE))}))
    job = _ok(await post_form(api, "/api/archive/process",
                              {"id": staged["id"], "async": "true"}))

    async def ended() -> dict:
        state = _ok(await api.call("GET", job["status_url"]))
        return state if state["state"] not in ("queued", "running") else {}

    state = await eventually(ended, timeout=30, what="the job ended")
    assert state["state"] == "done", state
    _check_batch(state["result"]["files"])


async def test_folder(api, storage_services, tmp_path, monkeypatch):
    root = tmp_path / "root"
    for name, data in ARCHIVE.items():
        (root / "book" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "book" / name).write_bytes(data)
    monkeypatch.setattr(storage_services, "settings", dataclasses.replace(
        storage_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (root,)}))
    r = await post_form(api, "/md/convert-folder", {"folder_path": str(root / "book")})
    assert r.status == 200 and r.body["ok"] is True, r.body
    _check_batch(r.body["files"])


async def test_md_convert_save_keeps_a_document_type(api):
    data = _ok(await post_form(api, "/md/convert", {"markdown_text": "# Saved",
                                                    "target": "docx", "save": "true"}))
    status, headers, body = _get(data["storage_presigned_url"])
    assert status == 200 and body[:2] == b"PK"
    assert headers["content-type"].startswith("application/vnd.openxmlformats-officedocument.")


def _key_of(url: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path).split("/", 2)[2]


async def test_download_proxy_sends_nosniff_and_no_active_type(api, storage_services):
    company = await docs_caller_company(storage_services)
    store = await storage_services.storage.store(company)
    # an SVG stored before the decision existed, with its own type and no disposition
    old_key = f"{store.config.prefix}/old/v.svg"
    store.client.put_object(store.config.bucket, old_key, io.BytesIO(SVG), len(SVG),
                            content_type="image/svg+xml")
    new_url = store.put_bytes(f"{store.config.prefix}/new/v.svg", SVG,
                              "image/svg+xml").storage_url
    for fields in ({"key": old_key}, {"url": new_url}):
        r = await post_form(api, "/proxy/download", fields)
        assert r.status == 200 and r.raw == SVG, fields
        assert r.headers["Content-Type"] == OPAQUE
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Content-Disposition"].startswith('attachment; filename="v.svg"')
    assert _key_of(new_url).endswith("/new/v.svg.bin")
