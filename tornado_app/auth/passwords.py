"""Password hashing with argon2id, off the event loop, in a bounded executor.

A login flood cannot starve other requests: at most ``workers`` hashes run at once, at
most ``queue_limit`` wait, and a waiter gives up after ``wait_seconds`` (the caller then
answers 429). The hashing threads run at a lower CPU priority (``nice``, Linux applies it
per thread), so when the cores are busy the event loop serving every other request wins.
Unknown users are verified against a dummy hash with the same parameters,
so a miss costs the same time as a wrong password. Each hash's work area (``memory_kib``,
19 MiB by default) is returned to the system when the hash ends (see
:func:`_big_buffers_back_to_the_system`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_R = TypeVar("_R")


def _lower_priority(increment: int) -> None:
    """Run in each hashing thread as it starts: raise its nice value by ``increment``."""
    if increment <= 0 or not hasattr(os, "setpriority"):
        return
    with contextlib.suppress(OSError):
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + increment))


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept from moving


def _big_buffers_back_to_the_system() -> None:
    """Pin glibc's mmap threshold: every allocation of 128 KiB or more (an argon2 work area
    is 19 MiB) gets its own mapping, unmapped when freed. Left alone, glibc raises the
    threshold after the first such free, so later work areas come from the hashing threads'
    heaps, where other allocations made in between keep the space from being given back:
    with archive jobs running in the service, the soak saw its resident size climb in 19 MiB
    steps (100 to 143 MiB in 60 s); pinned, it stays near 60-70 MiB. No effect off glibc."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


class HasherBusy(Exception):
    """Too many password operations queued; retry shortly."""


class PasswordService:
    """argon2id hashing/verification with a concurrency bound."""

    def __init__(
        self, *, time_cost: int, memory_kib: int, parallelism: int, workers: int,
        queue_limit: int, wait_seconds: float, nice: int = 0,
    ) -> None:
        _big_buffers_back_to_the_system()
        self.hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism,
            type=Type.ID,
        )
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="argon2",
                                           initializer=_lower_priority, initargs=(nice,))
        self.workers = workers
        self.queue_limit = queue_limit
        self.wait_seconds = wait_seconds
        self._active = 0
        self._slots: asyncio.Semaphore | None = None
        self.dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))

    async def _run(self, fn: Callable[..., _R], *args: Any) -> _R:
        """``fn(*args)`` in the hashing threads: at most ``workers`` at once, ``queue_limit``
        waiting (HasherBusy past that, or after ``wait_seconds`` in the queue)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        if self._active >= self.workers + self.queue_limit:
            raise HasherBusy()
        self._active += 1
        try:
            try:
                await asyncio.wait_for(self._slots.acquire(), self.wait_seconds)
            except TimeoutError as exc:
                raise HasherBusy() from exc
            try:
                return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
            finally:
                self._slots.release()
        finally:
            self._active -= 1

    async def hash(self, password: str) -> str:
        """argon2id hash of ``password`` (used exactly as sent)."""
        return await self._run(self.hasher.hash, password)

    def _verify(self, stored: str | None, password: str) -> bool:
        try:
            return self.hasher.verify(stored or self.dummy_hash, password) and stored is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    async def verify(self, stored: str | None, password: str) -> bool:
        """True when ``password`` matches ``stored``; ``None`` costs the same and is False."""
        return await self._run(self._verify, stored, password)

    def needs_rehash(self, stored: str) -> bool:
        """True when ``stored`` was made with weaker/different parameters."""
        try:
            return self.hasher.check_needs_rehash(stored)
        except InvalidHashError:
            return True

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
