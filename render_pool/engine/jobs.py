"""Job entry points the service submits to the pool: top-level, picklable, pure.

Each wires one reader to one writer; no writer knows which reader ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from render_pool.engine import registry
from render_pool.engine.common.image_links import mapping_resolver
from render_pool.engine.common.images import drop_images, images_mode, resolver_for
from render_pool.engine.formats import ReadRequest
from render_pool.engine.link_fill import fill_links, placeholder_tokens
from render_pool.engine.markdown.limits import MarkdownLimits, check_markdown
from render_pool.engine.options import WriterOptions
from render_pool.errors import UnsupportedFormat

EXPORTS = registry.EXPORTS
ENGINES = registry.ENGINES
FILE_EXTENSIONS = {name: w.extension for name, w in registry.WRITERS.items()}


@dataclass(frozen=True, kw_only=True)
class ConvertOptions:
    """What one ``/api/convert`` conversion asks, checked once before any work
    (``tornado_app.documents.convert.conversion_options``): of the reader (``read``, handed to
    whichever reader the sniffed input takes), of the writer (``write``) and how images are
    written (``images``: ``embed``, ``placeholder`` or ``omit``; "" for the export's default,
    :mod:`render_pool.engine.common.images`)."""

    read: ReadRequest = field(default_factory=ReadRequest)
    write: WriterOptions = field(default_factory=WriterOptions)
    images: str = ""


@dataclass
class ImageUpload:
    """An image of a converted document for the service to upload; its link goes where
    ``token`` stands in the content (:func:`fill_image_links`)."""

    name: str  # file name (the base name of the resource key)
    data: bytes
    content_type: str
    token: str


@dataclass
class Converted:
    """Text output of a conversion with the warnings the caller should see, and (when
    written for upload) the images to upload."""

    content: str
    media_type: str
    warnings: list[str] = field(default_factory=list)
    export: str = ""
    images: list[ImageUpload] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts about the reading, not problems
    pages: int = 1  # pages read (a PDF's, or those it was limited to); 1 for an unpaged input


def convert_document(data: bytes, export: str, engine: str = registry.DEFAULT_ENGINE,
                     options: ConvertOptions | None = None, *, for_upload: bool = False,
                     kind: str | None = None) -> Converted:
    """An input's bytes to text in one job: reader -> model -> writer. The input's kind is
    sniffed from its bytes unless ``kind`` names it (a format that has no signature).

    Images follow ``options.images`` (:mod:`render_pool.engine.common.images`: embedded as data
    URIs, their names as placeholders, or omitted; the default depends on ``export``), or,
    ``for_upload``, are written as placeholder tokens and returned in ``Converted.images``
    for the service to upload and link (unless omitted)."""
    entry = registry.WRITERS.get(export)
    if entry is None or entry.binary:  # files (PDF, DOCX) are /md/convert's targets
        raise UnsupportedFormat(f"unsupported export {export!r}")
    given = options or ConvertOptions()
    doc = registry.read(data, engine, given.read, kind=kind)
    mode = images_mode(export, given.images or None)
    if mode == "omit":
        drop_images(doc)
    if not for_upload:
        content = registry.write_text(export, doc, resolve_image=resolver_for(doc, mode),
                                      options=given.write)
        return Converted(content, entry.media_type, list(doc.warnings), export,
                         notes=list(doc.read_notes), pages=len(doc.pages) or 1)
    tokens = placeholder_tokens(list(doc.resources))
    content = registry.write_text(export, doc, resolve_image=mapping_resolver(doc, tokens),
                                  options=given.write)
    images = [ImageUpload(key.rsplit("/", 1)[-1], res.data, res.mime, tokens[key])
              for key, res in doc.resources.items()]
    return Converted(content, entry.media_type, list(doc.warnings), export, images,
                     list(doc.read_notes), len(doc.pages) or 1)


def ocr_page(data: bytes, index: int, languages: str) -> tuple[Any, float]:
    """One page of a scan recognised, as a pool job of its own: page ``index`` of the PDF
    ``data`` (see ``render_pool.errors.OcrPending``); the engine's reading and its scale."""
    from render_pool.engine.pdf.ocr import recognise_pdf_page

    return recognise_pdf_page(data, index, languages)


def fill_image_links(converted: Converted, links: dict[str, str]) -> str:
    """The content with each uploaded image's link (by token) quoted for its export."""
    return fill_links(converted.content, links, registry.WRITERS[converted.export].quote_link)


# ---------------------------------------------------------------- Markdown to PDF / DOCX
# the file targets of /md/convert: (media type, extension) of each, from the registry
TARGETS = {name: (w.media_type, w.extension) for name, w in registry.TARGETS.items()}


@dataclass
class RenderRequest(WriterOptions):
    """What ``/md/convert`` asks for: the target (``pdf`` or ``docx``) and the options of
    its writer (the one :class:`WriterOptions` every writer takes)."""

    target: str


@dataclass
class Rendered:
    """A rendered file and the warnings the caller should see."""

    data: bytes
    media_type: str
    extension: str
    warnings: list[str] = field(default_factory=list)
    worker_pid: int = 0
    browser_launches: int = 0  # cumulative in that worker (metrics count restarts from it)


def markdown_images(text: str, limits: MarkdownLimits | None = None) -> list[str]:
    """Image sources the Markdown references (the service fetches the remote ones), after
    the parsing-cost and nesting checks (40003 before any parse). One pool job for both:
    a round trip to a worker less for every Markdown render."""
    from render_pool.engine.markdown.reader import markdown_image_sources

    check_markdown(text, limits)
    return markdown_image_sources(text)


def render_markdown(text: str, request: RenderRequest, fetched: dict[str, Any],
                    refused: dict[str, str]) -> Rendered:
    """Markdown to PDF (Chromium) or DOCX (python-docx): the registry's Markdown reader, the
    model, the registry's writer of ``request.target``.

    ``fetched`` holds the images the service fetched (source -> Resource); every other
    image is left out with a warning naming ``refused[source]``.
    """
    from render_pool.engine.markdown.reader import attach_images

    entry = registry.WRITERS.get(request.target)
    if entry is None or not entry.binary:
        raise UnsupportedFormat(f"unsupported target {request.target!r}; use pdf or docx")
    doc = registry.read(text.encode("utf-8"), kind="markdown")
    attach_images(doc, fetched, refused)
    data = registry.write_file(request.target, doc, options=request)
    from render_pool.runtime.browser import browser_launches

    return Rendered(data, entry.media_type, entry.extension, list(doc.warnings), os.getpid(),
                    browser_launches())
