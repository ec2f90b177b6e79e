"""Bounded reading of untrusted zip files (the zip-bomb guard).

Why one module: a hostile zip can declare small sizes and unpack to gigabytes, or hold
thousands of entries. Every reader of zipped input (the DOCX package today) opens it here:
the directory is checked first (entry count, declared sizes, compression ratio), then every
entry is read through a capped stream that counts the real bytes against a budget for the
whole file, since the headers can lie.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass

from render_pool.errors import CorruptDocument, TooLarge


@dataclass(frozen=True)
class ZipLimits:
    """Caps for one zip: entries, unpacked bytes in all and per entry, and the largest
    unpacked/compressed ratio of an entry bigger than ``ratio_min_size``."""

    max_entries: int = 5000
    max_total: int = 200 * 1024 * 1024
    max_entry: int = 100 * 1024 * 1024
    max_ratio: float = 100
    ratio_min_size: int = 1024 * 1024


def ratio_exceeded(unpacked: int, compressed: int, *, max_ratio: float, min_size: int) -> bool:
    """The one zip-bomb rule: more than ``min_size`` bytes unpacked from data compressed more
    than ``max_ratio``:1. Small outputs never trip it (short runs compress very well)."""
    return unpacked > min_size and unpacked > max_ratio * max(compressed, 1)


class BoundedZip:
    """A zip whose entries are read within :class:`ZipLimits`; ``label`` names the file in
    error messages (``"The DOCX package"``)."""

    def __init__(self, data: bytes, limits: ZipLimits, label: str) -> None:
        self.limits = limits
        self.label = label
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
            raise CorruptDocument(f"{label} is a corrupt zip: {exc}") from None
        if len(infos) > limits.max_entries:
            raise TooLarge(f"{label} has too many parts ({len(infos)}).")
        for info in infos:
            if info.file_size > limits.max_entry:
                raise TooLarge(f"A part of {label} ({info.filename}) unpacks to more than the "
                               "limit.")
            if self._ratio_too_high(info.file_size, info.compress_size):
                raise TooLarge(f"A part of {label} ({info.filename}) has a suspicious "
                               "compression ratio (zip bomb?).")
        if sum(i.file_size for i in infos) > limits.max_total:
            raise TooLarge(f"{label} unpacks to more than the size limit.")
        self.infos = infos
        self.remaining = limits.max_total  # bytes the next reads may still unpack

    def _ratio_too_high(self, unpacked: int, compressed: int) -> bool:
        return ratio_exceeded(unpacked, compressed, max_ratio=self.limits.max_ratio,
                              min_size=self.limits.ratio_min_size)

    def read(self, info: zipfile.ZipInfo) -> bytes:
        """The entry's bytes, read through a stream capped by the limits and the budget."""
        cap = min(self.limits.max_entry, self.remaining)
        out = bytearray()
        try:
            with self._zip.open(info) as fh:
                while chunk := fh.read(1 << 16):
                    out += chunk
                    if len(out) > cap:
                        raise TooLarge(f"{self.label} unpacks to more than the size limit "
                                       "(zip bomb?).")
                    if self._ratio_too_high(len(out), info.compress_size):
                        raise TooLarge(f"A part of {self.label} ({info.filename}) has a "
                                       "suspicious compression ratio (zip bomb?).")
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError,
                NotImplementedError, RuntimeError) as exc:
            # RuntimeError: zipfile's "encrypted, password required"; the rest: damaged data
            if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
                raise CorruptDocument(f"{self.label} is encrypted.") from None
            raise CorruptDocument(f"{self.label} is corrupt ({info.filename}): {exc}") from None
        self.remaining -= len(out)
        return bytes(out)
