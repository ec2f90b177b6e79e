"""A convert job counts pages (issue 35, item 2): ``done``/``total`` of its record and of its
events rise page by page to the document's pages (the pages of a scan as OCR recognises
them; an unpaged document is one page), and a cancel stops the pages not yet started. The
real app with a real consumer, render pool, Tesseract, Redis and S3 server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
import urllib.request
from typing import Any

import pytest

from bench.paged_scans import text_scan
from tests.conftest import docs_caller_company, post_form
from tests.docx_fixtures import build_feature_docx
from tests.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def consumer(storage_services: Any, job_consumer: Any) -> Any:
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    job_claim_idle_seconds=5.0)
    return job_consumer


async def _submit_convert(api: Any, name: str, data: bytes) -> str:
    r = await post_form(api, "/api/convert", {"async": "true", "export": "markdown"},
                        {"file": (name, data)})
    assert r.status == 200 and r.body["code"] == 0, r.body
    return str(r.body["data"]["job_id"])


async def _job(api: Any, job_id: str) -> dict[str, Any]:
    r = await api.call("GET", f"/api/jobs/{job_id}")
    return dict(r.body["data"])


async def _ended(api: Any, job_id: str, timeout: float = 180) -> dict[str, Any]:
    async def ended() -> dict[str, Any]:
        job = await _job(api, job_id)
        return job if job["state"] in ("done", "failed", "cancelled") else {}

    return await eventually(ended, timeout, interval=0.1, what=f"job {job_id} ended")


def _read(url: str) -> str:
    """A stored result's text, by its link (off the loop: the link may be this app's)."""
    with urllib.request.urlopen(url, timeout=20) as f:
        return str(f.read().decode())


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in raw.decode().split("\n\n"):
        if block.startswith("event:"):
            head, data = block.split("\n", 1)
            out.append((head.split(": ", 1)[1], json.loads(data.split("data: ", 1)[1])))
    return out


async def test_a_scans_pages_are_counted_on_the_job_and_in_its_events(api: Any,
                                                                     consumer: Any) -> None:
    pages = 6
    job_id = await _submit_convert(api, "scan.pdf", text_scan(pages))
    r = await api.call("GET", f"/api/jobs/{job_id}/events")  # until the job ends
    events = _events(r.raw)
    assert events[-1][0] == "end"
    end = events[-1][1]
    assert end["state"] == "done", end
    assert (end["done"], end["total"]) == (pages, pages)
    running = [e for name, e in events if name == "progress" and e["state"] == "running"]
    counts = [e["done"] for e in running if e["total"] == pages]
    assert counts == sorted(counts), counts  # never backwards
    assert any(0 < done < pages for done in counts), running  # seen between the pages
    job = await _job(api, job_id)
    assert (job["done"], job["total"]) == (pages, pages)
    assert "Chapter 3" in await asyncio.to_thread(_read, job["result"]["storage_presigned_url"])


async def test_a_document_without_pages_counts_one(api: Any, consumer: Any) -> None:
    job = await _ended(api, await _submit_convert(api, "features.docx", build_feature_docx()))
    assert job["state"] == "done", job
    assert (job["done"], job["total"]) == (1, 1)


async def test_cancel_stops_the_pages_not_yet_started(api: Any, consumer: Any,
                                                      storage_services: Any) -> None:
    pool = storage_services.pool
    company = await docs_caller_company(storage_services)
    # enough pages that the ones left at the cancel cannot all finish in the moment it takes
    # to send it, however slow the machine (16 once did, at a load of 6)
    pages = 40
    job_id = await _submit_convert(api, "long-scan.pdf", text_scan(pages))

    async def some_pages_done() -> dict[str, Any]:
        job = await _job(api, job_id)
        return job if job["state"] == "running" and job["done"] >= 1 else {}

    before: dict[str, Any] = await eventually(some_pages_done, 150, interval=0.1, what="a page recognised")
    assert before["total"] == pages
    r = await api.call("POST", f"/api/jobs/{job_id}/cancel")
    assert r.body["code"] == 0, r.body
    cancelled_at = time.monotonic()

    def pool_idle() -> bool:  # no worker holds a page of the company (running or waiting)
        return bool(pool.running(company) == 0 and pool.waiting(company) == 0)

    # the pages in the workers at the cancel run out there (a page takes a few seconds
    # here); no page after them starts
    await eventually(pool_idle, 60, interval=0.1, what="the pool idle after the cancel")
    idle_after = time.monotonic() - cancelled_at
    await asyncio.sleep(2.0)
    assert pool_idle()
    job = await _job(api, job_id)
    assert job["state"] == "cancelled", job
    assert job["done"] < pages and job["total"] == pages, job
    # a page's time so far (two at once in the pool's two workers): the cancel waited for
    # the pages in work, not for the rest of the document
    page_seconds = 2 * (time.time() - before["started"]) / max(1, job["done"])
    assert idle_after < 1.5 * page_seconds + 2, (idle_after, page_seconds)
