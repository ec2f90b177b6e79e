"""Hostile-input benchmark (issue 20): what one caller's worst input costs everyone else.

One ``serve`` process (embedded stores, a pool of two workers) with two companies: EVIL's
ANNOTATOR sends each hostile input in turn while GOOD's user calls ``GET /api/auth/me``
back to back. For each input the table gives the answer code and its time, GOOD's worst
``me`` latency during it (against ``me`` at rest, measured first in the same run; goal:
under 1 s) and the peak resident size of the whole service tree (service, pool workers,
Chromium, embedded stores; psutil, sampled between ``me`` calls) over its size just before.

``--quick`` runs the same inputs with the service's job time limit at 20 s and the inputs
that cost time on the event loop at half size, so the section ends in a couple of minutes.
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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench import hostile_inputs as hi
from bench.common import SERVICE_ENV, machine, multipart, percentile, table
from render_pool.procfs import descendants, rss_kb
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


def _tree_rss_mb(pid: int) -> float:
    return sum(rss_kb(p) for p in [pid, *descendants(pid)]) / 1024


class _Http:
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


def _answer_code(status: int, body: bytes, ctype: str) -> str:
    """The envelope code, or what a file answer was."""
    if "json" in ctype:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            return str(json.loads(body)["code"])
    return f"HTTP {status}, {len(body) // 1024} KiB file" if status == 200 else f"HTTP {status}"


def _image_server(count: int, mb: float) -> tuple[Callable[[], None], list[str]]:
    """A loopback HTTP server of ``count`` PNGs of ``mb`` MB; (stop, urls)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    png = hi.large_png(mb)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(png)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(png)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    return stop, [f"http://127.0.0.1:{port}/img{i}.png" for i in range(count)]


def inputs(quick: bool, image_urls: list[str]) -> list[Hostile]:
    """The hostile inputs of issue 20 (loop-bound ones at half size when ``quick``)."""
    scale = 2 if quick else 1
    md = {"target": "docx"}
    images_md = "# Pictures\n\n" + "".join(f"![p{i}]({u})\n\n" for i, u in enumerate(image_urls))
    big_zip = hi.zip_of({"doc.md": b"![x](big.png)\n", "big.png": hi.large_png(400)})
    return [
        Hostile(f"zip: doc.md = '![](a (' x {8000 // scale}", "/api/upload-archive",
                {"prefix": "h1"},
                {"file": ("q.zip", hi.zip_of({"doc.md": hi.quadratic_markdown(8000 // scale)}))}),
        Hostile(f"zip: a 400 MB PNG ({len(big_zip) / 2**20:.1f} MB zip)", "/api/upload-archive",
                {"prefix": "h2"}, {"file": ("png.zip", big_zip)}),
        Hostile(f"PDF: content stream of {2048 // scale} MB of spaces", "/api/convert",
                {"export": "markdown"},
                {"file": ("bomb.pdf", hi.space_bomb_pdf(2048 // scale))}),
        Hostile(f"/md/convert docx: {len(image_urls)} remote images of 19 MB", "/md/convert",
                {**md, "markdown_text": images_md}, {}),
        Hostile("/md/convert docx: '[a](' x 25000", "/md/convert",
                {**md, "markdown_text": hi.open_links(25_000)}, {}),
        Hostile("/md/convert docx: 50,000 footnotes", "/md/convert",
                {**md, "markdown_text": hi.footnotes(50_000)}, {}),
        Hostile(f"zip: page.html = '<style>@import url(' x {5000 // scale}",
                "/api/upload-archive", {"prefix": "h7"},
                {"file": ("s.zip", hi.zip_of({"page.html": hi.style_imports(5000 // scale)
                                              .encode()}))}),
    ]


def _attack(http: _Http, pid: int, victim: str, attacker: str, item: Hostile) -> Outcome:
    """Send ``item`` while the victim calls ``me``; sample the tree's RSS meanwhile."""
    body, ctype = multipart(item.fields, item.files)
    idle = _tree_rss_mb(pid)
    result: dict[str, object] = {}

    def send() -> None:
        t0 = time.perf_counter()
        try:
            status, data, rtype = http.call("POST", item.path, token=attacker, body=body,
                                            ctype=ctype)
            result["code"] = _answer_code(status, data, rtype)
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
        peak = max(peak, _tree_rss_mb(pid))
        thread.join(0.05)
    return Outcome(str(result.get("code")), float(result.get("seconds", 0.0)), worst * 1000,
                   calls, peak - idle)


def _start(work: Path, quick: bool) -> tuple[subprocess.Popen[bytes], int]:
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


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(40)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def run(quick: bool = False) -> None:
    stop_images, urls = _image_server(20, 19)
    items = inputs(quick, urls)
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = _start(Path(tmp), quick)
        try:
            http = _Http(port)
            attacker, victim = http.login("EVIL", "mallory"), http.login("GOOD", "alice")
            rest = []
            for _ in range(200):
                t0 = time.perf_counter()
                http.call("GET", "/api/auth/me", token=victim)
                rest.append(time.perf_counter() - t0)
            idle = _tree_rss_mb(proc.pid)
            rows = []
            for item in items:
                out = _attack(http, proc.pid, victim, attacker, item)
                rows.append([item.name, out.code, f"{out.seconds:.1f}",
                             f"{out.me_worst_ms:.0f} ({out.me_calls} calls)",
                             f"{out.peak_over_idle_mb:+.0f}"])
        finally:
            _stop(proc)
            stop_images()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table(f"Hostile inputs from one company, another company's `me` meanwhile ({when}, "
          f"{machine()}, pool of 2; `me` at rest: p50 {percentile(rest, 50) * 1000:.1f} ms, "
          f"max {max(rest) * 1000:.1f} ms; service tree at idle {idle:.0f} MB"
          f"{'; --quick: job limit 20 s' if quick else ''})",
          ["hostile input", "answer code", "seconds", "worst `me` ms (goal < 1000)",
           "peak RSS over idle MB"], rows)
