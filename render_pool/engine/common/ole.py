"""The streams of an OLE compound file (legacy DOC, XLS, PPT), read without a library.

Who asks: the cost estimate of a LibreOffice conversion (:mod:`render_pool.engine.office.cost`)
wants one stream by name (``WordDocument``, ``Workbook``), not the whole file with its
pictures; the output check (:mod:`render_pool.engine.office.links`, ``picture_sources``)
wants every stream, to find in them a picture LibreOffice wrote. Why not the raw file: a
stream's sectors need not follow each other, so only the stream put back together holds a
picture or a run of records whole.

What is read: the header, the sector allocation table (FAT, with its DIFAT chain), the
directory, the mini stream (streams under the cutoff, 4 KiB, live there in 64-byte
sectors) and the chains asked for. A damaged file is read as far as it goes. A hostile one
costs a few passes over itself: a chain visits a sector at most once, the FAT is never
longer than the file needs to map its own sectors, and all streams together are at most
twice the file (each sector belongs to one stream; the mini stream's are counted again).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_MAX_REGULAR = 0xFFFFFFFA  # larger sector numbers are markers (end of chain, free, FAT...)
_STREAM = 2  # directory entry type of a stream (1: storage, 5: root)
_ENTRY = 128  # bytes of a directory entry


@dataclass(frozen=True, slots=True)
class Entry:
    """One stream of the directory: its name, first sector and size in bytes."""

    name: str
    start: int
    size: int


class _Compound:
    """A compound file's header, FAT and directory; streams read on demand."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(MAGIC) or len(data) < 512:
            raise ValueError("not a compound file")
        self.data = data
        sector_shift, mini_shift = struct.unpack_from("<HH", data, 0x1E)
        if sector_shift not in (9, 12) or mini_shift != 6:
            raise ValueError("sector size")
        self.size = 1 << sector_shift
        self.mini_size = 1 << mini_shift
        (self.dir_start, _, self.cutoff, self.minifat_start, _, difat_start, _) = (
            struct.unpack_from("<7I", data, 0x30))
        self.sectors = max(0, (len(data) - self.size) // self.size)  # after the header
        self.fat = self._fat(difat_start)

    def sector(self, n: int) -> bytes:
        start = (n + 1) * self.size
        return self.data[start:start + self.size]

    def _fat(self, difat_start: int) -> list[int]:
        """The FAT: its sectors are listed 109 in the header, the rest in the DIFAT chain;
        only as many as map the file's sectors are read."""
        per = self.size // 4
        needed = -(-self.sectors // per)
        listed = [n for n in struct.unpack_from("<109I", self.data, 0x4C) if n < self.sectors]
        n, seen = difat_start, set()
        while len(listed) < needed and n < self.sectors and n not in seen:
            seen.add(n)
            *more, n = struct.unpack(f"<{per}I", self.sector(n))
            listed += [m for m in more if m < self.sectors]
        fat: list[int] = []
        for n in listed[:needed]:
            fat += struct.unpack(f"<{per}I", self.sector(n))
        return fat

    @staticmethod
    def chain(start: int, table: list[int], count: int) -> Iterator[int]:
        """The sector numbers of the chain from ``start`` through ``table``: each below
        ``count`` and visited once (a loop or a marker ends it)."""
        seen: set[int] = set()
        n = start
        while n < count and n < len(table) and n not in seen:
            seen.add(n)
            yield n
            n = table[n]

    def regular(self, start: int, size: int) -> bytes:
        """``size`` bytes (at most) of the chain of regular sectors from ``start``."""
        out = bytearray()
        for n in self.chain(start, self.fat, self.sectors):
            if len(out) >= size:
                break
            out += self.sector(n)
        return bytes(out[:size])

    @cached_property
    def entries(self) -> list[Entry]:
        """The streams of the directory (the root's mini stream is :attr:`mini_stream`)."""
        raw = self.regular(self.dir_start, len(self.data))
        found = []
        for at in range(0, len(raw) - _ENTRY + 1, _ENTRY):
            name_len, kind = struct.unpack_from("<HB", raw, at + 64)
            if kind != _STREAM:
                continue
            start, size = struct.unpack_from("<IQ", raw, at + 116)
            if self.size == 512:
                size &= 0xFFFFFFFF  # version 3 files: the high half is undefined
            name = raw[at:at + max(0, min(name_len, 64) - 2)].decode("utf-16-le", "replace")
            found.append(Entry(name, start, min(size, len(self.data))))
        return found

    @cached_property
    def mini_stream(self) -> bytes:
        """The root entry's stream, which holds the small streams."""
        root = self.regular(self.dir_start, _ENTRY)
        if len(root) < _ENTRY:
            return b""
        start, size = struct.unpack_from("<IQ", root, 116)
        return self.regular(start, min(size, len(self.data)))

    @cached_property
    def minifat(self) -> list[int]:
        raw = self.regular(self.minifat_start, len(self.data))
        return list(struct.unpack(f"<{len(raw) // 4}I", raw[:len(raw) // 4 * 4]))

    def read(self, entry: Entry) -> bytes:
        """The bytes of ``entry`` (as far as the file holds them)."""
        if entry.size >= self.cutoff:
            return self.regular(entry.start, entry.size)
        mini, step = self.mini_stream, self.mini_size
        out = bytearray()
        for n in self.chain(entry.start, self.minifat, len(mini) // step):
            if len(out) >= entry.size:
                break
            out += mini[n * step:(n + 1) * step]
        return bytes(out[:entry.size])


_DAMAGED = (ValueError, struct.error, IndexError)


def streams(data: bytes) -> list[bytes]:
    """The streams of the compound file ``data``, each put back together (empty if it is not
    one or its header is damaged); together at most twice ``data``."""
    try:
        ole = _Compound(data)
        out: list[bytes] = []
        budget = 2 * len(data)
        for entry in ole.entries:
            if entry.size > budget:
                continue
            stream = ole.read(entry)
            budget -= len(stream)
            out.append(stream)
        return out
    except _DAMAGED:
        return []


def read_stream(data: bytes, name: str) -> bytes | None:
    """The bytes of the stream ``name`` (case-insensitive) of the compound file ``data``;
    None when it is not a compound file, has no such stream or its header is damaged."""
    try:
        ole = _Compound(data)
        for entry in ole.entries:
            if entry.name.lower() == name.lower():
                return ole.read(entry)
    except _DAMAGED:
        return None
    return None


def root_names(data: bytes) -> list[str] | None:
    """The names of the entries directly under the root storage of the compound file
    ``data`` (streams and storages), or None when its header or directory is damaged.

    Why: an embedded object keeps its own streams in a storage below the root (a slide
    show holding a workbook has a ``Book`` stream two levels down), so only the root's own
    children say what the file is. The children form a tree through each entry's left and
    right siblings; every entry is visited at most once."""
    try:
        ole = _Compound(data)
        raw = ole.regular(ole.dir_start, len(data))
        count = len(raw) // _ENTRY
        if count == 0:
            return None
        first = struct.unpack_from("<I", raw, 76)[0]  # the root's child
        names: list[str] = []
        todo, seen = [first], set()
        while todo:
            n = todo.pop()
            if n >= count or n in seen:
                continue
            seen.add(n)
            at = n * _ENTRY
            name_len = struct.unpack_from("<H", raw, at + 64)[0]
            names.append(raw[at:at + max(0, min(name_len, 64) - 2)].decode("utf-16-le",
                                                                              "replace"))
            todo += struct.unpack_from("<2I", raw, at + 68)
        return names
    except _DAMAGED:
        return None
