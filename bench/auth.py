"""Auth benchmark: ``GET /api/auth/me`` against a trivial handler in the same process and
run, and ``me`` latency while argon2 logins run concurrently (the event loop must not
stall)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tornado.httpclient import AsyncHTTPClient

from bench.common import load, machine, summary, table
from tornado_app.embedded.servers import free_port, start_redis, start_secantus

ROOT = Path(__file__).resolve().parents[1]


async def _measure(port: int, seconds: float) -> list[list[object]]:
    client = AsyncHTTPClient(max_clients=64)
    base = f"http://127.0.0.1:{port}"
    resp = await client.fetch(f"{base}/api/auth/login", method="POST", body=json.dumps(
        {"companyCode": "BENCH", "username": "user0", "password": "bench password"}))
    token = json.loads(resp.body)["data"]["token"]
    auth = {"Authorization": f"Bearer {token}"}

    async def trivial() -> None:
        await client.fetch(f"{base}/trivial")

    async def me() -> None:
        await client.fetch(f"{base}/api/auth/me", headers=auth)

    async def login() -> None:
        await client.fetch(f"{base}/api/auth/login", method="POST", raise_error=False,
                           body=json.dumps({"companyCode": "BENCH", "username": "user1",
                                            "password": "bench password"}))

    rows: list[list[object]] = []
    await load(trivial, concurrency=8, seconds=1)  # warm-up
    n_t, lat_t, s_t = await load(trivial, concurrency=16, seconds=seconds)
    n_m, lat_m, s_m = await load(me, concurrency=16, seconds=seconds)
    rps_t, rps_m = n_t / s_t, n_m / s_m
    rows.append(["trivial handler (baseline)", f"{rps_t:.0f}", *(f"{x:.2f}" for x in
                 summary(lat_t)[:2]), "1.00"])
    rows.append(["GET /api/auth/me", f"{rps_m:.0f}", *(f"{x:.2f}" for x in summary(lat_m)[:2]),
                 f"{rps_m / rps_t:.2f}"])
    # me while logins hash passwords
    logins = asyncio.ensure_future(load(login, concurrency=4, seconds=seconds))
    n_c, lat_c, s_c = await load(me, concurrency=16, seconds=seconds)
    n_l, _, s_l = await logins
    rows.append([f"GET /api/auth/me during logins ({n_l / s_l:.0f} logins/s)",
                 f"{n_c / s_c:.0f}", *(f"{x:.2f}" for x in summary(lat_c)[:2]),
                 f"{(n_c / s_c) / rps_t:.2f}"])
    client.close()
    return rows


def run(quick: bool = False) -> None:
    seconds = 2.0 if quick else 8.0
    with tempfile.TemporaryDirectory() as tmp:
        redis = start_redis(Path(tmp) / "redis", persistent=False)
        mongo = start_secantus(None, Path(tmp))
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "bench.auth_server", str(port),
                                   mongo.url, redis.url], cwd=ROOT, stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "ready"
            rows = asyncio.run(_measure(port, seconds))
        finally:
            server.terminate()
            server.wait(10)
            mongo.stop()
            redis.stop()
    table(f"Auth: requests/s and latency, 16 concurrent clients ({machine()})",
          ["endpoint", "req/s", "p50 ms", "p99 ms", "ratio to baseline"], rows)
