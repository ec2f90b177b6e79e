"""Block quotes of an untagged PDF, found from indentation.

A PDF without tags says nothing about quotes; what is left of one is its indentation. A
paragraph is read as a block quote when every one of its lines starts clearly right of the
body text's left edge, at one x, and either its full lines also stop clearly left of the
column's right edge (indented on both sides, like Word's Quote styles) or it runs over three
lines or more (indented on the left only, like Block Text).

What never becomes a quote: a paragraph whose first line alone is indented (a first-line
indent) or whose first line alone is not (a hanging indent), a single indented line, list
items, code and tables (the builder has made those before this runs), captions ("Figure 2:
..."), text that neither opens nor ends like a sentence (the cells of a table set in a
narrow column, "Ch" / "an" / "ge"), and anything on a page where the body's left edge cannot
be told. The body's left edge is measured per page and column from the paragraphs' own
lines, so headings, lists and running headers set further left do not count; a quote's
indent is judged line by line against its own column's edge, so a quote may run on into the
next column. On pages set in columns, a column whose lines all stand indented (it holds only
the quote ending a section) takes the column's own edge as its margin. When quotes would
make up half of all paragraph text or more, the indentation is the document's own style and
nothing is a quote.

Consecutive quote paragraphs at one indent share a block quote, and a one-line paragraph at
the same indent right after a quote (the quote's last short paragraph, an attribution)
joins it.
"""

from __future__ import annotations

import re

from render_pool.engine.model import Block, BlockQuote, Paragraph
from render_pool.engine.pdf.layout import Line

MIN_INDENT_EM = 1.5  # left (and right) indent of a quote, in ems of its text
MIN_MARGIN_SHARE = 0.15  # the body's left edge holds at least this share of a page's lines
_ENDS = (".", "!", "?", ":", ";", "\"", "\u201d", "\u2019", ")", "\u3002")  # a quote's last
MAX_QUOTE_SHARE = 0.5  # quotes above this share of paragraph lines: the indent is the style
_CAPTION = re.compile(r"^(figure|fig\.|table|tab\.|listing|algorithm|chart|exhibit|image|"
                      r"source|abbildung|tabelle|tableau)\s*[\dIVX]", re.IGNORECASE)


def _em(lines: list[Line]) -> float:
    """The paragraph's text size (its first line's: the builder keeps one size per
    paragraph)."""
    return max(lines[0].size, 1.0)


def body_margins(paragraphs: list[list[Line]]) -> dict[tuple[int, int], float]:
    """Left edge of the body text per (page, column): the leftmost x where at least a
    ``MIN_MARGIN_SHARE`` of the paragraph lines of that page and column start (two at
    least); a page and column without such an x has no entry."""
    starts: dict[tuple[int, int], list[float]] = {}
    for lines in paragraphs:
        for ln in lines:
            if ln.region[2] >= 0:
                starts.setdefault((ln.page, ln.region[2]), []).append(ln.x0)
    margins: dict[tuple[int, int], float] = {}
    for key, xs in starts.items():
        xs.sort()
        need = max(2, MIN_MARGIN_SHARE * len(xs))
        i = 0
        while i < len(xs):
            j = i
            while j < len(xs) and xs[j] - xs[i] <= 1.5:
                j += 1
            if j - i >= need:
                margins[key] = xs[i]
                break
            i = j
    _column_edges(paragraphs, margins)
    return margins


def _column_edges(paragraphs: list[list[Line]], margins: dict[tuple[int, int], float]) -> None:
    """Where the body's left edge stands at its column's left edge in two columns or more
    (a word processor's section columns), a column whose own lines all start further right
    (it holds only a quote, the end of a section) takes its column's edge; in place."""
    edges: dict[tuple[int, int], float] = {}
    for lines in paragraphs:
        for ln in lines:
            if ln.region[2] >= 0:
                key = (ln.page, ln.region[2])
                edges[key] = min(edges.get(key, ln.col_x0), ln.col_x0)
    columned = {page for page, column in edges if column > 0}
    edges = {key: x for key, x in edges.items() if key[0] in columned}
    at_edge = sum(1 for key, x in edges.items() if abs(margins.get(key, -9.0) - x) <= 2.0)
    if at_edge < 2:
        return
    for key, edge in edges.items():
        if margins.get(key, edge) > edge + 2.0:
            margins[key] = edge


def is_quote(lines: list[Line], margins: dict[tuple[int, int], float],
             edges: dict[tuple[int, int, int], float]) -> bool:
    """True when the paragraph's lines are indented like a block quote (see the module)."""
    if len(lines) < 2:
        return False
    em = _em(lines)
    indents: list[float] = []  # from each line's own column margin: a quote may run on
    for ln in lines:           # into the next column or page
        margin = margins.get((ln.page, ln.region[2]))
        if margin is None or ln.region[2] < 0 or ln.x0 - margin < MIN_INDENT_EM * em:
            return False
        indents.append(ln.x0 - margin)
    rest = indents[1:] if len(lines) >= 3 else indents
    if max(rest) - min(rest) > 0.5 * em or indents[0] < min(rest) - 0.5 * em:
        return False  # ragged starts (centred text) or a hanging indent
    right = all(edges.get(ln.region, ln.col_x1) - ln.x1 >= MIN_INDENT_EM * em
                for ln in lines[:-1])
    return (right or len(lines) >= 3) and not _CAPTION.match(lines[0].text) \
        and _reads_as_sentences(lines)


def _reads_as_sentences(lines: list[Line]) -> bool:
    """True when the paragraph opens like a sentence (no lower-case first letter) and ends
    like one: the cells of a table set in a narrow column ("Ch" / "an" / "ge", "equity" /
    "margin") stand indented too, but start or stop mid-sentence."""
    first = next((c for ln in lines for c in ln.text if c.isalpha()), "")
    return not first.islower() and lines[-1].text.rstrip().endswith(_ENDS)


def _joins(prev: list[Line], lines: list[Line], candidate: bool) -> bool:
    """True when the paragraph ``lines`` continues the quote whose last paragraph is
    ``prev``: same page flow, same indent, close below; a single line may join too."""
    if not candidate and len(lines) != 1:
        return False
    a, b = prev[-1], lines[0]
    em = _em(prev)
    indent = min(ln.x0 for ln in (prev[1:] if len(prev) >= 3 else prev))
    if a.page != b.page or a.region[2] != b.region[2]:
        return candidate and b.page == a.page + 1
    return (abs(b.x0 - indent) <= 0.5 * em or (candidate and b.x0 >= indent - 0.5 * em)) \
        and 0 < b.baseline - a.baseline <= 4 * em


def gather_quotes(blocks: list[Block], para_lines: dict[int, list[Line]],
                  edges: dict[tuple[int, int, int], float]) -> list[Block]:
    """``blocks`` with the paragraphs that are block quotes wrapped in BlockQuote blocks.

    ``para_lines`` maps ``id(paragraph)`` to the lines the paragraph was built from (only
    paragraphs built from lines are candidates); ``edges`` gives each region's right edge.
    """
    margins = body_margins(list(para_lines.values()))
    if not margins:
        return blocks
    quotes = {pid for pid, lines in para_lines.items() if is_quote(lines, margins, edges)}
    total = sum(len(lines) for lines in para_lines.values())
    if not quotes or sum(len(para_lines[q]) for q in quotes) >= MAX_QUOTE_SHARE * total:
        return blocks
    out: list[Block] = []
    prev: list[Line] | None = None
    for block in blocks:
        lines = para_lines.get(id(block)) if isinstance(block, Paragraph) else None
        if lines is None:
            out.append(block)
            prev = None
            continue
        candidate = id(block) in quotes
        if prev is not None and isinstance(out[-1], BlockQuote) and _joins(prev, lines,
                                                                             candidate):
            out[-1].blocks.append(block)
            prev = lines
        elif candidate:
            out.append(BlockQuote([block]))
            prev = lines
        else:
            out.append(block)
            prev = None
    return out
