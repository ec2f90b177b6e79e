"""One options type per reader: what each format's reader takes, as a frozen dataclass.

Each is what its registration (``render_pool.engine.builtin_readers``) keeps of a
:class:`~render_pool.engine.formats.ReadRequest` and maps onto its reader function's keyword
parameters. The limits default to the readers' own defaults (for tests and scripts); the
service passes its ``SHEET_MAX_CELLS`` and ``OFFICE_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from render_pool.engine.page_ranges import PageRanges

if TYPE_CHECKING:
    from render_pool.engine.pdf.ocr import OcrPages

MAX_CELLS = 50_000  # the sheet readers' default (xlsx, csv and office readers)
OFFICE_TIMEOUT = 60.0  # seconds: the LibreOffice readers' default


@dataclass(frozen=True)
class NoOptions:
    """A reader that takes no options (HTML, EPUB, Markdown, the lenient DOCX engine)."""


@dataclass(frozen=True, kw_only=True)
class PdfOptions:
    """PDF, and images (read as one-page scans): OCR, the pages to read, and whether the
    running headers/footers and page numbers taken from the pages are kept (a single image
    has none)."""

    ocr: str = "auto"
    ocr_languages: str = ""
    ocr_fanout: bool = False
    ocr_pages: OcrPages | None = None
    pages: PageRanges | None = None
    include_furniture: bool = False


@dataclass(frozen=True, kw_only=True)
class DocxOptions:
    """DOCX (the structured engine): running headers/footers and tracked changes."""

    include_furniture: bool = False
    track_changes: str = "accept"


@dataclass(frozen=True, kw_only=True)
class PptxOptions:
    """PPTX: whether speaker notes are read."""

    notes: bool = True


@dataclass(frozen=True, kw_only=True)
class SheetOptions:
    """XLSX and CSV: the most cells read."""

    max_cells: int = MAX_CELLS


@dataclass(frozen=True, kw_only=True)
class OfficeTextOptions:
    """ODT, DOC, RTF (through LibreOffice): as DOCX, and LibreOffice's time limit."""

    include_furniture: bool = False
    track_changes: str = "accept"
    office_timeout: float = OFFICE_TIMEOUT


@dataclass(frozen=True, kw_only=True)
class OfficeSheetOptions:
    """ODS, XLS (through LibreOffice): the most cells read and LibreOffice's time limit."""

    max_cells: int = MAX_CELLS
    office_timeout: float = OFFICE_TIMEOUT


@dataclass(frozen=True, kw_only=True)
class OfficeSlideOptions:
    """ODP, PPT (through LibreOffice): speaker notes and LibreOffice's time limit."""

    notes: bool = True
    office_timeout: float = OFFICE_TIMEOUT
