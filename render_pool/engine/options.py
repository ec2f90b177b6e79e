"""The options every writer takes: one type, one name per idea.

Why one type: the PDF and DOCX writers had their own options objects that named the same
things differently (``toc_depth``/``toc_levels``, ``page_format``/``page_size``) and the job
request carried the cover as ``Any``. A writer reads the fields that apply to its format and
ignores the rest (``css_*`` and ``title`` shape PDF only, and the DOCX writer warns when CSS
was asked for; ``page_markers`` is read by the Markdown and HTML writers, ``chunk_*`` by the
chunks writer: the options of ``/api/convert``'s text exports).
"""

from __future__ import annotations

from dataclasses import dataclass

from render_pool.engine.common.cover import CoverPage

__all__ = ["CoverPage", "WriterOptions"]


@dataclass(kw_only=True)
class WriterOptions:
    """What ``/md/convert`` can ask of a PDF or DOCX file besides the body, and
    ``/api/convert`` of a text export.

    ``page_number_format`` holds ``{page}`` and ``{pages}`` (the page number and the count
    of body pages; after a cover the body counts from 1); an empty string turns page numbers
    off. ``page_size`` is "A4" or "Letter". ``toc_depth`` is the deepest heading level the
    table of contents lists. ``title`` is the PDF's document title (DOCX takes its title from
    the cover or the document's metadata).
    """

    toc: bool = False
    toc_title: str = "Contents"
    toc_depth: int = 3
    header_text: str = ""
    footer_text: str = ""
    page_number_format: str = "Page {page} of {pages}"
    page_size: str = "A4"
    cover: CoverPage | None = None
    title: str = ""
    css_name: str = "default"
    css_text: str = ""
    # the text exports of /api/convert (Markdown, HTML, chunks)
    page_markers: bool = False  # ``<!-- page N -->`` where each PDF page starts
    chunk_tokens: int = 512  # the chunks' budget, in tokens of ``chunk_tokenizer``
    chunk_overlap: int = 0  # tokens of the chunk before repeated at the start of the next
    chunk_merge: bool = True  # small neighbouring sections under one heading share a chunk
    chunk_tokenizer: str = "words"  # how tokens are counted (render_pool.engine.chunks.tokens)

    def asks_for_css(self) -> bool:
        """True when a theme other than the default or extra CSS was asked for."""
        return bool(self.css_text) or self.css_name not in ("", "default")
