"""Jobs survive their consumer: real processes on one redis-server, SecantusDB and SeaweedFS.

- two ``serve`` replicas: the one running a job is killed with SIGKILL mid-job, the other
  claims it (after ``JOB_CLAIM_IDLE_SECONDS``) and finishes it; every document once, every
  stored link works, nothing stored twice (the objects are counted);
- ``serve --no-worker`` only enqueues, a ``worker`` runs the job; SIGTERM to the worker in
  the middle of a job lets it finish before the process exits;
- a ``worker`` whose webhook receiver is failing is killed with SIGKILL between retries;
  another ``worker`` makes the next attempt (the delivery is pending in Redis, not in the dead
  process);
- three ``worker`` processes in turn are killed with SIGKILL while they run the same job: the
  next consumer does not start it a fourth time but ends it ``failed`` with a reason its owner
  reads in ``GET /api/jobs/{id}``.

Every process is started with the parent-death signal (a dead pytest leaves no service
behind), and a killed consumer's render-pool workers must exit on their own.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from store.job_queue import ACTIVE, OUTBOX, STREAM
from store.objects import ObjectStore
from tests.archive_fixtures import tgz_of
from tests.processes import still_alive
from tests.test_replicas import OPERATOR, ROOT, Replica, _env, _ok, _stop, _wait_healthy
from tests.waiting import wait_until
from tornado_app.embedded.children import die_with_parent
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

CONSUMER_STARTED = "job consumer started"  # logged by a process that runs one

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # processes


@dataclass
class Infra:
    base: Path
    urls: dict[str, str]
    store: ObjectStore
    seed: Path


@pytest.fixture(scope="module")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Infra]:
    from tests.s3_server import running_s3

    base = tmp_path_factory.mktemp("jobreplicas")
    redis = start_redis(base / "redis", persistent=False)
    mongo = start_secantus(None, base / "mongo-logs")
    try:
        with running_s3() as s3:
            bucket = f"j{uuid.uuid4().hex[:12]}"
            store = ObjectStore(s3.config(bucket))
            assert store.test_connection(create_if_missing=True)["bucket_exists"]
            seed = base / "seed.json"
            seed.write_text(json.dumps({"companies": []}))
            urls = {"MONGO_URL": mongo.url, "MONGO_DB": f"j_{uuid.uuid4().hex[:10]}",
                    "REDIS_URL": redis.url, "S3_ENDPOINT": s3.endpoint,
                    "S3_ACCESS_KEY": s3.handle.access, "S3_SECRET_KEY": s3.handle.secret,
                    "S3_BUCKET": bucket, "JOB_CLAIM_IDLE_SECONDS": "1"}
            yield Infra(base, urls, store, seed)
    finally:
        mongo.stop()
        redis.stop()


def _spawn(infra: Infra, name: str, *args: str, env: dict[str, str] | None = None) -> Replica:
    port = free_port()
    log_path = infra.base / f"{name}.log"
    command = [sys.executable, "-m", "tornado_app", *args, "--port", str(port)]
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(command, env={**_env(infra.base, name, infra.urls), **(env or {})},
                                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                preexec_fn=die_with_parent)
    replica = Replica(name, port, proc, log_path)
    _wait_healthy(replica)
    return replica


def _archive(documents: int, images: int) -> bytes:
    """HTML documents (each through the render pool) sharing ``images`` distinct images."""
    text = "".join(f"<p>paragraph {i} <b>bold</b></p>" for i in range(300))
    members = {f"img/p{i}.png": b"\x89PNG\r\n\x1a\n" + f"image {i}".encode() * 20
               for i in range(images)}
    for i in range(documents):
        members[f"docs/{i:03}.html"] = (
            f"<html><body><h1>{i}</h1><img src='../img/p{i % images}.png'>{text}"
            "</body></html>").encode()
    return tgz_of(members)


def _job(replica: Replica, job_id: str) -> dict[str, Any]:
    return _ok(replica.call("GET", f"/api/jobs/{job_id}"))


def _wait(replica: Replica, job_id: str, until: Any, timeout: float = 90) -> dict[str, Any]:
    def reached() -> dict[str, Any]:
        state = _job(replica, job_id)
        return state if until(state) else {}

    return wait_until(reached, timeout, what=f"job {job_id} in the wanted state")


def _pid_of(consumer: str) -> int:
    return int(consumer.split(":")[1])


def _sigkill(replica: Replica) -> None:
    """SIGKILL ``replica`` (no clean-up runs, as with the out-of-memory killer); its render-pool
    workers must then end by themselves within a few seconds."""
    children = psutil.Process(replica.process.pid).children(recursive=True)
    replica.process.send_signal(signal.SIGKILL)
    replica.process.wait(10)
    alive = still_alive([c.pid for c in children], timeout=10)
    assert not alive, f"left behind by the killed {replica.name}: {alive}"


def test_sigkill_of_the_consumer_mid_job_another_finishes_it(infra):
    a = _spawn(infra, "a", "serve", "--seed", str(infra.seed))
    b = _spawn(infra, "b", "serve")
    try:
        documents, images = 60, 12
        job_id = _ok(a.call("POST", "/api/upload-archive",
                            form={"async": "true", "prefix": "crash"},
                            files={"file": ("big.tgz", _archive(documents, images))}))["job_id"]
        running = _wait(a, job_id, lambda s: s["state"] == "running" and s["done"] >= 2)
        victim, survivor = ((a, b) if _pid_of(running["consumer"]) == a.process.pid
                            else (b, a))
        assert _pid_of(running["consumer"]) == victim.process.pid
        _sigkill(victim)
        done = _wait(survivor, job_id, lambda s: s["state"] in ("done", "failed", "cancelled"))
        assert done["state"] == "done", done
        assert _pid_of(done["consumer"]) == survivor.process.pid
        assert done["attempts"] == 2 and done["claims"] == 1
        files = done["result"]["files"]
        assert sorted(f["source"] for f in files) == [f"docs/{i:03}.html"
                                                     for i in range(documents)]
        assert all(f["asset_ok"] == 1 and f["asset_fail"] == 0 for f in files)
        # every document and every distinct image stored exactly once, nothing else left
        keys = [o.object_name for o in infra.store.client.list_objects(
            infra.store.config.bucket, recursive=True)]
        stored = [k for k in keys if "/crash/" in f"/{k}"]
        assert len(stored) == documents + images, sorted(stored)
        wait_until(lambda: not [o for o in infra.store.client.list_objects(  # the input is
            infra.store.config.bucket, recursive=True)  # dropped once the job has ended
            if "/_staging/" in f"/{o.object_name}"], timeout=10, what="the staged input gone")
        with urllib.request.urlopen(files[0]["storage_presigned_url"], timeout=10) as r:
            text = r.read().decode()
        link = files[0]["mappings"][0]["to"]
        assert link in text
        with urllib.request.urlopen(link, timeout=10) as r:
            assert r.read().startswith(b"\x89PNG")
        req = urllib.request.Request(f"http://127.0.0.1:{survivor.port}/metrics",
                                     headers={"Authorization": f"Bearer {OPERATOR}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert "job_claims_total 1.0" in r.read().decode()
    finally:
        for replica in (a, b):
            _stop(replica)


def test_api_node_enqueues_and_a_worker_runs_and_sigterm_lets_the_job_finish(infra):
    api = _spawn(infra, "api", "serve", "--no-worker")
    try:
        job_id = _ok(api.call("POST", "/api/upload-archive", form={"async": "true"},
                              files={"file": ("w.tgz", _archive(40, 2))}))["job_id"]
        # the API node runs nothing: its start-up, over once it answered /health, started no
        # job consumer (a `worker` logs that it did, below), and the job waits
        assert CONSUMER_STARTED not in api.log_path.read_text()
        assert _job(api, job_id)["state"] == "queued"
        worker = _spawn(infra, "worker", "worker")
        try:
            assert CONSUMER_STARTED in worker.log_path.read_text()
            running = _wait(api, job_id, lambda s: s["state"] == "running" and s["done"] >= 1)
            assert _pid_of(running["consumer"]) == worker.process.pid
            worker.process.send_signal(signal.SIGTERM)  # mid-job: it finishes first
            assert worker.process.wait(60) == 0, worker.log_tail()
        finally:
            _stop(worker)
        done = _job(api, job_id)
        assert done["state"] == "done" and done["result"]["count"] == 40, done
        assert done["attempts"] == 1
    finally:
        _stop(api)


def test_worker_exposes_health_and_job_metrics(infra):
    worker = _spawn(infra, "w2", "worker")
    api = _spawn(infra, "api2", "serve", "--no-worker")
    try:
        job_id = _ok(api.call("POST", "/api/upload-archive", form={"async": "true"},
                              files={"file": ("m.tgz", _archive(2, 1))}))["job_id"]
        _wait(api, job_id, lambda s: s["state"] == "done")
        base = f"http://127.0.0.1:{worker.port}"
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as r:
            text = r.read().decode()
        assert 'jobs_ended_total{state="done"} 1.0' in text
        assert "job_duration_seconds_count 1.0" in text and "job_queue_length" in text
        with urllib.request.urlopen(f"{base}/health", timeout=5) as r:
            assert json.load(r) == {"status": "ok"}
        assert worker.call("GET", "/api/jobs", token=OPERATOR).status == 404  # no API
    finally:
        _stop(api)
        _stop(worker)


class _Hook(http.server.BaseHTTPRequestHandler):
    """Records each POST on its server; answers the server's ``status``."""

    def do_POST(self) -> None:
        server = self.server
        assert isinstance(server, _HookServer)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server.seen.append({"headers": dict(self.headers), "body": body, "at": time.time()})
        self.send_response(server.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class _HookServer(http.server.ThreadingHTTPServer):
    """A webhook receiver on loopback, in a thread of the test."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Hook)
        self.seen: list[dict[str, Any]] = []
        self.status = 500
        self.url = f"http://127.0.0.1:{self.server_address[1]}/hook"
        threading.Thread(target=self.serve_forever, daemon=True).start()


def test_a_killed_workers_webhook_retries_are_made_by_another_worker(infra):
    secret = "replica hook secret"
    hooks = {"WEBHOOK_SECRET": secret, "ALLOW_PRIVATE_URLS": "true",
             "WEBHOOK_FIRST_RETRY_SECONDS": "1"}
    receiver = _HookServer()  # failing (500) until the first worker is dead
    api = _spawn(infra, "hook-api", "serve", "--no-worker", env=hooks)
    first = _spawn(infra, "hook-w1", "worker", env=hooks)
    second = None
    try:
        job_id = _ok(api.call("POST", "/api/upload-archive",
                              form={"async": "true", "callback_url": receiver.url},
                              files={"file": ("h.tgz", _archive(2, 1))}))["job_id"]
        failing = _wait(api, job_id, lambda s: len(s.get("deliveries", [])) >= 1)
        _sigkill(first)  # between retries: the next is due in 1 s
        assert failing["state"] == "done" and failing["webhook"]["state"] == "pending"
        assert _pid_of(failing["consumer"]) == first.process.pid
        tried = len(receiver.seen)
        receiver.status = 200
        # no live process runs a sender (the API node started no consumer, the first worker
        # is reaped): once the retry is due it waits in the outbox, untaken (a sender taking
        # it would lease it, moving its score), and nothing more arrives
        due = _job(api, job_id)["webhook"]["next_attempt"]
        wait_until(lambda: time.time() > due, what="the retry's due time")
        assert CONSUMER_STARTED not in api.log_path.read_text()
        client = redis.Redis.from_url(infra.urls["REDIS_URL"], decode_responses=True)
        try:
            held = [(m, s) for m, s in client.zrange(OUTBOX, 0, -1, withscores=True)
                    if m.endswith(f":{job_id}")]
        finally:
            client.close()
        assert held == [(held[0][0], due)] and len(receiver.seen) == tried
        second_started = time.time()
        second = _spawn(infra, "hook-w2", "worker", env=hooks)
        done = _wait(api, job_id, lambda s: s["webhook"]["state"] == "delivered")
    finally:
        for replica in (second, first, api):
            if replica is not None:
                _stop(replica)
        receiver.shutdown()
        receiver.server_close()
    statuses = [d["status"] for d in done["deliveries"]]
    assert statuses == [500] * tried + [200]
    seen = receiver.seen
    # the retry came once a live worker existed, not from the killed one nor before it was due
    assert len(seen) == tried + 1 and seen[-1]["at"] >= max(second_started, due)
    for hit in seen:  # every attempt signed, the same body
        stamp = hit["headers"]["X-Timestamp"]
        mac = hmac.new(secret.encode(), stamp.encode() + b"." + hit["body"], hashlib.sha256)
        assert hmac.compare_digest(hit["headers"]["X-Signature"], "sha256=" + mac.hexdigest())
        assert hit["body"] == seen[0]["body"]
    assert json.loads(seen[-1]["body"])["id"] == job_id


def test_a_job_whose_consumer_is_killed_three_times_ends_failed_with_a_reason(infra):
    api = _spawn(infra, "api3", "serve", "--no-worker")
    consumers: list[Replica] = []
    try:
        job_id = _ok(api.call("POST", "/api/upload-archive", form={"async": "true"},
                              files={"file": ("doomed.tgz", _archive(60, 4))}))["job_id"]
        for attempt in (1, 2, 3):  # a fresh worker each time, killed mid-job
            worker = _spawn(infra, f"doomed{attempt}", "worker")
            consumers.append(worker)
            running = _wait(api, job_id, lambda s, n=attempt: (
                s["state"] == "running" and s["attempts"] == n and s["done"] >= 1), timeout=60)
            assert _pid_of(running["consumer"]) == worker.process.pid
            assert running["claims"] == attempt - 1  # taken over from the dead consumer
            _sigkill(worker)
        assert _job(api, job_id)["state"] == "running"  # nobody alive to say otherwise
        last = _spawn(infra, "last", "worker")
        consumers.append(last)
        ended = _wait(api, job_id, lambda s: s["state"] != "running", timeout=30)
        assert ended["state"] == "failed", ended
        assert ended["code"] == 50001
        assert "started 3 times" in ended["msg"] and "stopped" in ended["msg"], ended["msg"]
        assert ended["done"] < 60 and "result" not in ended  # no half-done result
        # not run a fourth time: its queue entry is gone (acknowledged with the failure), so
        # nothing can claim it again, and the record is still the third consumer's attempt
        client = redis.Redis.from_url(infra.urls["REDIS_URL"], decode_responses=True)
        try:
            wait_until(lambda: not [e for stream in [*client.smembers(ACTIVE), STREAM]
                                    for e in client.xrange(stream) if e[1].get("job") == job_id],
                       what="the job's queue entry removed")
        finally:
            client.close()
        final = _job(api, job_id)
        assert final["state"] == "failed" and final["attempts"] == 3, final
        assert _pid_of(final["consumer"]) == consumers[2].process.pid
        with urllib.request.urlopen(f"http://127.0.0.1:{last.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        assert "job_claims_total 1.0" in text  # it took the entry over ...
        assert "job_duration_seconds_count 0.0" in text  # ... and ran nothing
        assert last.process.poll() is None  # and is still there for the next job
    finally:
        for replica in (*consumers, api):
            _stop(replica)
