"""Markdown-to-PDF writer: the document model as semantic HTML + CSS, printed by Chromium.

Pipeline (every render goes through :mod:`render_pool.runtime.browser`, a warm locked-down
Chromium):

1. Body HTML from the HTML writer, images inlined as data URIs (the page has no network), code
   blocks coloured by Pygments, headings given ids. Theme CSS (``css_name``) + ``css_text``.
2. Table of contents (``toc``) takes two passes: the body is printed once with a PDF outline,
   the outline tells on which page each heading landed, then the document is printed again with
   a TOC page in front whose lines link to the headings (``<a href="#id">``) and carry the page
   numbers shifted by the TOC's own length. The result is checked against the new outline and
   printed a third time if the TOC's length guess was wrong.
3. Body pages carry Chromium's header/footer templates: ``header_text``, ``footer_text`` and
   "Page N of M". Numbering counts the body only: the TOC starts at page 1, the cover has none.
4. The cover page (``cover``) is printed as a separate one-page PDF at the body's page size
   without header/footer and put in front of the body by :func:`pdf_pages.prepend_cover`, which
   keeps the body's bookmarks (PDF outline from the headings: ``outline`` + ``tagged``).
"""

from __future__ import annotations

import math
from typing import Any

from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions
from render_pool.engine.pdf.themes import list_themes
from render_pool.engine.pdf.writer_layout import (
    HeadingRef,
    collect_headings,
    cover_body,
    footer_template,
    header_template,
    page_document,
    toc_html,
)
from render_pool.engine.pdf.writer_pages import (
    first_page_size_in,
    heading_pages,
    prepend_cover,
)
from render_pool.engine.pdf.writer_style import (
    check_css,
    cover_page_css,
    highlight_code,
    page_css,
    resolve_theme,
)
from render_pool.runtime import browser

__all__ = ["WriterOptions", "list_themes", "write_pdf", "write_pdf_file"]

_MARGIN = {"top": "20mm", "bottom": "20mm", "left": "18mm", "right": "18mm"}
_TOC_LINES_PER_PAGE = 34  # first guess of the TOC's length, checked after printing


def _pdf_options(options: WriterOptions) -> dict[str, Any]:
    return {
        "format": options.page_size,
        "print_background": True,
        "prefer_css_page_size": True,
        "margin": _MARGIN,
        "outline": True,
        "tagged": True,
        "display_header_footer": True,
        "header_template": header_template(options.header_text),
        "footer_template": footer_template(options.footer_text, options.page_number_format),
    }


def _body_fragment(doc: Document) -> str:
    """The document's HTML for Chromium, its images as data URIs: each encoded once, and at
    most ``EMBEDDED_IMAGES_MAX_MB`` of them in all (one picture shown 3,000 times counts
    3,000 times; 41301 past it), as for the HTML and Markdown exports."""
    from render_pool.engine.common.images import resolver_for
    from render_pool.engine.html.render import html_body

    return highlight_code(html_body(doc, resolve_image=resolver_for(doc, "embed")))


def _render_with_toc(
    body: str, headings: list[HeadingRef], css: str, title: str, options: WriterOptions,
    pdf_options: dict[str, Any], warnings: list[str],
) -> bytes:
    """Two (rarely three) passes: learn heading pages, then print with a numbered TOC in front."""
    entries = [h for h in headings if h.level <= options.toc_depth]
    first = browser.render_pdf(page_document(body, css, title=title), pdf_options=pdf_options)
    body_pages = heading_pages(first, entries)
    if len(body_pages) < len(entries):
        warnings.append("table of contents: some headings have no page number")
    toc_len = max(1, math.ceil(len(entries) / _TOC_LINES_PER_PAGE))
    for _ in range(3):
        numbers = {a: toc_len + p + 1 for a, p in body_pages.items()}
        html = page_document(toc_html(entries, numbers, options.toc_title) + body, css, title=title)
        pdf = browser.render_pdf(html, pdf_options=pdf_options)
        printed = heading_pages(pdf, entries)
        shifts = {printed[a] - p for a, p in body_pages.items() if a in printed}
        if not shifts or shifts == {toc_len}:
            return pdf
        toc_len = max(shifts)  # the TOC took more (or fewer) pages than guessed: print again
    warnings.append("table of contents: page numbers may be off by a page")
    return pdf


# the Title of a PDF whose Markdown names none and has no heading
UNTITLED = "Untitled document"


def write_pdf(doc: Document, options: WriterOptions) -> tuple[bytes, list[str]]:
    """Print a document to PDF; returns the PDF and this writer's warnings.

    Warnings are the writer's own (e.g. the spec's ``word-break: break-word`` notice); the
    reader's warnings stay in ``doc.warnings``. Raises ``UnsupportedFormat`` for an unknown
    ``css_name`` and ``ConversionFailed``/``RenderTimeout`` when Chromium fails.
    """
    theme = resolve_theme(options.css_name)
    warnings = check_css(options.css_text)
    cover = options.cover if options.cover is not None and not options.cover.is_empty() else None
    body, headings = collect_headings(_body_fragment(doc))
    # the PDF's Title: Chromium writes the page's address (about:blank) when the page has none
    title = options.title or doc.meta.get("title", "") or (
        cover.document_name if cover is not None else "") or next(
        (h.text for h in headings if h.text.strip()), "") or UNTITLED
    css = page_css(theme, options.css_text)
    pdf_options = _pdf_options(options)
    if options.toc and any(h.level <= options.toc_depth for h in headings):
        pdf = _render_with_toc(body, headings, css, title, options, pdf_options, warnings)
    else:
        if options.toc:
            warnings.append("table of contents skipped: the document has no headings")
        pdf = browser.render_pdf(page_document(body, css, title=title), pdf_options=pdf_options)
    if cover is not None:
        width, height = first_page_size_in(pdf)
        cover_html = page_document(
            cover_body(cover), cover_page_css(theme, options.css_text, width, height), title=title
        )
        cover_pdf = browser.render_pdf(cover_html, pdf_options={
            "width": f"{width:.4f}in", "height": f"{height:.4f}in", "print_background": True,
            "prefer_css_page_size": False, "margin": {"top": "0", "bottom": "0", "left": "0",
                                                      "right": "0"},
        })
        pdf = prepend_cover(pdf, cover_pdf)
    return pdf, warnings


def write_pdf_file(doc: Document, options: WriterOptions | None = None) -> bytes:
    """:func:`write_pdf` as the registry's PDF writer: its warnings join ``doc.warnings``."""
    data, warnings = write_pdf(doc, options or WriterOptions())
    for warning in warnings:
        doc.warn(warning)
    return data
