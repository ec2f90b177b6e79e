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
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse

from bench.archives import build_archive
from bench.common import AUTH_HEADER, SERVICE_ENV, machine, multipart, percentile, table
from render_pool.procfs import descendants, rss_kb
from tornado_app.embedded.seaweed import SeaweedHandle, start_seaweed
from tornado_app.embedded.servers import Child, free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]
DOCX_DIR = ROOT / "tests" / "data" / "docx" / "docling"
DOCX_FILES = ["lorem_ipsum.docx", "word_tables.docx", "unit_test_headers.docx",
              "docx_lists.docx", "tablecell.docx", "unit_test_formatting.docx"]
PDF_FILES = [ROOT / "tests" / "data" / "pdf" / "generated" / "report.pdf",
             ROOT / "tests" / "data" / "pdf" / "generated" / "lists_tables.pdf",
             ROOT / "tests" / "data" / "pdf" / "code_and_formula.pdf"]
COMPANY, ADMIN, ADMIN_PASSWORD = "SOAK", "admin", "soak admin password"
USER_PASSWORD = "soak user password"
GROWTH_LIMIT = 10.0  # percent, after warm-up
REQUEST_TIMEOUT = 180.0  # longer than the service's job limit: a timeout here is a hang
GRACE = 5.0  # seconds after a fault's recovery during which error answers are expected


# ---------------------------------------------------------------- processes and memory
def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants."""
    return [root, *descendants(root)]


def _cmdline(pid: int) -> list[str]:
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


def classify(pid: int, service_pid: int) -> str:
    """Which part of the service a process is, from its command line."""
    if pid == service_pid:
        return "service"
    argv = _cmdline(pid)
    if not argv:
        return "gone"
    exe, joined = os.path.basename(argv[0]), " ".join(argv)
    if "chrom" in exe or "/chromium/" in argv[0]:
        return "chromium"
    if exe == "node" or ("playwright" in joined and "run-driver" in joined):
        return "playwright driver"
    if "redis-server" in argv[0]:  # redis rewrites its title: "/usr/bin/redis-server unix.."
        return "redis-server"
    if "secantusd" in joined:
        return "secantusd"
    if exe == "weed" or "seaweed" in joined:
        return "seaweedfs"
    if "resource_tracker" in joined:
        return "resource tracker"
    if "multiprocessing" in joined:
        return "pool worker"
    return "other"


def groups(service_pid: int) -> dict[str, list[int]]:
    """Pids of the service tree by class."""
    out: dict[str, list[int]] = {}
    for pid in process_tree(service_pid):
        out.setdefault(classify(pid, service_pid), []).append(pid)
    out.pop("gone", None)
    return out


def rss_by_group(service_pid: int) -> dict[str, tuple[int, float]]:
    """Per class: (process count, summed RSS in MiB)."""
    return {name: (len(pids), sum(rss_kb(p) for p in pids) / 1024)
            for name, pids in groups(service_pid).items()}


def marked_processes(marker: str) -> list[int]:
    """Every process whose environment carries ``marker`` (the run's id), wherever it is
    in the process tree: finds children that outlived their parent."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if any(marker in value for value in proc.environ().values()):
                found.append(proc.pid)
    return found


# ---------------------------------------------------------------- request bookkeeping
@dataclass
class Record:
    route: str
    start: float
    end: float
    outcome: str  # ok | error | noanswer
    detail: str = ""


@dataclass
class Window:
    name: str
    start: float
    end: float = float("inf")
    recovered_after: float | None = None
    excuses: bool = True  # error answers inside it are expected (a replica kill: none are)


@dataclass
class Run:
    records: list[Record] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    timeline: list[tuple[float, dict[str, tuple[int, float]]]] = field(default_factory=list)
    t0: float = 0.0
    wall0: float = 0.0  # time.time() at t0

    def in_window(self, r: Record) -> bool:
        return any(r.start <= w.end and r.end >= w.start for w in self.windows if w.excuses)


def _json(resp: HTTPResponse) -> Any:
    try:
        return json.loads(resp.body or b"null")
    except ValueError:
        return None


def auth_ok(resp: HTTPResponse) -> str:
    """'' when an annotation call succeeded, else why not."""
    body = _json(resp)
    if resp.code in (200, 201) and isinstance(body, dict) and body.get("code") == "SUCCESS":
        return ""
    return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()


def docs_ok(resp: HTTPResponse) -> str:
    """'' when a conversion envelope answered code 0, else why not."""
    body = _json(resp)
    if resp.code == 200 and isinstance(body, dict) and body.get("code") == 0:
        return ""
    return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()


def file_ok(magic: bytes) -> Callable[[HTTPResponse], str]:
    """'' when the answer is a file starting with ``magic``, else why not."""
    def check(resp: HTTPResponse) -> str:
        if resp.code == 200 and (resp.body or b"").startswith(magic):
            return ""
        body = _json(resp)
        return f"{resp.code} {body.get('code') if isinstance(body, dict) else ''}".strip()
    return check


class Client:
    """One simulated user: its own admin session, its own users to administer."""

    def __init__(self, n: int, base: str, run: Run, inputs: Inputs) -> None:
        self.n, self.base, self.run, self.inputs = n, base, run, inputs
        self.http = AsyncHTTPClient()
        self.rng = random.Random(n)
        self.admin_token = ""
        self.target_id = 0
        self.target_state = 0

    async def call(self, route: str, method: str, path: str, check: Callable[[HTTPResponse], str],
                   *, body: Any = None, form: tuple[bytes, str] | None = None,
                   token: str | None = None) -> HTTPResponse | None:
        headers: dict[str, str] = {}
        data: bytes | None = None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif not path.startswith("/api/auth/"):
            headers.update(AUTH_HEADER)  # the docs caller: the service's operator token
        if form is not None:
            data, headers["Content-Type"] = form
        elif body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        elif method in ("POST", "PUT"):
            data = b""
        req = HTTPRequest(self.base + path, method=method, body=data, headers=headers,
                          request_timeout=REQUEST_TIMEOUT, connect_timeout=10)
        start = time.monotonic()
        try:
            resp = await self.http.fetch(req, raise_error=False)
            failure = str(resp.error) if resp.code == 599 else ""
        except Exception as exc:  # refused, reset, timed out: no HTTP answer at all
            failure = f"{type(exc).__name__}: {exc}"
        end = time.monotonic()
        if failure:
            self.run.records.append(Record(route, start, end, "noanswer", failure))
            return None
        why = check(resp)
        self.run.records.append(Record(route, start, end, "error" if why else "ok", why))
        return resp

    async def setup(self) -> None:
        resp = await self.call("POST /api/auth/login", "POST", "/api/auth/login", auth_ok,
                               body={"companyCode": COMPANY, "username": ADMIN,
                                     "password": ADMIN_PASSWORD})
        assert resp is not None and resp.code == 200, "admin login failed"
        self.admin_token = _json(resp)["data"]["token"]
        for name, role in ((f"login{self.n}", "ANNOTATOR"), (f"target{self.n}", "REVIEWER")):
            resp = await self.call("POST /api/users", "POST", "/api/users", auth_ok,
                                   body={"username": name, "password": USER_PASSWORD,
                                         "role": role}, token=self.admin_token)
            assert resp is not None and resp.code == 201, f"creating {name} failed"
            if name.startswith("target"):
                self.target_id = _json(resp)["data"]["id"]

    # ------------------------------------------------------------ operations
    async def op_login(self) -> None:
        resp = await self.call("POST /api/auth/login", "POST", "/api/auth/login", auth_ok,
                               body={"companyCode": COMPANY, "username": f"login{self.n}",
                                     "password": USER_PASSWORD})
        if resp is None or resp.code != 200:
            return
        token = _json(resp)["data"]["token"]
        await self.call("GET /api/auth/me", "GET", "/api/auth/me", auth_ok, token=token)
        await self.call("POST /api/auth/logout", "POST", "/api/auth/logout", auth_ok,
                        token=token)

    async def op_me(self) -> None:
        await self.call("GET /api/auth/me", "GET", "/api/auth/me", auth_ok,
                        token=self.admin_token)

    async def op_users(self) -> None:
        uid, step = self.target_id, self.target_state % 5
        self.target_state += 1
        if step == 0:
            await self.call("GET /api/users", "GET", "/api/users?page=1&pageSize=20", auth_ok,
                            token=self.admin_token)
        elif step == 1:
            await self.call("PUT /api/users/{id}", "PUT", f"/api/users/{uid}", auth_ok,
                            body={"realName": f"Target {self.rng.randrange(10**6)}"},
                            token=self.admin_token)
        elif step == 2:
            role = self.rng.choice(["ANNOTATOR", "REVIEWER"])
            await self.call("PUT /api/users/{id}/role", "PUT", f"/api/users/{uid}/role",
                            auth_ok, body={"role": role}, token=self.admin_token)
        else:
            status = "DISABLED" if step == 3 else "ACTIVE"
            await self.call("PUT /api/users/{id}/status", "PUT", f"/api/users/{uid}/status",
                            auth_ok, body={"status": status}, token=self.admin_token)

    async def op_docx(self) -> None:
        name, data = self.rng.choice(self.inputs.docx)
        export = self.rng.choice(["markdown", "html", "json", "doctags"])
        await self.call("POST /api/convert (docx)", "POST", "/api/convert", docs_ok,
                        form=multipart({"export": export}, {"file": (name, data)}))

    async def op_pdf(self) -> None:
        name, data = self.rng.choice(self.inputs.pdf)
        await self.call("POST /api/convert (pdf)", "POST", "/api/convert", docs_ok,
                        form=multipart({"export": "markdown"}, {"file": (name, data)}))

    async def op_md_pdf(self) -> None:
        await self.call("POST /md/convert (pdf)", "POST", "/md/convert", file_ok(b"%PDF"),
                        form=multipart({"markdown_text": markdown(self.rng),
                                        "target": "pdf"}))

    async def op_md_docx(self) -> None:
        await self.call("POST /md/convert (docx)", "POST", "/md/convert", file_ok(b"PK"),
                        form=multipart({"markdown_text": markdown(self.rng),
                                        "target": "docx"}))

    async def op_archive(self) -> None:
        await self.call("POST /api/upload-archive", "POST", "/api/upload-archive", docs_ok,
                        form=multipart({"prefix": f"soak/c{self.n}"},
                                       {"file": ("site.zip", self.inputs.archive)}))

    async def prime(self) -> None:
        """Every operation once, in turn."""
        for op in (self.op_md_pdf, self.op_docx, self.op_pdf, self.op_md_docx,
                   self.op_archive, self.op_users, self.op_me):
            await op()

    async def loop(self, deadline: float) -> None:
        ops = [(self.op_login, 1), (self.op_me, 4), (self.op_users, 2), (self.op_docx, 2),
               (self.op_pdf, 1), (self.op_md_pdf, 1), (self.op_md_docx, 1),
               (self.op_archive, 1)]
        fns, weights = zip(*ops, strict=True)
        while time.monotonic() < deadline:
            await self.rng.choices(fns, weights)[0]()


@dataclass
class Inputs:
    docx: list[tuple[str, bytes]]
    pdf: list[tuple[str, bytes]]
    archive: bytes


def _png() -> bytes:
    import zlib

    raw = b"".join(b"\0" + bytes((x * 7 + y) % 256 for x in range(24)) for y in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    header = (8).to_bytes(4, "big") + (8).to_bytes(4, "big") + b"\x08\x02\0\0\0"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def load_inputs() -> Inputs:
    """Small real documents from tests/data and a generated archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("img/logo.png", _png())
        z.writestr("docs/a.md", "# A\n\n![logo](../img/logo.png)\n\nSee [b](b.md).\n")
        z.writestr("docs/b.md", "# B\n\n- one\n- two\n\n![logo](../img/logo.png)\n")
        z.writestr("page.html", '<h1>Page</h1><p><img src="img/logo.png"></p>')
    return Inputs(
        docx=[(n, (DOCX_DIR / n).read_bytes()) for n in DOCX_FILES],
        pdf=[(p.name, p.read_bytes()) for p in PDF_FILES],
        archive=buf.getvalue(),
    )


def markdown(rng: random.Random) -> str:
    """A small generated Markdown document (headings, lists, a table, code)."""
    n = rng.randrange(1, 4)
    parts = [f"# Report {rng.randrange(1000)}\n"]
    for s in range(n):
        parts.append(f"## Section {s + 1}\n\nSome *text* with **bold** and `code` "
                     f"number {rng.random():.4f}.\n\n- item one\n- item two\n  1. nested\n")
        parts.append("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n")
        parts.append("```python\nprint('hello')\n```\n")
    return "\n".join(parts)


# ---------------------------------------------------------------- the service
@dataclass
class Service:
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _env(work: Path, data: str, env_extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MONGO_", "REDIS_", "S3_", "SEED_"))}
    env.update(DATA_DIR=str(work / data), LOG_LEVEL="WARNING", PYTHONPATH=str(ROOT),
               **SERVICE_ENV, **env_extra)
    return env


async def start_service(work: Path, env_extra: dict[str, str]) -> Service:
    seed = work / "seed.json"
    seed.write_text(json.dumps({"companies": [{"code": COMPANY, "name": "Soak", "users": [
        {"username": ADMIN, "password": ADMIN_PASSWORD, "role": "ADMIN",
         "status": "ACTIVE"}]}]}))
    return await _start(work, "service", env_extra, "serve", "--seed", str(seed))


async def start_worker(work: Path, env_extra: dict[str, str], name: str) -> Service:
    """A ``worker`` process (job consumer and render pool; /health on its port)."""
    return await _start(work, name, {**env_extra, "POOL_WORKERS": "1"}, "worker")


async def _start(work: Path, name: str, env_extra: dict[str, str], *args: str) -> Service:
    port = free_port()
    log_path = work / f"{name}.log"
    data = "data" if name == "service" else f"data-{name}"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tornado_app", args[0], "--port", str(port), *args[1:]],
            env=_env(work, data, env_extra), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    service = Service(proc, port, log_path)
    try:
        await _wait_healthy(service)
    except BaseException:  # never leave the service running behind a failed start
        stop_service(service)
        raise
    return service


async def _wait_healthy(service: Service, timeout: float = 90) -> None:
    http = AsyncHTTPClient()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise SystemExit("service exited at start-up:\n"
                             + service.log_path.read_text(errors="replace")[-2000:])
        with contextlib.suppress(OSError):
            resp = await http.fetch(service.base + "/health", raise_error=False,
                                    request_timeout=2)
            if resp.code == 200:
                return
        await asyncio.sleep(0.2)
    raise SystemExit("service did not answer /health")


def stop_service(service: Service) -> int:
    """SIGTERM and wait; the exit code (kills after 40 s)."""
    if service.process.poll() is None:
        service.process.send_signal(signal.SIGTERM)
        try:
            service.process.wait(40)
        except subprocess.TimeoutExpired:
            service.process.kill()
            service.process.wait(10)
            return -9
    return service.process.returncode


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
        body = _json(resp) if resp is not None else None
        if resp is not None and not docs_ok(resp) and isinstance(body, dict):
            self.accepted[body["data"]["job_id"]] = time.time()

    async def _get(self, path: str) -> Any:
        """The data of a GET that answered code 0, else None (polling is not load)."""
        req = HTTPRequest(self.client.base + path, headers=AUTH_HEADER, request_timeout=30)
        try:
            resp = await self.client.http.fetch(req, raise_error=False)
        except Exception:  # the service is busy restarting Redis: try later
            return None
        body = _json(resp)
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


# ---------------------------------------------------------------- report
def report(run: Run, seconds: float, faults: bool, mem_start: dict, mem_end: dict,
           exit_code: int, leaks: list[int], clients: int, jobs: Jobs | None = None) -> bool:
    """Print the tables; True when every criterion holds."""
    routes: dict[str, list[Record]] = {}
    for r in run.records:
        routes.setdefault(r.route, []).append(r)
    rows = []
    total_err = total_fault_err = total_noanswer = 0
    for route in sorted(routes):
        recs = routes[route]
        lat = [(r.end - r.start) * 1000 for r in recs if r.outcome == "ok"]
        err = sum(1 for r in recs if r.outcome == "error" and not run.in_window(r))
        ferr = sum(1 for r in recs if r.outcome == "error" and run.in_window(r))
        noans = sum(1 for r in recs if r.outcome == "noanswer")
        total_err, total_fault_err, total_noanswer = (total_err + err, total_fault_err + ferr,
                                                      total_noanswer + noans)
        row: list[object] = [route, len(recs), err]
        if faults:
            row.append(ferr)
        row += [noans, f"{percentile(lat, 50):.0f}", f"{percentile(lat, 99):.0f}"]
        rows.append(row)
    header = ["route", "requests", "errors"]
    if faults:
        header.append("error answers in fault windows")
    header += ["no answer", "p50 ms", "p99 ms"]
    title = f"Soak{' with faults' if faults else ''}: {seconds:.0f} s, {clients} clients"
    table(title, header, rows)

    mem_rows = []
    growth_ok = True
    for name in sorted(set(mem_start) | set(mem_end)):
        n0, m0 = mem_start.get(name, (0, 0.0))
        n1, m1 = mem_end.get(name, (0, 0.0))
        growth = (m1 - m0) / m0 * 100 if m0 else float("nan")
        # a fault pass kills workers and Chromium on purpose: only the service is judged
        judged = name == "service" or (name in ("pool worker", "chromium") and not faults)
        if judged and not growth <= GROWTH_LIMIT:
            growth_ok = False
        mem_rows.append([name, f"{n0} -> {n1}", f"{m0:.0f}", f"{m1:.0f}",
                         f"{growth:+.1f}" + ("" if judged else " (not judged)")])
    table("Resident memory (MiB, summed RSS, lowest of 9 samples over 4 s, under load)",
          ["processes", "count", "after warm-up", "end", "growth %"], mem_rows)

    table("Resident memory over time (MiB, single samples)",
          ["t s", "service", "pool workers", "chromium"],
          [[f"{t:.0f}", f"{g.get('service', (0, 0))[1]:.0f}",
            f"{g.get('pool worker', (0, 0))[1]:.0f}", f"{g.get('chromium', (0, 0))[1]:.0f}"]
           for t, g in run.timeline])
    if faults:
        table("Faults", ["fault", "at s", "recovered after s", "window s"],
              [[w.name, f"{w.start - run.t0:.1f}", f"{(w.recovered_after or 0):.1f}",
                f"{w.end - w.start:.1f}"] for w in run.windows])
        answers: Counter[tuple[str, str, str]] = Counter()
        for r in run.records:
            hit = [w for w in run.windows
                   if w.excuses and r.start <= w.end and r.end >= w.start]
            if r.outcome == "error" and hit:  # a window's grace may reach the next fault
                w = max(hit, key=lambda w: w.start if w.start <= r.end else -1)
                answers[(w.name.split(" (")[0], r.route, r.detail)] += 1
        table("Error answers inside the fault windows (expected)",
              ["fault", "route", "answer (HTTP status, code)", "count"],
              [[*k, n] for k, n in sorted(answers.items())] or [["none", "", "", 0]])
    jobs_ok = True
    if jobs is not None:
        n = jobs.summary()
        kills = [f"{w.recovered_after:.1f}" for w in run.windows if not w.excuses]
        mid_job = sum(k.mid_job for k in jobs.kills)
        jobs_ok = n["accepted"] > 0 and n["done"] == n["accepted"] and mid_job > 0
        table(f"Archive jobs (async=true, {JOB_DOCS} Markdown files and {JOB_IMAGES} images "
              f"each, batches of {JOB_BATCH}) on two consumers: the service and a worker "
              f"(JOB_CLAIM_IDLE_SECONDS={JOB_CLAIM_IDLE})",
              ["accepted", "done", "failed", "cancelled", "lost", "re-run after a claim",
               "re-runs started at s", "worker SIGKILLs (mid-job)", "kill -9 -> its job done s",
               "end wait s"],
              [[n["accepted"], n["done"], n["failed"], n["cancelled"], n["lost"],
                n["re-run"], ", ".join(f"{t:.1f}" for t in jobs.rerun_starts(run.wall0)) or "-",
                f"{len(jobs.kills)} ({mid_job})", ", ".join(kills) or "-",
                f"{jobs.settled_after:.1f}"]])
        for job_id in [j for j in jobs.accepted
                       if jobs.latest.get(j, {}).get("state") != "done"][:10]:
            rec = jobs.latest.get(job_id, {})
            print(f"  job {job_id}: {rec.get('state', 'gone')} {rec.get('msg', '')}")
    done = len(run.records)
    ok = (total_err == 0 and total_noanswer == 0 and exit_code == 0 and not leaks
          and growth_ok and jobs_ok
          and all(w.recovered_after == w.recovered_after for w in run.windows))
    print(f"\nrequests {done} ({done / seconds:.1f}/s), errors {total_err}"
          + (f", error answers in fault windows {total_fault_err}" if faults else "")
          + f", no answer {total_noanswer}; service exit code on SIGTERM {exit_code}; "
          f"processes left behind {len(leaks)}"
          + (f"; jobs accepted {jobs.summary()['accepted']}, lost {jobs.summary()['lost']}"
             if jobs is not None else ""))
    bad = [r for r in run.records if r.outcome != "ok" and not run.in_window(r)]
    for r in bad[:10]:
        print(f"  {r.outcome}: {r.route} at {r.start - run.t0:.1f} s: {r.detail}")
    print(f"machine: {machine()}")
    print("verdict:", "PASS" if ok else "FAIL")
    return ok


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
