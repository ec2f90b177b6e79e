"""Process trees through psutil: the descendants of a process and their resident memory.

Used to bound and kill the Chromium trees of pool workers and the workers themselves, and by
the benchmarks to measure the service. (The module keeps its old name so its callers did not
change when the hand-written /proc walking was replaced by psutil.)
"""

from __future__ import annotations

import os

import psutil


def descendants(root: int) -> list[int]:
    """Every descendant pid of ``root``, any depth (empty when ``root`` is gone)."""
    try:
        return [child.pid for child in psutil.Process(root).children(recursive=True)]
    except psutil.Error:
        return []


def name(pid: int) -> str:
    """The process name (``comm``), or ``""`` when it is gone."""
    try:
        return psutil.Process(pid).name()
    except psutil.Error:
        return ""


def rss_kb(pid: int) -> int:
    """Resident set size of a process in kB (0 when it is gone)."""
    try:
        return psutil.Process(pid).memory_info().rss // 1024
    except psutil.Error:
        return 0


def tree_rss_mb(pid: int) -> float:
    """Resident size of ``pid`` and all its descendants in MiB (0 when gone)."""
    return sum(rss_kb(p) for p in [pid, *descendants(pid)]) / 1024


def has_children() -> bool:
    """Whether this process has a child process, running or exited and not yet reaped.

    One ``waitid`` call that reaps nothing (``WNOWAIT``), so ``subprocess`` and Playwright
    still collect their own children's status. Why: finding descendants costs a read of
    every ``/proc/PID/stat`` on the machine (psutil; kernels without
    ``/proc/PID/task/*/children`` offer nothing narrower), milliseconds on a busy host,
    while a process without children has none to find."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def own_tree_rss_mb() -> float:
    """Resident size of this process and all its descendants in MiB: the tree is walked
    only when this process has children (:func:`has_children`), else its own size is it."""
    pid = os.getpid()
    return tree_rss_mb(pid) if has_children() else rss_kb(pid) / 1024
