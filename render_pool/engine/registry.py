"""Which reader reads which input and which writer writes which export: one line each.

Adding a reader or a writer means writing its module and adding one line here; the pool
jobs (``render_pool.engine.jobs``), the request checks (the ``engine``/``export`` choices) and the
API answers all read these tables. Entries name their function as ``"module:function"`` so
a job imports only the reader and writer it uses (the PDF stack is heavy).

- A reader is ``fn(data: bytes, **options) -> Document``; it receives only the request
  options its signature names (``include_furniture``, ``track_changes``...). Most kinds are
  told by their bytes; Markdown (text, no signature) is named by the caller (``/md/convert``).
- A writer is ``fn(doc: Document, ...) -> str | bytes`` and likewise receives what its
  signature names: ``resolve_image`` (an ``ImageResolver``, text exports) and ``options``
  (a :class:`render_pool.engine.options.WriterOptions`, file targets). Its warnings go to
  ``doc.warnings``. Its entry says how the export quotes an image link (used to fill in links
  after an upload) and whether the format can hold raw HTML.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.link_fill import (
    LinkQuoter,
    quote_html_attribute,
    quote_json_string,
    quote_markdown_destination,
    quote_nothing,
)
from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions
from render_pool.engine.sniff import detect_kind
from render_pool.errors import InvalidOption, UnsupportedFormat

DEFAULT_ENGINE = "word2markdown"
# what each engine is called for people (the browser app's words); the API values stay
ENGINE_WORDS = {"word2markdown": "structured", "alt_engine": "lenient"}


@dataclass(frozen=True)
class ReaderEntry:
    """A reader of one input kind for one engine. The kind of an input comes from its bytes
    (``render_pool.engine.sniff.detect_kind``, never the file name)."""

    kind: str
    engine: str
    target: str
    sniffed: bool = True  # False: the caller names the kind (Markdown has no signature)


@dataclass(frozen=True)
class WriterEntry:
    """A writer of one export with the media type and file extension of its output, and
    how the export quotes an image link (see ``render_pool.engine.link_fill``).

    ``binary`` writers write files (PDF, DOCX: the targets of ``/md/convert``), the others
    text (the exports of ``/convert``). A format that cannot hold HTML (``holds_html=False``)
    gets every :class:`~render_pool.engine.model.RawHtml` block read into blocks by the HTML reader
    before it is written."""

    target: str
    media_type: str
    extension: str
    quote_link: LinkQuoter = quote_nothing
    binary: bool = False
    holds_html: bool = True


READERS: tuple[ReaderEntry, ...] = (
    ReaderEntry("pdf", "word2markdown", "render_pool.engine.pdf.reader:read_pdf"),
    ReaderEntry("docx", "word2markdown", "render_pool.engine.docx.reader:read_docx"),
    ReaderEntry("docx", "alt_engine", "render_pool.engine.docx.alt:read_docx_alt"),
    ReaderEntry("pptx", "word2markdown", "render_pool.engine.pptx.reader:read_pptx"),
    ReaderEntry("xlsx", "word2markdown", "render_pool.engine.xlsx.reader:read_xlsx"),
    ReaderEntry("csv", "word2markdown", "render_pool.engine.csv.reader:read_csv"),
    ReaderEntry("html", "word2markdown", "render_pool.engine.html.reader:read_html_file"),
    ReaderEntry("epub", "word2markdown", "render_pool.engine.epub.reader:read_epub"),
    ReaderEntry("markdown", "word2markdown",
                "render_pool.engine.markdown.reader:read_markdown_source",
                sniffed=False),
    *(ReaderEntry(kind, "word2markdown", f"render_pool.engine.office.reader:{fn}")
      for kind, fn in (("odt", "read_lo_text"), ("doc", "read_lo_text"), ("rtf", "read_lo_text"),
                       ("ods", "read_lo_sheets"), ("xls", "read_lo_sheets"),
                       ("odp", "read_lo_slides"), ("ppt", "read_lo_slides"))),
    # images are read by OCR (render_pool.engine.image.reader)
    *(ReaderEntry(kind, "word2markdown", "render_pool.engine.image.reader:read_image")
      for kind in ("png", "jpeg", "tiff", "webp")),
)

WRITERS: dict[str, WriterEntry] = {
    "markdown": WriterEntry("render_pool.engine.markdown.writer:write_markdown",
                            "text/markdown; charset=utf-8", "md", quote_markdown_destination),
    "html": WriterEntry("render_pool.engine.html.writer:write_html", "text/html; charset=utf-8",
                        "html", quote_html_attribute),
    "json": WriterEntry("render_pool.engine.json.writer:write_json", "application/json", "json",
                        quote_json_string),
    "doctags": WriterEntry("render_pool.engine.doctags.writer:write_doctags",
                           "text/plain; charset=utf-8", "doctags.txt"),
    "chunks": WriterEntry("render_pool.engine.chunks.writer:write_chunks", "application/json",
                          "chunks.json", quote_json_string),
    "pdf": WriterEntry("render_pool.engine.pdf.writer:write_pdf_file", "application/pdf", "pdf",
                       binary=True),
    "docx": WriterEntry("render_pool.engine.docx.writer:write_docx",
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                        "docx", binary=True, holds_html=False),
}

ENGINES: tuple[str, ...] = tuple(dict.fromkeys(r.engine for r in READERS))
# text exports (``/convert``'s ``export``) and file targets (``/md/convert``'s ``target``)
EXPORTS: dict[str, str] = {name: w.media_type for name, w in WRITERS.items() if not w.binary}
TARGETS: dict[str, WriterEntry] = {name: w for name, w in WRITERS.items() if w.binary}

def load(target: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` entry names."""
    module, name = target.split(":", 1)
    return getattr(importlib.import_module(module), name)


def sniff_kind(data: bytes) -> str:
    """The input kind of ``data`` from the bytes themselves (never from the file name);
    40003 for empty, corrupt or password-protected files, 40002 for other types."""
    known = {r.kind for r in READERS if r.sniffed}
    kind = detect_kind(data)
    if kind in known:
        return kind
    kinds = ", ".join(sorted(k.upper() for k in known))
    what = f"{kind.upper()} files are not read here" if kind else "unsupported file type"
    raise UnsupportedFormat(f"{what}: only {kinds} can be converted")


# reader options that only some readers take and that change what is read: given to an input
# whose reader does not take them, they are an error (40001), never silently ignored
STRICT_READER_OPTIONS = ("pages",)


def _call(fn: Callable[..., Any], first: Any, given: dict[str, Any]) -> Any:
    """``fn(first, ...)`` with those of ``given`` that its signature names."""
    accepted = inspect.signature(fn).parameters
    return fn(first, **{k: v for k, v in given.items() if k in accepted})


def read(data: bytes | str, engine: str = DEFAULT_ENGINE, options: dict[str, Any] | None = None,
         *, kind: str | None = None) -> Document:
    """The document model of ``data`` by the reader registered for its kind and ``engine``;
    the kind is sniffed from the bytes unless the caller names it (``kind="markdown"``).

    An engine without a reader for this kind falls back to the default engine's reader and
    says so in a note (``alt_engine`` reads DOCX only): the input was read, nothing is amiss."""
    if kind is None:
        kind = sniff_kind(data)
    elif not any(r.kind == kind for r in READERS):
        raise UnsupportedFormat(f"unsupported input kind {kind!r}")
    readers = [r for r in READERS if r.kind == kind]
    entry = next((r for r in readers if r.engine == engine), None)
    fallback = entry is None
    if entry is None:
        entry = next(r for r in readers if r.engine == DEFAULT_ENGINE)
    fn = load(entry.target)
    accepted = inspect.signature(fn).parameters
    for name in STRICT_READER_OPTIONS:
        if (options or {}).get(name) is not None and name not in accepted:
            raise InvalidOption(f"{name} applies to PDF and image input only, not "
                                f"{kind.upper()}")
    doc: Document = _call(fn, data, options or {})
    if fallback:
        kinds = "/".join(dict.fromkeys(r.kind.upper() for r in READERS if r.engine == engine))
        doc.note(f"The {ENGINE_WORDS.get(engine, engine)} engine ({engine}) reads {kinds} only; "
                 f"this {kind.upper()} file was read by the {kind.upper()} reader")
    return doc


def writer(export: str) -> tuple[Callable[..., Any], WriterEntry]:
    """The writer function of ``export`` and its entry; UnsupportedFormat when unknown."""
    entry = WRITERS.get(export)
    if entry is None:
        raise UnsupportedFormat(f"unsupported export {export!r}")
    return load(entry.target), entry


def write(export: str, doc: Document, *, resolve_image: ImageResolver | None = None,
          options: WriterOptions | None = None) -> Any:
    """``doc`` written by the writer of ``export`` (text or, for a file target, bytes); the
    writer receives what its signature names. Raw HTML is read into blocks first for a
    format that cannot hold it; warnings go to ``doc.warnings``."""
    fn, entry = writer(export)
    if not entry.holds_html:
        from render_pool.engine.html.build import expand_raw_html

        expand_raw_html(doc)
    given: dict[str, Any] = {"resolve_image": resolve_image, "options": options}
    return _call(fn, doc, {k: v for k, v in given.items() if v is not None})
