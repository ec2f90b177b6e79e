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

    def __reduce__(self):  # keep the subclass and message across processes
        return (type(self), (self.message,))


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
