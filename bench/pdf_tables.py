"""``python -m bench pdf-tables``: the tables part of ``pdf-layout`` alone (tables-camelot),
then how the search for tables without rules grows on a dense page that holds none."""

from __future__ import annotations

import time

from bench.pdf_layout import run_camelot


def _dense_page(lines: int) -> list:
    """``lines`` lines of two short parts each (a dense index), no column of white: no
    table, so every line is tried as the start of one."""
    from render_pool.engine.pdf.chars import Char, Segment

    def part(text: str, x: float, top: float) -> Segment:
        seg = Segment()
        for i, ch in enumerate(text):
            seg.add(Char(ch, x + 2 * i, x + 2 * i + 2, top, top + 4, top + 3.2, 4.0,
                         False, False))
        return seg

    return [seg for n in range(lines)
            for seg in (part("ab cd", 10, n * 4.8), part("ef", 30 + n * 37 % 200, n * 4.8))]


def run_dense() -> None:
    """Seconds for 750 and 3000 such lines (3000: the page's segment limit) and their
    ratio: about 4 when the search is linear, 16 when it grows with the square."""
    from render_pool.engine.pdf.borderless import find_text_tables

    took = {}
    for lines in (750, 3000):
        segs = _dense_page(lines)
        start = time.perf_counter()
        assert find_text_tables(segs) == []
        took[lines] = time.perf_counter() - start
    print(f"dense page without tables: 750 lines {took[750]:.2f} s, 3000 lines "
          f"{took[3000]:.2f} s, ratio {took[3000] / took[750]:.1f} (linear: 4, square: 16)")


def run(quick: bool = False) -> None:
    """Print the tables-camelot table (``quick`` changes nothing: it is 17 small PDFs) and
    the dense-page growth."""
    del quick
    run_camelot()
    run_dense()
