"""What every child process of the service (embedded servers, render-pool workers) gets
at birth, in one place."""

from __future__ import annotations

import contextlib
import ctypes
import signal


def die_with_parent() -> None:
    """SIGTERM when the process (strictly: the thread) that started this one dies, so a
    killed service leaves no child behind. The ``preexec_fn`` of an embedded server, and
    the first step of a render-pool worker (whose Chromium then ends with it)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
