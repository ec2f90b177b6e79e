"""Supervise the private servers the service starts when no real ones are configured.

Each server is a real child process bound to loopback (redis-server on a 0700 unix socket,
SecantusDB speaking the MongoDB wire protocol with logins required: ``embedded.secantus``).
Children get ``PR_SET_PDEATHSIG`` so that they die with the service even if it is killed
hard; :meth:`Embedded.stop` terminates them politely first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from tornado_app.embedded.children import die_with_parent

log = logging.getLogger("tornado_app.embedded.servers")
S = TypeVar("S", bound="Stoppable")  # what Embedded.add hands back: its argument's type


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


def _spawn(name: str, argv: list[str], log_path: Path | None) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") if log_path else contextlib.nullcontext(subprocess.DEVNULL) as out:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent, start_new_session=True,
        )


def _wait_ready(child: Child, probe: tuple[int, str | int], timeout: float = 30.0) -> None:
    family, address = probe
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
                s.connect(address if family == socket.AF_UNIX else ("127.0.0.1", address))
                return
            except OSError:
                time.sleep(0.05)
    child.stop()
    raise EmbeddedServerError(f"{child.name} did not answer within {timeout:.0f} s")


def start_redis(directory: Path, *, persistent: bool) -> Child:
    """Start redis-server on a unix socket in ``directory``; append-only file when persistent."""
    binary = find_binary("redis-server", "install it with `apt-get install redis-server`")
    directory = directory.absolute()  # redis-server changes into --dir before binding
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)  # the socket's directory: nobody else may even look up its path
    sock = directory / "redis.sock"
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    argv = [
        binary, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
        "--dir", str(directory), "--daemonize", "no", "--save", "",
        "--appendonly", "yes" if persistent else "no", "--loglevel", "warning",
    ]
    log_path = directory / "redis.log"
    child = Child("redis-server", _spawn("redis-server", argv, log_path), f"unix://{sock}",
                  log_path)
    _wait_ready(child, (socket.AF_UNIX, str(sock)))
    return child


def start_secantus(storage: Path | None, log_dir: Path) -> Child:
    """Start SecantusDB with logins required; see :mod:`tornado_app.embedded.secantus`
    (imported here lazily: it builds on this module)."""
    from tornado_app.embedded.secantus import start_secantus as start

    return start(storage, log_dir)


class Stoppable(Protocol):
    """Anything the supervisor can stop: a :class:`Child`, a SeaweedFS handle..."""

    def stop(self) -> None: ...


@dataclass
class Embedded:
    """The set of private servers one service process runs."""

    children: list[tuple[str, Stoppable]] = field(default_factory=list)
    # the data directory's lock (tornado_app.embedded.datadir) while this process runs its
    # servers: let go only after the last of them has stopped
    lock: Stoppable | None = None

    def add(self, child: S, name: str | None = None) -> S:
        label = name or str(getattr(child, "name", type(child).__name__))
        self.children.append((label, child))
        process = getattr(child, "process", None)
        log.info("embedded server started",
                 extra={"server": label, "pid": getattr(process, "pid", None)})
        return child

    def stop(self) -> None:
        """Stop every child, newest first."""
        for label, child in reversed(self.children):
            try:
                child.stop()
            except Exception:  # keep stopping the others
                log.exception("stopping embedded server failed", extra={"server": label})
            log.info("embedded server stopped", extra={"server": label})
        self.children.clear()
        if self.lock is not None:
            self.lock.stop()
            self.lock = None


def ensure_dir(path: Path) -> Path:
    """Create ``path`` with owner-only permissions (it holds keys and data)."""
    path.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    return path
