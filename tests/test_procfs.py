"""render_pool.runtime.procfs: whether a process has children, and its tree's size, without walking
every process of the machine when it has none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = """
import subprocess, sys
from render_pool.runtime.procfs import has_children, own_tree_rss_mb, rss_kb
import os
alone = has_children()
own = own_tree_rss_mb()
child = subprocess.Popen([sys.executable, "-c",
                          "b = bytearray(100 * 2**20)\\n"
                          "for i in range(0, len(b), 4096): b[i] = 1\\n"
                          "print('ready', flush=True); import time; time.sleep(30)"],
                         stdout=subprocess.PIPE)
assert child.stdout.readline().strip() == b"ready"
running = has_children()
tree = own_tree_rss_mb()
child.kill()
exited = has_children()  # exited, not yet reaped: still a child (and left for wait())
code = child.wait()
print(alone, running, exited, has_children(), code, round(own), round(tree))
"""


@pytest.mark.slow  # starts two Python processes
def test_has_children_and_own_tree_size() -> None:
    """A fresh process has no children; one running or exited but not yet reaped counts, and
    asking reaps nothing (the Popen still gets its exit status); the tree's size counts the
    child's 100 MiB only while it runs."""
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         timeout=120, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split()
    alone, running, exited, after, code, own, tree = out
    assert (alone, running, exited, after) == ("False", "True", "True", "False")
    assert code == "-9"  # wait() got the status: has_children() reaped nothing
    assert int(tree) >= int(own) + 90
