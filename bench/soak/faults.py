"""The soak's fault pass (pool worker, Chromium, Redis, job worker) and memory sampling."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.soak import GRACE
from bench.soak.jobs import Jobs, kill_worker
from bench.soak.load import Run, Window
from bench.soak.processes import Service, groups, rss_by_group
from tornado_app.embedded.servers import Child, start_redis


# ---------------------------------------------------------------- faults
async def _first_success(run: Run, routes: set[str], after: float, limit: float = 60) -> float:
    """Seconds from ``after`` until a request of ``routes`` that started after it succeeds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for r in run.records:
            if r.route in routes and r.start >= after and r.outcome == "ok":
                return r.end - after
        await asyncio.sleep(0.2)
    return float("nan")


POOL_ROUTES = {"POST /api/convert (docx)", "POST /api/convert (pdf)", "POST /md/convert (docx)"}
CHROMIUM_ROUTES = {"POST /md/convert (pdf)"}
REDIS_ROUTES = {"GET /api/auth/me", "POST /api/auth/login"}


async def fault_pass(run: Run, service: Service, redis: Child, redis_dir: Path,
                     at: list[float], holder: dict[str, Any], jobs: Jobs,
                     restart_worker: Callable[[], Any]) -> None:
    """Kill a pool worker, kill Chromium, restart Redis, kill the job worker mid-job, at
    the given offsets (s)."""
    await asyncio.sleep(max(0.0, run.t0 + at[0] - time.monotonic()))
    workers = groups(service.process.pid).get("pool worker", [])
    if workers:
        now = time.monotonic()
        os.kill(workers[0], signal.SIGKILL)
        w = Window(f"kill -9 pool worker (pid {workers[0]})", now)
        run.windows.append(w)
        w.recovered_after = await _first_success(run, POOL_ROUTES, now)
        w.end = now + (w.recovered_after or 0) + GRACE

    await asyncio.sleep(max(0.0, run.t0 + at[1] - time.monotonic()))
    chromium = groups(service.process.pid).get("chromium", [])
    now = time.monotonic()
    for pid in chromium:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    w = Window(f"kill -9 chromium ({len(chromium)} processes)", now)
    run.windows.append(w)
    w.recovered_after = await _first_success(run, CHROMIUM_ROUTES, now)
    w.end = now + (w.recovered_after or 0) + GRACE

    await asyncio.sleep(max(0.0, run.t0 + at[2] - time.monotonic()))
    now = time.monotonic()
    w = Window("restart redis (3 s outage)", now)
    run.windows.append(w)
    await asyncio.to_thread(redis.stop)
    await asyncio.sleep(3)
    restarted = await asyncio.to_thread(start_redis, redis_dir, persistent=True)
    holder["redis"] = restarted
    up = time.monotonic()
    rec = await _first_success(run, REDIS_ROUTES, up)
    w.recovered_after = (up - now) + rec
    w.end = up + rec + GRACE

    await asyncio.sleep(max(0.0, run.t0 + at[3] - time.monotonic()))
    await kill_worker(run, jobs, holder, restart_worker)


# ---------------------------------------------------------------- memory sampling
async def sample_rss(service_pid: int, n: int = 9, gap: float = 0.5
                     ) -> dict[str, tuple[int, float]]:
    """The lowest of ``n`` samples ``gap`` s apart, per class. Render processes come and go
    under load (Chromium's sum jumps by a few hundred MiB between samples); the floor is
    what a leak raises, so it is what growth is judged on."""
    samples = []
    for i in range(n):
        samples.append(rss_by_group(service_pid))
        if i < n - 1:
            await asyncio.sleep(gap)
    names = {k for s in samples for k in s}
    return {k: (max(s.get(k, (0, 0.0))[0] for s in samples),
                min(s.get(k, (0, 0.0))[1] for s in samples)) for k in names}


