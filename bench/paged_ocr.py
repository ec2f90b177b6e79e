"""One big scan on one worker process against two (issue 35, item 2: "a big document's pages
are spread ... so every worker on every machine takes a share"): a 40-page image-only scan
(:mod:`bench.paged_scans`) converted as one async job by ``serve --no-worker`` plus one
``worker``, then plus two, every process with ``POOL_WORKERS=1``, on one redis-server,
SecantusDB and SeaweedFS. Reports the job's run time (started -> finished on its record) and
the speed-up of two workers over one (goal >= 1.7x), measured in the same run, and the pages a
second of two workers for issue 34's summary (OCR with structure >= 1.8 pages/s on two idle
cores, item 4)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import summary
from bench.common import SERVICE_ENV, machine, multipart, table
from bench.jobs import _call, _spawn, _stop
from bench.paged_scans import text_scan
from tornado_app.embedded.seaweed import start_seaweed
from tornado_app.embedded.servers import start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]


def _convert_job(port: int, scan: bytes) -> dict[str, Any]:
    """The ended record of one async Markdown conversion of ``scan``."""
    body, ctype = multipart({"async": "true", "export": "markdown"}, {"file": ("scan.pdf", scan)},
                            "application/pdf")
    job_id = _call(port, "/api/convert", body, ctype)["job_id"]
    while (record := _call(port, f"/api/jobs/{job_id}"))["state"] not in (
            "done", "failed", "cancelled"):
        time.sleep(0.2)
    assert record["state"] == "done", record
    return dict(record)


def run(quick: bool = False) -> None:
    pages = 10 if quick else 40
    scan, warm_up = text_scan(pages), text_scan(4)
    rows: list[list[object]] = []
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
                   S3_BUCKET="bench")
        try:
            baseline = seconds = 0.0
            for workers in (1, 2):
                api, port = _spawn(env, data, "serve", "--no-worker")
                procs = [_spawn(env, data, "worker")[0] for _ in range(workers)]
                try:
                    _convert_job(port, warm_up)  # pool workers started, Tesseract loaded
                    load = os.getloadavg()[0]  # others' work on the machine shows here
                    record = _convert_job(port, scan)
                finally:
                    for proc in procs:
                        _stop(proc)
                    _stop(api)
                seconds = record["finished"] - record["started"]
                baseline = baseline or seconds
                rows.append([workers, f"{seconds:.1f}", f"{pages / seconds:.2f}",
                             f"{baseline / seconds:.2f}", f"{load:.2f}"])
        finally:
            s3.stop()
            mongo.stop()
            redis.stop()
    summary.record("4", f"OCR pages/s, {pages}-page scan, two worker processes",
                   pages / seconds, 1.8, "absolute (pages a second on 2 idle cores)",
                   higher_is_better=True)
    table(f"One {pages}-page scan as one async convert job (Markdown), POOL_WORKERS=1 per "
          f"worker process ({machine()}); goal: two workers >= 1.7x one",
          ["worker processes", "job seconds", "pages/s", "speed-up", "load avg before"], rows)
