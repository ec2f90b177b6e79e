"""A minimum upload rate for every caller (issue 20: an authenticated upload could trickle its
body for as long as it liked). Raw loopback clients against the real app: a trickle is cut
with a 408 once the grace period is over, a steady upload and a slow handler are not."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest

from tornado_app.app import make_app
from tornado_app.http import BaseHandler

MIN_RATE = 2000  # bytes per second
GRACE = 0.5


class SlowAnswerHandler(BaseHandler):
    """Reads a small body at once, then takes a while to answer (like a conversion)."""

    async def post(self) -> None:
        await asyncio.sleep(GRACE * 4)
        self.write_json(200, {"received": sum(len(c) for c in self._body)})


@pytest.fixture
def app(docs_services):
    docs_services.settings = dataclasses.replace(
        docs_services.settings, min_upload_bytes_per_second=MIN_RATE,
        upload_rate_grace_seconds=GRACE)
    application = make_app(docs_services)
    application.add_handlers(r".*", [(r"/test/slow-answer", SlowAnswerHandler)])
    return application


async def _open(http_server_client) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    port = int(http_server_client.get_url("/").split(":")[2].split("/")[0])
    return await asyncio.open_connection("127.0.0.1", port)


async def _trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes,
                   *, piece: bytes, every: float, limit: float) -> tuple[bytes, int, float]:
    """Send ``head``, then ``piece`` every ``every`` seconds until the server answers or
    closes (or ``limit`` seconds pass); returns (answer, body bytes sent, seconds)."""
    start = time.monotonic()
    writer.write(head)
    sent = 0
    answer = b""
    read = asyncio.ensure_future(reader.read(65536))
    while time.monotonic() - start < limit:
        done, _ = await asyncio.wait({read}, timeout=every)
        if done:
            try:
                answer = read.result()
            except ConnectionError:
                answer = b""
            break
        try:
            writer.write(piece)
            await writer.drain()
            sent += len(piece)
        except ConnectionError:
            break
    else:
        read.cancel()
    writer.close()
    return answer, sent, time.monotonic() - start


@pytest.mark.parametrize("kind", ["upload", "json", "chunked"])
async def test_a_trickled_body_is_cut_after_the_grace_period(api, http_server_client, kind):
    key = await api.docs_key()
    if kind == "upload":  # an authenticated upload declaring 10 MB
        head = (b"POST /md/convert HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Authorization: Bearer " + key.encode() + b"\r\n"
                b"Content-Type: multipart/form-data; boundary=xyz\r\n"
                b"Content-Length: 10000000\r\n\r\n--xyz\r\n")
    elif kind == "json":  # the auth face, no caller at all
        head = (b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{")
    else:
        head = (b"POST /md/convert HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Authorization: Bearer " + key.encode() + b"\r\n"
                b"Content-Type: multipart/form-data; boundary=xyz\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
    piece = b"1\r\na\r\n" if kind == "chunked" else b"a"
    reader, writer = await _open(http_server_client)
    answer, sent, seconds = await _trickle(reader, writer, head, piece=piece, every=0.1,
                                           limit=30)
    assert answer, f"no answer after {seconds:.1f} s and {sent} bytes"
    status_line, _, rest = answer.partition(b"\r\n")
    body = json.loads(rest.partition(b"\r\n\r\n")[2] or b"{}")
    message = body.get("message") or body.get("msg") or ""
    assert "too slowly" in message and "MIN_UPLOAD_BYTES_PER_SECOND" in message, body
    if kind == "json":  # the auth face: HTTP 408 in its own envelope
        assert b" 408 " in status_line, status_line
        assert body["code"] == "REQUEST_TIMEOUT", body
    else:  # /md/convert, the v2 envelope: HTTP 200 with code 40001
        assert b" 200 " in status_line, status_line
        assert body["code"] == 40001, body
    # cut by the rate, long before a total body timeout: the trickle got through its grace
    # period and little more (10 pieces a second, far below the minimum rate)
    assert sent < MIN_RATE * GRACE


async def test_a_steady_upload_above_the_minimum_rate_is_not_cut(http_server_client):
    reader, writer = await _open(http_server_client)
    size = MIN_RATE * 3 * 3  # three seconds at three times the minimum rate
    head = (b"POST /test/slow-answer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/octet-stream\r\nContent-Length: "
            + str(size).encode() + b"\r\n\r\n")
    step = MIN_RATE * 3 // 10
    answer, sent, seconds = b"", 0, 0.0
    start = time.monotonic()
    writer.write(head)
    while sent < size:
        chunk = b"b" * min(step, size - sent)
        writer.write(chunk)
        await writer.drain()
        sent += len(chunk)
        await asyncio.sleep(0.1)
    answer = await asyncio.wait_for(reader.read(65536), 30)
    seconds = time.monotonic() - start
    writer.close()
    assert b" 200 " in answer.partition(b"\r\n")[0], answer[:200]
    # the body outlived the grace period several times over, at a rate above the minimum
    assert seconds > GRACE * 2


async def test_a_handler_slower_than_the_grace_period_is_not_cut(api):
    """The watch ends with the body: a request that answers after the grace period (a
    conversion) is never cut by it."""
    r = await api.call("POST", "/test/slow-answer", raw=b"x" * 100,
                       headers={"Content-Type": "application/octet-stream"})
    assert r.status == 200 and r.body == {"received": 100}
