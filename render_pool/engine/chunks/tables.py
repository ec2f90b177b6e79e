"""How the chunks writer writes a part of a table (some of its rows under its header).

Why not simply the Markdown renderer's table: it writes a pipe table when every cell is plain
paragraphs and HTML otherwise, and it decides that per table. A part of an HTML table (one
with a list or several paragraphs in a cell) often has only plain cells, so it came out as a
pipe table, which repeats a merged cell's text in every column it spans: words the document
has once were then in the chunks several times. A part is written in the form of its whole
table, so the chunks hold the table's text exactly as the Markdown export does.
"""

from __future__ import annotations

import re

from render_pool.engine.markdown.render import MarkdownRenderer
from render_pool.engine.model import Table

__all__ = ["part_table"]

_BLANK_LINE = re.compile(r"\n(?=[ \t]*\n)")


def part_table(renderer: MarkdownRenderer, part: Table, pipe: bool) -> str:
    """The Markdown of ``part``, rows of a table whose form is ``pipe`` (``pipe_ok`` of the
    whole table, decided once per table: asked per part, it made a table's chunks cost the
    square of its rows): a pipe table, else HTML (kept free of blank lines, which would end
    the HTML block, as the Markdown renderer does)."""
    if not part.rows or pipe:
        return renderer.table(part)
    return _BLANK_LINE.sub("&#10;", renderer.html.table(part))
