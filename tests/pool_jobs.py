"""Small job functions for the pool tests (importable by spawned workers)."""

from __future__ import annotations

import os
import time

from render_pool.errors import CorruptDocument


def echo(value: object) -> object:
    return value


def pid() -> int:
    return os.getpid()


def sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    return value


def crash() -> None:
    os._exit(13)


def corrupt() -> None:
    raise CorruptDocument("that is not a document")


def hog(mb: int) -> int:
    global _HOARD
    _HOARD = bytearray(mb * 1024 * 1024)
    for i in range(0, len(_HOARD), 4096):
        _HOARD[i] = 1
    return os.getpid()


_HOARD = bytearray()


def record_then(path: str, seconds: float, value: object) -> object:
    """Append ``value`` to ``path`` (one line per execution), sleep, return ``value``."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{value}\n")
    time.sleep(seconds)
    return value


def wrapped_hog(mb: int) -> None:
    """An engine that wraps every failure in its own error, also a failed allocation."""
    try:
        hog(mb)
    except Exception as exc:
        raise CorruptDocument("could not read it") from exc


def print_pdf() -> bytes:
    """A one-page PDF printed by this worker's Chromium."""
    from render_pool.runtime import browser

    return browser.render_pdf("<html><body><p>limited</p></body></html>",
                              pdf_options={"format": "A4"})


def address_limit() -> int:
    """This worker's soft address-space limit in bytes (-1: none)."""
    import resource

    return resource.getrlimit(resource.RLIMIT_AS)[0]


def child_hog(mb: int) -> int:
    """Start a child process that holds ``mb`` MiB and outlives the job; its pid, once the
    memory is touched (the child exits by itself after a minute)."""
    import subprocess
    import sys

    code = (f"import sys, time\nb = bytearray({mb} * 1024 * 1024)\n"
            "for i in range(0, len(b), 4096): b[i] = 1\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
    _CHILDREN.append(child)  # keep the Popen: its pipe stays open, the child is not reaped
    return child.pid


_CHILDREN: list[object] = []


def digest(data: bytes, *, tail: bytes = b"") -> tuple[int, str]:
    """The length and SHA-256 of what the job was given."""
    import hashlib

    return len(data) + len(tail), hashlib.sha256(data + tail).hexdigest()
