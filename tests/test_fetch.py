"""Remote fetches: SSRF guard, redirects, size and time limits."""

from __future__ import annotations

import pytest

from tests.local_http import LocalServer, body, hang, redirect
from tornado_app.documents.fetch import (
    FetchFailed,
    FetchRefused,
    fetch,
    fetch_to_file,
    is_public_address,
)


@pytest.fixture
def server():
    s = LocalServer({})
    yield s
    s.close()


@pytest.mark.parametrize("address,public", [
    ("8.8.8.8", True), ("1.1.1.1", True), ("2001:4860:4860::8888", True),
    ("127.0.0.1", False), ("10.1.2.3", False), ("172.16.0.1", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("0.0.0.0", False), ("::1", False), ("fe80::1", False),
    ("::ffff:127.0.0.1", False), ("fc00::1", False), ("100.64.0.1", False), ("224.0.0.1", False),
])
def test_public_address_classification(address, public):
    assert is_public_address(address) is public


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "ftp://example.com/x", "gopher://x", "javascript:alert(1)",
    "http://127.0.0.1:1/x", "http://10.0.0.1/x", "http://169.254.169.254/latest/meta-data",
    "http://[::1]/x", "http://0.0.0.0/x", "http://[::ffff:127.0.0.1]/x", "http://localhost:1/x",
    "http://user:pw@example.com/", "not a url", "",
])
async def test_refused_addresses(io_loop, url):
    with pytest.raises(FetchRefused):
        await fetch(url, allow_private=False, max_bytes=1000, timeout=2)


async def test_allowed_private_fetch_and_redirect(io_loop, server):
    server.routes.update({"/doc": body(b"hello", "text/plain"), "/go": redirect("/doc")})
    got = await fetch(server.url("/go"), allow_private=True, max_bytes=1000, timeout=5)
    assert got.data == b"hello" and got.content_type == "text/plain"
    assert got.url.endswith("/doc")


async def test_redirect_to_refused_scheme(io_loop, server):
    server.routes["/evil"] = redirect("file:///etc/passwd")
    with pytest.raises(FetchRefused):
        await fetch(server.url("/evil"), allow_private=True, max_bytes=1000, timeout=5)


async def test_redirect_loop_is_cut(io_loop, server):
    server.routes["/loop"] = redirect("/loop")
    with pytest.raises(FetchFailed, match="redirects"):
        await fetch(server.url("/loop"), allow_private=True, max_bytes=1000, timeout=5)
    assert len(server.hits) == 4


async def test_size_cap(io_loop, server):
    server.routes["/big"] = body(b"x" * 50_000)
    with pytest.raises(FetchFailed) as info:
        await fetch(server.url("/big"), allow_private=True, max_bytes=10_000, timeout=5)
    assert info.value.too_large


async def test_time_cap(io_loop, server):
    server.routes["/slow"] = hang(5)
    with pytest.raises(FetchFailed) as info:
        await fetch(server.url("/slow"), allow_private=True, max_bytes=1000, timeout=0.5)
    assert info.value.timed_out


async def test_http_error_status(io_loop, server):
    with pytest.raises(FetchFailed, match="404"):
        await fetch(server.url("/missing"), allow_private=True, max_bytes=1000, timeout=5)


async def test_fetch_to_file_streams_the_body_into_the_file(io_loop, server, tmp_path):
    data = bytes(range(256)) * 4000
    server.routes.update({"/img": body(data, "image/png"), "/go": redirect("/img")})
    path = tmp_path / "img"
    got = await fetch_to_file(server.url("/go"), str(path), allow_private=True,
                              max_bytes=2_000_000, timeout=5)
    assert path.read_bytes() == data and got.size == len(data)
    assert got.head == data[:512] and got.content_type == "image/png"
    assert got.url.endswith("/img")


async def test_fetch_to_file_removes_the_file_past_the_cap(io_loop, server, tmp_path):
    server.routes["/big"] = body(b"x" * 50_000)
    path = tmp_path / "big"
    with pytest.raises(FetchFailed) as info:
        await fetch_to_file(server.url("/big"), str(path), allow_private=True,
                            max_bytes=10_000, timeout=5)
    assert info.value.too_large and not path.exists()
