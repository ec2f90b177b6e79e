"""The process plumbing every embedded server's launcher uses: starting a child that dies
with the service, waiting until it answers, free loopback ports and finding binaries.

A leaf of :mod:`tornado_app.embedded`: the launchers (``servers``, ``secantus``,
``seaweed``) import it, and it imports none of them.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tornado_app.embedded.children import die_with_parent


class EmbeddedServerError(RuntimeError):
    """A private server could not start; the message names the fix."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_binary(name: str, fix: str) -> str:
    """Path of ``name`` in the virtualenv's bin directory or on PATH, else a clear error."""
    venv_bin = Path(sys.executable).parent / name
    if venv_bin.exists():
        return str(venv_bin)
    found = shutil.which(name)
    if not found:
        raise EmbeddedServerError(f"{name} not found; {fix}")
    return found


@dataclass
class Child:
    """One supervised server process."""

    name: str
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path | None = None
    scratch: Path | None = None  # a temporary data directory, removed once stopped

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server, then kill it if it does not exit in ``timeout`` seconds."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


def spawn(name: str, argv: list[str], log_path: Path | None,
          parent_death_signal: int = signal.SIGTERM) -> subprocess.Popen[bytes]:
    """Start a server process whose output goes to ``log_path``; it gets
    ``parent_death_signal`` when this process dies (``PR_SET_PDEATHSIG``) and runs in a
    session of its own."""
    with open(log_path, "ab") if log_path else contextlib.nullcontext(subprocess.DEVNULL) as out:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=functools.partial(die_with_parent, parent_death_signal),
            start_new_session=True,
        )


def wait_ready(child: Child, probe: tuple[int, str | int], timeout: float = 30.0) -> None:
    """Return once ``child`` accepts connections at ``probe`` (a unix socket path or a
    loopback port); a clear error when it exits first or stays silent for ``timeout`` s."""
    family, address = probe
    target: str | tuple[str, int] = (str(address) if family == socket.AF_UNIX
                                     else ("127.0.0.1", int(address)))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.process.poll() is not None:
            tail = ""
            if child.log_path and child.log_path.exists():
                tail = child.log_path.read_text(errors="replace")[-800:]
            raise EmbeddedServerError(f"{child.name} exited at start-up: {tail.strip()}")
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            try:
                s.connect(target)
                return
            except OSError:
                time.sleep(0.05)
    child.stop()
    raise EmbeddedServerError(f"{child.name} did not answer within {timeout:.0f} s")
