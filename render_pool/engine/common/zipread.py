"""Bounded reading of untrusted zip files (the zip-bomb guard).

Why one module: a hostile zip can declare small sizes and unpack to gigabytes, or hold
thousands of entries. Every reader of zipped input (the DOCX package today) opens it here:
the directory is checked first (entry count, declared sizes, compression ratio), then every
entry is read through a capped stream that counts the real bytes against a budget for the
whole file, since the headers can lie.

An ordinary entry (stored or deflated, its local header agreeing with the directory, its
bytes matching its declared size and CRC, within every cap) is unpacked in one step instead:
the stream would return the same bytes, and an entry that is anything else is read by the
stream, which says what is wrong with it as before.
"""

from __future__ import annotations

import hashlib
import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

from render_pool.errors import CorruptDocument, TooLarge

# a local file header (APPNOTE 4.3.7): signature, versions, flags, method, time, date, CRC,
# sizes, name and extra field lengths; the same layout :mod:`zipfile` reads
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_MAGIC = b"PK\x03\x04"
_UTF8_NAME = 0x800
# encrypted, compressed patched data, strong encryption: zipfile refuses these, and so do we
_UNREADABLE_FLAGS = 0x1 | 0x20 | 0x40
_QUICK_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


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
        self._data = memoryview(data)

    def _ratio_too_high(self, unpacked: int, compressed: int) -> bool:
        return ratio_exceeded(unpacked, compressed, max_ratio=self.limits.max_ratio,
                              min_size=self.limits.ratio_min_size)

    def _exceeds(self, unpacked: int, compressed: int) -> bool:
        """Whether ``unpacked`` bytes from an entry of ``compressed`` bytes trip a check of
        :meth:`_streamed`: more than the cap, or the ratio rule. Both grow with ``unpacked``,
        so a whole entry that passes had every prefix the stream looks at pass too."""
        cap = min(self.limits.max_entry, self.remaining)
        return unpacked > cap or self._ratio_too_high(unpacked, compressed)

    def _packed(self, info: zipfile.ZipInfo) -> memoryview | None:
        """The entry's packed bytes, when :meth:`_quick` can read it: a local header that
        agrees with the directory (what :meth:`zipfile.ZipFile.open` checks), no encryption
        or patch flags, stored or deflated; None for anything else (the stream reads it,
        and says what is wrong)."""
        if info.flag_bits & _UNREADABLE_FLAGS or info.compress_type not in _QUICK_METHODS:
            return None
        start = info.header_offset
        if start < 0 or start + _LOCAL_HEADER.size > len(self._data):
            return None
        header = _LOCAL_HEADER.unpack_from(self._data, start)
        if header[0] != _LOCAL_MAGIC:
            return None
        name_at = start + _LOCAL_HEADER.size
        raw_name = bytes(self._data[name_at:name_at + header[10]])
        try:
            name = raw_name.decode("utf-8" if header[3] & _UTF8_NAME else "cp437")
        except UnicodeDecodeError:
            return None
        if name != info.orig_filename:
            return None
        body = name_at + header[10] + header[11]
        packed = self._data[body:body + info.compress_size]
        return packed if len(packed) == info.compress_size else None

    def _quick(self, info: zipfile.ZipInfo) -> bytes | None:
        """The entry's bytes unpacked in one step, or None where the stream must read it
        (anything unusual, or an entry a check would stop): exactly what the stream would
        return, since it is only used when the whole entry unpacks to its declared size
        and CRC and passes the checks the stream makes on every prefix."""
        packed = self._packed(info)
        if packed is None:
            return None
        if info.compress_type == zipfile.ZIP_STORED:
            if info.file_size != len(packed):
                return None
            data = bytes(packed)
        else:
            # at most what the checks allow, plus one byte to see a larger entry
            room = max(self.limits.ratio_min_size,
                       int(self.limits.max_ratio * max(info.compress_size, 1)))
            bound = min(self.limits.max_entry, self.remaining, room) + 1
            unpacker = zlib.decompressobj(-15)
            try:
                data = unpacker.decompress(packed, bound)
            except zlib.error:
                return None
            if not unpacker.eof or len(data) != info.file_size:
                return None
        if zlib.crc32(data) != info.CRC or self._exceeds(len(data), info.compress_size):
            return None
        return data

    def read(self, info: zipfile.ZipInfo) -> bytes:
        """The entry's bytes, read through a stream capped by the limits and the budget
        (unpacked in one step when the entry is an ordinary one: see :meth:`_quick`)."""
        data = self._quick(info)
        if data is None:
            return self._streamed(info)
        self.remaining -= len(data)
        return data

    def stored_key(self, info: zipfile.ZipInfo) -> bytes | None:
        """A digest of the entry as stored (method, CRC, size, packed bytes), computed
        without unpacking it: two entries with the same key hold the same bytes, and read
        alike. None for an entry :meth:`read` does not unpack in one step. For caches of
        what is built from an entry (see :meth:`read_known`)."""
        packed = self._packed(info)
        if packed is None:
            return None
        head = b"%d:%d:%d:" % (info.compress_type, info.CRC, info.file_size)
        return hashlib.blake2b(head + packed, digest_size=20).digest()

    def read_known(self, info: zipfile.ZipInfo) -> bool:
        """Count a read of an entry whose bytes are known already: one with the
        :meth:`stored_key` of an entry :meth:`read` gave ``file_size`` bytes for before.
        True when that read would succeed now (the budget is charged as :meth:`read`
        would), False when it would fail: then :meth:`read` must run and say why."""
        if self._packed(info) is None or self._exceeds(info.file_size, info.compress_size):
            return False
        self.remaining -= info.file_size
        return True

    def _streamed(self, info: zipfile.ZipInfo) -> bytes:
        """The entry's bytes, read through :mod:`zipfile`'s stream in chunks, each checked
        against the cap, the budget and the ratio rule (a zip bomb stops early)."""
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
