"""Waiting in tests for something to become true, polled with a deadline: a test never sleeps
a guessed time and hopes. A test that must show something did NOT happen waits instead for a
positive sign that the code under test has run past the point where it would have happened
(a process gone, a queue entry removed, a sender stopped), then asserts."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


def wait_until(check: Callable[[], T], timeout: float = 30.0, interval: float = 0.02,
               what: str = "condition") -> T:
    """Call ``check`` until it returns something true, and return that; AssertionError
    naming ``what`` once ``timeout`` seconds have passed (blocking: threads, subprocesses)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout} s (last: {value!r})")
        time.sleep(interval)


async def eventually(probe: Callable[[], Awaitable[T] | T], timeout: float = 30.0,
                     interval: float = 0.02, what: str = "condition") -> T:
    """Await (or call) ``probe`` until it gives something true, and return that;
    AssertionError naming ``what`` once ``timeout`` seconds have passed. The event loop runs
    meanwhile, so a server in this process makes progress."""
    deadline = time.monotonic() + timeout
    while True:
        value: Any = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return cast(T, value)  # the probe's own T, awaited or not
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout} s (last: {value!r})")
        await asyncio.sleep(interval)
