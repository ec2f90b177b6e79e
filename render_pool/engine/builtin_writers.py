"""The registrations of the built-in writers, by export name: one object per writer, each
giving its writer function what that function takes and importing it only when it writes."""

from __future__ import annotations

from dataclasses import dataclass

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.formats import Writer
from render_pool.engine.link_fill import (
    LinkQuoter,
    quote_html_attribute,
    quote_json_string,
    quote_markdown_destination,
    quote_nothing,
)
from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions

__all__ = ["WRITERS"]

DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@dataclass(frozen=True)
class MarkdownWriter:
    media_type: str = "text/markdown; charset=utf-8"
    extension: str = "md"
    quote_link: LinkQuoter = quote_markdown_destination
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        from render_pool.engine.markdown.writer import write_markdown

        return write_markdown(doc, resolve_image, options)


@dataclass(frozen=True)
class HtmlWriter:
    media_type: str = "text/html; charset=utf-8"
    extension: str = "html"
    quote_link: LinkQuoter = quote_html_attribute
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        from render_pool.engine.html.writer import write_html

        return write_html(doc, resolve_image, options)


@dataclass(frozen=True)
class JsonWriter:
    media_type: str = "application/json"
    extension: str = "json"
    quote_link: LinkQuoter = quote_json_string
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        from render_pool.engine.json.writer import write_json

        return write_json(doc, resolve_image)


@dataclass(frozen=True)
class DocTagsWriter:
    media_type: str = "text/plain; charset=utf-8"
    extension: str = "doctags.txt"
    quote_link: LinkQuoter = quote_nothing
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        from render_pool.engine.doctags.writer import write_doctags

        return write_doctags(doc, resolve_image)


@dataclass(frozen=True)
class ChunksWriter:
    media_type: str = "application/json"
    extension: str = "chunks.json"
    quote_link: LinkQuoter = quote_json_string
    binary: bool = False
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str:
        from render_pool.engine.chunks.writer import write_chunks

        return write_chunks(doc, resolve_image, options)


@dataclass(frozen=True)
class PdfWriter:
    """A PDF file printed by headless Chromium."""

    media_type: str = "application/pdf"
    extension: str = "pdf"
    quote_link: LinkQuoter = quote_nothing
    binary: bool = True
    holds_html: bool = True

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> bytes:
        from render_pool.engine.pdf.writer import write_pdf_file

        return write_pdf_file(doc, options)


@dataclass(frozen=True)
class DocxWriter:
    """A Word file (python-docx); raw HTML is read into blocks first."""

    media_type: str = DOCX_MEDIA_TYPE
    extension: str = "docx"
    quote_link: LinkQuoter = quote_nothing
    binary: bool = True
    holds_html: bool = False

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> bytes:
        from render_pool.engine.docx.writer import write_docx

        return write_docx(doc, options)


WRITERS: dict[str, Writer] = {
    "markdown": MarkdownWriter(), "html": HtmlWriter(), "json": JsonWriter(),
    "doctags": DocTagsWriter(), "chunks": ChunksWriter(), "pdf": PdfWriter(),
    "docx": DocxWriter(),
}
