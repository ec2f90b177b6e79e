"""Process trees through psutil: the descendants of a process and their resident memory.

Used to bound and kill the Chromium trees of pool workers and the workers themselves, and by
the benchmarks to measure the service. (The module keeps its old name so its callers did not
change when the hand-written /proc walking was replaced by psutil.)
"""

from __future__ import annotations

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
