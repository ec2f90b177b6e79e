"""Fair queues between companies (issue 20, part 4): one company cannot delay another by
more than about one job.

- The render pool (real worker processes): company A queues 10 slow jobs, company B's (or an
  operator's) one quick job waits less than two slow jobs; waiting jobs start companies in
  turn; a company past ``tenant_queue_limit`` waiting jobs gets 50301 with a Retry-After, and
  so does a sync request through HTTP. A company alone uses every worker, but while another
  company's job waits it runs at most ``tenant_max_running`` (workers - 1): its job past that
  share is stopped and queued again (issue 30).
- The job stream (the real app with a real consumer, redis-server, SeaweedFS; and once more
  through HTTP with ``serve --no-worker`` and a ``worker`` process): company A queues 10 slow
  archive batches, company B's one small batch ends within about one of A's batches; past
  ``JOB_QUEUE_LIMIT_PER_COMPANY`` the async request answers 50301 with Retry-After, stores
  nothing, and leaves its Idempotency-Key free; a cancelled queued job frees its place.

Times are compared with a slow job measured in the same run, never with a constant.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from render_pool.runtime.pool import PoolBusy, RenderPool
from store import api_keys
from store.job_queue import JobQueue
from tests import pool_jobs
from tests.archive_fixtures import tgz_of
from tests.conftest import docs_caller_company, post_form
from tests.pdf_fixtures import tiny_png
from tests.waiting import eventually, wait_until
from tornado_app.seed import ensure_company

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # pools and processes

SLOW_SECONDS = 0.4


async def _until(check: Any, timeout: float = 30.0) -> None:
    await eventually(check, timeout, interval=0.01)


# -- the render pool ---------------------------------------------------------------------


@pytest.mark.parametrize("other", ["B", None], ids=["other-company", "no-company"])
async def test_a_backlog_of_one_company_delays_another_by_about_one_job(io_loop, other):
    pool = RenderPool(1, queue_limit=20, tenant_queue_limit=20, job_timeout=30,
                      memory_limit_mb=1000)
    backlog: list[asyncio.Future[Any]] = []
    try:
        await pool.run(pool_jobs.echo, "warm", tenant="A")
        loop = asyncio.get_running_loop()
        began = loop.time()
        await pool.run(pool_jobs.sleep_then, SLOW_SECONDS, "alone", tenant="A")
        slow = loop.time() - began
        backlog = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, SLOW_SECONDS, i,
                                                  tenant="A")) for i in range(10)]
        await _until(lambda: pool.waiting() == 9)
        began = loop.time()
        assert await pool.run(pool_jobs.echo, "quick", tenant=other) == "quick"
        waited = loop.time() - began
        assert waited < 2 * slow, (waited, slow)
        assert not any(job.done() for job in backlog[2:])  # A's jobs still waited
    finally:
        for job in backlog:
            job.cancel()
        await asyncio.gather(*backlog, return_exceptions=True)
        pool.close(wait=False)


async def test_waiting_jobs_start_companies_in_turn(io_loop, tmp_path):
    """One slot busy; three jobs of A then three of B wait: they start A, B, A, B, A, B,
    each company's own in arrival order."""
    pool = RenderPool(1, queue_limit=10, job_timeout=30, memory_limit_mb=1000)
    log = tmp_path / "order.txt"
    try:
        await pool.run(pool_jobs.echo, "warm", tenant="X")
        blocker = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 0.5, "x", tenant="X"))
        await _until(lambda: pool.in_flight == 1)
        jobs = [asyncio.ensure_future(pool.run(pool_jobs.record_then, str(log), 0, f"{c}{i}",
                                               tenant=c))
                for c in ("A", "B") for i in (1, 2, 3)]
        await asyncio.gather(blocker, *jobs)
        assert log.read_text().split() == ["A1", "B1", "A2", "B2", "A3", "B3"]
    finally:
        pool.close(wait=False)


async def test_a_company_past_its_waiting_limit_gets_50301_with_retry_after(io_loop):
    pool = RenderPool(1, queue_limit=10, tenant_queue_limit=2, job_timeout=30,
                      memory_limit_mb=1000)
    try:
        await pool.run(pool_jobs.echo, "warm", tenant="A")
        mine = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 0.3, i, tenant="A"))
                for i in range(3)]  # one runs, two wait
        await _until(lambda: pool.waiting("A") == 2)
        with pytest.raises(PoolBusy) as info:
            await pool.run(pool_jobs.echo, "one too many", tenant="A")
        assert info.value.code == 50301 and info.value.retry_after >= 1
        assert "limit per company" in info.value.message
        # another company still queues (and is served before A's waiting jobs)
        assert await pool.run(pool_jobs.echo, "B is served", tenant="B") == "B is served"
        assert sorted(await asyncio.gather(*mine)) == [0, 1, 2]
        assert await pool.run(pool_jobs.echo, "A again", tenant="A") == "A again"
    finally:
        pool.close(wait=False)


async def test_the_global_limit_also_says_when_to_retry(io_loop):
    pool = RenderPool(1, queue_limit=1, job_timeout=30, memory_limit_mb=1000)
    try:
        running = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 0.3, i, tenant=c))
                   for i, c in enumerate("AB")]
        await _until(lambda: pool.in_flight == 2)
        with pytest.raises(PoolBusy) as info:
            await pool.run(pool_jobs.echo, 1, tenant="C")
        assert info.value.retry_after >= 1
        await asyncio.gather(*running)
    finally:
        pool.close(wait=False)


async def test_one_company_never_holds_every_worker_while_another_waits(io_loop, tmp_path):
    """Issue 30: A's three long jobs on a two-worker pool took both workers and B's short job
    waited for one of them. Now B starts while A's first job still runs: the job A ran past
    its share (one worker) is stopped and queued again at the head of A's queue, and every
    one of A's jobs still ends with its own result."""
    pool = RenderPool(2, queue_limit=10, job_timeout=60, memory_limit_mb=1000)
    runs = tmp_path / "runs.txt"
    mine: list[asyncio.Future[Any]] = []
    try:
        await asyncio.gather(*(pool.run(pool_jobs.echo, "warm", tenant="A") for _ in range(2)))
        assert pool.tenant_max_running == 1
        mine = [asyncio.ensure_future(pool.run(pool_jobs.record_then, str(runs), 8, f"a{i}",
                                               tenant="A")) for i in range(3)]
        await _until(lambda: pool.running("A") == 2 and pool.waiting("A") == 1)
        assert await pool.run(pool_jobs.echo, "b", tenant="B") == "b"
        assert not mine[0].done()  # B started while A's first job still ran
        assert sorted(await asyncio.gather(*mine)) == ["a0", "a1", "a2"]
        counts = {v: runs.read_text().split().count(v) for v in ("a0", "a1", "a2")}
        assert counts["a0"] == 1 and sorted(counts.values()) == [1, 1, 2], counts
    finally:
        for job in mine:
            job.cancel()
        await asyncio.gather(*mine, return_exceptions=True)
        pool.close(wait=False)


async def test_a_company_alone_uses_every_worker(io_loop):
    """With nobody else waiting a company's jobs run on every worker at once, and none is
    stopped."""
    pool = RenderPool(2, queue_limit=10, job_timeout=60, memory_limit_mb=1000)
    try:
        await asyncio.gather(*(pool.run(pool_jobs.echo, "warm", tenant="A") for _ in range(2)))
        jobs = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.0, i, tenant="A"))
                for i in range(2)]
        await _until(lambda: pool.running("A") == 2)
        assert pool.waiting() == 0
        assert sorted(await asyncio.gather(*jobs)) == [0, 1]
        assert pool.restarts == 0
    finally:
        pool.close(wait=False)


def test_the_share_of_a_company_is_workers_minus_one_and_never_zero():
    sizes = {(w, cap): RenderPool(w, tenant_max_running=cap, memory_limit_mb=0)
             for w, cap in ((1, 0), (2, 0), (4, 0), (4, 2), (4, 9))}
    try:
        assert {k: p.tenant_max_running for k, p in sizes.items()} == {
            (1, 0): 1, (2, 0): 1, (4, 0): 3, (4, 2): 2, (4, 9): 4}
    finally:
        for p in sizes.values():
            p.close(wait=False)


async def test_sync_request_past_the_company_limit_answers_50301_with_retry_after(
        api, docs_services):
    from tests.docx_fixtures import build_feature_docx

    small = RenderPool(1, queue_limit=8, tenant_queue_limit=1, job_timeout=30,
                       memory_limit_mb=1000)
    docs_services.pool = small
    try:
        company = await docs_caller_company(docs_services)
        await small.run(pool_jobs.echo, "warm", tenant=company)
        held = [asyncio.ensure_future(small.run(pool_jobs.sleep_then, 1.0, i, tenant=company))
                for i in range(2)]  # one runs, one waits: the company's share is taken
        await _until(lambda: small.waiting(company) == 1)
        r = await post_form(api, "/api/convert", {"export": "markdown"},
                            {"file": ("f.docx", build_feature_docx())})
        assert r.status == 200 and r.body["code"] == 50301, r.body
        assert int(r.headers["Retry-After"]) >= 1
        assert "limit per company" in r.body["msg"]
        await asyncio.gather(*held)
        r = await post_form(api, "/api/convert", {"export": "markdown"},
                            {"file": ("f.docx", build_feature_docx())})
        assert r.body["code"] == 0 and "Retry-After" not in r.headers
    finally:
        small.close(wait=False)


# -- the job stream ----------------------------------------------------------------------


def _slow_archive(documents: int) -> bytes:
    """HTML documents, each one a pool job (HTML to Markdown): slow but legitimate."""
    body = "".join(f"<p>paragraph {i} <b>bold</b> <a href='x{i}.html'>l</a></p>"
                   for i in range(400))
    return tgz_of({f"d/{i:03}.html": f"<html><body><h1>{i}</h1>{body}</body></html>".encode()
                   for i in range(documents)})


def _small_archive(tag: str) -> bytes:
    return tgz_of({f"{tag}/page.md": f"# {tag}\n\n![p](img/p.png)\n".encode(),
                   f"{tag}/img/p.png": tiny_png()})


async def _other_company_key(svc: Any, code: str) -> str:
    company = await ensure_company(svc, code, f"{code} Ltd")
    _, key = await api_keys.create_key(svc.db, company_id=company.id, name=code, role="ADMIN",
                                       created_by=None, expires_at=None)
    return key


async def _submit(api: Any, archive: bytes, *, token: str | None = None,
                  headers: dict[str, str] | None = None) -> Any:
    return await post_form(api, "/api/upload-archive", {"async": "true"},
                           {"file": ("a.tgz", archive)}, token=token, headers=headers or {})


async def _job(api: Any, job_id: str, token: str | None = None) -> dict[str, Any]:
    r = await api.call("GET", f"/api/jobs/{job_id}", token=token)
    assert r.body["code"] == 0, (job_id, r.body)  # the job exists
    return r.body["data"]


async def _wait_ended(api: Any, job_id: str, token: str | None = None,
                      timeout: float = 120) -> dict[str, Any]:
    async def ended() -> dict[str, Any]:
        state = await _job(api, job_id, token)
        return state if state["state"] in ("done", "failed", "cancelled") else {}

    return await eventually(ended, timeout, what=f"job {job_id} ended")


@pytest.fixture
def fair_services(storage_services):
    storage_services.settings = dataclasses.replace(
        storage_services.settings, job_claim_idle_seconds=5.0)
    return storage_services


async def test_a_backlog_of_async_jobs_delays_another_company_by_about_one_job(
        api, fair_services, job_consumer):
    other = await _other_company_key(fair_services, "FAIRB")
    slow_archive = _slow_archive(12)
    alone = (await _submit(api, slow_archive)).body["data"]["job_id"]
    measured = await _wait_ended(api, alone)
    assert measured["state"] == "done", measured
    backlog = []
    for _ in range(10):
        r = await _submit(api, slow_archive)
        assert r.body["code"] == 0, r.body
        backlog.append(r.body["data"]["job_id"])
    try:
        async def first_running() -> bool:
            return (await _job(api, backlog[0]))["state"] == "running"

        await eventually(first_running, 60, what="A's first job running")
        began = time.monotonic()
        quick = (await _submit(api, _small_archive("b"), token=other)).body["data"]["job_id"]
        done = await _wait_ended(api, quick, token=other)
        waited = time.monotonic() - began
        assert done["state"] == "done", done
        # one slow job, measured in this run: A's job that ran when B's was queued
        running = await _job(api, backlog[0])
        slow = max(measured["finished"] - measured["started"],
                   (running["finished"] or time.time()) - running["started"])
        assert waited < 2 * slow, (waited, slow)
        states = [(await _job(api, j))["state"] for j in backlog]
        assert states.count("queued") >= 7, states  # B did not wait for A's backlog
    finally:
        for job_id in backlog:
            await api.call("POST", f"/api/jobs/{job_id}/cancel")


async def test_past_the_company_job_limit_the_request_answers_50301_with_retry_after(
        api, fair_services):
    fair_services.settings = dataclasses.replace(fair_services.settings,
                                                 job_queue_limit_per_company=2)
    other = await _other_company_key(fair_services, "FAIRC")
    first = [(await _submit(api, _small_archive(f"a{i}"))).body for i in range(2)]
    assert [b["code"] for b in first] == [0, 0]
    key = {"Idempotency-Key": "refused-once"}
    refused = await _submit(api, _small_archive("a3"), headers=key)
    assert refused.status == 200 and refused.body["code"] == 50301, refused.body
    assert int(refused.headers["Retry-After"]) >= 1
    assert "limit per company" in refused.body["msg"]
    jobs = (await api.call("GET", "/api/jobs")).body["data"]
    assert jobs["total"] == 2  # the refused request made no job ...
    company = await docs_caller_company(fair_services)
    store = await fair_services.storage.store(company)
    later = datetime.now(UTC) + timedelta(days=1)
    staged = await fair_services.storage.io(lambda: list(store.keys_older_than("", later)))
    assert len([k for k in staged if "/_staging/" in f"/{k}"]) == 2  # ... and stored nothing
    # another company is not limited by this one
    assert (await _submit(api, _small_archive("c"), token=other)).body["code"] == 0
    # once A's jobs have run there is room again, and the refused key is free for the request
    from tornado_app.documents.job_worker import JobWorker

    worker = JobWorker(fair_services)
    worker.start()
    try:
        for body in first:
            assert (await _wait_ended(api, body["data"]["job_id"]))["state"] == "done"
        again = await _submit(api, _small_archive("a3"), headers=key)
        assert again.body["code"] == 0, again.body
        assert (await _wait_ended(api, again.body["data"]["job_id"]))["state"] == "done"
    finally:
        await worker.stop(5)


async def test_the_queue_refuses_atomically_and_keeps_no_record(redis_server):
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_server.url, decode_responses=True)
    try:
        await redis.flushdb()
        queue = JobQueue(redis)
        results = await asyncio.gather(
            *(queue.submit("co", "archive", {"key": "k", "name": "a.tgz"}, limit=3)
              for _ in range(8)),
            return_exceptions=True)
        made = [r for r in results if isinstance(r, dict)]
        assert len(made) == 3 and await queue.queued("co") == 3
        assert all(type(r).__name__ == "QueueFull" for r in results if r not in made)
        listed, total = await queue.list("co")
        assert total == 3 and {r["id"] for r in listed} == {r["id"] for r in made}
    finally:
        await redis.aclose()


async def test_a_cancelled_queued_job_leaves_the_queue_and_frees_its_room(redis_server):
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_server.url, decode_responses=True)
    try:
        await redis.flushdb()
        queue = JobQueue(redis, claim_idle_ms=60_000)
        jobs = [await queue.submit("co", "archive", {"key": "k", "name": f"{i}.tgz"}, limit=2)
                for i in range(2)]
        taken = await queue.next("c1", block_ms=10)  # the first one runs at c1
        assert taken is not None and taken.job_id == jobs[0]["id"]
        await queue.start(taken, "c1")
        for job in jobs:
            _, cancelled = await queue.cancel("co", job["id"])
            assert cancelled
        # the queued one is gone at once; the running one stays until its consumer acks it
        assert await queue.queued("co") == 1
        assert await queue.next("c2", block_ms=10) is None
        await queue.submit("co", "archive", {"key": "k", "name": "again.tgz"}, limit=2)
        await queue.ack(taken)
        assert await queue.queued("co") == 1
    finally:
        await redis.aclose()


# -- the job stream across processes -----------------------------------------------------


@pytest.fixture
def service_processes(tmp_path):
    """``serve --no-worker`` (the API) and one ``worker`` process on a real redis-server,
    SecantusDB and SeaweedFS; two companies with an ADMIN each. Yields (api, a token, b token)."""
    import json
    import uuid

    from store.objects import ObjectStore
    from tests.s3_server import running_s3
    from tests.test_job_replicas import Infra, _spawn
    from tests.test_replicas import _stop
    from tornado_app.embedded.servers import start_redis, start_secantus

    redis = start_redis(tmp_path / "redis", persistent=False)
    mongo = start_secantus(None, tmp_path / "mongo-logs")
    processes = []
    try:
        with running_s3() as s3:
            bucket = f"f{uuid.uuid4().hex[:12]}"
            assert ObjectStore(s3.config(bucket)).test_connection(
                create_if_missing=True)["bucket_exists"]
            seed = tmp_path / "seed.json"
            seed.write_text(json.dumps({"companies": [
                {"code": code, "name": code, "users": [{
                    "username": "boss", "password": "fair queues please", "role": "ADMIN",
                    "status": "ACTIVE"}]} for code in ("FAIRA", "FAIRB")]}))
            urls = {"MONGO_URL": mongo.url, "MONGO_DB": f"f_{uuid.uuid4().hex[:10]}",
                    "REDIS_URL": redis.url, "S3_ENDPOINT": s3.endpoint,
                    "S3_ACCESS_KEY": s3.handle.access, "S3_SECRET_KEY": s3.handle.secret,
                    "S3_BUCKET": bucket}
            infra = Infra(tmp_path, urls, ObjectStore(s3.config(bucket)), seed)
            api = _spawn(infra, "api", "serve", "--no-worker", "--seed", str(seed))
            processes.append(api)
            processes.append(_spawn(infra, "worker", "worker"))
            tokens = []
            for code in ("FAIRA", "FAIRB"):
                r = api.call("POST", "/api/auth/login", {"companyCode": code,
                                                         "username": "boss",
                                                         "password": "fair queues please"})
                assert r.status == 200, r.body
                tokens.append(r.body["data"]["token"])
            yield api, tokens[0], tokens[1]
    finally:
        for process in processes:
            _stop(process)
        mongo.stop()
        redis.stop()


def test_a_worker_process_serves_companies_in_turn(service_processes):
    """Through HTTP with a real ``worker`` process: A's 10 queued batches delay B's small
    batch by less than two of A's batches (one measured in the same run)."""
    api, a, b = service_processes

    def submit(archive: bytes, token: str) -> str:
        r = api.call("POST", "/api/upload-archive", form={"async": "true"}, token=token,
                     files={"file": ("a.tgz", archive)})
        assert r.status == 200 and r.body["code"] == 0, r.body
        return str(r.body["data"]["job_id"])

    def job(job_id: str, token: str) -> dict[str, Any]:
        r = api.call("GET", f"/api/jobs/{job_id}", token=token)
        assert r.body["code"] == 0, r.body
        return dict(r.body["data"])

    def wait(job_id: str, token: str, until: Any, timeout: float = 120) -> dict[str, Any]:
        def reached() -> dict[str, Any]:
            state = job(job_id, token)
            return state if until(state) else {}

        return wait_until(reached, timeout, what=f"job {job_id} in the wanted state")

    ended = ("done", "failed", "cancelled")
    slow_archive = _slow_archive(12)
    alone = wait(submit(slow_archive, a), a, lambda s: s["state"] in ended)
    assert alone["state"] == "done", alone
    backlog = [submit(slow_archive, a) for _ in range(10)]
    try:
        wait(backlog[0], a, lambda s: s["state"] == "running")
        began = time.monotonic()
        quick = submit(_small_archive("b"), b)
        done = wait(quick, b, lambda s: s["state"] in ended)
        waited = time.monotonic() - began
        assert done["state"] == "done", done
        first = job(backlog[0], a)
        slow = max(alone["finished"] - alone["started"],
                   (first["finished"] or time.time()) - first["started"])
        assert waited < 2 * slow, (waited, slow)
        states = [job(j, a)["state"] for j in backlog]
        assert states.count("queued") >= 7, states
    finally:
        for job_id in backlog:
            api.call("POST", f"/api/jobs/{job_id}/cancel", token=a)


def test_the_limits_are_settings_and_reach_the_pool():
    from tornado_app.documents.setup import open_pool
    from tornado_app.settings import Settings

    settings = Settings.from_env({"POOL_QUEUE_LIMIT_PER_COMPANY": "3",
                                  "JOB_QUEUE_LIMIT_PER_COMPANY": "5", "POOL_WORKERS": "1"})
    assert (settings.pool_queue_limit_per_company, settings.job_queue_limit_per_company) == (3, 5)
    defaults = Settings.from_env({})
    assert (defaults.pool_queue_limit_per_company, defaults.job_queue_limit_per_company) == (8, 20)
    with pytest.raises(SystemExit, match="JOB_QUEUE_LIMIT_PER_COMPANY"):
        Settings.from_env({"JOB_QUEUE_LIMIT_PER_COMPANY": "lots"})
    holder = type("Svc", (), {"settings": settings, "pool": None})()
    pool = open_pool(holder)  # type: ignore[arg-type]  # a stub of what open_pool reads
    try:
        assert pool.tenant_queue_limit == 3 and pool.workers == 1
    finally:
        pool.close(wait=False)
