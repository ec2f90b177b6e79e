"""render_pool.runtime.procfs walks a process tree down from its root (``/proc/PID/task/*/children``)
instead of reading every process of the machine: the same descendants, grandchildren
included, as psutil finds; sizes as psutil reports them."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from render_pool.runtime import procfs

pytestmark = pytest.mark.slow  # starts processes

_TREE = ("import subprocess, sys, time\n"
         "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])"
         " for _ in range(2)]\n"
         "print('ready', flush=True); time.sleep(30)\n")


def test_descendants_match_psutil_with_grandchildren() -> None:
    child = subprocess.Popen([sys.executable, "-c", _TREE], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 10
        while len(psutil.Process(child.pid).children()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        expected = sorted(p.pid for p in psutil.Process(os.getpid()).children(recursive=True))
        found = sorted(procfs.descendants(os.getpid()))
        assert found == expected and len(found) >= 3  # the child and its two children
        assert sorted(procfs.descendants(child.pid)) == sorted(
            p.pid for p in psutil.Process(child.pid).children())
        assert procfs.rss_kb(child.pid) == psutil.Process(child.pid).memory_info().rss // 1024
        assert procfs.name(child.pid) == psutil.Process(child.pid).name()
    finally:
        for pid in [*procfs.descendants(child.pid), child.pid]:
            os.kill(pid, 9)
        child.wait()
    assert procfs.descendants(child.pid) == []
    assert procfs.rss_kb(child.pid) == 0 and procfs.name(child.pid) == ""
