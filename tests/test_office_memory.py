"""LibreOffice runs under a memory limit of its own (``OFFICE_MEMORY_MB``), not the pool
worker's (``POOL_WORKER_MEMORY_MB``, an address-space limit a child inherits).

LibreOffice reserves far more address space than it touches: under the worker's 1,500 MB,
ordinary presentations of the realworld-office corpus (odftoolkit's Presentation3, 4 and
5, 67 KB each) failed on every export and were answered as damaged files (40003). Found by
a sweep of the corpus through every export with the service's limits, 2026-11-29.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from render_pool.engine import config as engine_config
from render_pool.engine.registry import read
from render_pool.engine.sniff import detect_kind
from render_pool.errors import CorruptDocument

pytestmark = pytest.mark.slow  # LibreOffice, and a worker-like child process

ROOT = Path(__file__).resolve().parents[1]
ODT = ROOT / "tests" / "data" / "office_formats" / "report.odt"

# a child that limits its own address space the way a pool worker does, to a little more
# than it holds now (LibreOffice needs several hundred MB: under this it cannot start), then
# reads the ODT through LibreOffice
_WORKER = """
import resource, sys
sys.path.insert(0, {root!r})
from render_pool.engine.registry import read
from render_pool.runtime import memlimit
size_kb = next(int(line.split()[1]) for line in open("/proc/self/status")
               if line.startswith("VmSize:"))
memlimit.apply(size_kb // 1024 + 150)
doc = read(open({odt!r}, "rb").read())
print("blocks", len(doc.blocks))
"""


def test_libreoffice_is_not_held_to_the_workers_memory_limit():
    """A worker whose own limit leaves LibreOffice no room still converts the file."""
    assert detect_kind(ODT.read_bytes()) == "odt"
    done = subprocess.run([sys.executable, "-c", _WORKER.format(root=str(ROOT), odt=str(ODT))],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("blocks "), done.stdout
    assert int(done.stdout.split()[1]) > 0


def test_a_file_past_libreoffices_own_limit_is_answered_naming_the_limit():
    """Too small a limit of its own: LibreOffice cannot convert, and the answer says the limit
    may be why instead of calling the file damaged and nothing else."""
    with engine_config.configured(office_memory_mb=200), \
            pytest.raises(CorruptDocument) as caught:
        read(ODT.read_bytes())
    assert "200 MB of memory" in str(caught.value), str(caught.value)
    # the same file within the default limit: read
    assert read(ODT.read_bytes()).blocks
