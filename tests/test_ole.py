"""OLE compound files (DOC, XLS, PPT) are read by one module, ``render_pool.engine.common.ole``.

Two readers had been written side by side (``cfb.py`` for the output check's pictures,
``ole.py`` for the cost estimate's main stream); they are one now, with the bounds of both.
The files here are built by :func:`compound`, their sectors laid out backwards so that no
stream is contiguous in the file. On the code before, a directory naming one large stream
300 times made the picture search hold 300 copies of it (the "few passes" the old reader
promised were not), and a small ``WordDocument`` (in the mini stream) was costed as 0 cells.
"""

from __future__ import annotations

import random
import struct
import zlib

from render_pool.engine.common import ole
from render_pool.engine.office import cost as office_cost
from render_pool.engine.office import links as office_links
from render_pool.engine.office import output as office_output
from tests.office_link_fixtures import random_png

SECTOR, MINI, CUTOFF = 512, 64, 4096
END, FREE, FAT_MARK, NONE = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF


def _blocks(data: bytes, size: int) -> list[bytes]:
    padded = data + b"\0" * (-len(data) % size)
    return [padded[i:i + size] for i in range(0, len(padded), size)]


def _entry(name: str, kind: int, start: int, size: int) -> bytes:
    encoded = name.encode("utf-16-le") + b"\0\0"
    return (encoded.ljust(64, b"\0") + struct.pack("<HBB3I", len(encoded), kind, 1, NONE, NONE,
                                                   NONE)
            + b"\0" * 36 + struct.pack("<IQ", start, size))


def compound(streams: list[tuple[str, bytes]], aliases: int = 0) -> bytes:
    """A version 3 compound file of ``streams`` (under 4 KiB: in the mini stream), with
    ``aliases`` more directory entries naming the first stream's sectors."""
    mini = b"".join(data + b"\0" * (-len(data) % MINI) for _, data in streams
                    if len(data) < CUTOFF)
    minifat: list[int] = []
    mini_start: dict[int, int] = {}
    for i, (_, data) in enumerate(streams):
        if len(data) < CUTOFF:
            first, count = len(minifat), max(1, -(-len(data) // MINI))
            mini_start[i] = first
            minifat += [first + k + 1 for k in range(count - 1)] + [END]
    chains = {"minifat": _blocks(struct.pack(f"<{len(minifat)}I", *minifat), SECTOR),
              "mini": _blocks(mini, SECTOR)}
    for i, (_, data) in enumerate(streams):
        if len(data) >= CUTOFF:
            chains[i] = _blocks(data, SECTOR)
    chains["dir"] = [b""] * -(-(len(streams) + 1 + aliases) // 4)  # filled in below
    total = sum(len(c) for c in chains.values())
    fat_sectors = 1
    while fat_sectors * 128 < total + fat_sectors:
        fat_sectors += 1
    # data sectors backwards: the last block of all chains first
    order = [(key, k) for key, blocks in chains.items() for k in range(len(blocks))]
    where = {block: fat_sectors + len(order) - 1 - n for n, block in enumerate(order)}
    start = {key: where[(key, 0)] if blocks else END for key, blocks in chains.items()}
    fat = [FREE] * (fat_sectors * 128)
    for n in range(fat_sectors):
        fat[n] = FAT_MARK
    for key, blocks in chains.items():
        for k in range(len(blocks)):
            fat[where[(key, k)]] = where[(key, k + 1)] if k + 1 < len(blocks) else END
    entries = _entry("Root Entry", 5, start["mini"], len(mini))
    for i, (name, data) in enumerate(streams):
        entries += _entry(name, 2, mini_start[i] if i in mini_start else start[i], len(data))
    for i in range(aliases):
        entries += entries[128:256].replace(streams[0][0].encode("utf-16-le"),
                                            f"{i:0{len(streams[0][0])}d}".encode("utf-16-le"))
    chains["dir"] = _blocks(entries, SECTOR)
    sectors = [b""] * (fat_sectors + len(order))
    for n in range(fat_sectors):
        sectors[n] = struct.pack("<128I", *fat[n * 128:(n + 1) * 128])
    for (key, k), n in where.items():
        sectors[n] = chains[key][k]
    difat = list(range(fat_sectors)) + [FREE] * (109 - fat_sectors)
    header = (ole.MAGIC + b"\0" * 16 + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\0" * 6
              + struct.pack("<9I", 0, fat_sectors, start["dir"], 0, CUTOFF,
                            start["minifat"], len(chains["minifat"]), END, 0)
              + struct.pack("<109I", *difat))
    return header + b"".join(sectors)


def test_streams_are_put_back_together_wherever_their_sectors_lie():
    big, small = random.Random(1).randbytes(10_000), b"mini stream text " * 6
    data = compound([("WordDocument", big), ("Small", small)])
    assert big not in data  # its sectors are not in order in the file
    assert ole.read_stream(data, "worddocument") == big
    assert ole.read_stream(data, "Small") == small
    assert ole.read_stream(data, "Missing") is None
    assert ole.streams(data) == [big, small]


def test_a_picture_of_a_legacy_file_is_found_in_its_streams_even_deflated():
    png, metafile = random_png(), random_png()
    data = compound([("Pictures", b"head" + png + b"tail" * 1200),
                     ("Data", zlib.compress(b"EMF" + metafile))])
    assert png not in data and metafile not in data
    prepared = office_links.prepare(data, "doc")
    assert office_output.allowed(png, prepared)
    assert office_output.allowed(b"EMF" + metafile, prepared)
    assert not office_output.allowed(random_png(), prepared)


def test_a_small_main_stream_is_costed_too():
    """The cost estimate reads the main stream from the mini stream as well (it counted 0
    cells there before: the estimate errs towards more cells, never fewer)."""
    assert office_cost.doc_cells(compound([("WordDocument", b"\x07" * 300)])) == 300


def test_a_hostile_directory_costs_at_most_twice_the_file():
    big = bytes(range(256)) * 80
    data = compound([("Big", big)], aliases=300)  # 300 more entries name Big's sectors
    assert len(ole._Compound(data).entries) == 301
    found = ole.streams(data)
    assert found[0] == big
    assert sum(map(len, found)) <= 2 * len(data)


def test_damaged_and_foreign_files_read_as_far_as_they_go():
    big = bytes(range(256)) * 40
    data = compound([("WordDocument", big), ("Small", b"small " * 10)])
    assert ole.streams(b"not a compound file" * 50) == []
    assert ole.read_stream(b"\x00" * 600, "WordDocument") is None
    for cut in (512, 1024, len(data) // 2, len(data) - 100):
        ole.streams(data[:cut])  # no exception, whatever is left
        ole.read_stream(data[:cut], "WordDocument")
    looping = bytearray(data)
    fat = ole._Compound(data).fat
    stream = ole._Compound(data).entries[0]
    looping[(1 * 512):(2 * 512)] = struct.pack("<128I", *[  # the first FAT sector
        stream.start if n == stream.start else v for n, v in enumerate(fat[:128])])
    assert len(ole.read_stream(bytes(looping), "WordDocument") or b"") == 512
