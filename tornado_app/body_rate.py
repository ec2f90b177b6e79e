"""A minimum upload rate for every request body (slow-body attacks).

Tornado's ``body_timeout`` bounds a body's total time only, so a caller that declares a large
``Content-Length`` and trickles a byte now and then holds a connection, a handler and its
buffers for that whole time. :class:`BodyRateWatch` instead keeps a rolling deadline: a body
must have delivered ``min_rate`` bytes per second on average once ``grace`` seconds have
passed (deadline = start + grace + received / min_rate, as Apache's ``mod_reqtimeout``
``MinRate`` does). One timer per request, re-armed when it fires, never per chunk. When the
deadline passes with the body incomplete, ``on_slow`` is called (the handler answers 408 and
the connection closes); once the body is complete the watch stops, so a long conversion
after a fast upload is never cut.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tornado.ioloop import IOLoop


class BodyRateWatch:
    """Watches one request body; see the module docstring."""

    def __init__(self, *, min_rate: float, grace: float, declared: int | None,
                 complete: Callable[[], bool], on_slow: Callable[[float], None]) -> None:
        self.min_rate = float(min_rate)
        self.grace = float(grace)
        self.declared = declared
        self.received = 0
        self.started = time.monotonic()
        self._complete = complete
        self._on_slow = on_slow
        self._loop = IOLoop.current()
        self._timer: Any = None
        self._arm()

    def deadline(self) -> float:
        """The monotonic time by which more of the body must have arrived."""
        return self.started + self.grace + self.received / self.min_rate

    def add(self, n: int) -> None:
        """``n`` more bytes of the body arrived (the timer moves on by itself)."""
        self.received += n

    def done(self) -> bool:
        return (self.declared is not None and self.received >= self.declared) or \
            self._complete()

    def stop(self) -> None:
        if self._timer is not None:
            self._loop.remove_timeout(self._timer)
            self._timer = None

    def _arm(self) -> None:
        delay = max(0.05, self.deadline() - time.monotonic())
        self._timer = self._loop.call_later(delay, self._check)

    def _check(self) -> None:
        self._timer = None
        if self.done():
            return
        if time.monotonic() >= self.deadline():
            elapsed = time.monotonic() - self.started
            self._on_slow(self.received / elapsed if elapsed > 0 else 0.0)
            return
        self._arm()


def declared_length(headers: Any) -> int | None:
    """The request's ``Content-Length`` as an int, or None (absent, chunked, malformed)."""
    value = headers.get("Content-Length", "")
    return int(value) if value.isdigit() else None


def has_body(headers: Any) -> bool:
    """True when a body follows the headers (a length above 0, or chunked)."""
    length = declared_length(headers)
    return bool(length) or "chunked" in headers.get("Transfer-Encoding", "").lower()
