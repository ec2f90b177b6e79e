"""HTTP load from wrk (Debian's ``wrk`` package): a C load generator with one thread and
keep-alive connections, so the client costs far less CPU than the server it measures, and
its latency histogram is exact. ``just bench`` installs it when missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("wrk_report.lua")


def wrk_binary() -> str:
    """The wrk executable; a clear error when it is not installed."""
    found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is not installed (apt-get install wrk; `just bench` does it)")
    return found


def start(port: int, path: str, connections: int, seconds: float, *, method: str = "GET",
          body: str = "", headers: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start one wrk run against ``http://127.0.0.1:port/path``; read it with :func:`result`."""
    args = [wrk_binary(), "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s",
            "--timeout", "10s", "-s", str(SCRIPT)]
    for name, value in (headers or {}).items():
        args += ["-H", f"{name}: {value}"]
    env = {**os.environ, "WRK_METHOD": method, "WRK_BODY": body}
    return subprocess.Popen([*args, f"http://127.0.0.1:{port}{path}"], env=env,
                            stdout=subprocess.PIPE, text=True)


def result(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """The JSON summary of a finished run: requests, seconds, socket and HTTP errors (status
    >= 400), p50, p99 and max latency in ms."""
    out, _ = proc.communicate(timeout=120)
    return json.loads(out.strip().splitlines()[-1])
