"""``just soak``: a bounded mixed load against one service for a set time.

A few concurrent clients log in, call ``me``, administer users, convert DOCX and PDF,
render Markdown to PDF and DOCX and upload small archives against one ``serve`` process on
embedded defaults. The run reports requests, errors (must be 0), p50/p99 per route, and the
resident memory of the service, its pool workers and Chromium after a warm-up and at the
end (growth must stay under 10 %).

``--faults`` adds one fault pass during the load: kill -9 one pool worker, kill -9 every
Chromium process, stop then restart Redis (a redis-server this script runs, on the same
unix socket, with an append-only file), and kill -9 a second replica while it runs a job.
Every request must still get an answer; error answers are accepted only inside the fault
windows, connection errors never.

Under ``--faults`` the service runs on a Redis, SecantusDB and SeaweedFS this script starts,
beside a ``worker`` process on the same three (the second consumer of the job queue), and
batches of archive jobs (``async=true``) are sent to the service during the load. The fault
pass waits until a job runs on the worker, kills the worker with SIGKILL and starts a fresh
one. At the end every accepted job must have ended ``done``: none failed, none lost (still
queued or running, or gone).

    python -m bench.soak --seconds 60 [--faults] [--clients 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tornado.httpclient import AsyncHTTPClient

from bench.soak.faults import fault_pass, sample_rss
from bench.soak.jobs import JOB_CLAIM_IDLE, JOB_END_WAIT, Jobs
from bench.soak.load import Client, Run, load_inputs
from bench.soak.processes import (
    Service,
    marked_processes,
    rss_by_group,
    start_service,
    start_worker,
    stop_service,
)
from bench.soak.report import report
from tornado_app.embedded.seaweed import SeaweedHandle, start_seaweed
from tornado_app.embedded.servers import Child, start_redis, start_secantus


# ---------------------------------------------------------------- main
async def soak(seconds: float, clients: int, faults: bool, warmup: float) -> bool:
    AsyncHTTPClient.configure(None, max_clients=clients * 2 + 4)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    marker = f"SOAK_RUN_ID={uuid.uuid4().hex}"
    env_extra = {"SOAK_RUN_ID": marker.split("=", 1)[1]}
    holder: dict[str, Any] = {}
    shared: list[Child | SeaweedHandle] = []  # started here, stopped last
    redis_dir = work / "redis"
    workers = 0

    async def restart_worker() -> Service:
        nonlocal workers
        workers += 1
        return await start_worker(work, env_extra, f"worker-{workers}")

    try:
        if faults:  # two consumers on one Redis, SecantusDB and SeaweedFS
            holder["redis"] = start_redis(redis_dir, persistent=True)
            mongo = start_secantus(None, work / "mongo-logs")
            shared.append(mongo)
            s3 = start_seaweed(work / "s3", buckets=["soak"], persist_ports=False)
            shared.append(s3)
            env_extra.update(REDIS_URL=holder["redis"].url, MONGO_URL=mongo.url,
                             MONGO_DB="soak", S3_ENDPOINT=s3.endpoint, S3_ACCESS_KEY=s3.access,
                             S3_SECRET_KEY=s3.secret, S3_BUCKET="soak",
                             JOB_CLAIM_IDLE_SECONDS=str(JOB_CLAIM_IDLE))
        service = await start_service(work, env_extra)
    except BaseException:
        for child in [holder.get("redis"), *shared]:
            if child is not None:
                child.stop()
        raise
    run = Run()
    jobs: Jobs | None = None
    try:
        if faults:
            holder["worker"] = await restart_worker()
        inputs = load_inputs()
        users = [Client(i, service.base, run, inputs) for i in range(clients)]
        for c in users:
            await c.setup()
        # prime every part before the clock runs (these calls are not part of the load):
        # logins at once (both hashing threads), then each client through every conversion
        # (every pool worker and its Chromium started)
        await asyncio.gather(*(c.op_login() for c in users))
        await asyncio.gather(*(c.prime() for c in users))
        if faults:
            jobs = Jobs(Client(clients, service.base, run, inputs))
            await jobs.prime()
            jobs.accepted.clear()
        run.records.clear()
        run.t0, run.wall0 = time.monotonic(), time.time()
        deadline = run.t0 + seconds
        print(f"soak: {clients} clients for {seconds:.0f} s (warm-up {warmup:.0f} s)"
              f"{', with faults' if faults else ''}; service pid {service.process.pid}, "
              f"work dir {work}", flush=True)
        load = asyncio.gather(*(c.loop(deadline) for c in users))

        async def measure() -> tuple[dict, dict]:
            await asyncio.sleep(warmup)
            start = await sample_rss(service.process.pid)
            await asyncio.sleep(max(0.0, deadline - time.monotonic() - 6))
            end = await sample_rss(service.process.pid)
            return start, end

        async def timeline() -> None:
            while time.monotonic() < deadline - 1:
                run.timeline.append((time.monotonic() - run.t0,
                                     rss_by_group(service.process.pid)))
                await asyncio.sleep(max(5.0, seconds / 12))

        tasks: list[Any] = [load, measure(), timeline()]
        if jobs is not None:
            span = seconds - warmup
            at = [warmup + span * f for f in (0.2, 0.4, 0.6, 0.8)]
            tasks += [jobs.feed(deadline),
                      fault_pass(run, service, holder["redis"], redis_dir, at, holder, jobs,
                                 restart_worker)]
        results = await asyncio.gather(*tasks)
        mem_start, mem_end = results[1]
        if jobs is not None:
            await jobs.settle(JOB_END_WAIT)
        health = await AsyncHTTPClient().fetch(service.base + "/health", raise_error=False)
        healthy = health.code == 200
    finally:
        exit_code = await asyncio.to_thread(stop_service, service)
        if "worker" in holder:
            await asyncio.to_thread(stop_service, holder["worker"])
        await asyncio.sleep(1.0)
        leaks = [p for p in marked_processes(marker) if p != os.getpid()]
        for pid in leaks:  # descendants of the service that outlived it: report, then end
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for child in [holder.get("redis"), *shared]:
            if child is not None:
                child.stop()
    ok = report(run, seconds, faults, mem_start, mem_end, exit_code, leaks, clients, jobs)
    if not healthy:
        print("the service did not answer /health after the run")
    if ok and healthy:
        shutil.rmtree(work, ignore_errors=True)
        return True
    print(f"service log kept: {service.log_path}")
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--seconds", type=float,
                        default=float(os.environ.get("SOAK_SECONDS") or 300),
                        help="load duration including warm-up (default 300, env SOAK_SECONDS)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (4)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds before the first memory sample (20 %% of the run, "
                             "10-60 s)")
    parser.add_argument("--faults", action="store_true",
                        help="kill a pool worker, kill Chromium, restart Redis and kill a "
                             "second replica (a worker) mid-job, while archive jobs run")
    args = parser.parse_args(argv)
    warmup = args.warmup if args.warmup is not None else min(60.0, max(15.0,
                                                                       args.seconds * 0.2))
    if args.seconds < warmup + 20:
        parser.error("--seconds must leave at least 20 s after the warm-up")
    ok = asyncio.run(soak(args.seconds, args.clients, args.faults, warmup))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
