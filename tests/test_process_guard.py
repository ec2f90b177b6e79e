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
