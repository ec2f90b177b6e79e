"""Auth benchmark: a warm ``GET /api/auth/me`` against ``/health`` and against a handler
doing one Redis GET, all in one run on one server process, then ``me`` again while a login
flood hashes passwords (argon2id) in the same process.

The load comes from separate processes (``bench.loadgen``, raw keep-alive connections), so
the figures are the server's. The three endpoints are measured in interleaved rounds (the
machine is shared: a slow moment then hits all three alike), and besides the rates the
table gives the server process's CPU time per request, read from ``/proc``, which other
load on the machine does not change. Goals of issue 13: ``me`` at least half of
``/health``'s rate, p99 under 25 ms, also during the login flood.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import machine, percentile, table
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]
LOGIN_BODY = json.dumps({"companyCode": "BENCH", "username": "user1",
                         "password": "bench password"})
TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _load(port: int, path: str, connections: int, seconds: float, **extra: Any
          ) -> subprocess.Popen[str]:
    spec = {"port": port, "path": path, "connections": connections, "seconds": seconds,
            "raw": True, **extra}
    return subprocess.Popen([sys.executable, "-m", "bench.loadgen", json.dumps(spec)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate(timeout=120)
    return json.loads(out)


def _token(port: int) -> str:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/auth/login",
                                 data=LOGIN_BODY.replace("user1", "user0").encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)["data"]["token"]


class Totals:
    """Requests, time, latencies and server CPU of one endpoint over all its rounds."""

    def __init__(self) -> None:
        self.requests = self.ok = 0
        self.seconds = self.cpu = 0.0
        self.latencies: list[float] = []

    def add(self, r: dict[str, Any], cpu: float) -> None:
        self.requests += r["requests"]
        self.ok += sum(v for k, v in r["statuses"].items() if k.startswith("2"))
        self.seconds += r["seconds"]
        self.cpu += cpu
        self.latencies += r["latencies_ms"]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def row(self, name: str, base: Totals) -> list[object]:
        return [name, f"{self.rps:.0f}", f"{percentile(self.latencies, 50):.1f}",
                f"{percentile(self.latencies, 99):.1f}", f"{self.rps / base.rps:.2f}",
                f"{1000 * self.cpu / max(self.requests, 1):.3f}", f"{self.ok}/{self.requests}"]


def _measured(pid: int, proc: subprocess.Popen[str], totals: Totals) -> dict[str, Any]:
    before = _cpu_seconds(pid)
    result = _result(proc)
    totals.add(result, _cpu_seconds(pid) - before)
    return result


def _measure(pid: int, port: int, seconds: float, rounds: int, connections: int
             ) -> list[list[object]]:
    auth = {"Authorization": f"Bearer {_token(port)}"}
    _result(_load(port, "/health", 8, 1.0))  # warm-up (and the me cache below)
    _result(_load(port, "/api/auth/me", 4, 0.5, headers=auth))
    endpoints = {"/health": {}, "/bench/redis-get": {}, "/api/auth/me": {"headers": auth}}
    totals = {path: Totals() for path in endpoints}
    for _ in range(rounds):
        for path, extra in endpoints.items():
            _measured(pid, _load(port, path, connections, seconds / rounds, **extra),
                      totals[path])
    # me with and without a login flood, interleaved too, so both see the same machine
    alone, during, login_count, login_seconds = Totals(), Totals(), 0, 0.0
    for _ in range(rounds):
        _measured(pid, _load(port, "/api/auth/me", connections, seconds / rounds,
                             headers=auth), alone)
        flood = _load(port, "/api/auth/login", 8, seconds / rounds + 1, method="POST",
                      body=LOGIN_BODY, headers={"Content-Type": "application/json"})
        time.sleep(0.5)  # the flood is under way
        _measured(pid, _load(port, "/api/auth/me", connections, seconds / rounds,
                             headers=auth), during)
        flooded = _result(flood)
        login_count += flooded["statuses"].get("200", 0)
        login_seconds += flooded["seconds"]
    health, redis_get, me = (totals[p] for p in endpoints)
    return [
        health.row("GET /health (baseline)", health),
        redis_get.row("handler doing one Redis GET", health),
        me.row("GET /api/auth/me (warm cache)", health),
        alone.row("GET /api/auth/me, next to the flood rounds below", health),
        during.row(f"GET /api/auth/me during a login flood ({login_count / login_seconds:.0f} "
                   f"logins/s from 8 clients)", health),
        ["me / one Redis GET", "", "", "", f"{me.rps / redis_get.rps:.2f}",
         f"{me.cpu / me.requests / (redis_get.cpu / redis_get.requests):.2f}", ""],
        ["me during the flood / me next to it", "", "", "", f"{during.rps / alone.rps:.2f}",
         "", ""],
        ["me / /health when the server is CPU-bound (CPU per request)", "", "", "",
         f"{(health.cpu / health.requests) / (me.cpu / me.requests):.2f}", "", ""],
    ]


def run(quick: bool = False, connections: int = 32) -> None:
    seconds, rounds = (2.0, 1) if quick else (9.0, 3)
    with tempfile.TemporaryDirectory() as tmp:
        redis = start_redis(Path(tmp) / "redis", persistent=False)
        mongo = start_secantus(None, Path(tmp))
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "bench.auth_server", str(port),
                                   mongo.url, redis.url], cwd=ROOT, stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "ready"
            rows = _measure(server.pid, port, seconds, rounds, connections)
        finally:
            server.terminate()
            server.wait(10)
            mongo.stop()
            redis.stop()
    table(f"Auth: one server process, {connections} keep-alive connections from a separate "
          f"load process, {rounds} interleaved round(s) ({machine()}); goal: me >= 0.50 of "
          f"/health, p99 < 25 ms",
          ["endpoint", "req/s", "p50 ms", "p99 ms", "ratio to /health",
           "server CPU ms/request (incl. hashing)", "2xx/requests"], rows)
