"""Process trees: the descendants of a process and their resident memory.

Used to bound and kill the Chromium trees of pool workers and the workers themselves, and by
the benchmarks to measure the service. A tree is walked down from its root through
``/proc/PID/task/TID/children`` (one small read per process of the tree), and sizes are read
from ``/proc/PID/statm``. Why not psutil alone: its ``children()`` reads the ``stat`` file
of every process on the machine to find the parents, 6-12 ms with 150 processes on a busy
host, and a PDF job paid that twice (the browser's memory check and the pool's after-job
bound). Kernels built without ``CONFIG_PROC_CHILDREN`` have no such file: psutil then.
"""

from __future__ import annotations

import glob
import os
import time

import psutil

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
_HAS_CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), from ``/proc``."""
    out: list[int] = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path, "rb") as f:
                out.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):  # the thread or the process ended meanwhile
            continue
    return out


# the last walk of this process's own tree: (when, pids), for :func:`own_tree_rss_mb`
_own_walk: tuple[float, int, list[int]] | None = None


def descendants(root: int, max_age: float = 0.0) -> list[int]:
    """Every descendant pid of ``root``, any depth (empty when ``root`` is gone).

    ``max_age``: for this process's own tree, the pids of a walk at most that many seconds
    old will do (a PDF job's browser check walks the tree, and the pool's bound right after
    it reuses that walk; the sizes are still read afresh)."""
    global _own_walk
    own = root == os.getpid()
    if own and max_age > 0 and _own_walk is not None:
        when, pid, pids = _own_walk
        if pid == root and time.monotonic() - when <= max_age:
            return list(pids)
    found = _walk(root)
    if own:
        _own_walk = (time.monotonic(), root, found)
    return list(found)


def _walk(root: int) -> list[int]:
    if not _HAS_CHILDREN_FILES:
        try:
            return [child.pid for child in psutil.Process(root).children(recursive=True)]
        except psutil.Error:
            return []
    found: list[int] = []
    seen = {root}
    todo = [root]
    while todo:
        for child in _children(todo.pop()):
            if child not in seen:  # a pid reused while walking cannot loop the walk
                seen.add(child)
                found.append(child)
                todo.append(child)
    return found


def name(pid: int) -> str:
    """The process name (``comm``, at most 15 characters), or ``""`` when it is gone."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read().decode("utf-8", "replace").rstrip("\n")
    except OSError:
        return ""


def rss_kb(pid: int) -> int:
    """Resident set size of a process in kB (0 when it is gone): the second field of
    ``/proc/PID/statm``, in pages (what psutil reports as ``rss``, without its objects)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss_mb(pid: int, max_age: float = 0.0) -> float:
    """Resident size of ``pid`` and all its descendants in MiB (0 when gone); ``max_age``
    as for :func:`descendants`."""
    return sum(rss_kb(p) for p in [pid, *descendants(pid, max_age)]) / 1024


def has_children() -> bool:
    """Whether this process has a child process, running or exited and not yet reaped.

    One ``waitid`` call that reaps nothing (``WNOWAIT``), so ``subprocess`` and Playwright
    still collect their own children's status. Why: even the walk down the tree costs a
    glob and a read per thread, and on kernels without ``/proc/PID/task/*/children`` a read
    of every ``/proc/PID/stat`` on the machine (psutil), while a process without children
    has none to find."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


# this process's own ``statm``, kept open: (pid that opened it, descriptor)
_own_statm: tuple[int, int] | None = None


def own_rss_kb() -> int:
    """This process's resident size in kB, as :func:`rss_kb` reads it, from a ``statm``
    kept open and read again at offset 0 (the kernel writes it afresh on every read).
    Why: opening, reading and closing the file cost about 10 us after every pool job; a
    ``pread`` of the open file about 1 us. The file is opened again after a fork (an open
    ``/proc/self/statm`` stays the opener's)."""
    global _own_statm
    pid = os.getpid()
    if _own_statm is None or _own_statm[0] != pid:
        try:
            _own_statm = (pid, os.open(f"/proc/{pid}/statm", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            return rss_kb(pid)
    try:
        return int(os.pread(_own_statm[1], 256, 0).split()[1]) * _PAGE_KB
    except (OSError, IndexError, ValueError):
        return rss_kb(pid)


def own_tree_rss_mb() -> float:
    """Resident size of this process and all its descendants in MiB: the tree is walked
    only when this process has children (:func:`has_children`), else its own size is it
    (:func:`own_rss_kb`); a walk of the last second is reused (the browser's own check has
    just made one)."""
    if has_children():
        return tree_rss_mb(os.getpid(), max_age=1.0)
    return own_rss_kb() / 1024
