"""One process at a time runs the embedded servers of a data directory; the others reach them.

Two SecantusDBs cannot open one store (WiredTiger refuses the second: "Device or resource
busy"), and two redis-servers on one directory would write one append-only file while the
second takes over the first one's socket path. So the process that starts the embedded
servers of ``DATA_DIR`` (``serve``, ``worker``, or a terminal command such as
``create-admin`` while no service runs) holds an exclusive ``flock`` on
``DATA_DIR/embedded.lock`` for its whole life (the kernel drops it when the process ends,
however it ends: no stale lock to clean up) and writes into that file how its servers are
reached: the SecantusDB port and the redis-server socket. The login stays in
``mongo.auth.json`` (0600): the record holds no secret.

A terminal command that finds the lock held by a running ``serve`` or ``worker`` uses that
process's servers with the service's own login (:func:`tornado_app.embedded.secantus.login_url`),
so ``create-admin`` works while the service runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from tornado_app.embedded.servers import EmbeddedServerError

LOCK_FILE = "embedded.lock"
# How long taking the lock retries: :meth:`DataDirLock.holder` tests whether the lock is free
# by taking it for a moment, and a process taking it for real in that moment must not be
# told the directory is busy (a real holder keeps it for its whole life, far longer).
PROBE_GRACE_SECONDS = 0.5
SERVICES = frozenset({"serve", "worker"})  # long-lived holders whose servers others may use


class DataDirBusy(EmbeddedServerError):
    """Another process runs the embedded servers of this data directory."""


@dataclass(frozen=True)
class Holder:
    """What the process holding a data directory's lock wrote about itself."""

    pid: int
    command: str
    ready: bool = False  # its servers answer; the fields below are filled
    mongo_port: int | None = None  # None: it uses MONGO_URL (or has not started SecantusDB)
    redis_url: str | None = None  # None: it uses REDIS_URL

    @property
    def is_service(self) -> bool:
        return self.command in SERVICES


class DataDirLock:
    """The exclusive lock on one data directory's embedded servers (see the module)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None
        self._command = ""

    def _flock(self) -> int | None:
        """A descriptor of the lock file holding the exclusive lock, or None while another
        process holds it (no waiting)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    def try_acquire(self, command: str) -> bool:
        """Take the lock for ``command`` (``serve``, ``create-admin``...); False while another
        process holds it. Waits only out another process's probe of the lock (at most
        :data:`PROBE_GRACE_SECONDS`), never for a holder to end."""
        deadline = time.monotonic() + PROBE_GRACE_SECONDS
        while (fd := self._flock()) is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        self._fd, self._command = fd, command
        self._write(Holder(os.getpid(), command))
        return True

    def publish(self, *, mongo_port: int | None, redis_url: str | None) -> None:
        """Record that the servers answer and how they are reached."""
        self._write(Holder(os.getpid(), self._command, True, mongo_port, redis_url))

    def _write(self, holder: Holder) -> None:
        assert self._fd is not None, "publish() before try_acquire()"
        data = json.dumps(dataclasses.asdict(holder)).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def stop(self) -> None:
        """Release the lock (the file stays: removing it would let two processes lock two
        different files of one name)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None

    def holder(self) -> Holder | None:
        """The record of the process holding the lock; None when no process holds it."""
        if self._fd is not None:
            raise RuntimeError("this process holds the lock itself")
        fd = self._flock()
        if fd is not None:  # free (closing the descriptor lets it go again)
            os.close(fd)
            return None
        try:
            doc = json.loads(self.path.read_bytes() or b"null")
            return Holder(int(doc["pid"]), str(doc["command"]), bool(doc["ready"]),
                          doc["mongo_port"], doc["redis_url"])
        except (OSError, ValueError, KeyError, TypeError):  # being written: not ready yet
            return Holder(0, "", False)

    def wait_for_holder(self, timeout: float) -> Holder | None:
        """The holder once its servers answer (polled up to ``timeout`` seconds: a service
        may be starting), or None once nobody holds the lock. A holder still starting at the
        deadline is returned as it is (``ready`` False)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.holder()
            if found is None or found.ready or time.monotonic() >= deadline:
                return found
            time.sleep(0.2)
