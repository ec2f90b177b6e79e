"""The soak's archive jobs under ``--faults``: batches sent with ``async=true``, a worker
killed with SIGKILL while it runs one, and the count at the end (none may be lost)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tornado.httpclient import HTTPRequest

from bench.archives import build_archive
from bench.common import AUTH_HEADER, multipart
from bench.soak.load import Client, Run, Window, answer_json, docs_ok
from bench.soak.processes import Service

# ---------------------------------------------------------------- jobs (--faults)
JOB_ROUTE = "POST /api/upload-archive (async)"
JOB_CLAIM_IDLE = 3  # JOB_CLAIM_IDLE_SECONDS of both consumers under --faults
JOB_BATCH = 4  # jobs sent at once, whenever at most one is still open
JOB_DOCS, JOB_IMAGES = 40, 40  # per archive job (Markdown files, images)
JOB_END_WAIT = 180.0  # after the load: how long the accepted jobs may take to end
ENDED = ("done", "failed", "cancelled")


def consumer_pid(record: dict[str, Any]) -> int:
    """The pid in a job's ``consumer`` (host:pid:random), 0 when it has none."""
    parts = str(record.get("consumer") or "").split(":")
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0


@dataclass
class WorkerKill:
    pid: int
    job: str  # the job seen running on it just before
    at: float  # time.time() of the kill (jobs carry wall-clock times)
    mid_job: bool  # that job was still running on it when it died


class Jobs:
    """Archive jobs sent in batches to the service during the load (either consumer runs
    them), and what became of every accepted one."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.archive = build_archive(JOB_DOCS, JOB_IMAGES)
        self.accepted: dict[str, float] = {}  # job id -> accepted at (time.time())
        self.latest: dict[str, dict[str, Any]] = {}
        self.kills: list[WorkerKill] = []
        self.settled_after = float("nan")
        self.sent = 0

    async def submit(self) -> None:
        """One async archive upload (part of the load's figures); keeps the job id."""
        self.sent += 1
        resp = await self.client.call(
            JOB_ROUTE, "POST", "/api/upload-archive", docs_ok,
            form=multipart({"async": "true", "prefix": f"soak/jobs/{self.sent}"},
                           {"file": ("batch.zip", self.archive)}))
        body = answer_json(resp) if resp is not None else None
        if resp is not None and not docs_ok(resp) and isinstance(body, dict):
            self.accepted[body["data"]["job_id"]] = time.time()

    async def _get(self, path: str) -> Any:
        """The data of a GET that answered code 0, else None (polling is not load)."""
        req = HTTPRequest(self.client.base + path, headers=AUTH_HEADER, request_timeout=30)
        try:
            resp = await self.client.http.fetch(req, raise_error=False)
        except Exception:  # the service is busy restarting Redis: try later
            return None
        body = answer_json(resp)
        ok = resp.code == 200 and isinstance(body, dict) and body.get("code") == 0
        return body["data"] if ok else None

    async def refresh(self) -> None:
        """The latest state of recent jobs (one list call)."""
        data = await self._get("/api/jobs?pageSize=100")
        for item in (data or {}).get("items", []):
            if item["id"] in self.accepted:
                self.latest[item["id"]] = item

    async def record(self, job_id: str) -> dict[str, Any] | None:
        data = await self._get(f"/api/jobs/{job_id}")
        if data is not None:
            self.latest[job_id] = data
        return data

    def open_jobs(self) -> list[str]:
        return [j for j in self.accepted if self.latest.get(j, {}).get("state") not in ENDED]

    async def feed(self, deadline: float) -> None:
        """Until ``deadline``: a batch of ``JOB_BATCH`` at once whenever at most one job is
        open, so both consumers have work all along."""
        while time.monotonic() < deadline:
            await self.refresh()
            if len(self.open_jobs()) <= 1:
                await asyncio.gather(*(self.submit() for _ in range(JOB_BATCH)))
            await asyncio.sleep(1.0)

    async def running_on(self, pid: int, limit: float) -> str | None:
        """The id of a job in its first half at the consumer with ``pid`` (so it is still
        running when the kill lands; waits up to ``limit``)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            await self.refresh()
            for job_id, rec in self.latest.items():
                if (rec.get("state") == "running" and consumer_pid(rec) == pid
                        and rec.get("done", 0) < (rec.get("total") or JOB_DOCS) // 2):
                    return job_id
            await asyncio.sleep(0.05)
        return None

    async def ended(self, job_id: str, limit: float) -> dict[str, Any] | None:
        """The job's record once it has ended (None when it has not within ``limit``)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            rec = await self.record(job_id)
            if rec is not None and rec.get("state") in ENDED:
                return rec
            await asyncio.sleep(0.2)
        return None

    async def prime(self) -> None:
        """One batch run to its end before the clock starts (like every other operation):
        the job path of both consumers warmed up, not judged."""
        await asyncio.gather(*(self.submit() for _ in range(JOB_BATCH)))
        await self.settle(JOB_END_WAIT)

    async def settle(self, limit: float) -> None:
        """Wait until every accepted job has ended, or ``limit`` has passed."""
        start = time.monotonic()
        while self.open_jobs() and time.monotonic() - start < limit:
            for job_id in self.open_jobs():
                await self.record(job_id)
            await asyncio.sleep(0.5)
        self.settled_after = time.monotonic() - start

    def rerun_starts(self, wall0: float) -> list[float]:
        """When (s into the run) each job that was claimed from another consumer last
        started: compare with the fault times (a claim follows a kill, or a Redis outage
        longer than the claim idle time, after which a live consumer's job is claimed too)."""
        return sorted(rec["started"] - wall0 for j in self.accepted
                      if (rec := self.latest.get(j, {})).get("claims") and rec.get("started"))

    def summary(self) -> dict[str, int]:
        states = Counter(self.latest.get(j, {}).get("state", "gone") for j in self.accepted)
        return {"accepted": len(self.accepted), "done": states["done"],
                "failed": states["failed"], "cancelled": states["cancelled"],
                "lost": sum(n for s, n in states.items() if s not in ENDED),
                "re-run": sum(1 for j in self.accepted
                              if self.latest.get(j, {}).get("claims", 0))}


async def kill_worker(run: Run, jobs: Jobs, holder: dict[str, Any],
                      restart: Callable[[], Any]) -> None:
    """SIGKILL the worker while a job runs on it, start a fresh one at once, and time the
    killed job until another consumer has finished it. A job that ended between the look
    and the kill does not count: up to three tries."""
    now = time.monotonic()
    for _ in range(3):
        worker: Service = holder["worker"]
        pid = worker.process.pid
        job = await jobs.running_on(pid, 30)
        if job is None:
            break
        now, wall = time.monotonic(), time.time()
        os.kill(pid, signal.SIGKILL)
        await asyncio.to_thread(worker.process.wait, 10)
        after = await jobs.record(job)
        holder["worker"] = await restart()
        mid_job = (after is not None and after.get("state") == "running"
                   and consumer_pid(after) == pid)
        jobs.kills.append(WorkerKill(pid, job, wall, mid_job))
        if not mid_job:  # it had just ended (the worker may have taken the next one)
            continue
        w = Window(f"kill -9 job worker (pid {pid}) mid-job", now, excuses=False)
        run.windows.append(w)
        ended = await jobs.ended(job, 120)
        if ended is not None and ended.get("state") == "done":
            w.recovered_after = ended["finished"] - wall
        else:
            w.recovered_after = float("nan")
        w.end = time.monotonic()
        return
    run.windows.append(Window("kill -9 job worker: no job caught running on it", now,
                              time.monotonic(), float("nan"), excuses=False))


