"""The generated corpus (issue 32): Markdown sources of many subjects, written through every
writer here (pandoc, LibreOffice, Chromium, a simulated scanner) and read back, scored per
writer and per category against the sources (``python -m bench generated``)."""

from __future__ import annotations

from typing import Any


def run(quick: bool = False) -> Any:
    """The bench section (see :mod:`bench.generated.bench`)."""
    from bench.generated.bench import run as run_bench

    return run_bench(quick=quick)
