"""The soak's processes: the service and worker it starts, and the resident memory of
the process groups under it (service, pool workers, Chromium...)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from tornado.httpclient import AsyncHTTPClient

from bench.common import SERVICE_ENV
from bench.soak import ADMIN, ADMIN_PASSWORD, COMPANY, ROOT
from render_pool.runtime.procfs import descendants, rss_kb
from tornado_app.embedded.servers import free_port


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


