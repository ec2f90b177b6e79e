"""Auth benchmark: a warm ``GET /api/auth/me`` against ``/health`` and against a handler
doing one Redis GET, all in one run, then ``me`` again while a login flood hashes passwords
(argon2id) in the same server process.

Two server processes run side by side: one as ``serve`` runs (uvloop, settled heap; see
``tornado_app.runtime``) and one with the untuned runtime (``EVENT_LOOP=asyncio``,
``GC_GEN0_THRESHOLD=0``), so the table shows what the tuning buys. The load comes from wrk
(C, one thread, keep-alive connections), so the figures are the server's, as in issue 13's
measurement. Endpoints are measured in interleaved rounds (the machine is shared: a slow
moment then hits all alike); the rate is over all rounds; p50 and p99 are given for the
median round, p99 also for the worst (a moment of other load on this shared machine). The
server's CPU time per request, read from ``/proc``, does not depend on other load. Goals of
issue 13: ``me`` at least half of ``/health``'s rate with p99 under 25 ms.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import wrk
from bench.common import machine, table
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]
LOGIN_BODY = json.dumps({"companyCode": "BENCH", "username": "user1",
                         "password": "bench password"})
TICK = os.sysconf("SC_CLK_TCK")
RUNTIMES = {"uvloop + settled heap (serve's default)": {},
            "asyncio + default collector": {"EVENT_LOOP": "asyncio", "GC_GEN0_THRESHOLD": "0"}}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _token(port: int) -> str:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/auth/login",
                                 data=LOGIN_BODY.replace("user1", "user0").encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)["data"]["token"]


@dataclass
class Totals:
    """Requests, time, per-round latency figures and server CPU of one endpoint."""

    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    p50s: list[float] = field(default_factory=list)
    p99s: list[float] = field(default_factory=list)

    def add(self, r: dict[str, Any], cpu: float) -> None:
        self.requests += r["requests"]
        self.errors += r["socket_errors"] + r["http_errors"]
        self.seconds += r["seconds"]
        self.cpu += cpu
        self.p50s.append(r["p50_ms"])
        self.p99s.append(r["p99_ms"])

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu / max(self.requests, 1)

    def row(self, runtime: str, name: str, base: Totals) -> list[object]:
        return [runtime, name, f"{self.rps:.0f}", f"{statistics.median(self.p50s):.1f}",
                f"{statistics.median(self.p99s):.1f} / {max(self.p99s):.1f}",
                f"{self.rps / base.rps:.2f}", f"{self.cpu_ms:.3f}",
                f"{self.errors}/{self.requests}"]


@dataclass
class Server:
    """One benchmark server process and its port."""

    runtime: str
    process: subprocess.Popen[str]
    port: int
    auth: dict[str, str] = field(default_factory=dict)

    def measure(self, path: str, connections: int, seconds: float, totals: Totals,
                **request: Any) -> dict[str, Any]:
        before = _cpu_seconds(self.process.pid)
        result = wrk.result(wrk.start(self.port, path, connections, seconds, **request))
        totals.add(result, _cpu_seconds(self.process.pid) - before)
        return result


def _start(runtime: str, env: dict[str, str], mongo_url: str, redis_url: str) -> Server:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "bench.auth_server", str(port),
                                mongo_url, redis_url], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True, env={**os.environ, **env})
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    server = Server(runtime, process, port)
    server.auth = {"Authorization": f"Bearer {_token(port)}"}
    wrk.result(wrk.start(port, "/health", 8, 1))  # warm-up, and the me cache below
    wrk.result(wrk.start(port, "/api/auth/me", 4, 1, headers=server.auth))
    return server


def _compare(servers: list[Server], seconds: float, rounds: int, connections: int
             ) -> list[list[object]]:
    paths = ["/health", "/bench/redis-get", "/api/auth/me"]
    totals = {(s.runtime, p): Totals() for s in servers for p in paths}
    for _ in range(rounds):
        for server in servers:
            for path in paths:
                headers = server.auth if path == "/api/auth/me" else {}
                server.measure(path, connections, seconds, totals[server.runtime, path],
                               headers=headers)
    rows = []
    for server in servers:
        health, redis_get, me = (totals[server.runtime, p] for p in paths)
        rows += [health.row(server.runtime, "GET /health (baseline)", health),
                 redis_get.row(server.runtime, "handler doing one Redis GET", health),
                 me.row(server.runtime, "GET /api/auth/me (warm cache)", health),
                 [server.runtime, "me / one Redis GET", "", "", "",
                  f"{me.rps / redis_get.rps:.2f}", f"{me.cpu_ms / redis_get.cpu_ms:.2f}", ""]]
    return rows


def _flood(server: Server, seconds: float, rounds: int, connections: int
           ) -> list[list[object]]:
    """me next to and during a login flood (8 clients), interleaved."""
    alone, during = Totals(), Totals()
    logins = Totals()
    for _ in range(rounds):
        server.measure("/api/auth/me", connections, seconds, alone, headers=server.auth)
        flood = wrk.start(server.port, "/api/auth/login", 8, seconds + 1, method="POST",
                          body=LOGIN_BODY, headers={"Content-Type": "application/json"})
        time.sleep(0.5)  # the flood is under way
        server.measure("/api/auth/me", connections, seconds, during, headers=server.auth)
        logins.add(wrk.result(flood), 0.0)
    return [
        alone.row(server.runtime, "GET /api/auth/me, next to the flood rounds", alone),
        during.row(server.runtime, f"GET /api/auth/me during a login flood "
                   f"({logins.rps:.0f} logins/s from 8 clients)", alone),
    ]


def run(quick: bool = False, connections: int = 32) -> None:
    seconds, rounds = (1.0, 1) if quick else (3.0, 5)
    with tempfile.TemporaryDirectory() as tmp:
        redis = start_redis(Path(tmp) / "redis", persistent=False)
        mongo = start_secantus(None, Path(tmp))
        servers: list[Server] = []
        try:
            for runtime, env in RUNTIMES.items():
                servers.append(_start(runtime, env, mongo.url, redis.url))
            rows = _compare(servers, seconds, rounds, connections)
            flood_rows = _flood(servers[0], seconds, rounds, connections)
        finally:
            for server in servers:
                server.process.terminate()
                server.process.wait(10)
            mongo.stop()
            redis.stop()
    table(f"Auth: two server processes (runtimes below), wrk with {connections} keep-alive "
          f"connections, {rounds} interleaved round(s) of {seconds:.0f} s ({machine()}); "
          f"goal: me >= 0.50 of /health, p99 < 25 ms",
          ["runtime", "endpoint", "req/s", "p50 ms (median round)",
           "p99 ms (median / worst round)", "ratio to /health", "server CPU ms/request",
           "errors/requests"], rows)
    table("Auth under a login flood (same server, serve's runtime); ratio to me next to it",
          ["runtime", "endpoint", "req/s", "p50 ms (median round)",
           "p99 ms (median / worst round)", "ratio", "server CPU ms/request (incl. hashing)",
           "errors/requests"], flood_rows)
