"""Object storage against a real SeaweedFS S3 (signatures, expiry, signed host, policies)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit, urlunsplit

import pytest

from store.bucket_policy import policies_equal, public_read_policy
from store.clock import time_check
from store.object_keys import UnsafeKey, asset_key, object_key
from store.objects import MAX_EXPIRY, ObjectStore, clamp_expiry
from store.storage_config import StorageConfig, StorageConfigError
from tests.waiting import wait_until

try:  # tests/ as a package or as a plain directory on sys.path
    from tests.s3_server import S3Server, running_s3
except ImportError:
    from s3_server import S3Server, running_s3


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with running_s3() as server:
        yield server


@pytest.fixture(scope="module")
def store(s3: S3Server) -> ObjectStore:
    st = ObjectStore(s3.config("docs"))
    assert st.test_connection(create_if_missing=True)["ok"]
    return st


def fetch(url: str) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def with_host(url: str, host: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=host))


# --------------------------------------------------------------------------- links and bytes


def test_put_and_presigned_get_round_trip(store: ObjectStore) -> None:
    data = bytes(range(256)) * 100
    links = store.put_bytes("t/blob.bin", data, "application/pdf")
    status, body, headers = fetch(links.storage_presigned_url)
    assert status == 200
    assert body == data
    assert headers["Content-Type"] == "application/pdf"
    assert "X-Amz-Signature=" in links.storage_presigned_url
    assert "X-Amz-Expires=86400" in links.storage_presigned_url  # default: 1 day


@pytest.mark.parametrize("name", [
    "中文 文档.md", "报告 [final] (v2).pdf", "a#b?c%d&e+f=g.txt", "double  spaces .txt",
    "100% [done]#1?.png", "日本語/ファイル 名.txt",
])
def test_awkward_keys(store: ObjectStore, name: str) -> None:
    key = object_key("awkward", name)
    data = name.encode() * 3
    links = store.put_bytes(key, data, "text/plain; charset=utf-8")
    direct = urlsplit(links.storage_url)
    # the key is percent-encoded in the path: nothing leaks into query or fragment
    assert direct.query == "" and direct.fragment == ""
    assert " " not in links.storage_url
    assert unquote(direct.path) == f"/docs/{key}"  # decodes back to the exact key
    assert links.storage_url.startswith(f"http://{store.config.public}/docs/awkward/")
    status, body, _ = fetch(links.storage_presigned_url)
    assert (status, body) == (200, data)
    assert store.get_bytes(key) == data


def test_direct_link_quoting_never_uses_plus(store: ObjectStore) -> None:
    url = store.direct_url("a b+c/d.txt")
    assert url.endswith("/docs/a%20b%2Bc/d.txt")


def test_direct_link_403_private_then_200_public(s3: S3Server) -> None:
    private = ObjectStore(s3.config("policybkt"))
    assert private.test_connection(create_if_missing=True)["created"] is True
    links = private.put_bytes("p/x.txt", b"secret", "text/plain")
    assert fetch(links.storage_url)[0] == 403
    assert fetch(links.storage_presigned_url)[:2] == (200, b"secret")

    public = ObjectStore(s3.config("policybkt", public_read="true"))
    result = public.test_connection()
    assert result["ok"] and result["connected"] and result["bucket_exists"]
    assert fetch(links.storage_url)[0] == 403  # a test never opens an existing bucket
    assert public.apply_bucket_policy() is True  # the operator's explicit step does
    assert fetch(links.storage_url)[:2] == (200, b"secret")
    # SeaweedFS normalises the stored policy; it still means the same thing
    stored = public.client.get_bucket_policy("policybkt")
    assert policies_equal(stored, public_read_policy("policybkt"))
    assert public.apply_bucket_policy() is False  # already applied: no change
    # anonymous listing stays refused
    assert fetch(f"http://{s3.endpoint}/policybkt/")[0] == 403

    # switching public_read off removes our policy again
    assert private.apply_bucket_policy() is True
    assert fetch(links.storage_url)[0] == 403
    # a bucket the test itself creates gets the policy asked for
    fresh = ObjectStore(s3.config("policyfresh", public_read="true"))
    assert fresh.test_connection(create_if_missing=True)["created"] is True
    assert fetch(fresh.put_bytes("f.txt", b"open", "text/plain").storage_url)[:2] == (200, b"open")


def test_presigned_for_public_host_only(s3: S3Server) -> None:
    other = f"localhost:{s3.port}"
    st = ObjectStore(s3.config("docs", public=other))
    links = st.put_bytes("host/x.txt", b"hosted", "text/plain")
    assert urlsplit(links.storage_presigned_url).netloc == other
    assert urlsplit(links.storage_url).netloc == other
    assert fetch(links.storage_presigned_url)[:2] == (200, b"hosted")
    # the host is part of the signature: the same link sent to another host name is refused
    assert fetch(with_host(links.storage_presigned_url, s3.endpoint))[0] == 403


def test_tampered_signature_refused(store: ObjectStore) -> None:
    url = store.put_bytes("t/tamper.txt", b"x").storage_presigned_url
    bad = url[:-4] + ("0000" if not url.endswith("0000") else "1111")
    assert fetch(bad)[0] == 403


def test_expired_link_refused(store: ObjectStore) -> None:
    store.put_bytes("t/short.txt", b"short-lived")
    url = store.presigned_url("t/short.txt", expires=timedelta(seconds=1))
    assert "X-Amz-Expires=1&" in url
    assert wait_until(lambda: fetch(url)[0] == 403, timeout=15, what="the link expired")


def test_expiry_clamped_to_seven_days(store: ObjectStore) -> None:
    assert clamp_expiry(timedelta(days=30)) == MAX_EXPIRY
    assert clamp_expiry(0) == timedelta(seconds=1)
    url = store.presigned_url("t/blob.bin", expires=timedelta(days=30))
    assert "X-Amz-Expires=604800" in url
    assert fetch(url)[0] == 200


def test_asset_stored_once_under_content_hash(store: ObjectStore) -> None:
    data = b"\x89PNG same bytes"
    first = store.put_asset("batch1", "img/logo.png", data)
    second = store.put_asset("batch1", "other/logo.png", data)
    assert first.uploaded is True and second.uploaded is False
    assert first.key == second.key == asset_key("batch1", data, "logo.png")
    assert first.key.startswith("batch1/assets/") and first.key.endswith("/logo.png")
    assert len(first.key.split("/")[2]) == 16
    status, body, headers = fetch(second.links.storage_presigned_url)
    assert (status, body, headers["Content-Type"]) == (200, data, "image/png")


def test_get_stream(store: ObjectStore) -> None:
    data = b"y" * 200_000
    store.put_bytes("t/stream.txt", data, "text/plain")
    with store.get_stream("t/stream.txt") as stream:
        assert stream.length == len(data)
        assert stream.content_type == "text/plain"
        assert b"".join(stream.chunks(65536)) == data
    assert store.exists("t/stream.txt") and not store.exists("t/none.txt")


# --------------------------------------------------------------------------- connection test


def test_missing_bucket_without_and_with_create(s3: S3Server) -> None:
    st = ObjectStore(s3.config("fresh-bucket"))
    res = st.test_connection(create_if_missing=False)
    assert res["connected"] is True and res["bucket_exists"] is False
    assert res["ok"] is False and res["created"] is False
    assert "create_if_missing" in res["hint"]
    res = st.test_connection(create_if_missing=True)
    assert res["ok"] and res["created"] and res["bucket_exists"]
    res = st.test_connection(create_if_missing=True)
    assert res["ok"] and res["created"] is False


def test_wrong_secret_reported(s3: S3Server) -> None:
    st = ObjectStore(s3.config("docs", secret="wrong-secret-value"))
    res = st.test_connection()
    assert res["ok"] is False and res["connected"] is True
    assert "secret" in res["hint"]


def test_unreachable_endpoint_reported(s3: S3Server) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    st = ObjectStore(s3.config("docs", endpoint=f"127.0.0.1:{port}"), timeout=3)
    res = st.test_connection()
    assert res["ok"] is False and res["connected"] is False
    assert "9000" in res["hint"]


class _Fake(BaseHTTPRequestHandler):
    body = b""
    content_type = "text/html"
    date: str | None = None

    def _answer(self, with_body: bool) -> None:
        self.send_response(400 if b"API port" in self.body else 200)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        if self.date:
            self.send_header("Date", self.date)
        self.end_headers()
        if with_body:
            self.wfile.write(self.body)

    def date_time_string(self, timestamp: float | None = None) -> str:
        return self.date or super().date_time_string(timestamp)

    def do_GET(self) -> None:
        self._answer(True)

    def do_HEAD(self) -> None:
        self._answer(False)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_server() -> Iterator:
    servers = []

    def start(body: bytes, content_type: str, date: str | None = None) -> str:
        handler = type("H", (_Fake,), {"body": body, "content_type": content_type,
                                       "date": date})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("body, ctype", [
    (b"<!doctype html><html><head><title>MinIO Console</title></head></html>", "text/html"),
    (b'<?xml version="1.0"?><Error><Code>BadRequest</Code><Message>S3 API Requests must be '
     b"made to API port.</Message></Error>", "application/xml"),
])
def test_console_on_api_port_recognised(s3: S3Server, fake_server, body: bytes,
                                        ctype: str) -> None:
    endpoint = fake_server(body, ctype)
    st = ObjectStore(s3.config("docs", endpoint=endpoint), timeout=3)
    res = st.test_connection(create_if_missing=True)
    assert res["ok"] is False and res["created"] is False
    assert "console" in res["hint"] and "9000" in res["hint"]


# --------------------------------------------------------------------------- clock


def test_time_check_against_seaweed(store: ObjectStore) -> None:
    res = store.time_check()
    assert res["ok"] is True and res["hint"] is None
    assert abs(res["diff_sec"]) < 5
    assert res["server_time"] and res["local_time"]


def test_time_check_reports_skew(fake_server) -> None:
    skewed = formatdate(time.time() - 20 * 60, usegmt=True)
    endpoint = fake_server(b"", "application/xml", date=skewed)
    res = time_check(endpoint)
    assert res["ok"] is False
    assert -1210 < res["diff_sec"] < -1190
    assert "15 minutes" in res["hint"]


def test_time_check_unreachable() -> None:
    res = time_check("127.0.0.1:1", timeout=2)
    assert res["ok"] is False and res["server_time"] is None and res["error"]


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize("endpoint", [
    "minio.local:9001", "http://minio.local:9001", "https://minio.local:9001/",
    "minio.local:9000/browser", "http://minio.local:9000/minio/", "minio.local/minio",
    "https://minio.local/browser/docs",
])
def test_console_addresses_rejected(endpoint: str) -> None:
    with pytest.raises(StorageConfigError) as info:
        StorageConfig.from_form({"endpoint": endpoint, "access": "a", "secret": "s",
                                 "bucket": "docs"})
    assert "9000" in info.value.hint and "console" in info.value.hint


def test_scheme_stripped_into_secure() -> None:
    conf = StorageConfig.from_form({"endpoint": "https://s3.example.com:9000/", "access": "a",
                                    "secret": "s", "bucket": "docs", "secure": "false"})
    assert (conf.endpoint, conf.secure, conf.public) == ("s3.example.com:9000", True,
                                                         "s3.example.com:9000")
    conf = StorageConfig.from_form({"endpoint": "http://10.0.0.5:9000", "public":
                                    "https://cdn.example.com", "access": "a", "secret": "s",
                                    "bucket": "docs"})
    assert (conf.endpoint, conf.secure, conf.public, conf.link_secure) == (
        "10.0.0.5:9000", False, "cdn.example.com", True)
    st = ObjectStore(conf)
    assert st.direct_url("a b.png") == "https://cdn.example.com/docs/a%20b.png"
    assert st.presigned_url("a b.png").startswith("https://cdn.example.com/docs/a%20b.png?")


def test_form_values_tornado_style_and_validation() -> None:
    conf = StorageConfig.from_form({"endpoint": [b"minio:9000"], "access": [b"ak"],
                                    "secret": [b"sk"], "bucket": [b"docs"],
                                    "public_read": [b"true"], "store_final": [b"0"],
                                    "prefix": [b"/a//b/"]})
    assert conf.public_read is True and conf.store_final is False and conf.prefix == "a/b"
    for bad in ({"bucket": "Bad_Bucket"}, {"bucket": ""}, {"secret": ""},
                {"endpoint": "minio:9000/some/path"}, {"endpoint": "ftp://minio:9000"},
                {"endpoint": "minio:99999"}, {"prefix": "a/../b"}, {"secure": "maybe"}):
        form = {"endpoint": "minio:9000", "access": "a", "secret": "s", "bucket": "docs"}
        with pytest.raises(StorageConfigError):
            StorageConfig.from_form({**form, **bad})


def test_masked_never_returns_secret() -> None:
    conf = StorageConfig.from_form({"endpoint": "minio:9000", "access": "AKIA123",
                                    "secret": "super-secret-value-42", "bucket": "docs"})
    masked = conf.masked()
    assert "super-secret" not in json.dumps(masked)
    assert masked["secret"] == "****42" and masked["secret_set"] is True
    short = StorageConfig.from_form({"endpoint": "minio:9000", "access": "a",
                                     "secret": "abc", "bucket": "docs"})
    assert short.masked()["secret"] == "****"
    # the UI posts the masked value back: the stored secret is kept
    again = StorageConfig.from_form({"endpoint": "minio:9000", "access": "AKIA123",
                                     "secret": "****42", "bucket": "docs"})
    assert again.keep_secret_from(conf).secret == "super-secret-value-42"
    changed = StorageConfig.from_form({"endpoint": "minio:9000", "access": "AKIA123",
                                       "secret": "brand-new-secret", "bucket": "docs"})
    assert changed.keep_secret_from(conf).secret == "brand-new-secret"


def test_storage_from_environment_settings() -> None:
    from tornado_app.documents.setup import storage_from_settings
    from tornado_app.settings import Settings

    assert storage_from_settings(Settings.from_env({})) is None
    conf = storage_from_settings(Settings.from_env({
        "S3_ENDPOINT": "https://minio:9000", "S3_ACCESS_KEY": "a", "S3_SECRET_KEY": "s",
        "S3_BUCKET": "docs", "S3_PUBLIC_READ": "1", "S3_PREFIX": "out", "S3_REGION": "eu-1"}))
    assert conf is not None and conf.secure and conf.public_read and conf.prefix == "out"
    assert conf.region == "eu-1" and conf.bucket == "docs"


def test_prefix_cannot_reach_into_company_prefixes() -> None:
    from store.object_keys import tenant_prefix

    with pytest.raises(StorageConfigError, match="may not contain"):
        StorageConfig.from_form({"endpoint": "minio:9000", "access": "a", "secret": "s",
                                 "bucket": "docs", "prefix": "base/t/42"})
    assert tenant_prefix("base", "42") == "base/t/42"
    for bad in ("../x", "a/b", "", "x" * 65):
        with pytest.raises(UnsafeKey):
            tenant_prefix("base", bad)


def test_object_keys() -> None:
    assert object_key("/pre/", "a", "b/c.md") == "pre/a/b/c.md"
    assert object_key("", "./x//y.png") == "x/y.png"
    assert object_key("p", "dir\\file.png") == "p/dir/file.png"
    for bad in (("p", "../x"), ("p", "a/../../x"), ("..", "x"), ("p", "a\x00b"), ("", "")):
        with pytest.raises(UnsafeKey):
            object_key(*bad)
    key = asset_key("p", b"abc", "../../etc/pass wd.png")
    assert key.startswith("p/assets/") and key.endswith("/pass wd.png") and ".." not in key


def test_policy_comparison_is_semantic() -> None:
    ours = public_read_policy("b")
    normalised = {"Version": "2012-10-17", "Statement": [{
        "Sid": "x", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
        "Resource": "arn:aws:s3:::b/*"}]}
    assert policies_equal(ours, json.dumps(normalised))
    other = json.loads(json.dumps(normalised))
    other["Statement"][0]["Action"] = ["s3:GetObject", "s3:ListBucket"]
    assert not policies_equal(ours, other)
