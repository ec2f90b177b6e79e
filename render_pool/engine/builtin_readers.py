"""The registrations of the built-in readers: one object per reader, each mapping its options
type (``render_pool.engine.reader_options``) onto its reader function, which it imports only
when it reads (so a job loads only the format it uses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from render_pool.engine.formats import DEFAULT_ENGINE, Reader, ReadRequest
from render_pool.engine.model import Document
from render_pool.engine.reader_options import (
    DocxOptions,
    NoOptions,
    OfficeSheetOptions,
    OfficeSlideOptions,
    OfficeTextOptions,
    PdfOptions,
    PptxOptions,
    SheetOptions,
)

__all__ = ["READERS"]


def _scan_options(request: ReadRequest) -> PdfOptions:
    return PdfOptions(ocr=request.ocr, ocr_languages=request.ocr_languages,
                      ocr_fanout=request.ocr_fanout, ocr_pages=request.ocr_pages,
                      pages=request.pages, include_furniture=request.include_furniture)


@dataclass(frozen=True)
class PdfReader:
    kinds: tuple[str, ...] = ("pdf",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> PdfOptions:
        return _scan_options(request)

    def read(self, data: bytes, options: PdfOptions) -> Document:
        from render_pool.engine.pdf.reader import read_pdf

        return read_pdf(data, ocr=options.ocr, ocr_languages=options.ocr_languages,
                        ocr_fanout=options.ocr_fanout, ocr_pages=options.ocr_pages,
                        pages=options.pages, include_furniture=options.include_furniture)


@dataclass(frozen=True)
class ImageReader:
    """PNG, JPEG, TIFF and WebP, read by OCR as one-page scans (the PDF reader's options)."""

    kinds: tuple[str, ...] = ("png", "jpeg", "tiff", "webp")
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> PdfOptions:
        return _scan_options(request)

    def read(self, data: bytes, options: PdfOptions) -> Document:
        from render_pool.engine.image.reader import read_image

        return read_image(data, ocr=options.ocr, ocr_languages=options.ocr_languages,
                          ocr_fanout=options.ocr_fanout, ocr_pages=options.ocr_pages,
                          pages=options.pages)


@dataclass(frozen=True)
class DocxReader:
    kinds: tuple[str, ...] = ("docx",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> DocxOptions:
        return DocxOptions(include_furniture=request.include_furniture,
                           track_changes=request.track_changes)

    def read(self, data: bytes, options: DocxOptions) -> Document:
        from render_pool.engine.docx.reader import read_docx

        return read_docx(data, include_furniture=options.include_furniture,
                         track_changes=options.track_changes)


@dataclass(frozen=True)
class LenientDocxReader:
    """DOCX by the lenient engine (``alt_engine``), which takes no options."""

    kinds: tuple[str, ...] = ("docx",)
    engine: str = "alt_engine"
    sniffed: bool = True

    def options(self, request: ReadRequest) -> NoOptions:
        return NoOptions()

    def read(self, data: bytes, options: NoOptions) -> Document:
        from render_pool.engine.docx.alt import read_docx_alt

        return read_docx_alt(data)


@dataclass(frozen=True)
class PptxReader:
    kinds: tuple[str, ...] = ("pptx",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> PptxOptions:
        return PptxOptions(notes=request.notes)

    def read(self, data: bytes, options: PptxOptions) -> Document:
        from render_pool.engine.pptx.reader import read_pptx

        return read_pptx(data, notes=options.notes)


@dataclass(frozen=True)
class XlsxReader:
    kinds: tuple[str, ...] = ("xlsx",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> SheetOptions:
        return SheetOptions(max_cells=request.max_cells)

    def read(self, data: bytes, options: SheetOptions) -> Document:
        from render_pool.engine.xlsx.reader import read_xlsx

        return read_xlsx(data, max_cells=options.max_cells)


@dataclass(frozen=True)
class CsvReader:
    kinds: tuple[str, ...] = ("csv",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> SheetOptions:
        return SheetOptions(max_cells=request.max_cells)

    def read(self, data: bytes, options: SheetOptions) -> Document:
        from render_pool.engine.csv.reader import read_csv

        return read_csv(data, max_cells=options.max_cells)


@dataclass(frozen=True)
class HtmlReader:
    kinds: tuple[str, ...] = ("html",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> NoOptions:
        return NoOptions()

    def read(self, data: bytes, options: NoOptions) -> Document:
        from render_pool.engine.html.reader import read_html_file

        return read_html_file(data)


@dataclass(frozen=True)
class EpubReader:
    kinds: tuple[str, ...] = ("epub",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> NoOptions:
        return NoOptions()

    def read(self, data: bytes, options: NoOptions) -> Document:
        from render_pool.engine.epub.reader import read_epub

        return read_epub(data)


@dataclass(frozen=True)
class MarkdownReader:
    """UTF-8 Markdown (a BOM dropped); named by the caller (``/md/convert``), never sniffed."""

    kinds: tuple[str, ...] = ("markdown",)
    engine: str = DEFAULT_ENGINE
    sniffed: bool = False

    def options(self, request: ReadRequest) -> NoOptions:
        return NoOptions()

    def read(self, data: bytes, options: NoOptions) -> Document:
        from render_pool.engine.markdown.reader import read_markdown_source

        return read_markdown_source(data)


@dataclass(frozen=True)
class OfficeTextReader:
    """Word-like documents through LibreOffice."""

    kinds: tuple[str, ...] = ("odt", "doc", "rtf")
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> OfficeTextOptions:
        return OfficeTextOptions(include_furniture=request.include_furniture,
                                 track_changes=request.track_changes,
                                 office_timeout=request.office_timeout)

    def read(self, data: bytes, options: OfficeTextOptions) -> Document:
        from render_pool.engine.office.reader import read_lo_text

        return read_lo_text(data, include_furniture=options.include_furniture,
                            track_changes=options.track_changes,
                            office_timeout=options.office_timeout)


@dataclass(frozen=True)
class OfficeSheetReader:
    """Spreadsheets through LibreOffice."""

    kinds: tuple[str, ...] = ("ods", "xls")
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> OfficeSheetOptions:
        return OfficeSheetOptions(max_cells=request.max_cells,
                                  office_timeout=request.office_timeout)

    def read(self, data: bytes, options: OfficeSheetOptions) -> Document:
        from render_pool.engine.office.reader import read_lo_sheets

        return read_lo_sheets(data, max_cells=options.max_cells,
                              office_timeout=options.office_timeout)


@dataclass(frozen=True)
class OfficeSlideReader:
    """Slide shows through LibreOffice."""

    kinds: tuple[str, ...] = ("odp", "ppt")
    engine: str = DEFAULT_ENGINE
    sniffed: bool = True

    def options(self, request: ReadRequest) -> OfficeSlideOptions:
        return OfficeSlideOptions(notes=request.notes, office_timeout=request.office_timeout)

    def read(self, data: bytes, options: OfficeSlideOptions) -> Document:
        from render_pool.engine.office.reader import read_lo_slides

        return read_lo_slides(data, notes=options.notes, office_timeout=options.office_timeout)


READERS: tuple[Reader[Any], ...] = (
    PdfReader(), DocxReader(), LenientDocxReader(), PptxReader(), XlsxReader(), CsvReader(),
    HtmlReader(), EpubReader(), MarkdownReader(), OfficeTextReader(), OfficeSheetReader(),
    OfficeSlideReader(), ImageReader(),
)
