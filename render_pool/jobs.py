"""Job entry points the service submits to the pool: top-level, picklable, pure.

Each wires one reader to one writer; no writer knows which reader ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from render_pool.errors import CorruptDocument, UnsupportedFormat
from render_pool.model import Document

EXPORTS = {
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
    "doctags": "text/plain; charset=utf-8",
}
ENGINES = ("word2markdown", "alt_engine")
FILE_EXTENSIONS = {"markdown": "md", "html": "html", "json": "json", "doctags": "doctags.txt"}


@dataclass
class Converted:
    """Text output of a conversion with the warnings the caller should see."""

    content: str
    media_type: str
    warnings: list[str] = field(default_factory=list)


def sniff_kind(data: bytes) -> str:
    """``docx`` or ``pdf`` from the bytes themselves (never from the file name)."""
    if not data:
        raise CorruptDocument("the file is empty")
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if data[:4] == b"PK\x03\x04":
        return "docx"
    if data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        raise UnsupportedFormat(
            "legacy .doc or password-protected Office file: save it as .docx without a password")
    raise UnsupportedFormat("unsupported file type: only DOCX and PDF can be converted")


def read_document(data: bytes, engine: str = "word2markdown",
                  options: dict[str, Any] | None = None) -> Document:
    """Build the document model from DOCX or PDF bytes."""
    options = options or {}
    kind = sniff_kind(data)
    if kind == "pdf":
        from render_pool.readers.pdf import read_pdf

        doc = read_pdf(data)
        if engine == "alt_engine":
            doc.warn("alt_engine applies to DOCX only; the PDF reader was used")
        return doc
    if engine == "alt_engine":
        from render_pool.alt_engine import docx_to_html
        from render_pool.readers.html import read_html

        html, warnings = docx_to_html(data)
        doc = read_html(html)
        for w in warnings:
            doc.warn(w)
        return doc
    from render_pool.readers.docx import read_docx

    return read_docx(data, include_furniture=bool(options.get("include_furniture")),
                     track_changes=str(options.get("track_changes", "accept")))


def write_document(doc: Document, export: str, image_urls: dict[str, str] | None = None
                   ) -> Converted:
    """Serialise ``doc``; images become data URIs, or ``image_urls`` links when given."""
    from render_pool.writers import data_uri_resolver, mapping_resolver

    resolve = mapping_resolver(doc, image_urls) if image_urls else data_uri_resolver(doc)
    if export == "markdown":
        from render_pool.writers.markdown import write_markdown

        text = write_markdown(doc, resolve)
    elif export == "html":
        from render_pool.writers.html import write_html

        text = write_html(doc, resolve)
    elif export == "json":
        from render_pool.writers.json import write_json

        text = write_json(doc, resolve)
    elif export == "doctags":
        from render_pool.writers.doctags import write_doctags

        text = write_doctags(doc, resolve)
    else:
        raise UnsupportedFormat(f"unsupported export {export!r}")
    return Converted(text, EXPORTS[export], list(doc.warnings))


def convert_document(data: bytes, export: str, engine: str = "word2markdown",
                     options: dict[str, Any] | None = None) -> Converted:
    """DOCX/PDF bytes to text in one job (images embedded as data URIs)."""
    if export not in EXPORTS:
        raise UnsupportedFormat(f"unsupported export {export!r}")
    if engine == "alt_engine" and export in ("markdown", "html") and sniff_kind(data) == "docx":
        from render_pool.alt_engine import docx_to_html, docx_to_markdown

        text, warnings = (docx_to_markdown if export == "markdown" else docx_to_html)(data)
        return Converted(text, EXPORTS[export], warnings)
    return write_document(read_document(data, engine, options), export)


# ---------------------------------------------------------------- Markdown to PDF / DOCX
TARGETS = {
    "pdf": ("application/pdf", "pdf"),
    "docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"),
}


@dataclass
class RenderRequest:
    """Options of ``/md/convert`` that shape the output file."""

    target: str
    css_name: str = "default"
    css_text: str = ""
    toc: bool = False
    header_text: str = ""
    footer_text: str = ""
    title: str = ""
    cover: Any = None  # render_pool.cover.CoverPage


@dataclass
class Rendered:
    """A rendered file and the warnings the caller should see."""

    data: bytes
    media_type: str
    extension: str
    warnings: list[str] = field(default_factory=list)
    worker_pid: int = 0
    browser_launches: int = 0  # cumulative in that worker (metrics count restarts from it)


def markdown_images(text: str) -> list[str]:
    """Image sources the Markdown references (the service fetches the remote ones)."""
    from render_pool.readers.markdown import markdown_image_sources

    return markdown_image_sources(text)


def render_markdown(text: str, request: RenderRequest, fetched: dict[str, Any],
                    refused: dict[str, str]) -> Rendered:
    """Markdown to PDF (Chromium) or DOCX (python-docx) through the document model.

    ``fetched`` holds the images the service fetched (source -> Resource); every other
    image is left out with a warning naming ``refused[source]``.
    """
    from render_pool.readers.markdown import attach_images, read_markdown

    if request.target not in TARGETS:
        raise UnsupportedFormat(f"unsupported target {request.target!r}; use pdf or docx")
    doc = read_markdown(text)
    attach_images(doc, fetched, refused)
    media_type, extension = TARGETS[request.target]
    if request.target == "pdf":
        from render_pool.writers.pdf import PdfOptions, write_pdf

        data, warnings = write_pdf(doc, PdfOptions(
            css_name=request.css_name, css_text=request.css_text, toc=request.toc,
            header_text=request.header_text, footer_text=request.footer_text,
            cover=request.cover, title=request.title))
    else:
        from render_pool.writers.docx import DocxOptions, write_docx

        data = write_docx(doc, DocxOptions(
            toc=request.toc, header_text=request.header_text,
            footer_text=request.footer_text, cover=request.cover))
        warnings = []
        if request.css_text or request.css_name not in ("", "default"):
            warnings.append("css_name and css_text apply to PDF output only")
    from render_pool.browser import browser_launches

    return Rendered(data, media_type, extension, [*doc.warnings, *warnings], os.getpid(),
                    browser_launches())
