"""A pool worker sets aside what its first job left behind (issue 34): the collector's later
passes walk only what later jobs allocate."""

from __future__ import annotations

import gc

import pytest

from render_pool.runtime.pool import RenderPool

pytestmark = pytest.mark.slow  # starts a process pool


def frozen_objects() -> int:
    """A job: how many objects the worker's collector has set aside for good."""
    return gc.get_freeze_count()


async def test_a_worker_freezes_its_heap_after_its_first_job(io_loop: object) -> None:
    pool = RenderPool(1, queue_limit=1, job_timeout=20)
    try:
        assert await pool.run(frozen_objects, tenant="co") == 0  # during the first job
        assert await pool.run(frozen_objects, tenant="co") > 1000  # the imports set aside
    finally:
        pool.close(wait=False)
