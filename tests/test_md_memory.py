"""``/md/convert`` with many large remote images: the service process never holds them
(they are streamed to files and read by the worker), so its resident size grows by far less
than the images' total, measured on a real ``serve`` process started for the module."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import psutil
import pytest
from tornado.httpclient import AsyncHTTPClient

from bench.common import AUTH_HEADER, multipart
from bench.hostile_inputs import large_png
from bench.soak.processes import start_service, stop_service
from tests.local_http import LocalServer, body

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]  # many large images through the pool

IMAGES, IMAGE_MB = 20, 19


def _rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def _peak_mb(pid: int) -> float:
    """The process's peak resident size since it started (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def images():
    png = large_png(IMAGE_MB)
    server = LocalServer({f"/img{i}.png": body(png, "image/png") for i in range(IMAGES)})
    yield server
    server.close()


async def _convert(base: str, markdown: str, target: str = "docx") -> tuple[int, bytes, dict]:
    form, ctype = multipart({"markdown_text": markdown, "target": target})
    resp = await AsyncHTTPClient().fetch(
        base + "/md/convert", method="POST", body=form, raise_error=False,
        headers={**AUTH_HEADER, "Content-Type": ctype}, request_timeout=180)
    return resp.code, resp.body, dict(resp.headers)


async def test_many_large_images_keep_the_service_process_small(io_loop, images):
    with tempfile.TemporaryDirectory() as work:
        service = await start_service(Path(work), {
            "ALLOW_PRIVATE_URLS": "1", "POOL_WORKERS": "1", "MARKDOWN_IMAGES_MAX_MB": "100"})
        try:
            pid = service.process.pid
            warm = f"# warm\n\n![]({images.url('/img0.png')})\n"
            code, data, _ = await _convert(service.base, warm)
            assert code == 200 and data.startswith(b"PK"), data[:300]
            idle = max(_rss_mb(pid), _peak_mb(pid))
            doc = "# Pictures\n\n" + "".join(f"![p{i}]({images.url(f'/img{i}.png')})\n\n"
                                             for i in range(IMAGES))
            t0 = time.monotonic()
            code, data, headers = await _convert(service.base, doc)
            assert code == 200 and data.startswith(b"PK"), data[:300]
            assert time.monotonic() - t0 < 180
            growth = _peak_mb(pid) - idle
            total = IMAGES * IMAGE_MB
            print(f"service peak {growth:.0f} MB over idle {idle:.0f} MB; images {total} MB")
            # the images' total is 380 MB; held in the service, they took it to 857 MB
            assert growth < 100, f"service peak grew {growth:.0f} MB over {idle:.0f} MB"
            warnings = headers.get("X-Conversion-Warnings", "")
            assert "100%20MB%20together" in warnings  # the total bound left the rest out
        finally:
            stop_service(service)
