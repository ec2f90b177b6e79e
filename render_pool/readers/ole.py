"""One stream of an OLE compound file (legacy DOC, XLS, PPT), read within the file's bytes.

Why: the cost estimate of a legacy Office file (``office_cost``) needs the bytes of its main
stream (``WordDocument``, ``Workbook``), not the whole file with its pictures. Only what
that needs is read: the header, the sector allocation table (FAT, with its DIFAT chain), the
directory, and one stream's chain of sectors. Streams smaller than the mini-stream cutoff
(4 KiB) live in the mini stream and are not read (too small to matter for a cost). Every
chain is followed at most once per sector of the file, so a looping or lying table ends
the walk instead of hanging it; anything malformed answers None.
"""

from __future__ import annotations

import struct

MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_END = 0xFFFFFFFE  # end of a chain
_MAX_REGULAR = 0xFFFFFFFA  # larger sector numbers are markers, not sectors


class _Compound:
    """The parts of a compound file the stream reader needs."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        shift = struct.unpack_from("<H", data, 30)[0]
        if shift not in (9, 12):
            raise ValueError("sector size")
        self.size = 1 << shift
        self.sectors = max(0, (len(data) - self.size) // self.size)
        fat_count, self.first_dir, _, self.cutoff, _, _, difat_first, difat_count = (
            struct.unpack_from("<IIIIIIII", data, 44))
        self.fat = self._fat(self._difat(difat_first, difat_count), fat_count)

    def sector(self, n: int) -> bytes:
        start = (n + 1) * self.size
        if n >= self.sectors or start + self.size > len(self.data):
            raise ValueError("sector past the end")
        return self.data[start:start + self.size]

    def _difat(self, first: int, count: int) -> list[int]:
        """The sector numbers of the FAT: 109 in the header, the rest in a DIFAT chain."""
        entries = list(struct.unpack_from("<109I", self.data, 76))
        per = self.size // 4 - 1
        n, seen = first, 0
        while n <= _MAX_REGULAR and seen < min(count, self.sectors):
            block = struct.unpack(f"<{per + 1}I", self.sector(n))
            entries.extend(block[:per])
            n, seen = block[per], seen + 1
        return [e for e in entries if e <= _MAX_REGULAR]

    def _fat(self, fat_sectors: list[int], count: int) -> list[int]:
        fat: list[int] = []
        for n in fat_sectors[:count]:
            fat.extend(struct.unpack(f"<{self.size // 4}I", self.sector(n)))
        return fat

    def chain(self, first: int, limit: int) -> bytes:
        """The bytes of the chain starting at ``first``, at most ``limit`` of them."""
        out = bytearray()
        n, steps = first, 0
        while n <= _MAX_REGULAR and len(out) < limit:
            if steps > self.sectors or n >= len(self.fat):
                raise ValueError("broken chain")
            out += self.sector(n)
            n, steps = self.fat[n], steps + 1
        return bytes(out[:limit])

    def entries(self) -> list[tuple[str, int, int, int]]:
        """The directory: (name, type, first sector, size) of each entry."""
        raw = self.chain(self.first_dir, self.sectors * self.size)
        found = []
        for at in range(0, len(raw) - 127, 128):
            name_len, kind = struct.unpack_from("<HB", raw, at + 64)
            name = raw[at:at + max(0, min(name_len, 64) - 2)].decode("utf-16-le", "replace")
            start, size = struct.unpack_from("<IQ", raw, at + 116)
            if self.size == 512:
                size &= 0xFFFFFFFF  # version 3 files: the high half is undefined
            found.append((name, kind, start, size))
        return found


def read_stream(data: bytes, name: str) -> bytes | None:
    """The bytes of the stream ``name`` (case-insensitive) of the compound file ``data``;
    None when it is not a compound file, has no such stream, the stream is below the
    mini-stream cutoff, or the file is malformed."""
    if not data.startswith(MAGIC) or len(data) < 512:
        return None
    try:
        ole = _Compound(data)
        for entry, kind, start, size in ole.entries():
            if kind == 2 and entry.lower() == name.lower():
                if size < ole.cutoff:
                    return None
                return ole.chain(start, min(size, len(data)))
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    return None
