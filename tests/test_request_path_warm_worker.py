"""Which idle worker takes a job (issue 34, item 2): one caller's jobs in a row run in the
worker that ran the last one, whose caches are warm, so a one-paragraph document does not pay
for a worker idle since the job before last; a worker left holding more than half the
memory bound is taken only after every other idle one."""

from __future__ import annotations

import pytest

from render_pool.runtime.pool import RenderPool
from tests import pool_jobs

pytestmark = pytest.mark.slow  # starts a process pool


async def test_jobs_in_a_row_run_in_the_worker_that_ran_the_last_one(io_loop: object) -> None:
    pool = RenderPool(2, queue_limit=1, job_timeout=20, memory_limit_mb=400)
    try:
        pids = [await pool.run(pool_jobs.pid, tenant="co") for _ in range(6)]
        assert len(set(pids)) == 1
        assert pool.restarts == 0
    finally:
        pool.close(wait=False)


async def test_a_worker_holding_much_memory_is_taken_last(io_loop: object) -> None:
    pool = RenderPool(2, queue_limit=1, job_timeout=20, memory_limit_mb=400)
    try:
        await pool.run(pool_jobs.pid, tenant="co")
        fat = await pool.run(pool_jobs.hog, 250, tenant="co")
        after = [await pool.run(pool_jobs.pid, tenant="co") for _ in range(4)]
        assert fat not in after
        assert pool.restarts == 0  # under the bound: kept, just rested
    finally:
        pool.close(wait=False)
