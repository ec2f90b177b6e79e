"""Links that last (issue 35, item 1): a saved result's links and a batch's rewritten links go
through the service's own download address (``/proxy/object/...``) with a token per object,
so they open after the service restarts and after a presigned link's lifetime, and name no
storage host; a forged or another company's token answers like a missing object."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import urllib.parse
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from minio import Minio
from tornado.httpclient import AsyncHTTPClient, HTTPResponse
from tornado.httpserver import HTTPServer
from tornado.testing import bind_unused_port

from store import api_keys
from store.storage_io import StorageIO
from tests.archive_fixtures import zip_of
from tests.conftest import docs_caller_company, post_form
from tests.docx_fixtures import build_feature_docx
from tests.pdf_fixtures import tiny_png
from tests.waiting import eventually
from tornado_app import request_base
from tornado_app.app import make_app
from tornado_app.documents import object_links
from tornado_app.seed import ensure_company
from tornado_app.services import open_services
from tornado_app.settings import Settings

PNG = tiny_png()
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
ARCHIVE = {
    "docs/guide.md": b"# Guide\n\n![logo](../img/logo.png)\n\n[drawing](../img/draw.svg)\n",
    "img/logo.png": PNG,
    "img/draw.svg": SVG,
}
LINK = re.compile(r"\((https?://[^)\s]+)")


@pytest.fixture
def app(storage_services):
    """The service with its default links (the suite's other tests use presigned ones)."""
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    storage_links="service")
    return make_app(storage_services)


@pytest.fixture
def links_made_a_day_ago(monkeypatch):
    """Every presigned link is signed as if 25 hours ago: past its lifetime (24 h) now."""
    sign = Minio.presigned_get_object

    def signed_earlier(self: Minio, *args: Any, **kwargs: Any) -> str:
        kwargs["request_date"] = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=25)
        return sign(self, *args, **kwargs)

    monkeypatch.setattr(Minio, "presigned_get_object", signed_earlier)


def _ok(reply: Any) -> Any:
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


async def _get(url: str) -> HTTPResponse:
    return await AsyncHTTPClient().fetch(url, raise_error=False, follow_redirects=False,
                                         request_timeout=30)


def _path(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _names_no_storage(text: str, s3: Any) -> None:
    assert s3.endpoint not in text and f":{s3.port}/" not in text, text


@contextlib.asynccontextmanager
async def _restarted(svc: Any, mongo_url: str, redis_url: str) -> AsyncIterator[str]:
    """A new service process's state (new app, new storage layer, no cached keys) on the same
    MongoDB, Redis and S3, served on a new port: its base address."""
    fresh = await open_services(svc.settings, mongo_url=mongo_url, redis_url=redis_url)
    fresh.storage = StorageIO(fresh.db)
    sock, port = bind_unused_port()
    server = HTTPServer(make_app(fresh))
    server.add_sockets([sock])
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        fresh.storage.close()
        await fresh.close()


async def test_a_saved_result_opens_after_a_restart_and_past_the_presigned_lifetime(
        api, storage_services, s3, links_made_a_day_ago, mongo_server, redis_server):
    data = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "feat"},
                               {"file": ("f.docx", build_feature_docx())}))
    link = data["storage_presigned_url"]
    reply = await _get(link)
    assert reply.code == 200, reply.body  # a presigned link made 25 h ago: 403
    _names_no_storage(link, s3)
    assert data["storage_url"] == link and "/proxy/object/" in link
    assert data["storage_link_kind"] == "service" and data["storage_link_expires_at"] is None
    text = reply.body.decode()
    assert text.startswith("# Introduction")
    images = [u for u in LINK.findall(text) if "/assets/" in u]
    assert images, text
    _names_no_storage(text, s3)
    for image in images:
        assert (await _get(image)).code == 200
    async with _restarted(storage_services, mongo_server.url, redis_server.url) as base:
        for url in (link, *images):
            again = await _get(base + _path(url))
            assert again.code == 200, (url, again.body)
        assert (await _get(base + _path(link))).body.decode() == text


async def test_a_batch_link_and_the_links_inside_open_after_a_restart(
        api, storage_services, s3, links_made_a_day_ago, mongo_server, redis_server):
    data = _ok(await post_form(api, "/api/upload-archive", {"prefix": "kb"},
                               {"file": ("site.zip", zip_of(ARCHIVE))}))
    entry = next(f for f in data["files"] if f["source"] == "docs/guide.md")
    link = entry["storage_presigned_url"]
    reply = await _get(link)
    assert reply.code == 200, reply.body  # a presigned link made 25 h ago: 403
    text = reply.body.decode()
    _names_no_storage(str(data), s3)
    assert entry["storage_url"] == link and entry["storage_link_kind"] == "service"
    inside = LINK.findall(text)
    assert len(inside) == 2 and all("/proxy/object/" in u for u in inside), text
    logo = next(u for u in inside if u.endswith("logo.png"))
    drawing = next(u for u in inside if u != logo)
    assert (await _get(logo)).body == PNG
    svg = await _get(drawing)  # script-capable content: never rendered inline
    assert svg.code == 200 and svg.body == SVG
    assert svg.headers["Content-Disposition"].startswith("attachment")
    assert svg.headers["X-Content-Type-Options"] == "nosniff"
    assert svg.headers["Content-Type"] == "application/octet-stream"
    async with _restarted(storage_services, mongo_server.url, redis_server.url) as base:
        assert (await _get(base + _path(link))).body.decode() == text
        assert (await _get(base + _path(logo))).body == PNG


async def test_an_async_jobs_links_are_made_on_the_service_too(
        api, storage_services, s3, job_consumer, links_made_a_day_ago):
    job = _ok(await post_form(api, "/api/upload-archive", {"async": "true", "prefix": "job"},
                              {"file": ("site.zip", zip_of(ARCHIVE))}))["job_id"]

    async def ended() -> Any:
        state = _ok(await api.call("GET", f"/api/jobs/{job}"))
        return state if state["state"] in ("done", "failed", "cancelled") else None

    state = await eventually(ended, 60, interval=0.05, what="the job ended")
    assert state["state"] == "done", state
    entry = next(f for f in state["result"]["files"] if f["source"] == "docs/guide.md")
    reply = await _get(entry["storage_presigned_url"])
    assert reply.code == 200, reply.body
    _names_no_storage(str(state) + reply.body.decode(), s3)
    for url in LINK.findall(reply.body.decode()):
        assert (await _get(url)).code == 200


async def test_a_saved_html_result_comes_as_an_attachment(api, storage_services):
    data = _ok(await post_form(api, "/api/convert",
                               {"save": "true", "export": "html", "filename": "page"},
                               {"file": ("f.docx", build_feature_docx())}))
    reply = await _get(data["storage_url"])
    assert reply.code == 200 and b"<h1" in reply.body
    assert reply.headers["Content-Disposition"].startswith("attachment")
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert not reply.headers["Content-Type"].startswith("text/html")


async def _other_company_key(svc: Any) -> tuple[str, str]:
    company = await ensure_company(svc, "OTHERCO", "Other company")
    _, key = await api_keys.create_key(svc.db, company_id=company.id, name="other",
                                       role="ADMIN", created_by=None, expires_at=None)
    return str(company.id), key


def _not_found(reply: HTTPResponse) -> None:
    assert reply.code == 404, reply.body
    assert reply.headers["Content-Type"].startswith("application/json")
    assert b'"code": 40401' in reply.body and b'"data": null' in reply.body


async def test_a_forged_or_another_companys_token_answers_like_a_missing_object(
        api, storage_services):
    mine = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "mine"},
                               {"file": ("f.docx", build_feature_docx())}))["storage_url"]
    other_id, other_key = await _other_company_key(storage_services)
    theirs = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "theirs"},
                                 {"file": ("f.docx", build_feature_docx())},
                                 token=other_key))["storage_url"]
    assert (await _get(mine)).code == 200 and (await _get(theirs)).code == 200
    my_id = await docs_caller_company(storage_services)
    head, company, token, rel = re.match(
        r"(.*/proxy/object)/([^/]+)/([^/]+)/(.+)$", mine).groups()  # type: ignore[union-attr]
    assert company == my_id
    t_company, t_token, t_rel = re.match(
        r".*/proxy/object/([^/]+)/([^/]+)/(.+)$", theirs).groups()  # type: ignore[union-attr]
    assert t_company == other_id
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    for forged in (
        f"{head}/{company}/{flipped}/{rel}",  # one character changed
        f"{head}/{company}/{token[:-4]}/{rel}",  # shortened
        f"{head}/{other_id}/{token}/{rel}",  # my token under the other company
        f"{head}/{company}/{t_token}/{t_rel}",  # their token under my company
        f"{head}/{company}/{token}/{rel}x",  # another object with my token
        f"{head}/{company}/{token}/{t_rel}",  # their object's path with my token
        f"{head}/nosuchcompany/{token}/{rel}",
        f"{head}/{company}/{token}/..%2F..%2F{rel}",
    ):
        _not_found(await _get(forged))


async def test_links_are_made_on_the_public_base_url(api, storage_services, s3):
    storage_services.settings = dataclasses.replace(
        storage_services.settings, public_base_url="https://docs.example.test/files")
    data = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "feat"},
                               {"file": ("f.docx", build_feature_docx())}))
    link = data["storage_url"]
    assert link.startswith("https://docs.example.test/files/proxy/object/")
    path = _path(link)[len("/files"):]
    text = (await api.call("GET", path, anon=True)).raw.decode()
    images = [u for u in LINK.findall(text) if "/assets/" in u]
    assert images and all(u.startswith("https://docs.example.test/files/") for u in images)
    _names_no_storage(text, s3)


async def test_presigned_links_when_chosen_say_until_when(api, storage_services, monkeypatch):
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    storage_links="presigned")
    monkeypatch.setattr(object_links, "_now", lambda: 1_800_000_000.0)
    data = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "feat"},
                               {"file": ("f.docx", build_feature_docx())}))
    assert data["storage_link_kind"] == "presigned"
    assert "X-Amz-Signature" in data["storage_presigned_url"]
    assert data["storage_link_expires_at"] == datetime.fromtimestamp(
        1_800_000_000 + 86400, UTC).isoformat(timespec="seconds")


async def test_direct_links_on_a_private_bucket_fall_back_with_a_warning(
        api, storage_services, s3):
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    storage_links="direct")
    data = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "feat"},
                               {"file": ("f.docx", build_feature_docx())}))
    assert data["storage_link_kind"] == "service" and "/proxy/object/" in data["storage_url"]
    assert any("direct links were not used" in w for w in data["warnings"])
    assert (await _get(data["storage_url"])).code == 200


def test_a_request_base_is_never_taken_from_a_malformed_host() -> None:
    class Request:
        protocol = "http"
        host = "evil.example/x?"

    request_base.remember(Request())  # type: ignore[arg-type]
    assert "evil" not in request_base.current()


def test_a_public_base_url_that_is_no_http_address_stops_the_start():
    # links are made on it: a typo must not turn into months of broken links
    for bad in ("docs.example.test", "ftp://docs.example.test", "https://u@docs.example.test",
                "https://docs.example.test/?a=1", "https://"):
        with pytest.raises(SystemExit, match="PUBLIC_BASE_URL"):
            Settings.from_env({"PUBLIC_BASE_URL": bad})
    given = Settings.from_env({"PUBLIC_BASE_URL": " https://docs.example.test/files/ "})
    assert given.public_base_url == "https://docs.example.test/files"


async def test_a_job_links_on_its_callers_address_not_on_a_later_requests(
        api, storage_services, s3):
    # the job runs after another caller's request named another host: that Host header must
    # not reach this job's stored links (one process-wide "last address" once let it)
    from tornado_app.documents.job_worker import JobWorker

    job = _ok(await post_form(api, "/api/upload-archive", {"async": "true", "prefix": "hosts"},
                              {"file": ("site.zip", zip_of(ARCHIVE))},
                              headers={"Host": "docs.caller.test"}))["job_id"]
    await api.call("GET", "/api/jobs", headers={"Host": "evil.example"})
    worker = JobWorker(storage_services)
    worker.start()
    try:
        async def ended() -> Any:
            state = _ok(await api.call("GET", f"/api/jobs/{job}"))
            return state if state["state"] in ("done", "failed", "cancelled") else None

        state = await eventually(ended, 60, interval=0.05, what="the job ended")
    finally:
        await worker.stop(5)
    assert state["state"] == "done", state
    links = [f["storage_url"] for f in state["result"]["files"] if f.get("storage_url")]
    assert links and all(u.startswith("http://docs.caller.test/") for u in links), links
    assert "evil.example" not in str(state)
