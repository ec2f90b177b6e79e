"""Decompression-bomb PDFs are refused by measured size (41301) before pdfium inflates
them; ordinary PDFs, Flate images included, pass the measure untouched."""

from __future__ import annotations

import time

import psutil
import pytest

from render_pool.engine.pdf.bombs import check_pdf_streams
from render_pool.errors import TooLarge
from render_pool.runtime.pool import RenderPool
from tests import pdf_fixtures
from tests.conftest import post_form
from tornado_app.app import make_app

pytestmark = pytest.mark.slow  # measures bombs of hundreds of MB; the HTTP tests use a pool

BOMB_MB = 400  # inflated size of the test bomb (0.4 MB of file), past the 256 MB limit


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return pdf_fixtures.space_bomb_pdf(BOMB_MB)


def test_space_filled_content_stream_is_refused(bomb):
    with pytest.raises(TooLarge) as info:
        check_pdf_streams(bomb)
    assert info.value.code == 41301
    assert "content stream of the PDF inflates past 256 MB" in info.value.message


def test_stacked_flate_filters_are_measured_layer_by_layer():
    bomb = pdf_fixtures.space_bomb_pdf(300, layers=2)
    assert len(bomb) < 10_000  # the first layer alone inflates to a few hundred kB
    with pytest.raises(TooLarge, match="inflates past 256 MB"):
        check_pdf_streams(bomb)


def test_image_declaring_a_huge_bitmap_is_refused():
    with pytest.raises(TooLarge, match="40000 x 40000 pixels"):
        check_pdf_streams(pdf_fixtures.huge_image_pdf())


def test_a_large_one_bit_scan_is_not_taken_for_a_bomb():
    """A 600 dpi scan of a poster as a 1-bit stencil mask (9,000 x 10,400 pixels: 11 MB of
    samples; pdf.js's freeculture.pdf has two) reads; the same size in RGB is refused."""
    check_pdf_streams(pdf_fixtures.huge_image_pdf(9_000, 10_400, b"/ImageMask true"))
    check_pdf_streams(pdf_fixtures.huge_image_pdf(
        9_000, 10_400, b"/ColorSpace /DeviceGray /BitsPerComponent 1"))
    with pytest.raises(TooLarge, match="9000 x 10400 pixels"):
        check_pdf_streams(pdf_fixtures.huge_image_pdf(9_000, 10_400))


def test_a_lure_stream_cannot_hide_the_next_stream_from_the_measure():
    """A 7-byte stream whose zlib data claims 65,535 bytes would swallow the bomb after it
    if the scan went on where zlib stopped; it resumes at the lure's own end instead."""
    with pytest.raises(TooLarge, match="inflates past 256 MB"):
        check_pdf_streams(pdf_fixtures.lured_bomb_pdf(300))


def test_total_of_all_streams_is_bounded():
    two_streams = pdf_fixtures.space_bomb_pdf(200) * 2  # each under the stream limit
    check_pdf_streams(two_streams, max_stream_mb=300, max_total_mb=500)
    with pytest.raises(TooLarge, match="past 300 MB in total"):
        check_pdf_streams(two_streams, max_stream_mb=300, max_total_mb=300)


@pytest.mark.parametrize("name", ["report.pdf", "lists_tables.pdf", "tagged_features.pdf"])
def test_ordinary_pdfs_pass(name):
    check_pdf_streams((pdf_fixtures.GENERATED / name).read_bytes())


def test_scans_and_dense_pages_pass():
    check_pdf_streams(pdf_fixtures.scanned_pdf(3))
    check_pdf_streams(pdf_fixtures.dense_pdf(200_000))


@pytest.fixture(scope="module")
def limited_pool():
    pool = RenderPool(1, queue_limit=2, job_timeout=60, memory_limit_mb=1000)
    yield pool
    pool.close(wait=False)


@pytest.fixture
def app(services, limited_pool):
    services.pool = limited_pool
    return make_app(services)


def _peak_rss_mb(pid: int) -> float:
    """The worker's peak resident size so far (VmHWM), in MB."""
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def test_bomb_through_http_answers_41301_quickly_with_the_worker_bounded(
        api, limited_pool, bomb):
    """The bomb answers 41301 with the limit in the message, in far less time than reading
    it, and the worker never held the inflated stream (its peak RSS stays far below it)."""
    ok = await post_form(api, "/api/convert", {"export": "markdown"},
                         {"file": ("dense.pdf", pdf_fixtures.dense_pdf(2000))})
    assert ok.body["code"] == 0, ok.body
    (worker,) = limited_pool.worker_pids()
    t0 = time.monotonic()
    reply = await post_form(api, "/api/convert", {"export": "markdown"},
                            {"file": ("bomb.pdf", bomb)})
    elapsed = time.monotonic() - t0
    assert reply.status == 200 and reply.body["code"] == 41301, reply.body
    assert "inflates past 256 MB" in reply.body["msg"]
    assert limited_pool.worker_pids() == [worker] and psutil.pid_exists(worker)
    assert _peak_rss_mb(worker) < BOMB_MB / 2, _peak_rss_mb(worker)
    assert elapsed < 20, elapsed  # a generous bound on a shared machine; it takes ~0.5 s
    again = await post_form(api, "/api/convert", {"export": "markdown"},
                            {"file": ("dense.pdf", pdf_fixtures.dense_pdf(2000))})
    assert again.body["code"] == 0, again.body
