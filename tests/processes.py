"""Stopping a child process the way an operator does: a signal (SIGTERM by default), a
wait, and SIGKILL only when it does not exit in time, so a test never leaves one behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path

from tests.waiting import wait_until


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0,
                 kill_timeout: float = 10.0) -> int:
    """Send ``sig`` to ``proc`` (unless it has exited), wait up to ``timeout`` seconds, then
    SIGKILL it; returns its exit code (negative: the signal that ended it)."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(kill_timeout)
    return proc.returncode


def stop_with_output(proc: subprocess.Popen[str], sig: int = signal.SIGTERM,
                     timeout: float = 30.0) -> str:
    """Like :func:`stop_process` for a child whose output is piped: send ``sig``, read its
    output to the end (up to ``timeout`` seconds, then SIGKILL) and return it."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate(timeout=10)
    return out or ""


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float = 60.0,
                 output: Callable[[], str] = lambda: "") -> None:
    """Poll ``url`` (a service's ``/health``) until it answers ``{"status": "ok"}``;
    AssertionError (with ``output()``, e.g. the log's tail) as soon as ``proc`` exits, or once
    ``timeout`` seconds have passed."""

    def healthy() -> bool:
        assert proc.poll() is None, f"the service exited during start-up\n{output()}"
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                return bool(json.load(r) == {"status": "ok"})
        except (OSError, ValueError):  # not listening yet (URLError is an OSError)
            return False

    wait_until(healthy, timeout, interval=0.1, what=f"{url} answering")


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" not in status.read_text()
    except OSError:  # gone between the two checks
        return False


def still_alive(pids: Iterable[int], timeout: float = 10.0) -> list[int]:
    """The processes of ``pids`` still running once all have ended or ``timeout`` seconds
    have passed, polled: a test asserts they are gone without guessing how long it takes."""
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if is_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if is_alive(pid)]
    return alive
