"""The hard memory limit of a pool worker: ``RLIMIT_AS`` on the worker's address space.

Why this shape: the pool's after-job check of resident memory comes too late for a
decompression bomb or a parser that grows without end (a worker reached 3 GB before it was
checked). A limit on the address space makes the allocation itself fail: Python raises
``MemoryError`` (the job answers 41301 and its worker is replaced), a C library that cannot
allocate aborts (the worker dies: 50001, the pool starts another).

A cgroup v2 ``memory.max`` would also bound the page cache and the kernel's share, but it
needs a delegated, writable cgroup v2 hierarchy with the memory controller, which neither
this kind of machine (cgroup v1 memory controller) nor an unprivileged container has; the
address-space limit works everywhere, so it is the one mechanism.

Only the *soft* limit is set; the hard limit stays as it was (normally unlimited), so the
worker can lift its own limit for the one thing that needs a huge address space and has its
own bound: the Playwright driver (Node) and Chromium, which reserve tens of GB of virtual
memory they never touch. They are started inside :func:`lifted` and keep the lifted limit
(a child inherits the limits in force when it is created); Chromium is bounded by its
resident size instead (``CHROMIUM_MAX_RSS_MB``, render_pool.runtime.browser).
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator

MB = 1024 * 1024
_limit_mb = 0  # the limit this process applied (0: none)


def apply(limit_mb: int) -> int:
    """Limit this process's address space to ``limit_mb`` MiB (0 or less: no limit);
    returns the limit in force in MiB (0: none). Children inherit it."""
    global _limit_mb
    if limit_mb <= 0:
        return 0
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = limit_mb * MB
    if hard != resource.RLIM_INFINITY and hard < wanted:
        wanted = hard
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    _limit_mb = wanted // MB
    return _limit_mb


def limit_mb() -> int:
    """The limit :func:`apply` set in this process (0: none)."""
    return _limit_mb


@contextlib.contextmanager
def lifted() -> Iterator[None]:
    """Run the block with the soft limit raised to the hard one, then put it back: for
    starting the processes (Playwright driver, Chromium) that must not inherit the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == hard:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def caused_by_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised while handling, a ``MemoryError`` (engines that
    wrap every error in their own type keep the cause)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, MemoryError):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False
