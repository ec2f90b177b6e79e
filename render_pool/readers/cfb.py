"""The streams of an OLE compound file (legacy DOC, XLS, PPT), read without a library, for
the output check of :mod:`render_pool.readers.office_output`: a picture LibreOffice writes
for such a file must be found in these bytes.

Why a reader of its own: a stream's sectors need not follow each other in the file, so a
picture is looked for in each stream put back together, not in the raw file; and Office
keeps metafile pictures (EMF, WMF, PICT) deflated, so the deflated blocks found in the
streams are inflated too. Every chain is bounded (a sector is visited once, the output is
at most a few times the input): a hostile file costs at most a few passes over itself.
"""

from __future__ import annotations

import re
import struct
import zlib

MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_END = 0xFFFFFFFA  # sector numbers from here up end a chain or mark special sectors
_ZLIB = re.compile(rb"\x78[\x01\x5e\x9c\xda]")
MAX_INFLATE_TRIES = 4096
MAX_INFLATED = 64 * 1024 * 1024
MIN_PICTURE = 32  # smaller streams and blocks hold no picture worth keeping


class _File:
    def __init__(self, data: bytes) -> None:
        self.data = data
        shift = struct.unpack_from("<H", data, 0x1E)[0]
        if shift not in (9, 12):
            raise ValueError("sector size")
        self.size = 1 << shift
        self.mini_size = 1 << struct.unpack_from("<H", data, 0x20)[0]
        (self.dir_start, self.cutoff, self.minifat_start, self.minifat_count,
         difat_start, difat_count) = struct.unpack_from("<I4xIIIII", data, 0x30)
        self.sectors = max(0, (len(data) - self.size) // self.size)
        self.fat = self._fat(difat_start, difat_count)

    def sector(self, n: int) -> bytes:
        start = (n + 1) * self.size
        return self.data[start:start + self.size]

    def _fat(self, difat_start: int, difat_count: int) -> list[int]:
        ids = list(struct.unpack_from("<109I", self.data, 0x4C))
        seen: set[int] = set()
        n = difat_start
        per = self.size // 4
        while n < _END and n < self.sectors and n not in seen and len(seen) <= difat_count:
            seen.add(n)
            entries = struct.unpack(f"<{per}I", self.sector(n))
            ids += entries[:-1]
            n = entries[-1]
        fat: list[int] = []
        for sid in ids:
            if sid < self.sectors:
                fat += struct.unpack(f"<{per}I", self.sector(sid))
        return fat

    def chain(self, start: int, table: list[int]) -> list[int]:
        out: list[int] = []
        seen: set[int] = set()
        n = start
        while n < _END and n < len(table) and n not in seen:
            seen.add(n)
            out.append(n)
            n = table[n]
        return out

    def read(self, start: int, size: int) -> bytes:
        body = b"".join(self.sector(n) for n in self.chain(start, self.fat))
        return body[:size]

    def streams(self) -> list[bytes]:
        directory = self.read(self.dir_start, len(self.data))
        entries = [directory[i:i + 128] for i in range(0, len(directory) - 127, 128)]
        if not entries:
            return []
        root_start, root_size = struct.unpack_from("<IQ", entries[0], 116)
        mini_stream = self.read(root_start, min(root_size, len(self.data)))
        minifat_raw = b"".join(self.sector(n) for n in self.chain(self.minifat_start,
                                                                   self.fat))
        minifat = list(struct.unpack(f"<{len(minifat_raw) // 4}I",
                                     minifat_raw[:len(minifat_raw) // 4 * 4]))
        out = []
        for entry in entries[1:]:
            if entry[66] != 2:  # streams only
                continue
            start, size = struct.unpack_from("<IQ", entry, 116)
            size = min(size & 0xFFFFFFFF if self.size == 512 else size, len(self.data))
            if size < MIN_PICTURE:
                continue
            if size < self.cutoff:
                chunks = (mini_stream[n * self.mini_size:(n + 1) * self.mini_size]
                          for n in self.chain(start, minifat))
                out.append(b"".join(chunks)[:size])
            else:
                out.append(self.read(start, size))
        return out


def streams(data: bytes) -> list[bytes]:
    """The streams of the compound file ``data`` (empty if it is not one or is damaged)."""
    if not data.startswith(MAGIC) or len(data) < 512:
        return []
    try:
        return _File(data).streams()
    except (ValueError, struct.error, IndexError):
        return []


def inflated_blocks(blobs: list[bytes]) -> list[bytes]:
    """The deflated (zlib) blocks found in ``blobs``, inflated: bounded tries and output."""
    out: list[bytes] = []
    tries = total = 0
    for blob in blobs:
        view = memoryview(blob)  # a try reads from its offset without copying the rest
        for m in _ZLIB.finditer(blob):
            if tries >= MAX_INFLATE_TRIES or total >= MAX_INFLATED:
                return out
            tries += 1
            inflater = zlib.decompressobj()
            try:
                block = inflater.decompress(view[m.start():], MAX_INFLATED - total)
            except zlib.error:
                continue
            if len(block) >= MIN_PICTURE:
                out.append(block)
                total += len(block)
    return out


def picture_sources(data: bytes) -> list[bytes]:
    """Where a picture of a legacy Office file can be: its streams and the blocks inflated
    from them (or, if ``data`` is not a readable compound file, ``data`` itself)."""
    found = streams(data) or [data]
    return found + inflated_blocks(found)
