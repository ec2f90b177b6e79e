"""Errors an engine raises; each carries the service's numeric error code.

They cross the process boundary (pickled), so they keep only plain attributes.
"""

from __future__ import annotations


class ConversionError(Exception):
    """Base class: ``code`` is the v2 envelope code, ``message`` is safe to show a caller."""

    code = 50001

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[type[ConversionError], tuple[str]]:
        # keep the subclass and message across processes
        return (type(self), (self.message,))


class InvalidOption(ConversionError):
    """An option the engine cannot honour for this input: a ``pages`` range past the last
    page, an option the input's reader does not take (40001)."""

    code = 40001


class UnsupportedFormat(ConversionError):
    """The input or requested output is not a supported type (40002)."""

    code = 40002


class CorruptDocument(ConversionError):
    """The document or archive cannot be read: corrupt, encrypted, empty, no text layer (40003)."""

    code = 40003


class UnsafeArchive(ConversionError):
    """An archive tries to escape, links out, or unpacks too big (40004)."""

    code = 40004


class TooLarge(ConversionError):
    """Input or unpacked size over a limit (41301)."""

    code = 41301


class ConversionFailed(ConversionError):
    """The engine failed on a readable input (50001)."""

    code = 50001


class ConversionTimeout(ConversionFailed):
    """The conversion ran past its time limit (50401)."""

    code = 50401


class OcrPending(Exception):
    """Raised by a reader instead of returning a Document, when it was allowed to hand its
    OCR to the caller (``ocr_fanout``) and several pages need it: the 0-based ``pages`` to
    recognise (``render_pool.engine.jobs.ocr_page``, one pool job each) in ``pdf`` (the PDF the
    reader made of an image upload; None: the bytes the caller sent). ``page_pdfs`` holds
    each of those pages as a one-page PDF of its own, so a page job is sent its page, not the
    whole document (a 50-page scan would otherwise cross to the workers 50 times); a page
    missing there is sent as page ``index`` of ``pdf``. The caller then reads the document
    again with the results (``ocr_pages``). Not a ConversionError: it never reaches a
    client."""

    def __init__(self, pages: list[int], pdf: bytes | None = None,
                 page_pdfs: dict[int, bytes] | None = None) -> None:
        super().__init__(pages, pdf, page_pdfs)
        self.pages = pages
        self.pdf = pdf
        self.page_pdfs = page_pdfs or {}
