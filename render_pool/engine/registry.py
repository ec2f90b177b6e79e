"""Which reader reads which input and which writer writes which export.

Readers and writers are registration objects (the protocols of ``render_pool.engine.formats``):
the built-in ones are listed in ``render_pool.engine.builtin_readers`` and
``builtin_writers``; :func:`register_reader` and :func:`register_writer` add one more. The pool
jobs (``render_pool.engine.jobs``), the request checks (the ``engine``/``export`` choices) and
the API answers all read these tables.

Most kinds are told by their bytes (``render_pool.engine.sniff``); Markdown (text, no
signature) is named by the caller (``/md/convert``). A reader is given the part of the
request's :class:`~render_pool.engine.formats.ReadRequest` its options type holds; a request
option that changes what is read (``pages``) given to an input whose reader does not take it
is refused (40001), never silently ignored.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from render_pool.engine.builtin_readers import READERS as BUILTIN_READERS
from render_pool.engine.builtin_writers import WRITERS as BUILTIN_WRITERS
from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.formats import DEFAULT_ENGINE, Reader, ReadRequest, Writer
from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions
from render_pool.engine.sniff import detect_kind
from render_pool.errors import InvalidOption, UnsupportedFormat

__all__ = ["DEFAULT_ENGINE", "ENGINES", "ENGINE_WORDS", "EXPORTS", "READERS", "TARGETS",
           "WRITERS", "read", "register_reader", "register_writer", "sniff_kind",
           "unregister_reader", "write", "write_file", "write_text", "writer"]

# what each engine is called for people (the browser app's words); the API values stay
ENGINE_WORDS = {"word2markdown": "structured", "alt_engine": "lenient"}

READERS: list[Reader[Any]] = list(BUILTIN_READERS)
WRITERS: dict[str, Writer] = dict(BUILTIN_WRITERS)

ENGINES: tuple[str, ...] = tuple(dict.fromkeys(r.engine for r in READERS))
# text exports (``/convert``'s ``export``) and file targets (``/md/convert``'s ``target``)
EXPORTS: dict[str, str] = {name: w.media_type for name, w in WRITERS.items() if not w.binary}
TARGETS: dict[str, Writer] = {name: w for name, w in WRITERS.items() if w.binary}

# reader options that only some readers take and that change what is read: given to an input
# whose reader does not take them, they are an error (40001), never silently ignored
STRICT_READER_OPTIONS = ("pages",)


def register_reader(reader: Reader[Any]) -> None:
    """Add a reader (a format outside the built-in list, or a test's toy); it is used from
    the next read on. Register before the service starts: the ``engine`` choices are fixed
    when this module is imported."""
    READERS.append(reader)


def unregister_reader(reader: Reader[Any]) -> None:
    """Take back a reader :func:`register_reader` added."""
    READERS.remove(reader)


def register_writer(name: str, writer: Writer) -> None:
    """Add (or replace) the writer of export ``name``; it is used from the next write on."""
    WRITERS[name] = writer


def sniff_kind(data: bytes) -> str:
    """The input kind of ``data`` from the bytes themselves (never from the file name);
    40003 for empty, corrupt or password-protected files, 40002 for other types."""
    known = {kind for r in READERS if r.sniffed for kind in r.kinds}
    kind = detect_kind(data)
    if kind in known:
        return kind
    kinds = ", ".join(sorted(k.upper() for k in known))
    what = f"{kind.upper()} files are not read here" if kind else "unsupported file type"
    raise UnsupportedFormat(f"{what}: only {kinds} can be converted")


def _takes(options: object, name: str) -> bool:
    """Whether a reader's options type has the field ``name``."""
    return is_dataclass(options) and any(f.name == name for f in fields(options))


def _check_strict(request: ReadRequest, options: object, kind: str) -> None:
    """40001 for a request option that changes what is read given to a reader without it."""
    for name in STRICT_READER_OPTIONS:
        if getattr(request, name) is not None and not _takes(options, name):
            raise InvalidOption(f"{name} applies to PDF and image input only, not "
                                f"{kind.upper()}")


def read(data: bytes, engine: str = DEFAULT_ENGINE, options: ReadRequest | None = None,
         *, kind: str | None = None) -> Document:
    """The document model of ``data`` by the reader registered for its kind and ``engine``;
    the kind is sniffed from the bytes unless the caller names it (``kind="markdown"``).

    An engine without a reader for this kind falls back to the default engine's reader and
    says so in a note (``alt_engine`` reads DOCX only): the input was read, nothing is amiss."""
    if kind is None:
        kind = sniff_kind(data)
    readers = [r for r in READERS if kind in r.kinds]
    if not readers:
        raise UnsupportedFormat(f"unsupported input kind {kind!r}")
    reader = next((r for r in readers if r.engine == engine), None)
    fallback = reader is None
    if reader is None:
        reader = next(r for r in readers if r.engine == DEFAULT_ENGINE)
    request = options or ReadRequest()
    reader_options = reader.options(request)
    _check_strict(request, reader_options, kind)
    doc = reader.read(data, reader_options)
    if fallback:
        kinds = "/".join(dict.fromkeys(k.upper() for r in READERS if r.engine == engine
                                       for k in r.kinds))
        doc.note(f"The {ENGINE_WORDS.get(engine, engine)} engine ({engine}) reads {kinds} only; "
                 f"this {kind.upper()} file was read by the {kind.upper()} reader")
    return doc


def writer(export: str) -> Writer:
    """The writer of ``export``; UnsupportedFormat when unknown."""
    found = WRITERS.get(export)
    if found is None:
        raise UnsupportedFormat(f"unsupported export {export!r}")
    return found


def write(export: str, doc: Document, *, resolve_image: ImageResolver | None = None,
          options: WriterOptions | None = None) -> str | bytes:
    """``doc`` written by the writer of ``export`` (text or, for a file target, bytes). Raw
    HTML is read into blocks first for a format that cannot hold it; warnings go to
    ``doc.warnings``."""
    found = writer(export)
    if not found.holds_html:
        from render_pool.engine.html.build import expand_raw_html

        expand_raw_html(doc)
    return found.write(doc, resolve_image, options or WriterOptions())


def write_text(export: str, doc: Document, *, resolve_image: ImageResolver | None = None,
               options: WriterOptions | None = None) -> str:
    """:func:`write` for a text export (UnsupportedFormat for a file target)."""
    content = write(export, doc, resolve_image=resolve_image, options=options)
    if not isinstance(content, str):
        raise UnsupportedFormat(f"{export} writes files, not text")
    return content


def write_file(target: str, doc: Document, options: WriterOptions | None = None) -> bytes:
    """:func:`write` for a file target (UnsupportedFormat for a text export)."""
    content = write(target, doc, options=options)
    if not isinstance(content, bytes):
        raise UnsupportedFormat(f"{target} writes text, not files")
    return content
