"""The fixed cost of a conversion request (issue 34, item 2): a one-paragraph DOCX through
``POST /api/convert`` against an authenticated ``GET /api/auth/me`` and ``GET /health``,
one client, on the real ``serve`` (auth and docs, embedded stores, pool of two, access log
on as deployed), in interleaved rounds so a busy moment of the shared machine hits all alike.

What is not the conversion itself is split out in the same run, in the bench process:
the conversion in process (``render_pool.engine.jobs.convert_document``, no pool), a pool round
trip of an empty job (dispatch, pickling, the worker's pipe), and the pool running the
conversion. The goal of issue 34: the DOCX request at most 1.5x ``me`` (medians).
Then ``me`` and ``/health`` under wrk with 32 keep-alive connections (goal: ``me`` at least
0.75 of ``/health``'s rate, p99 under 15 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import summary, wrk
from bench.common import SERVICE_ENV, machine, multipart, table
from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "request cost bench password"
SEED = {"companies": [{"code": "COST", "name": "Cost", "users": [
    {"username": "alice", "password": PASSWORD, "role": "ANNOTATOR", "status": "ACTIVE"}]}]}
GOAL_RATIO = 1.5


PARAGRAPH = "The quarterly report is attached; nothing else changed."
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_MINIMAL_PARTS = {
    "[Content_Types].xml":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.'
        'openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType='
        '"application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        '</Types>',
    "_rels/.rels":
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://'
        'schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="'
        'http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="word/document.xml"/></Relationships>',
    "word/document.xml":
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{_W}">'
        f'<w:body><w:p><w:r><w:t>{PARAGRAPH}</w:t></w:r></w:p></w:body></w:document>',
}


def minimal_docx() -> bytes:
    """The smallest DOCX of one paragraph: no styles, numbering or settings parts, so its
    conversion costs next to nothing and the request shows its fixed cost."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, text in _MINIMAL_PARTS.items():
            package.writestr(name, text)
    return out.getvalue()


def pandoc_docx() -> bytes | None:
    """One paragraph written by pandoc (its reference styles); None without pandoc."""
    if shutil.which("pandoc") is None:
        return None
    return subprocess.run(["pandoc", "-f", "markdown", "-t", "docx", "-o", "-"],
                          input=PARAGRAPH.encode(), capture_output=True, check=True).stdout


def one_paragraph_docx() -> bytes:
    """One paragraph from python-docx: Word's default template, whose styles part (about
    160 styles and latent styles) every document saved by Word carries."""
    import docx

    document = docx.Document()
    document.add_paragraph(PARAGRAPH)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def documents() -> dict[str, bytes]:
    """The one-paragraph DOCX files measured, smallest first."""
    docs = {"minimal": minimal_docx()}
    made_by_pandoc = pandoc_docx()
    if made_by_pandoc is not None:
        docs["pandoc"] = made_by_pandoc
    docs["Word template"] = one_paragraph_docx()
    return docs


class Client:
    """One keep-alive connection, sequential requests (one client)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        self.conn.request(method, path, body=body, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.conn.close()


@dataclass
class Service:
    """``serve`` in a subprocess with a seeded company; its port and a session token."""

    proc: subprocess.Popen[bytes]
    port: int
    token: str = ""

    @classmethod
    def start(cls, work: Path, env_extra: dict[str, str] | None = None) -> Service:
        seed = work / "seed.json"
        seed.write_text(json.dumps(SEED))
        port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MONGO_", "REDIS_", "S3_", "SEED_", "LOG_"))}
        env.update(DATA_DIR=str(work / "data"), PYTHONPATH=str(ROOT), POOL_WORKERS="2",
                   LOG_FORMAT="json", **SERVICE_ENV, **(env_extra or {}))
        with open(work / "service.log", "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "tornado_app", "serve", "--port",
                                     str(port), "--seed", str(seed)], env=env, cwd=ROOT,
                                    stdout=log, stderr=subprocess.STDOUT)
        service = cls(proc, port)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit((work / "service.log").read_text(errors="replace")[-2000:])
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).close()
                service.token = service.login()
                return service
            time.sleep(0.2)
        service.stop()
        raise SystemExit("the service did not answer /health")

    def login(self) -> str:
        body = json.dumps({"companyCode": "COST", "username": "alice", "password": PASSWORD})
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/auth/login",
                                     data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return str(json.load(r)["data"]["token"])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _requests(token: str, docs: dict[str, bytes]
              ) -> dict[str, tuple[str, str, bytes | None, dict[str, str]]]:
    auth = {"Authorization": f"Bearer {token}"}
    requests: dict[str, tuple[str, str, bytes | None, dict[str, str]]] = {
        "GET /health": ("GET", "/health", None, {}),
        ME: ("GET", "/api/auth/me", None, auth),
    }
    for name, data in docs.items():
        body, ctype = multipart({}, {"file": ("one.docx", data)})
        requests[convert_label(name)] = ("POST", "/api/convert", body,
                                         {**auth, "Content-Type": ctype})
    return requests


ME = "GET /api/auth/me"


def convert_label(name: str) -> str:
    return f"POST /api/convert, {name} DOCX"


def http_latencies(port: int, token: str, docs: dict[str, bytes], rounds: int,
                   per_round: int, *, keep_alive: bool = True) -> dict[str, list[float]]:
    """Per request kind, each round's median latency (s), the kinds interleaved by round;
    without ``keep_alive`` every request opens its own connection (as curl does)."""
    requests = _requests(token, docs)
    client = Client(port)
    medians: dict[str, list[float]] = {name: [] for name in requests}
    try:
        for name, (method, path, body, headers) in requests.items():  # warm-up
            for _ in range(5):
                status, answer = client.call(method, path, body, headers)
                if status != 200 or (path != "/health" and b'"code": 0,' not in answer
                                     and b'"code": "SUCCESS"' not in answer):
                    raise SystemExit(f"{name}: HTTP {status} {answer[:200]!r}")
        for _ in range(rounds):
            for name, (method, path, body, headers) in requests.items():
                times = []
                for _ in range(per_round):
                    t0 = time.perf_counter()
                    if not keep_alive:
                        client.close()
                        client = Client(port)
                    client.call(method, path, body, headers)
                    times.append(time.perf_counter() - t0)
                medians[name].append(statistics.median(times))
    finally:
        client.close()
    return medians


def tornado_latencies(port: int, token: str, docs: dict[str, bytes], rounds: int,
                      per_round: int) -> dict[str, list[float]]:
    """As :func:`http_latencies`, from Tornado's ``AsyncHTTPClient``: the client the other
    HTTP benches use (``bench.convert_common``), whose own cost per request (about a
    millisecond) is part of both figures, as it was in the issue's measurement."""
    from tornado.httpclient import AsyncHTTPClient

    requests = _requests(token, docs)

    async def measure() -> dict[str, list[float]]:
        client = AsyncHTTPClient(force_instance=True)
        medians: dict[str, list[float]] = {name: [] for name in requests}

        async def one(method: str, path: str, body: bytes | None,
                      headers: dict[str, str]) -> None:
            await client.fetch(f"http://127.0.0.1:{port}{path}", method=method, body=body,
                               headers=headers, request_timeout=60)

        try:
            for request in requests.values():
                for _ in range(5):
                    await one(*request)
            for _ in range(rounds):
                for name, request in requests.items():
                    times = []
                    for _ in range(per_round):
                        t0 = time.perf_counter()
                        await one(*request)
                        times.append(time.perf_counter() - t0)
                    medians[name].append(statistics.median(times))
        finally:
            client.close()
        return medians

    return asyncio.run(measure())


def _timed(fn: Any, reps: int, idle: float = 0.0) -> list[float]:
    """``fn``'s time in each of ``reps`` calls after three unmeasured ones (s), each call
    after ``idle`` seconds asleep when given."""
    for _ in range(3):
        fn()
    out = []
    for _ in range(reps):
        if idle:
            time.sleep(idle)
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def in_process_steps(docs: dict[str, bytes], reps: int) -> dict[str, list[float]]:
    """Per document the conversion alone (back to back, and each after 1 ms asleep: the
    caches a worker meets between requests) and through the pool, an empty pool job, and the
    floor under it: an empty job's round trip through a bare single-worker
    ``ProcessPoolExecutor``, by its ``submit`` and handed over directly as the pool does
    (render_pool.runtime.pool._SlotExecutor) (s)."""
    from render_pool.engine import jobs
    from render_pool.runtime.pool import RenderPool, _SlotExecutor

    steps = {f"{name}: conversion in process": _timed(
        lambda data=data: jobs.convert_document(data, "markdown"), reps)
        for name, data in docs.items()}
    # as a pool worker meets a job between requests: its caches cooled by 1 ms asleep
    steps.update({f"{name}: conversion in process, 1 ms asleep before each": _timed(
        lambda data=data: jobs.convert_document(data, "markdown"), reps, idle=0.001)
        for name, data in docs.items()})
    pool = RenderPool(2, memory_limit_mb=1500)
    bare = _SlotExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))

    async def timed_async(call: Any) -> list[float]:
        for _ in range(3):
            await call()
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            await call()
            out.append(time.perf_counter() - t0)
        return out

    async def pooled() -> dict[str, list[float]]:
        out = {
            "bare executor round trip of an empty job, submit": await timed_async(
                lambda: asyncio.wrap_future(bare.submit(os.getpid))),
            "bare executor round trip of an empty job, handed over directly":
                await timed_async(lambda: asyncio.wrap_future(bare.submit_direct(os.getpid))),
            "pool round trip of an empty job": await timed_async(
                lambda: pool.run(os.getpid, tenant="bench"))}
        for name, data in docs.items():
            out[f"{name}: conversion through the pool"] = await timed_async(
                lambda data=data: pool.run(jobs.convert_document, data, "markdown",
                                           tenant="bench"))
        return out

    try:
        steps.update(asyncio.run(pooled()))
    finally:
        pool.close()
        bare.shutdown()
    return steps


def loop_steps(docs: dict[str, bytes], reps: int) -> dict[str, list[float]]:
    """Per document what the service does on its event loop around the pool job, each step
    alone (s): the multipart body parsed and its parts read back
    (``tornado_app.upload_spool.MultipartBody``), the form's fields checked and the options
    built (``checked_form``, ``with_service_limits``), the job pickled for the worker's pipe,
    and the answer's envelope encoded; and, in the worker, the input sniffed."""
    from concurrent.futures import process as futures_process
    from multiprocessing.reduction import ForkingPickler

    from render_pool.engine import jobs
    from render_pool.engine.sniff import detect_kind
    from render_pool.runtime.pool import _bounded_call
    from tornado_app.documents.base import _decode_fields
    from tornado_app.documents.convert import checked_form, with_service_limits
    from tornado_app.http import _ENCODER
    from tornado_app.multipart import boundary_of
    from tornado_app.settings import Settings
    from tornado_app.upload_spool import MultipartBody

    settings = Settings()
    steps: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as spool:
        for name, data in docs.items():
            body, ctype = multipart({}, {"file": ("one.docx", data)})

            def form(body: bytes = body, ctype: str = ctype) -> Any:
                upload = MultipartBody(boundary_of(ctype) or b"", Path(spool), 1 << 20)
                upload.feed(body)
                parts = upload.parts()
                try:
                    parts.send(None)  # a small form is read back without awaiting
                except StopIteration as done:
                    fields, files = done.value
                upload.discard()
                return _decode_fields(fields), files

            fields, files = form()
            options = with_service_limits(checked_form(fields, files)[2], settings)
            item = futures_process._CallItem(0, _bounded_call, (
                jobs.convert_document, (data, "markdown", "word2markdown", options),
                {"for_upload": False}, True), {})
            converted = jobs.convert_document(data, "markdown")
            answer = {"code": 0, "msg": "ok", "data": {
                "content": converted.content, "media_type": converted.media_type,
                "warnings": converted.warnings, "notes": converted.notes}}
            steps[f"{name}: multipart body parsed and read back (event loop)"] = _timed(
                form, reps)
            steps[f"{name}: form checked, options built (event loop)"] = _timed(
                lambda fields=fields, files=files: with_service_limits(
                    checked_form(fields, files)[2], settings), reps)
            steps[f"{name}: job pickled for the worker (event loop)"] = _timed(
                lambda item=item: ForkingPickler.dumps(item), reps)
            steps[f"{name}: answer encoded (event loop)"] = _timed(
                lambda answer=answer: _ENCODER.encode(answer), reps)
            steps[f"{name}: input sniffed (worker)"] = _timed(
                lambda data=data: detect_kind(data), reps)
    return steps


def _wrk_rows(service: Service, seconds: float, rounds: int, connections: int
              ) -> tuple[list[list[object]], dict[str, float]]:
    """``/health`` and ``me`` under wrk, interleaved; rows and the figures for the summary."""
    auth = {"Authorization": f"Bearer {service.token}"}
    got: dict[str, list[dict[str, Any]]] = {"/health": [], "/api/auth/me": []}
    wrk.result(wrk.start(service.port, "/health", 8, 1))  # warm-up
    wrk.result(wrk.start(service.port, "/api/auth/me", 8, 1, headers=auth))
    for _ in range(rounds):
        for path in got:
            got[path].append(wrk.result(wrk.start(
                service.port, path, connections, seconds,
                headers=auth if path == "/api/auth/me" else {})))

    def rate(path: str) -> float:
        return sum(r["requests"] for r in got[path]) / sum(r["seconds"] for r in got[path])

    rows = []
    for path in got:
        p99s = [r["p99_ms"] for r in got[path]]
        errors = sum(r["socket_errors"] + r["http_errors"] for r in got[path])
        rows.append([f"GET {path}", f"{rate(path):.0f}",
                     f"{statistics.median(r['p50_ms'] for r in got[path]):.1f}",
                     f"{statistics.median(p99s):.1f} / {min(p99s):.1f}-{max(p99s):.1f}",
                     f"{rate(path) / rate('/health'):.2f}", errors])
    me_p99 = statistics.median(r["p99_ms"] for r in got["/api/auth/me"])
    return rows, {"me_over_health": rate("/api/auth/me") / rate("/health"), "me_p99": me_p99}


def run(quick: bool = False) -> None:
    rounds, per_round = (3, 20) if quick else (7, 40)
    docs = documents()
    steps = in_process_steps(docs, 20 if quick else 60)
    steps.update(loop_steps(docs, 200 if quick else 1000))
    with tempfile.TemporaryDirectory() as tmp:
        service = Service.start(Path(tmp))
        try:
            medians = http_latencies(service.port, service.token, docs, rounds, per_round)
            fresh = http_latencies(service.port, service.token, docs, rounds, per_round,
                                   keep_alive=False)
            heavier = tornado_latencies(service.port, service.token, docs, rounds, per_round)
            wrk_rows, wrk_figures = _wrk_rows(service, 1.0 if quick else 3.0,
                                              2 if quick else 5, 32)
        finally:
            service.stop()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    me = statistics.median(medians[ME])
    rows = []
    for name, values in medians.items():
        med = statistics.median(values)
        rows.append([name, f"{med * 1000:.2f}",
                     f"{min(values) * 1000:.2f}-{max(values) * 1000:.2f}",
                     f"{med / me:.2f}"])
    table(f"Fixed cost of a request: one client, keep-alive, {rounds} interleaved rounds of "
          f"{per_round} requests each ({machine()}, load average {load}); goal: a "
          f"one-paragraph DOCX <= {GOAL_RATIO}x me",
          ["request", "median ms (median of rounds)", "round medians ms", "x me"], rows)
    for name in docs:
        ratios = [d / m for d, m in zip(medians[convert_label(name)], medians[ME],
                                        strict=True)]
        print(f"{name} DOCX / me per round: {', '.join(f'{r:.2f}' for r in ratios)}")
    me_fresh = statistics.median(fresh[ME])
    me_tornado = statistics.median(heavier[ME])
    for title, got, base in (
            ("The same, a new connection per request (as curl or urllib send them)", fresh,
             me_fresh),
            ("The same from Tornado's AsyncHTTPClient (as the convert bench sends them)",
             heavier, me_tornado)):
        table(title, ["request", "median ms (median of rounds)", "round medians ms", "x me"],
              [[name, f"{statistics.median(v) * 1000:.2f}",
                f"{min(v) * 1000:.2f}-{max(v) * 1000:.2f}",
                f"{statistics.median(v) / base:.2f}"] for name, v in got.items()])
    step_rows = [[name, f"{statistics.median(v) * 1000:.2f}",
                  f"{min(v) * 1000:.2f}-{max(v) * 1000:.2f}"] for name, v in steps.items()]
    for name in docs:
        rest = (statistics.median(medians[convert_label(name)])
                - statistics.median(steps[f"{name}: conversion through the pool"]))
        step_rows.append([f"{name}: HTTP request minus the conversion through the pool",
                          f"{rest * 1000:.2f}", ""])
    table("Where a DOCX request's time goes (in the bench process, one caller at a time)",
          ["step", "median ms", "min-max ms"], step_rows)
    table("me and /health under wrk, 32 keep-alive connections (rate over all rounds; p50 "
          "of the median round; p99 median round / range); goal: me >= 0.75 of /health, "
          "p99 < 15 ms",
          ["endpoint", "req/s", "p50 ms", "p99 ms", "ratio to /health", "errors"], wrk_rows)
    for name in docs:
        summary.record("2", f"{name} one-paragraph DOCX / me, HTTP medians, one client",
                       statistics.median(medians[convert_label(name)]) / me, GOAL_RATIO,
                       f"me {me * 1000:.2f} ms")
    summary.record("2", "minimal one-paragraph DOCX / me, a connection per request",
                   statistics.median(fresh[convert_label("minimal")]) / me_fresh, GOAL_RATIO,
                   f"me {me_fresh * 1000:.2f} ms")
    for name in docs:
        summary.record("2", f"{name} one-paragraph DOCX / me, Tornado client",
                       statistics.median(heavier[convert_label(name)]) / me_tornado,
                       GOAL_RATIO, f"me {me_tornado * 1000:.2f} ms")
    summary.record("2", "me / /health rate, wrk 32 connections",
                   wrk_figures["me_over_health"], 0.75, "/health", higher_is_better=True)
    summary.record("2", "me p99 ms, wrk 32 connections (median round)",
                   wrk_figures["me_p99"], 15.0, "-")
