"""Bounded reading of untrusted zip files (the zip-bomb guard).

Why one module: a hostile zip can declare small sizes and unpack to gigabytes, or hold
thousands of entries. Every reader of zipped input (the DOCX package today) opens it here:
the directory is checked first (entry count, declared sizes, compression ratio), then every
entry is read through a capped stream that counts the real bytes against a budget for the
whole file, since the headers can lie.

An ordinary entry (stored or deflated, its local header agreeing with the directory, its
bytes matching its declared size and CRC, within every cap) is unpacked in one step instead:
the stream would return the same bytes, and an entry that is anything else is read by the
stream, which says what is wrong with it as before. A plain zip's directory is read from its
bytes too (:mod:`render_pool.engine.common.zipdir`), to the same entries :mod:`zipfile`
reads, which reads any other.

Whatever :mod:`zipfile` or a decompressor raises on damaged bytes (:data:`ZIP_DAMAGE`), while
the directory is read or an entry is opened or unpacked, leaves here as the one
CorruptDocument (40003) a damaged document answers: never as a raw library error. Entries
packed with bzip2 or LZMA are unpacked here in bounded steps (:mod:`zipfile` unpacks all
it reads of them in one call, so a few hundred bytes could fill memory before any check).
"""

from __future__ import annotations

import bz2
import io
import lzma
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from render_pool.engine.common.zipdir import read_directory
from render_pool.errors import CorruptDocument, TooLarge

# a local file header (APPNOTE 4.3.7): signature, versions, flags, method, time, date, CRC,
# sizes, name and extra field lengths; the same layout :mod:`zipfile` reads
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_MAGIC = b"PK\x03\x04"
_UTF8_NAME = 0x800
# encrypted, compressed patched data, strong encryption: zipfile refuses these, and so do we
_UNREADABLE_FLAGS = 0x1 | 0x20 | 0x40
_QUICK_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_STEP = 1 << 16  # bytes unpacked at a time between the checks

# what reading a damaged zip raises, from the directory to the last byte of an entry:
# zipfile's own BadZipFile/LargeZipFile; NotImplementedError (an extract version, method or
# flag it lacks); RuntimeError (encrypted); the decompressors' zlib.error, LZMAError,
# OSError (bzip2) and EOFError (data ending early); ValueError (a negative offset, a name
# that is not UTF-8); OverflowError (zip64 sizes and offsets past what a seek takes);
# struct.error (a field cut short)
ZIP_DAMAGE: tuple[type[Exception], ...] = (
    zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, zlib.error,
    lzma.LZMAError, OSError, EOFError, ValueError, OverflowError, struct.error)


def corrupt_zip(label: str, exc: Exception, part: str | None = None) -> CorruptDocument:
    """The 40003 answer for ``exc`` (one of :data:`ZIP_DAMAGE`) met reading ``label``, in
    its entry ``part`` when known: an encrypted entry is named as such."""
    text = str(exc) or type(exc).__name__
    if "encrypt" in text.lower() or "password" in text.lower():
        return CorruptDocument(f"{label} is encrypted.")
    where = f" ({part})" if part else ""
    return CorruptDocument(f"{label} is corrupt{where}: {text}")


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
        self._bytes = data
        # a plain zip's directory read from its bytes, any other by zipfile (see zipdir);
        # the ZipFile the stream reads through is then made when an entry needs it
        self._zip: zipfile.ZipFile | None = None
        infos = read_directory(data)
        if infos is None:
            try:
                self._zip = zipfile.ZipFile(io.BytesIO(data))
                infos = self._zip.infolist()
            except ZIP_DAMAGE as exc:
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
        self._packed_of: dict[zipfile.ZipInfo, memoryview | None] = {}  # see _packed

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
        and says what is wrong). Found once per entry: a cache's look-up of an entry asks
        for them up to three times (:meth:`stored`, :meth:`read_known`, :meth:`read`)."""
        try:
            return self._packed_of[info]  # by the entry itself (ZipInfo hashes by identity)
        except KeyError:
            found = self._packed_of[info] = self._find_packed(info)
            return found

    def _find_packed(self, info: zipfile.ZipInfo) -> memoryview | None:
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
        try:  # ASCII reads the same in cp437, and its codec is found without a look-up
            name = raw_name.decode("utf-8" if header[3] & _UTF8_NAME else
                                   "ascii" if raw_name.isascii() else "cp437")
        except UnicodeDecodeError:
            return None
        if name != info.orig_filename:
            return None
        packed = _packed_body(self._data, info)
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

    def stored(self, info: zipfile.ZipInfo) -> tuple[tuple[int, int, int], memoryview] | None:
        """The entry as stored, taken without unpacking it: its method, CRC and size, and
        its packed bytes. Two entries stored alike hold the same bytes, and read alike.
        None for an entry :meth:`read` does not unpack in one step. For caches of what is
        built from an entry (see :meth:`read_known`)."""
        packed = self._packed(info)
        if packed is None:
            return None
        return (info.compress_type, info.CRC, info.file_size), packed

    def read_known(self, info: zipfile.ZipInfo) -> bool:
        """Count a read of an entry whose bytes are known already: one with the
        :meth:`stored` form of an entry :meth:`read` gave ``file_size`` bytes for before.
        True when that read would succeed now (the budget is charged as :meth:`read`
        would), False when it would fail: then :meth:`read` must run and say why."""
        if self._packed(info) is None or self._exceeds(info.file_size, info.compress_size):
            return False
        self.remaining -= info.file_size
        return True

    def _streamed(self, info: zipfile.ZipInfo) -> bytes:
        """The entry's bytes, read in steps, each checked against the cap, the budget and
        the ratio rule (a zip bomb stops early); 40003 for a damaged entry."""
        cap = min(self.limits.max_entry, self.remaining)
        out = bytearray()
        try:
            if self._zip is None:  # the directory was read from the bytes: zipfile reads
                self._zip = zipfile.ZipFile(io.BytesIO(self._bytes))  # it alike
            for chunk in entry_chunks(self._zip, self._data, info):
                out += chunk
                if len(out) > cap:
                    raise TooLarge(f"{self.label} unpacks to more than the size limit "
                                   "(zip bomb?).")
                if self._ratio_too_high(len(out), info.compress_size):
                    raise TooLarge(f"A part of {self.label} ({info.filename}) has a "
                                   "suspicious compression ratio (zip bomb?).")
        except ZIP_DAMAGE as exc:
            raise corrupt_zip(self.label, exc, info.filename) from None
        self.remaining -= len(out)
        return bytes(out)


def entry_chunks(package: zipfile.ZipFile, data: bytes | memoryview,
                 info: zipfile.ZipInfo) -> Iterator[bytes]:
    """The bytes of entry ``info`` of ``package`` (a zip over ``data``) in steps of at most
    :data:`_STEP`: bzip2 and LZMA entries unpacked here (see :func:`_bounded`), the others
    by :mod:`zipfile`'s stream, which unpacks deflate in bounded steps itself. Raises one of
    :data:`ZIP_DAMAGE` for a damaged entry."""
    with package.open(info) as fh:  # checks the local header, flags and method
        if info.compress_type in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
            yield from _bounded(_packed_body(memoryview(data), info), info)
            return
        while chunk := fh.read(_STEP):
            yield chunk


def _bounded(packed: memoryview, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A bzip2 or LZMA entry (``packed``, its packed bytes) unpacked at most :data:`_STEP`
    bytes at a time, read as :mod:`zipfile`'s stream reads it: to the end of its stream or
    of its packed bytes, at most its declared size, then its CRC checked."""
    if info.compress_type == zipfile.ZIP_BZIP2:
        unpacker: bz2.BZ2Decompressor | lzma.LZMADecompressor = bz2.BZ2Decompressor()
    else:  # APPNOTE 5.8.8: version (2 bytes), size of the properties (2), properties
        size = int.from_bytes(packed[2:4], "little")
        if len(packed) < 4 + size:
            raise EOFError("LZMA properties cut short")
        props = bytes(packed[4:4 + size])
        unpacker = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[
            lzma._decode_filter_properties(  # type: ignore[attr-defined]
                lzma.FILTER_LZMA1, props)])
        packed = packed[4 + size:]
    left, crc = info.file_size, 0
    chunk = unpacker.decompress(packed, min(_STEP, left)) if left else b""
    while chunk:
        crc = zlib.crc32(chunk, crc)
        left -= len(chunk)
        yield chunk
        if not left or unpacker.eof or unpacker.needs_input:
            break
        chunk = unpacker.decompress(b"", min(_STEP, left))
    if crc != info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")


def _packed_body(data: memoryview, info: zipfile.ZipInfo) -> memoryview:
    """The entry's packed bytes after its local header (checked by the caller, or by
    :meth:`zipfile.ZipFile.open`): what the file holds of them (as :mod:`zipfile` reads
    them, a stream that ends first is then damaged, or not, by what it unpacks to)."""
    start = info.header_offset
    header = _LOCAL_HEADER.unpack_from(data, start)
    body = start + _LOCAL_HEADER.size + header[10] + header[11]
    return data[body:body + info.compress_size]
