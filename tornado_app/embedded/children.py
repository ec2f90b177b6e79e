"""What every embedded server process gets at birth, in one place."""

from __future__ import annotations

import contextlib
import ctypes
import signal


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """``preexec_fn`` of an embedded server: ``sig`` when the process (strictly: the thread)
    that started it dies, so a killed service leaves no server behind. (Render-pool workers
    watch their parent themselves: ``render_pool.runtime.pool``.)"""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, sig)  # PR_SET_PDEATHSIG
