"""The render pool: admission control, time limits, crash recovery, memory guard."""

from __future__ import annotations

import asyncio

import pytest

from render_pool.errors import CorruptDocument
from render_pool.pool import JobTimeout, PoolBusy, RenderPool, WorkerCrashed
from tests import pool_jobs


@pytest.fixture
def pool():
    p = RenderPool(2, queue_limit=1, job_timeout=20, memory_limit_mb=400)
    yield p
    p.close(wait=False)


async def test_runs_jobs_in_other_processes(io_loop, pool):
    import os

    assert await pool.run(pool_jobs.echo, {"a": [1, 2]}) == {"a": [1, 2]}
    assert await pool.run(pool_jobs.pid) != os.getpid()


async def test_engine_errors_keep_their_code(io_loop, pool):
    with pytest.raises(CorruptDocument) as info:
        await pool.run(pool_jobs.corrupt)
    assert info.value.code == 40003 and "not a document" in info.value.message


async def test_queue_is_bounded(io_loop, pool):
    running = [asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.0, i)) for i in range(3)]
    await asyncio.sleep(0.05)
    with pytest.raises(PoolBusy) as info:
        await pool.run(pool_jobs.echo, 1)
    assert info.value.code == 50301
    assert sorted(await asyncio.gather(*running)) == [0, 1, 2]
    assert await pool.run(pool_jobs.echo, "after") == "after"


async def test_timeout_replaces_stuck_worker_and_others_survive(io_loop, pool):
    slow_ok = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.5, "survivor"))
    with pytest.raises(JobTimeout) as info:
        await pool.run(pool_jobs.sleep_then, 60, "never", timeout=0.5)
    assert info.value.code == 50401
    assert pool.restarts == 1
    assert await slow_ok == "survivor"  # retried on the fresh executor
    assert await pool.run(pool_jobs.echo, "next") == "next"


async def test_crashed_worker_is_recovered(io_loop, pool):
    with pytest.raises(WorkerCrashed):
        await pool.run(pool_jobs.crash)
    assert pool.restarts >= 1
    assert await pool.run(pool_jobs.echo, "alive") == "alive"


async def test_memory_guard_retires_a_bloated_worker(io_loop, pool):
    fat_pid = await pool.run(pool_jobs.hog, 600)
    assert pool.restarts == 1
    pids = {await pool.run(pool_jobs.pid) for _ in range(4)}
    assert fat_pid not in pids
