"""The OCR pages of one async scan are spread over every job consumer (issue 35, item 2: "a
big document's pages are spread as jobs on the job stream, so every worker on every machine
takes a share"). Two consumers in this process, each with a render pool of one worker, as two
``worker`` processes would have; the real app, Redis, S3 server and Tesseract."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bench.paged_scans import text_scan
from render_pool.engine import jobs
from render_pool.engine.ocr.page_json import reading_from_json, reading_to_json
from render_pool.runtime.pool import RenderPool
from tests.conftest import docs_caller_company, post_form
from tests.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


class CountedPool(RenderPool):
    """A render pool that counts the OCR page jobs it was given."""

    def __init__(self) -> None:
        super().__init__(1, queue_limit=8, job_timeout=120, memory_limit_mb=2000)
        self.pages = 0

    async def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if fn is jobs.ocr_page:
            self.pages += 1
        return await super().run(fn, *args, **kwargs)


@pytest.fixture(scope="module")
def pools() -> Iterator[tuple[CountedPool, CountedPool]]:
    a, b = CountedPool(), CountedPool()
    yield a, b
    a.close(wait=False)
    b.close(wait=False)


@pytest.fixture
def consumers(io_loop: Any, storage_services: Any, pools: tuple[CountedPool, CountedPool]
              ) -> Iterator[list[Any]]:
    """Two job consumers on one Redis and storage, each with its own pool of one worker."""
    from tornado_app.documents.job_worker import JobWorker

    for pool in pools:
        pool.pages = 0
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    job_claim_idle_seconds=30.0)
    workers = [JobWorker(dataclasses.replace(storage_services, pool=pool)) for pool in pools]
    for worker in workers:
        io_loop.add_callback(worker.start)
    yield workers
    for worker in workers:
        io_loop.run_sync(lambda w=worker: w.stop(5))


async def _submit(api: Any, data: bytes) -> str:
    r = await post_form(api, "/api/convert", {"async": "true", "export": "markdown"},
                        {"file": ("scan.pdf", data)})
    assert r.status == 200 and r.body["code"] == 0, r.body
    return str(r.body["data"]["job_id"])


async def _job(api: Any, job_id: str) -> dict[str, Any]:
    return dict((await api.call("GET", f"/api/jobs/{job_id}")).body["data"])


async def _ended(api: Any, job_id: str) -> dict[str, Any]:
    async def ended() -> dict[str, Any]:
        job = await _job(api, job_id)
        return job if job["state"] in ("done", "failed", "cancelled") else {}

    return await eventually(ended, 240, interval=0.1, what=f"job {job_id} ended")


def _read(url: str) -> str:
    with urllib.request.urlopen(url, timeout=20) as f:
        return str(f.read().decode())


async def _markdown(job: dict[str, Any]) -> str:
    return await asyncio.to_thread(_read, job["result"]["storage_presigned_url"])


async def _alone(api: Any, data: bytes) -> str:
    """The Markdown of ``data`` converted by one request in one pool (no sharing)."""
    r = await post_form(api, "/api/convert", {"export": "markdown"}, {"file": ("scan.pdf", data)})
    assert r.body["code"] == 0, r.body
    return str(r.body["data"]["content"])


async def test_both_consumers_pools_recognise_pages_of_one_scan(
        api: Any, consumers: list[Any], pools: tuple[CountedPool, CountedPool]) -> None:
    pages = 10
    data = text_scan(pages)
    job = await _ended(api, await _submit(api, data))
    assert job["state"] == "done", job
    assert (job["done"], job["total"]) == (pages, pages)
    counts = [pool.pages for pool in pools]
    assert all(count >= 1 for count in counts), counts  # each pool ran pages of the scan
    assert sum(counts) == pages, counts  # and no page twice
    markdown = await _markdown(job)
    assert "Chapter 10" in markdown
    assert markdown == await _alone(api, data)


async def test_a_page_taken_by_a_consumer_that_stops_is_run_by_the_owner(
        api: Any, consumers: list[Any], pools: tuple[CountedPool, CountedPool],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tornado_app.documents import shared_pages

    monkeypatch.setattr(shared_pages, "LEASE_SECONDS", 3.0)
    pages = 8
    data = text_scan(pages)
    job_id = await _submit(api, data)

    async def owner() -> str:
        return str((await _job(api, job_id)).get("consumer") or "")

    running_on: str = await eventually(owner, 60, interval=0.05, what="the job running")
    mine = next(i for i, w in enumerate(consumers) if w.name == running_on)
    other = 1 - mine
    # the other consumer is in the middle of a page of this scan: stop it there
    await eventually(lambda: pools[other].pages >= 1, 120, interval=0.02,
                     what="the other consumer taking a page")
    await consumers[other].stop(0)
    job = await _ended(api, job_id)
    assert job["state"] == "done", job
    assert (job["done"], job["total"]) == (pages, pages)
    # the page dropped by the stopped consumer ran again in the owner's pool
    assert pools[mine].pages + pools[other].pages >= pages + 1, [p.pages for p in pools]
    assert await _markdown(job) == await _alone(api, data)


async def test_cancel_withdraws_the_shared_pages(api: Any, consumers: list[Any],
                                                 storage_services: Any,
                                                 pools: tuple[CountedPool, CountedPool]
                                                 ) -> None:
    redis = storage_services.redis
    company = await docs_caller_company(storage_services)
    pages = 16
    job_id = await _submit(api, text_scan(pages))
    todo = f"ds:pages:{company}:{job_id}:todo"

    async def started() -> dict[str, Any]:
        job = await _job(api, job_id)
        return job if job["state"] == "running" and job["done"] >= 1 else {}

    running: dict[str, Any] = await eventually(started, 150, interval=0.1,
                                               what="a page recognised")
    assert running["total"] == pages
    assert await redis.llen(todo) > 0  # pages left to take, offered to every consumer
    assert f"{company}:{job_id}" in await redis.smembers("ds:pages:open")
    r = await api.call("POST", f"/api/jobs/{job_id}/cancel")
    assert r.body["code"] == 0, r.body

    async def withdrawn() -> bool:
        keys = await redis.keys(f"ds:pages:{company}:{job_id}:*")
        return not keys and f"{company}:{job_id}" not in await redis.smembers("ds:pages:open")

    gone: bool = await eventually(withdrawn, 30, interval=0.05,
                                  what="the shared pages withdrawn")
    assert gone

    def idle() -> bool:
        return all(p.running(company) == 0 and p.waiting(company) == 0 for p in pools)

    await eventually(idle, 60, interval=0.1, what="both pools idle")
    ran = [p.pages for p in pools]
    await asyncio.sleep(2.0)  # a consumer that still took pages would have started one
    assert [p.pages for p in pools] == ran
    assert sum(ran) < pages
    assert (await _job(api, job_id))["state"] == "cancelled"


def test_a_pages_reading_survives_json() -> None:
    """A page read by one consumer and written as JSON is read back by the owner as the
    same reading (so the same Markdown)."""
    reading = jobs.ocr_page(text_scan(1), 0, "eng")
    text = json.dumps(reading_to_json(reading))
    assert reading_from_json(json.loads(text)) == reading
    assert reading[0].lines and reading[0].words
