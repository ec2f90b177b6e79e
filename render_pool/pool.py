"""The bounded process pool that runs parsing and rendering off the event loop.

- Bounded: at most ``workers + queue_limit`` jobs are accepted at once; more raise
  :class:`PoolBusy` at once (the service answers 50301) instead of queueing without end.
- Time-limited: a job over its limit raises :class:`JobTimeout` (50401); its worker is
  stuck, so the executor is replaced and its processes are killed.
- Self-healing: a crashed worker (``BrokenProcessPool``) replaces the executor; the jobs
  that were running on it are retried once on the new one.
- Memory-guarded: after each job the workers' resident size is read (psutil); an
  executor whose worker passed the bound is retired gracefully (its running jobs finish,
  new jobs go to a fresh executor).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from render_pool.errors import ConversionError, ConversionTimeout
from render_pool.procfs import descendants, tree_rss_mb

log = logging.getLogger("render_pool.pool")
T = TypeVar("T")


class PoolBusy(ConversionError):
    """The render queue is full; try again (50301)."""

    code = 50301


class JobTimeout(ConversionTimeout):
    """The job ran past the pool's time limit (50401)."""


class WorkerCrashed(ConversionError):
    """The worker died while running the job, twice (50001)."""

    code = 50001


def _worker_init() -> None:
    # Ctrl-C in a terminal reaches the whole process group: the parent decides, not workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class PoolStats:
    workers: int
    queue_limit: int
    in_flight: int
    restarts: int


class RenderPool:
    """A ``ProcessPoolExecutor`` with admission control, time limits and recovery."""

    def __init__(self, workers: int = 0, *, queue_limit: int = 16, job_timeout: float = 120.0,
                 memory_limit_mb: int = 1500) -> None:
        self.workers = workers or max(1, os.cpu_count() or 1)
        self.queue_limit = queue_limit
        self.job_timeout = job_timeout
        self.memory_limit_mb = memory_limit_mb
        self.in_flight = 0
        self.restarts = 0
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
        )

    def worker_pids(self) -> list[int]:
        """Pids of the current executor's worker processes."""
        procs = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in list(procs.values()) if p.pid]

    def stats(self) -> PoolStats:
        return PoolStats(self.workers, self.queue_limit, self.in_flight, self.restarts)

    def _replace(self, executor: ProcessPoolExecutor, *, kill: bool, reason: str) -> None:
        """Swap in a fresh executor (once per broken one); kill the old workers if asked."""
        if executor is not self._executor:
            return
        self.restarts += 1
        log.warning("replacing pool executor", extra={"reason": reason})
        self._executor = self._new_executor()
        procs = list((getattr(executor, "_processes", None) or {}).values())
        if kill:
            for p in procs:
                for pid in [*descendants(p.pid), p.pid]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        executor.shutdown(wait=False, cancel_futures=False)

    def _check_memory(self, executor: ProcessPoolExecutor) -> None:
        procs = getattr(executor, "_processes", None) or {}
        for p in list(procs.values()):
            if p.pid and tree_rss_mb(p.pid) > self.memory_limit_mb:
                self._replace(executor, kill=False, reason="worker memory over bound")
                return

    async def run(self, fn: Callable[..., T], *args: Any, timeout: float | None = None,
                  **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` in a worker; raises PoolBusy, JobTimeout, WorkerCrashed
        or whatever ConversionError the engine raised."""
        if self.in_flight >= self.workers + self.queue_limit:
            raise PoolBusy("the render queue is full; try again shortly")
        self.in_flight += 1
        try:
            for attempt in (1, 2):
                executor = self._executor
                try:
                    future = executor.submit(fn, *args, **kwargs)
                except (BrokenProcessPool, RuntimeError):
                    self._replace(executor, kill=True, reason="executor unusable at submit")
                    continue
                try:
                    result = await asyncio.wait_for(asyncio.wrap_future(future),
                                                    timeout or self.job_timeout)
                except TimeoutError as exc:
                    self._replace(executor, kill=True, reason="job timed out")
                    raise JobTimeout(
                        f"conversion took longer than {timeout or self.job_timeout:.0f} s") from exc
                except BrokenProcessPool as exc:
                    self._replace(executor, kill=True, reason="worker died")
                    if attempt == 2:
                        raise WorkerCrashed("the conversion worker crashed") from exc
                    continue
                self._check_memory(executor)
                return result
            raise WorkerCrashed("the conversion worker crashed")
        finally:
            self.in_flight -= 1

    def close(self, wait: bool = True) -> None:
        """Stop the workers (waiting for running jobs when ``wait``)."""
        self._executor.shutdown(wait=wait, cancel_futures=True)
