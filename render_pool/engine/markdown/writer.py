"""Markdown writer: GitHub-flavoured Markdown for a :class:`render_pool.engine.model.Document`.

Choices (see also docs/conversion.md, "Writers"):
- ATX headings; ``*``/``**``/``~~`` emphasis, falling back to ``<em>``/``<strong>``/``<del>``
  where CommonMark's flanking rules would not let the delimiters match (``a**"b"**c``);
  ``<sub>``, ``<sup>``, ``<u>`` for what Markdown lacks.
- Text is escaped so it reads back as the same text: ``\\ * _ [ ] < | $`` always (with a
  backslash), a backtick and a tilde as ``&#96;`` and ``&#126;`` (no parser reads an entity
  as a delimiter), ``&`` before an entity-like run, and ``# + - = >`` / ``1.`` / ``1)`` at
  the start of a line. Emphasis runs next to other delimiters also fall back to HTML tags.
- Tables: a GFM pipe table when every cell holds only paragraphs (several joined with
  ``<br>``). GFM tables need a header row: the first row is used as the header even when the
  document marks none (what Docling does; an empty header row renders as a stray stripe).
  Merged cells repeat the spanning cell's text in every covered position. Tables holding
  lists, code, nested tables or other block content are written as an HTML table. The caption
  becomes a paragraph just above the table.
- Footnotes ``[^n]`` are numbered in order of first reference; definitions come last.
- ``Anchor`` becomes ``<a id="..."></a>`` so internal links keep working where HTML ids are
  kept; headings whose anchor differs from their slug get one too.
- ``RawHtml`` is kept as is (Markdown allows HTML); image sizes are not written.
"""

from __future__ import annotations

import itertools

from render_pool.engine.common.image_links import ImageResolver, data_uri_resolver
from render_pool.engine.markdown.render import MarkdownRenderer
from render_pool.engine.model import Block, Document
from render_pool.engine.options import WriterOptions
from render_pool.engine.provenance import page_marker, page_starts

__all__ = ["write_markdown"]


def _with_page_markers(w: MarkdownRenderer, blocks: list[Block]) -> str:
    """The body with a page marker before the first block of each page (an HTML comment
    ends a list, so the runs between markers are written apart)."""
    starts = page_starts(blocks)
    cuts = [*starts, len(blocks)]
    out = [w.blocks(blocks[: cuts[0]])]
    for at, end in itertools.pairwise(cuts):
        out += [page_marker(starts[at]), w.blocks(blocks[at:end])]
    return "\n\n".join(p for p in out if p)


def write_markdown(doc: Document, resolve_image: ImageResolver | None = None,
                   options: WriterOptions | None = None) -> str:
    """Serialise ``doc`` as GitHub-flavoured Markdown.

    Images resolve through ``resolve_image`` (default: data URIs from ``doc.resources``).
    Furniture (headers, footers, comments a reader kept on request) follows the body after
    a rule; footnote definitions come last. With ``options.page_markers`` an HTML comment
    ``<!-- page N -->`` stands before the first block of each PDF page.
    """
    w = MarkdownRenderer(doc, resolve_image or data_uri_resolver(doc))
    if options is not None and options.page_markers:
        parts = [_with_page_markers(w, doc.blocks)]
    else:
        parts = [w.blocks(doc.blocks)]
    if doc.furniture:
        furniture = w.blocks(doc.furniture)
        if furniture:
            parts.append("---\n\n" + furniture)
    notes = w.footnotes()
    if notes:
        parts.append(notes)
    text = "\n\n".join(p for p in parts if p)
    return text + "\n" if text else ""
