"""Which links a stored result and a batch get when the operator chose the storage's own links
(issue 35, item 1, and the first line of its "Done when": "no link names a loopback port
unless the service itself is served there"). Direct links are answered on a bucket whose
public read is verified; but a storage reached at a loopback address (the built-in one, or
one on the same machine with no public address) opens for nobody on another machine, so
when the service is reached by another name its links go through the service instead,
with a warning. Over HTTP against the real app, SecantusDB, Redis and an S3 server."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
import uuid
import zipfile
from collections.abc import Iterator
from io import BytesIO
from typing import Any

import pytest
from tornado.httpclient import AsyncHTTPClient

from store.objects import ObjectStore
from store.storage_settings import SERVICE
from tests.conftest import post_form
from tests.docx_fixtures import build_feature_docx
from tests.pdf_fixtures import tiny_png
from tornado_app.app import make_app

PUBLIC_NAME = "docs.example.test"  # how readers reach the service (its Host header)
LINK = re.compile(r"\]\((https?://[^)\s]+)")  # a Markdown link or image, title or not


@pytest.fixture
def app(storage_services: Any) -> Any:
    return make_app(storage_services)


@pytest.fixture
def public_bucket(io_loop: Any, storage_services: Any, s3: Any) -> Iterator[str]:
    """The company's storage: a new bucket that allows anonymous reads, on the loopback S3."""
    bucket = f"pub{uuid.uuid4().hex[:12]}"
    config = s3.config(bucket, public_read="true")
    assert ObjectStore(config).test_connection(create_if_missing=True)["created"]
    io_loop.run_sync(lambda: storage_services.storage.configs.set_active(SERVICE, config))
    yield bucket
    s3.drop_bucket(bucket)


def _links_of(storage_services: Any, kind: str) -> None:
    storage_services.settings = dataclasses.replace(storage_services.settings, storage_links=kind)


def _zip() -> bytes:
    buf = BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("docs/guide.md", "# Guide\n\n![logo](../img/logo.png)\n")
        archive.writestr("img/logo.png", tiny_png())
    return buf.getvalue()


async def _store_both(api: Any, headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A saved conversion and a batch's guide, as answered to a caller using ``headers``."""
    saved = await post_form(
        api,
        "/api/convert",
        {"save": "true", "filename": "feat"},
        {"file": ("f.docx", build_feature_docx())},
        headers=headers,
    )
    assert saved.body["code"] == 0, saved.body
    batch = await post_form(
        api,
        "/api/upload-archive",
        {"prefix": "kb"},
        {"file": ("site.zip", _zip())},
        headers=headers,
    )
    assert batch.body["code"] == 0, batch.body
    guide = next(f for f in batch.body["data"]["files"] if f["source"] == "docs/guide.md")
    return saved.body["data"], guide


async def _anonymous(url: str) -> tuple[int, bytes]:
    reply = await AsyncHTTPClient().fetch(url, raise_error=False, request_timeout=30)
    return reply.code, reply.body or b""


async def test_direct_links_on_a_verified_public_bucket(
    api: Any, storage_services: Any, s3: Any, public_bucket: str
) -> None:
    # the service is reached on loopback here, as the storage is: its links may name it
    _links_of(storage_services, "direct")
    for entry in await _store_both(api, {}):
        assert entry["storage_link_kind"] == "direct", entry
        url = entry["storage_url"]
        assert entry["storage_presigned_url"] == url and entry["storage_link_expires_at"] is None
        assert url.startswith(f"http://{s3.endpoint}/{public_bucket}/"), url
        assert "X-Amz-Signature" not in url
        status, body = await _anonymous(url)
        assert status == 200, body
        inside = [u for u in LINK.findall(body.decode()) if s3.endpoint in u]
        assert inside, body
        for link in inside:
            assert link.startswith(f"http://{s3.endpoint}/{public_bucket}/"), link
            assert (await _anonymous(link))[0] == 200, link


@pytest.mark.parametrize("kind", ["direct", "presigned"])
async def test_storage_links_on_loopback_are_not_given_to_readers_elsewhere(
    api: Any, storage_services: Any, s3: Any, public_bucket: str, kind: str
) -> None:
    _links_of(storage_services, kind)
    for entry in await _store_both(api, {"Host": PUBLIC_NAME}):
        url = entry["storage_url"]
        assert entry["storage_link_kind"] == "service", entry
        assert entry["storage_presigned_url"] == url, entry
        assert url.startswith(f"http://{PUBLIC_NAME}/proxy/object/"), url
        assert "127.0.0.1" not in str(entry) and f":{s3.port}" not in str(entry), entry
        # the link opens (here through loopback, as the reader's proxy would pass it on)
        path = urllib.parse.urlsplit(url).path
        text = (await api.call("GET", path, anon=True)).raw.decode()
        inside = LINK.findall(text)
        assert any("logo.png" in u or "/assets/" in u for u in inside), text
        assert all(not u.startswith("http://127.0.0.1") for u in inside), text
    saved, _ = await _store_both(api, {"Host": PUBLIC_NAME})
    assert any(
        w.startswith(f"{kind} links were not used") and "loopback" in w for w in saved["warnings"]
    ), saved
