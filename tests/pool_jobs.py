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
