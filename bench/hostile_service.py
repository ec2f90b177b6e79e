"""The service the hostile benches attack and the client they attack it with: one ``serve``
process (embedded stores, a pool of two workers) with two companies, EVIL (the attacker) and
GOOD (the bystander whose ``me`` calls are timed), and the measuring of one hostile request.
Shared by ``bench.hostile``, ``bench.hostile_uploads`` and ``bench.hostile_slow``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.common import SERVICE_ENV, multipart
from render_pool.runtime.procfs import descendants, rss_kb
from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "hostile bench password"
SEED = {"companies": [
    {"code": "EVIL", "name": "Hostile", "users": [
        {"username": "mallory", "password": PASSWORD, "role": "ANNOTATOR", "status": "ACTIVE"}]},
    {"code": "GOOD", "name": "Bystander", "users": [
        {"username": "alice", "password": PASSWORD, "role": "ANNOTATOR", "status": "ACTIVE"}]},
]}


@dataclass
class Hostile:
    """One hostile request: where it goes and its multipart form."""

    name: str
    path: str
    fields: dict[str, str]
    files: dict[str, tuple[str, bytes]]


@dataclass
class Outcome:
    code: str
    seconds: float
    me_worst_ms: float
    me_calls: int
    peak_over_idle_mb: float


def tree_rss_mb(pid: int) -> float:
    return sum(rss_kb(p) for p in [pid, *descendants(pid)]) / 1024


class Http:
    """Blocking JSON/multipart calls to the service on loopback."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method: str, path: str, *, token: str, body: bytes | None = None,
             ctype: str = "", timeout: float = 600) -> tuple[int, bytes, str]:
        headers = {"Authorization": f"Bearer {token}"}
        if ctype:
            headers["Content-Type"] = ctype
        req = urllib.request.Request(self.base + path, data=body, headers=headers,
                                     method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get("Content-Type", "")

    def login(self, company: str, username: str) -> str:
        req = urllib.request.Request(
            self.base + "/api/auth/login", method="POST",
            data=json.dumps({"companyCode": company, "username": username,
                             "password": PASSWORD}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)["data"]["token"]


def answer_code(status: int, body: bytes, ctype: str) -> str:
    """The envelope code, or what a file answer was."""
    if "json" in ctype:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            return str(json.loads(body)["code"])
    return f"HTTP {status}, {len(body) // 1024} KiB file" if status == 200 else f"HTTP {status}"


def attack(http: Http, pid: int, victim: str, attacker: str, item: Hostile) -> Outcome:
    """Send ``item`` while the victim calls ``me``; sample the tree's RSS meanwhile."""
    body, ctype = multipart(item.fields, item.files)
    idle = tree_rss_mb(pid)
    result: dict[str, object] = {}

    def send() -> None:
        t0 = time.perf_counter()
        try:
            status, data, rtype = http.call("POST", item.path, token=attacker, body=body,
                                            ctype=ctype)
            result["code"] = answer_code(status, data, rtype)
        except OSError as exc:
            result["code"] = f"error: {type(exc).__name__}"
        result["seconds"] = time.perf_counter() - t0

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    worst, calls, peak = 0.0, 0, idle
    while thread.is_alive():
        t0 = time.perf_counter()
        http.call("GET", "/api/auth/me", token=victim, timeout=120)
        worst = max(worst, time.perf_counter() - t0)
        calls += 1
        peak = max(peak, tree_rss_mb(pid))
        thread.join(0.05)
    return Outcome(str(result.get("code")), float(result.get("seconds", 0.0)), worst * 1000,
                   calls, peak - idle)


def start_service(work: Path, quick: bool) -> tuple[subprocess.Popen[bytes], int]:
    seed = work / "seed.json"
    seed.write_text(json.dumps(SEED))
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MONGO_", "REDIS_", "S3_", "SEED_"))}
    env.update(DATA_DIR=str(work / "data"), LOG_LEVEL="WARNING", PYTHONPATH=str(ROOT),
               POOL_WORKERS="2", ALLOW_PRIVATE_URLS="1", **SERVICE_ENV)
    if quick:
        env["JOB_TIMEOUT_SECONDS"] = "20"
    with open(work / "service.log", "wb") as log:  # the child keeps its own descriptor
        proc = subprocess.Popen([sys.executable, "-m", "tornado_app", "serve", "--port",
                                 str(port), "--seed", str(seed)], env=env, cwd=ROOT,
                                stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit((work / "service.log").read_text(errors="replace")[-2000:])
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
            return proc, port
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the service did not answer /health")


def stop_service(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(40)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@dataclass
class Session:
    """A running service with EVIL's and GOOD's tokens."""

    http: Http
    pid: int
    attacker: str
    victim: str

    def me_at_rest(self, calls: int = 200) -> list[float]:
        """Seconds of GOOD's ``me`` calls with nothing else running (the baseline)."""
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            self.http.call("GET", "/api/auth/me", token=self.victim)
            times.append(time.perf_counter() - t0)
        return times


@contextlib.contextmanager
def attacked_service(quick: bool) -> Iterator[Session]:
    """A fresh service (in a temporary data directory) with both companies signed in."""
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_service(Path(tmp), quick)
        try:
            http = Http(port)
            yield Session(http, proc.pid, http.login("EVIL", "mallory"),
                          http.login("GOOD", "alice"))
        finally:
            stop_service(proc)
