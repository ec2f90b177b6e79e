"""Jobs benchmark: archive jobs queued at once (``async=true``) against one ``serve``, then
against one ``serve`` plus one ``worker`` (same machine: little gain expected on 2 cores; it
measures the overhead of the split), on one redis-server, SecantusDB and SeaweedFS. Reports
jobs/s and queue wait p50/p99 (job created -> its last start), and the time from SIGKILL of
the consumer running a job to another consumer finishing it (``JOB_CLAIM_IDLE_SECONDS`` 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from bench.archives import build_archive
from bench.common import AUTH_HEADER, SERVICE_ENV, machine, multipart, percentile, table
from tornado_app.embedded.seaweed import start_seaweed
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]
CLAIM_IDLE = 2


def _spawn(env: dict[str, str], data: Path, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tornado_app", *args, "--port", str(port)],
                            env={**env, "DATA_DIR": str(data / uuid.uuid4().hex[:6])},
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{args[0]} did not start")


def _call(port: int, path: str, body: bytes | None = None, ctype: str = "") -> Any:
    headers = dict(AUTH_HEADER)
    if ctype:
        headers["Content-Type"] = ctype
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers=headers,
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=120) as r:
        answer = json.load(r)
    assert answer["code"] == 0, answer
    return answer["data"]


def _submit(port: int, archive: bytes) -> str:
    body, ctype = multipart({"async": "true", "prefix": f"b{uuid.uuid4().hex[:6]}"},
                            {"file": ("a.zip", archive)}, "application/zip")
    return _call(port, "/api/upload-archive", body, ctype)["job_id"]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()


def _batch(port: int, jobs: int, archive: bytes) -> tuple[float, list[float]]:
    t0 = time.perf_counter()
    ids = [_submit(port, archive) for _ in range(jobs)]
    records: list[dict[str, Any]] = []
    while True:
        records = [_call(port, f"/api/jobs/{i}") for i in ids]
        if all(r["state"] in ("done", "failed", "cancelled") for r in records):
            break
        time.sleep(0.2)
    seconds = time.perf_counter() - t0
    assert all(r["state"] == "done" for r in records), [r for r in records if r["state"] != "done"]
    return seconds, [r["started"] - r["created"] for r in records]


def _kill_recovery(env: dict[str, str], data: Path, archive: bytes) -> float:
    api, port = _spawn(env, data, "serve", "--no-worker")
    workers = [_spawn(env, data, "worker") for _ in range(2)]
    try:
        job = _submit(port, archive)
        while (record := _call(port, f"/api/jobs/{job}"))["state"] != "running":
            time.sleep(0.02)
        pid = int(record["consumer"].split(":")[1])
        victim = next(p for p, _ in workers if p.pid == pid)
        victim.send_signal(signal.SIGKILL)
        killed = time.perf_counter()
        while _call(port, f"/api/jobs/{job}")["state"] != "done":
            time.sleep(0.05)
        return time.perf_counter() - killed
    finally:
        for proc, _ in workers:
            _stop(proc)
        _stop(api)


def run(quick: bool = False) -> None:
    jobs = 20 if quick else 200
    archive = build_archive(5, 10)
    slow = build_archive(200, 400)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        redis = start_redis(data / "redis", persistent=False)
        mongo = start_secantus(None, data / "mongo-logs")
        s3 = start_seaweed(data / "s3", buckets=["bench"], persist_ports=False)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("S3_", "MONGO_", "REDIS_"))}
        env.update(SERVICE_ENV, PYTHONPATH=str(ROOT), LOG_LEVEL="WARNING", POOL_WORKERS="1",
                   MONGO_URL=mongo.url, MONGO_DB="bench", REDIS_URL=redis.url,
                   S3_ENDPOINT=s3.endpoint, S3_ACCESS_KEY=s3.access, S3_SECRET_KEY=s3.secret,
                   S3_BUCKET="bench", JOB_CLAIM_IDLE_SECONDS=str(CLAIM_IDLE),
                   JOB_QUEUE_LIMIT_PER_COMPANY="0")  # one caller queues all jobs at once
        try:
            baseline = 0.0
            for label, extra in (("serve", False), ("serve + worker", True)):
                serve, port = _spawn(env, data, "serve")
                worker = _spawn(env, data, "worker")[0] if extra else None
                try:
                    seconds, waits = _batch(port, jobs, archive)
                finally:
                    if worker is not None:
                        _stop(worker)
                    _stop(serve)
                rate = jobs / seconds
                baseline = baseline or rate
                rows.append([label, f"{seconds:.1f}", f"{rate:.1f}", f"{rate / baseline:.2f}",
                             f"{percentile(waits, 50):.2f}", f"{percentile(waits, 99):.2f}"])
            recovery = _kill_recovery(env, data, slow)
        finally:
            s3.stop()
            mongo.stop()
            redis.stop()
    table(f"{jobs} archive jobs (5 Markdown files, 10 images each) queued at once "
          f"({machine()}, POOL_WORKERS=1 per process)",
          ["consumers", "seconds", "jobs/s", "vs serve alone", "queue wait p50 s",
           "queue wait p99 s"], rows)
    table(f"SIGKILL of the worker running a job (200 files, 400 images) to another worker "
          f"finishing it (JOB_CLAIM_IDLE_SECONDS={CLAIM_IDLE})",
          ["seconds from SIGKILL to done"], [[f"{recovery:.1f}"]])
