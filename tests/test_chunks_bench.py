"""How ``just bench chunks`` counts boundaries and broken tables (``bench/chunks.py``): a
chunk counts as starting at a heading only when it opens with a heading of the Markdown,
not with a ``# comment`` of a code block a splitter cut."""

from __future__ import annotations

from bench.chunks import Stats, heading_lines, measure

MARKDOWN = "\n".join([
    "# Setup", "", "Install it.", "", "```", "# convert to stream", "x = 1", "```", "",
    "## Use\u00a0it", "", "| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |", ""])


def test_heading_lines_leave_code_out_and_compare_as_langchain_writes_them() -> None:
    assert heading_lines(MARKDOWN) == {"# Setup", "## Useit"}


def test_a_code_comment_opening_a_chunk_is_no_boundary_at_a_heading() -> None:
    stats = Stats()
    measure(stats, MARKDOWN, ["# Setup\n\nInstall it.\n\n```", "# convert to stream\nx = 1\n```",
                              "## Use\u00a0it", "| a | b |\n|---|---|\n| 1 | 2 |", "| 3 | 4 |"],
            0.0)
    assert (stats.boundaries, stats.at_heading) == (4, 1)
    assert (stats.table_chunks, stats.with_header, stats.no_header) == (2, 1, 1)
