"""HTML to Markdown for the HTML files of a batch (``render_pool.batch_jobs``).

The page takes the one path every HTML input takes into the model, the HTML reader
(``render_pool.readers.html``: link allow-list, spanned cells, ``data:`` images), and the
Markdown writer writes it, so a page in a batch becomes the same Markdown as the same page
uploaded to ``/convert`` with ``export=markdown``. ``bench/html_paths.py`` measured this path
against markdownify (the batch's converter before) on the same pages.
"""

from __future__ import annotations

from render_pool.model import Document
from render_pool.readers.html import MAX_HTML_DEPTH, read_html
from render_pool.writers.markdown import write_markdown

__all__ = ["MAX_HTML_DEPTH", "html_model", "html_to_markdown"]


def html_model(html: str) -> Document:
    """The document model of a batch's HTML page (the HTML reader's, as for an upload)."""
    return read_html(html)


def html_to_markdown(html: str) -> str:
    """The page as GitHub-flavoured Markdown: ``<head>``, scripts and styles dropped, fenced
    code keeping the language of ``class="language-x"``, refused link targets reduced to
    their text; 40003 for HTML nested deeper than ``MAX_HTML_DEPTH``."""
    return write_markdown(html_model(html))
