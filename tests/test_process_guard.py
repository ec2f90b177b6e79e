"""The process guard of tests/conftest.py: a test not marked slow that starts a process
fails, naming the program; a slow one starts processes as the code under test would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_a_program_given_as_a_path_starts_in_a_slow_test() -> None:
    """``subprocess`` takes a path-like program as well as text or a list; the guard wrapped
    around ``Popen`` must pass it on, not stop it."""
    done = subprocess.run(Path(sys.executable), input=b"", capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


PROBE = '''
import subprocess
import threading


def test_starts_true_in_a_thread():
    worker = threading.Thread(target=lambda: subprocess.run(["true"]))
    worker.start()
    worker.join()


def test_starts_true_and_swallows_the_refusal():
    try:
        subprocess.run(["true"])
    except BaseException:
        pass
'''


@pytest.mark.slow  # runs pytest in a process of its own
def test_a_fast_test_fails_also_when_its_process_starts_in_another_thread(tmp_path: Path
                                                                          ) -> None:
    """A process started from a thread of the code under test, or a refusal the code under
    test catches, still fails the fast test (not only a warning printed from the thread)."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), "-c", "/dev/null", str(probe)],
        cwd=root, capture_output=True, text=True, timeout=120)
    assert "2 failed" in done.stdout, done.stdout + done.stderr
    assert done.stdout.count("starts a process (true) but is not marked slow") >= 2, done.stdout
