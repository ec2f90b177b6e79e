"""Process trees from /proc: the descendants of a process and their resident memory.

Used to bound and kill the Chromium trees of pool workers and the workers themselves.
"""

from __future__ import annotations

import os

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _children(pid: int) -> list[int] | None:
    """Direct children of a process from /proc/PID/task/*/children (None if the kernel lacks it)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                kids.extend(int(k) for k in fh.read().split())
        except FileNotFoundError:
            return None
        except OSError:
            continue
    return kids


def _descendants_by_scan(root: int) -> list[int]:
    """Descendants of ``root`` from a scan of every /proc/PID/stat (slower fallback)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def descendants(root: int) -> list[int]:
    """Every descendant pid of ``root`` (children first found, any depth)."""
    found: list[int] = []
    todo = [root]
    while todo:
        kids = _children(todo.pop())
        if kids is None:
            return _descendants_by_scan(root)
        found.extend(kids)
        todo.extend(kids)
    return found



def rss_kb(pid: int) -> int:
    """Resident set size of a process in kB (/proc/PID/statm: cheap to read on every job)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * _PAGE_KB
    except (OSError, ValueError, IndexError):
        return 0


def tree_rss_mb(pid: int) -> float:
    """Resident size of ``pid`` and all its descendants in MiB (0 when gone)."""
    return sum(rss_kb(p) for p in [pid, *descendants(pid)]) / 1024
