"""How the render pool hands a job to its worker and learns the outcome (issue 34, item 2):
a small job is written to the running worker's call queue by the caller itself, a large one
(or one whose arguments do not pickle) goes through ``ProcessPoolExecutor.submit`` as
before; one waiter and one timer per job; the after-job size read from an open ``statm``."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

from render_pool.runtime import procfs
from render_pool.runtime.pool import DIRECT_BYTES, RenderPool, _first_of, direct_input
from tests import pool_jobs


@pytest.fixture
def submits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions given to ``ProcessPoolExecutor.submit`` from now on."""
    seen: list[str] = []
    real = ProcessPoolExecutor.submit

    def counted(self: ProcessPoolExecutor, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(fn, "__name__", repr(fn)))
        return real(self, fn, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", counted)
    return seen


def test_direct_input_counts_bytes_and_text_arguments() -> None:
    assert direct_input((b"x" * (DIRECT_BYTES - 8), "markdown", 3), {})
    assert not direct_input((b"x" * DIRECT_BYTES, "m"), {})
    assert not direct_input((), {"data": bytearray(DIRECT_BYTES + 1)})


@pytest.mark.slow
async def test_a_small_job_skips_submit_once_its_worker_runs(io_loop: Any, submits: list[str]) -> None:
    """The worker's start-up probe goes through ``submit``; after it, a small job does not
    (no hand-over to the executor's manager and feeder threads), a large one does, and
    both answer alike."""
    pool = RenderPool(1, job_timeout=20, memory_limit_mb=400)
    try:
        assert await pool.run(pool_jobs.echo, "first", tenant="co") == "first"
        started = list(submits)
        assert started == ["getpid"]
        assert await pool.run(pool_jobs.echo, b"small", tenant="co") == b"small"
        assert submits == started
        large = b"y" * (DIRECT_BYTES + 1)
        assert await pool.run(pool_jobs.echo, large, tenant="co") == large
        assert submits == [*started, "_bounded_call"]
    finally:
        pool.close(wait=False)


@pytest.mark.slow
async def test_an_argument_that_does_not_pickle_fails_as_through_submit(io_loop: Any) -> None:
    """Pickling fails in the caller now: the job goes the executor's own way, which fails
    it as it always did, and the worker takes the next job."""
    pool = RenderPool(1, job_timeout=20, memory_limit_mb=400)
    plain = ProcessPoolExecutor(1)
    try:
        assert await pool.run(pool_jobs.echo, 1, tenant="co") == 1
        with pytest.raises(Exception) as expected:
            plain.submit(pool_jobs.echo, lambda: None).result(20)
        with pytest.raises(type(expected.value)):
            await pool.run(pool_jobs.echo, lambda: None, tenant="co")
        assert await pool.run(pool_jobs.echo, "next", tenant="co") == "next"
        assert pool.restarts == 0
    finally:
        pool.close(wait=False)
        plain.shutdown(wait=False)


@pytest.mark.slow
async def test_a_worker_killed_under_a_direct_job_is_replaced(io_loop: Any) -> None:
    """The manager thread sees the worker die under a job it never handed over itself,
    and fails it; the pool retries it on a fresh worker."""
    pool = RenderPool(1, job_timeout=20, memory_limit_mb=400)
    try:
        first = await pool.run(pool_jobs.pid, tenant="co")
        running = asyncio.ensure_future(pool.run(pool_jobs.sleep_then, 1.0, "x", tenant="co"))
        await asyncio.sleep(0.3)
        os.kill(first, 9)
        assert await running == "x"
        assert pool.restarts == 1
        assert await pool.run(pool_jobs.pid, tenant="co") != first
    finally:
        pool.close(wait=False)


async def _waited(job: asyncio.Future[Any], preempt: asyncio.Future[None],
                  limit: float) -> None:
    await _first_of(asyncio.get_running_loop(), job, preempt, limit)


def test_first_of_returns_at_the_first_of_job_preemption_and_time() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        for ends in ("job", "preempt", "time"):
            job: asyncio.Future[int] = loop.create_future()
            preempt: asyncio.Future[None] = loop.create_future()
            if ends == "job":
                loop.call_later(0.01, job.set_result, 1)
            elif ends == "preempt":
                loop.call_later(0.01, preempt.set_result, None)
            await asyncio.wait_for(_waited(job, preempt, 0.05 if ends == "time" else 30), 10)
            assert (job.done(), preempt.done()) == (ends == "job", ends == "preempt")
            for pending in (job, preempt):  # nothing of the wait is left on them
                assert pending.done() or not pending._callbacks

    asyncio.run(scenario())


def test_first_of_passes_a_cancellation_on_and_leaves_nothing_behind() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        job: asyncio.Future[int] = loop.create_future()
        preempt: asyncio.Future[None] = loop.create_future()
        waiting = asyncio.ensure_future(_waited(job, preempt, 30))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert not job._callbacks and not preempt._callbacks

    asyncio.run(scenario())


def test_own_rss_reads_the_same_size_from_an_open_statm() -> None:
    """This process's size from its open ``statm`` is what a fresh read says; the file is
    opened once; a forked child reads its own."""
    procfs.own_rss_kb()
    opened = procfs._own_statm
    ballast = bytearray(64 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    fresh, kept = procfs.rss_kb(os.getpid()), procfs.own_rss_kb()
    assert abs(kept - fresh) < 4096 and kept >= 64 * 1024
    assert procfs._own_statm == opened
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            ok = procfs._own_statm is not None and procfs._own_statm[0] != os.getpid()
            size = procfs.own_rss_kb()
            reopened = procfs._own_statm
            ok = ok and reopened is not None and reopened[0] == os.getpid()
            ok = ok and abs(size - procfs.rss_kb(os.getpid())) < 4096
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(child, 0)
    os.close(read)
    del ballast
