"""What a format registers: a :class:`Reader` (input kinds to the document model) or a
:class:`Writer` (the model to an export), and the :class:`ReadRequest` every reader is given.

Why protocols: the registry (``render_pool.engine.registry``) calls readers and writers through
these few typed methods, so a format is one package plus one registration object, and what a
reader takes is a type (its options dataclass), not whatever its function signature names.
A registration object imports its reader or writer module inside ``read``/``write``, so a job
loads only the format it uses (the PDF stack is heavy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.link_fill import LinkQuoter
from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions
from render_pool.engine.page_ranges import PageRanges
from render_pool.engine.reader_options import MAX_CELLS, OFFICE_TIMEOUT

if TYPE_CHECKING:
    from render_pool.engine.pdf.ocr import OcrPages

__all__ = ["DEFAULT_ENGINE", "ReadRequest", "Reader", "Writer"]

DEFAULT_ENGINE = "word2markdown"

OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True, kw_only=True)
class ReadRequest:
    """What one conversion asks of whichever reader its input takes (the kind is known only
    once the bytes are sniffed, in the pool). Built and checked once from the request
    (``tornado_app.documents.convert.conversion_options``); each reader keeps the part it takes
    (:meth:`Reader.options`).

    ``max_cells`` and ``office_timeout`` are the service's limits (by default the readers'
    own); ``ocr_fanout`` and ``ocr_pages`` are set by the service between the two reads of
    a scan whose pages are recognised in pool jobs of their own (``render_pool.errors.OcrPending``).
    """

    include_furniture: bool = False  # running headers/footers and page numbers (DOCX, PDF)
    track_changes: str = "accept"  # "accept" or "all" (tracked insertions and deletions shown)
    notes: bool = True  # slide speaker notes
    ocr: str = "auto"  # "auto", "force" or "off" (scanned pages and images)
    pages: PageRanges | None = None  # PDF and image input only; None reads every page
    max_cells: int = MAX_CELLS
    office_timeout: float = OFFICE_TIMEOUT
    ocr_languages: str = ""
    ocr_fanout: bool = False
    ocr_pages: OcrPages | None = None


class Reader(Protocol[OptionsT]):
    """Reads the input ``kinds`` for one ``engine`` into the document model.

    ``sniffed`` kinds are told by their bytes (``render_pool.engine.sniff``); the others are
    named by the caller (Markdown has no signature). ``options`` keeps what this reader takes
    of a request as its own options type (a frozen dataclass); a request option that changes
    what is read (``pages``) given to a reader whose options lack it is refused (40001)."""

    @property
    def kinds(self) -> tuple[str, ...]: ...

    @property
    def engine(self) -> str: ...

    @property
    def sniffed(self) -> bool: ...

    def options(self, request: ReadRequest) -> OptionsT: ...

    def read(self, data: bytes, options: OptionsT) -> Document: ...


class Writer(Protocol):
    """Writes the document model as one export: text (``binary=False``: the exports of
    ``/api/convert``) or a file (the targets of ``/md/convert``).

    ``quote_link`` says how the export quotes an image link (links are filled in after an
    upload, ``render_pool.engine.link_fill``); a format that cannot hold raw HTML
    (``holds_html=False``) gets every ``RawHtml`` block read into blocks before it is written.
    Warnings go to ``doc.warnings``."""

    @property
    def media_type(self) -> str: ...

    @property
    def extension(self) -> str: ...

    @property
    def quote_link(self) -> LinkQuoter: ...

    @property
    def binary(self) -> bool: ...

    @property
    def holds_html(self) -> bool: ...

    def write(self, doc: Document, resolve_image: ImageResolver | None,
              options: WriterOptions) -> str | bytes: ...
