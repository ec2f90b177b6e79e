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
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from tornado_app.embedded.processes import Child, find_binary, spawn, wait_ready

# the launchers' shared names, importable from here as before
from tornado_app.embedded.processes import EmbeddedServerError as EmbeddedServerError
from tornado_app.embedded.processes import free_port as free_port
from tornado_app.embedded.secantus import start_secantus as start_secantus

log = logging.getLogger("tornado_app.embedded.servers")
S = TypeVar("S", bound="Stoppable")  # what Embedded.add hands back: its argument's type


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
    child = Child("redis-server", spawn("redis-server", argv, log_path), f"unix://{sock}",
                  log_path)
    wait_ready(child, (socket.AF_UNIX, str(sock)))
    return child


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
