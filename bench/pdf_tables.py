"""``python -m bench pdf-tables``: the tables part of ``pdf-layout`` alone (tables-camelot)."""

from __future__ import annotations

from bench.pdf_layout import run_camelot


def run(quick: bool = False) -> None:
    """Print the tables-camelot table (``quick`` changes nothing: it is 17 small PDFs)."""
    del quick
    run_camelot()
