"""The render pool: admission control, time limits, crash recovery, memory guard."""

from __future__ import annotations

import asyncio
import os

import pytest

from render_pool.errors import CorruptDocument
from render_pool.runtime.pool import (
    JobTimeout,
    MemoryLimitExceeded,
    PoolBusy,
    RenderPool,
    WorkerCrashed,
)
from tests import pool_jobs
from tests.processes import is_alive
from tests.waiting import eventually

pytestmark = pytest.mark.slow  # each test starts a process pool


@pytest.fixture
def pool():
    p = RenderPool(2, queue_limit=1, job_timeout=20, memory_limit_mb=400)
    yield p
    p.close(wait=False)


async def test_runs_jobs_in_other_processes(io_loop, pool):
    assert await pool.run(pool_jobs.echo, {"a": [1, 2]}, tenant="co") == {"a": [1, 2]}
    assert await pool.run(pool_jobs.pid, tenant="co") != os.getpid()


async def test_engine_errors_keep_their_code(io_loop, pool):
    with pytest.raises(CorruptDocument) as info:
        await pool.run(pool_jobs.corrupt, tenant="co")
    assert info.value.code == 40003 and "not a document" in info.value.message


async def test_queue_is_bounded(io_loop, pool):
    running = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.0, i, tenant="co"))
               for i in range(3)]
    await eventually(lambda: pool.in_flight == 3, what="two running and one queued")
    with pytest.raises(PoolBusy) as info:
        await pool.run(pool_jobs.echo, 1, tenant="co")
    assert info.value.code == 50301
    assert sorted(await asyncio.gather(*running)) == [0, 1, 2]
    assert await pool.run(pool_jobs.echo, "after", tenant="co") == "after"


async def test_timeout_replaces_stuck_worker_and_others_survive(io_loop, pool):
    slow_ok = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.5, "survivor", tenant="co"))
    with pytest.raises(JobTimeout) as info:
        await pool.run(pool_jobs.sleep_then, 60, "never", timeout=0.5, tenant="co")
    assert info.value.code == 50401
    assert pool.restarts == 1
    assert await slow_ok == "survivor"
    assert await pool.run(pool_jobs.echo, "next", tenant="co") == "next"


async def test_stuck_job_kills_only_its_own_worker(io_loop, tmp_path):
    """A stuck job beside three healthy ones (four slots): the healthy ones run exactly once
    and finish, the stuck one answers 50401 and only its worker is replaced."""
    pool = RenderPool(4, queue_limit=0, job_timeout=30, memory_limit_mb=1000)
    try:
        await asyncio.gather(*(pool.run(pool_jobs.sleep_then, 0.3, i, tenant="co")
                               for i in range(4)))
        before = set(pool.worker_pids())
        assert len(before) == 4
        log = tmp_path / "runs.txt"
        healthy = [asyncio.ensure_future(pool.run(pool_jobs.record_then, str(log), 1.5, i,
                                                  tenant="co"))
                   for i in range(3)]
        stuck = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 600, "never", timeout=0.5,
                                               tenant="co"))
        with pytest.raises(JobTimeout) as info:
            await stuck
        assert info.value.code == 50401
        assert sorted(await asyncio.gather(*healthy)) == [0, 1, 2]
        assert sorted(log.read_text().split()) == ["0", "1", "2"]  # each ran once, none re-run
        after = set(pool.worker_pids())
        assert pool.restarts == 1 and len(before - after) == 1
        (killed,) = before - after
        # SIGKILL is asynchronous; the zombie is reaped shortly
        await eventually(lambda: not is_alive(killed), what="the stuck worker gone")
        assert await pool.run(pool_jobs.echo, "next", tenant="co") == "next"
    finally:
        pool.close(wait=False)


async def test_time_limit_starts_when_the_job_starts(io_loop):
    """A job that waited in the queue longer than its limit still runs to completion."""
    pool = RenderPool(1, queue_limit=2, job_timeout=30, memory_limit_mb=1000)
    try:
        await pool.run(pool_jobs.echo, "warm", tenant="co")
        first = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.5, "first", timeout=10,
                                               tenant="co"))
        await eventually(lambda: pool.in_flight == 1, what="the first job admitted")
        second = await pool.run(pool_jobs.sleep_then, 0.2, "second", timeout=1.0, tenant="co")
        assert (await first, second) == ("first", "second")
        assert pool.restarts == 0
    finally:
        pool.close(wait=False)


async def test_crashed_worker_is_recovered(io_loop, pool):
    with pytest.raises(WorkerCrashed):
        await pool.run(pool_jobs.crash, tenant="co")
    assert pool.restarts >= 1
    assert await pool.run(pool_jobs.echo, "alive", tenant="co") == "alive"


async def test_memory_guard_retires_a_bloated_worker(io_loop, pool):
    """Under its hard limit (400 MB) a worker that grew past the resident bound is retired
    after the job, which still succeeds."""
    await pool.run(pool_jobs.hog, 200, tenant="co")
    assert pool.restarts == 0
    pool.memory_limit_mb = 150  # the after-job bound only: the workers keep their own limit
    fat_pid = await pool.run(pool_jobs.hog, 200, tenant="co")
    assert pool.restarts == 1
    pids = {await pool.run(pool_jobs.pid, tenant="co") for _ in range(4)}
    assert fat_pid not in pids


async def test_hard_limit_fails_the_job_and_replaces_its_worker(io_loop, pool):
    """A job that allocates past the worker's hard limit answers 41301 with the limit in
    the message, while it runs (not after), its worker is replaced, and the other slot's
    job and the next job succeed."""
    assert await pool.run(pool_jobs.address_limit, tenant="co") == 400 * 1024 * 1024
    beside = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.0, "beside", tenant="co"))
    fat_pid = await pool.run(pool_jobs.pid, tenant="co")
    with pytest.raises(MemoryLimitExceeded) as info:
        await pool.run(pool_jobs.hog, 2000, tenant="co")
    assert info.value.code == 41301 and "400 MB" in info.value.message
    assert pool.restarts == 1
    assert await beside == "beside"
    assert await pool.run(pool_jobs.echo, "next", tenant="co") == "next"
    with pytest.raises(MemoryLimitExceeded):  # an engine that wraps the MemoryError too
        await pool.run(pool_jobs.wrapped_hog, 2000, tenant="co")
    pids = {await pool.run(pool_jobs.pid, tenant="co") for _ in range(4)}
    assert fat_pid not in pids


async def test_chromium_prints_under_the_hard_limit(io_loop):
    """Chromium and its driver are started outside the worker's limit: a worker limited to
    300 MB, far below what Chromium reserves, still prints a PDF, and keeps its limit."""
    pool = RenderPool(1, queue_limit=1, job_timeout=60, memory_limit_mb=300)
    try:
        pdf = await pool.run(pool_jobs.print_pdf, tenant="co")
        assert pdf.startswith(b"%PDF-") and len(pdf) > 500
        assert await pool.run(pool_jobs.address_limit, tenant="co") == 300 * 1024 * 1024
        with pytest.raises(MemoryLimitExceeded):
            await pool.run(pool_jobs.hog, 400, tenant="co")
        assert (await pool.run(pool_jobs.print_pdf, tenant="co")).startswith(b"%PDF-")
    finally:
        pool.close(wait=False)


async def test_a_caller_that_leaves_frees_its_slot(io_loop):
    """A request cancelled while its job waits, starts or runs gives its slot back once the
    job is over; later jobs still run."""
    pool = RenderPool(1, queue_limit=4, job_timeout=30, memory_limit_mb=1000)
    try:
        starting = asyncio.ensure_future(pool.run(pool_jobs.echo, "never seen", tenant="co"))
        await asyncio.sleep(0)  # it holds the slot while the worker starts
        queued = asyncio.ensure_future(pool.run(pool_jobs.echo, "queued", tenant="co"))
        await asyncio.sleep(0)
        starting.cancel()
        queued.cancel()
        running = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 0.5, "left", tenant="co"))
        await asyncio.sleep(0.2)
        running.cancel()
        assert await asyncio.wait_for(pool.run(pool_jobs.echo, "after", tenant="co"), 20) == "after"
        assert pool.in_flight == 0 and pool.restarts == 0
    finally:
        pool.close(wait=False)


async def test_memory_guard_counts_a_workers_children(io_loop, pool, monkeypatch):
    """The after-job bound is the worker's size with its children's (Chromium, LibreOffice):
    a worker whose child holds 200 MB is retired after the job. A worker without children
    is measured by itself, in the worker: the service walks no process tree after its job
    (a walk reads every process of the machine, milliseconds on the event loop per job)."""
    import render_pool.runtime.pool as pool_module

    walks: list[int] = []
    real_walk = pool_module.tree_rss_mb

    def counted_walk(pid: int) -> float:
        walks.append(pid)
        return real_walk(pid)

    monkeypatch.setattr(pool_module, "tree_rss_mb", counted_walk)
    pool.memory_limit_mb = 150  # the after-job bound only: the workers keep their own limit
    assert await pool.run(pool_jobs.echo, "small", tenant="co") == "small"
    assert pool.restarts == 0 and walks == []
    child = await pool.run(pool_jobs.child_hog, 200, tenant="co")
    try:
        assert pool.restarts == 1
    finally:
        os.kill(child, 9)


async def test_a_companys_spread_scans_do_not_fill_the_queue_for_others(io_loop):
    """Two scans of one company, each spreading a window of ``workers`` pages over the pool
    (``admitted`` parts), count as two requests: another company is still admitted and
    served; the queue's limit still holds when enough requests spread at once."""
    pool = RenderPool(2, queue_limit=2, job_timeout=30, memory_limit_mb=0)

    async def scan(pages: int) -> list[object]:
        with pool.spreading():
            return await asyncio.gather(*(
                pool.run(pool_jobs.sleep_then, 0.5, n, tenant="A", admitted=True)
                for n in range(pages)))

    try:
        await pool.run(pool_jobs.echo, "warm", tenant="A")
        scans = [asyncio.ensure_future(scan(2)) for _ in range(2)]
        await eventually(lambda: pool.in_flight == 4, what="the scans' pages in flight")
        assert await pool.run(pool_jobs.echo, "b", tenant="B") == "b"
        assert await asyncio.gather(*scans) == [[0, 1], [0, 1]]
        scans = [asyncio.ensure_future(scan(1)) for _ in range(4)]  # workers + queue_limit
        await eventually(lambda: pool.in_flight == 4, what="four scans spreading")
        with pytest.raises(PoolBusy):
            await pool.run(pool_jobs.echo, "b", tenant="B")
        await asyncio.gather(*scans)
    finally:
        pool.close(wait=False)


async def test_large_inputs_reach_the_job_through_a_file_that_is_removed(io_loop, pool,
                                                                         tmp_path, monkeypatch):
    """A large upload is handed over as a file (no 47 MB pickle in the service); the job
    gets the same bytes, and the file is gone once the job is done."""
    import hashlib
    import tempfile

    from render_pool.runtime import pool as pool_module

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    handed: list[object] = []
    spill = pool_module._spill
    monkeypatch.setattr(pool_module, "_spill",
                        lambda args, kwargs: handed.append(spill(args, kwargs)) or handed[-1])
    data = os.urandom(pool_module.SPILL_BYTES + 17)
    small = b"tail bytes"
    got = await pool.run(pool_jobs.digest, data, tail=small, tenant="co")
    assert got == (len(data) + len(small), hashlib.sha256(data + small).hexdigest())
    assert len(handed) == 1  # the large input went as a file
    assert await pool.run(pool_jobs.digest, small, tenant="co") == (
        len(small), hashlib.sha256(small).hexdigest())
    assert len(handed) == 1  # a small one through the pipe as before
    assert list(tmp_path.iterdir()) == []  # written there, then removed
    spilled = spill((data,), {"tail": small})
    try:
        assert isinstance(spilled[0][0], pool_module._Spilled) and spilled[1]["tail"] == small
        assert [p.name.startswith("pool-input-") for p in tmp_path.iterdir()] == [True]
    finally:
        pool_module._remove_spilled(*spilled)
    assert list(tmp_path.iterdir()) == []
