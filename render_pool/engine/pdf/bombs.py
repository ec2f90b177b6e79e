"""Decompression bombs in PDFs, refused by measured size before pdfium inflates anything.

Why: pdfium inflates a whole stream when it reads it. A 2 MB PDF whose content stream is
2 GB of spaces (zlib packs them about 1000:1) took a worker to 3 GB and then answered with
an empty document. Here every Flate stream of the file is inflated once with a bounded
``zlib.decompressobj`` whose output is counted and thrown away (at most 1 MB is held at a
time), so the cost is CPU only and stops at the limit; an image whose declared size in
pixels would decode past the limit is refused from its dictionary alone.

What is looked at: every ``stream`` keyword (not ``endstream``) whose data starts with a
zlib header; zlib itself says where the stream ends, so no ``/Length`` (which may be an
indirect or lying reference) is trusted. Two or three ``/FlateDecode`` filters in a row
are measured layer by layer. Not covered: LZW streams, and encrypted files (their streams
are not zlib data until decrypted); the worker's hard memory limit is the bound there.
"""

from __future__ import annotations

import re
import zlib

from render_pool.errors import TooLarge

MB = 1024 * 1024
# Not settings: a real PDF inflates far below these; POOL_WORKER_MEMORY_MB bounds the rest.
MAX_STREAM_MB = 256  # one stream, inflated (a content stream or a decoded image)
MAX_TOTAL_MB = 2048  # all streams of the file together, inflated (also bounds the CPU here)
_CHUNK = 64 * 1024
_OUT = MB

_STREAM = re.compile(rb"stream(?:\r\n|\n|\r)")
_DICT_WINDOW = 4096
_INT = rb"\s+(\d{1,9})(?![\d.]|\s+\d+\s+R)"
_WIDTH = re.compile(rb"/Width" + _INT)
_HEIGHT = re.compile(rb"/Height" + _INT)
_FLATE = re.compile(rb"/(?:FlateDecode|Fl)\b")


class _Budget:
    """Inflated bytes counted so far against the per-stream and per-file limits."""

    def __init__(self, stream_limit: int, total_limit: int) -> None:
        self.stream_limit = stream_limit
        self.total_limit = total_limit
        self.total = 0

    def add(self, stream_bytes: int, grew: int) -> None:
        self.total += grew
        if stream_bytes > self.stream_limit:
            raise TooLarge(f"a content stream of the PDF inflates past "
                           f"{self.stream_limit // MB} MB; it is refused before it is read")
        if self.total > self.total_limit:
            raise TooLarge(f"the PDF's streams inflate past {self.total_limit // MB} MB in "
                           "total; it is refused before it is read")


def _is_zlib(head: bytes) -> bool:
    """Whether ``head`` starts with a valid zlib header (deflate, checksum right)."""
    return len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


def _dictionary(data: bytes, keyword: int) -> bytes:
    """The stream's dictionary: the text before ``stream`` back to its ``obj`` keyword."""
    start = max(0, keyword - _DICT_WINDOW)
    head = data[start:keyword]
    obj = head.rfind(b"obj")
    return head[obj:] if obj >= 0 else head


_BPC = re.compile(rb"/BitsPerComponent" + _INT)
_COMPONENTS = ((b"/DeviceCMYK", 4), (b"/DeviceGray", 1), (b"/Indexed", 1), (b"/CalGray", 1))


def _decoded_bytes(dictionary: bytes, width: int, height: int) -> int:
    """Bytes of the image's samples once decoded, from its dictionary: width x height x
    components x bits per component (a 1-bit stencil mask of a scanned page is an eighth of
    a grey one; unknown colour spaces count as RGB)."""
    if re.search(rb"/ImageMask\s+true", dictionary):
        bits, components = 1, 1
    else:
        bpc = _BPC.search(dictionary)
        bits = int(bpc.group(1)) if bpc else 8
        components = next((n for name, n in _COMPONENTS if name in dictionary), 3)
    return (width * bits * components + 7) // 8 * height


def _check_image(dictionary: bytes, budget: _Budget) -> None:
    """Refuse an image whose declared size decodes past the stream limit."""
    if b"/Image" not in dictionary:
        return
    width, height = _WIDTH.search(dictionary), _HEIGHT.search(dictionary)
    if width and height:
        w, h = int(width.group(1)), int(height.group(1))
        if _decoded_bytes(dictionary, w, h) > budget.stream_limit:
            raise TooLarge(f"an image of the PDF is {w} x {h} pixels, which decodes past "
                           f"{budget.stream_limit // MB} MB; it is refused before it is read")


def _inflate_layer(chunks: bytes | memoryview, layers: int, budget: _Budget) -> tuple[int, int]:
    """Inflate ``chunks`` (``layers`` Flate filters deep) counting the output of the last
    layer; returns (bytes of input consumed by the first layer, inflated size). A
    decompressor that reached its end is not fed again: zlib would answer nothing for ever
    to the input left in its ``unconsumed_tail``."""
    first = zlib.decompressobj()
    inner = [zlib.decompressobj() for _ in range(layers - 1)]
    size = 0
    pos = 0

    def feed(level: int, piece: bytes) -> None:
        nonlocal size
        if level == len(inner):
            size += len(piece)
            budget.add(size, len(piece))
            return
        d = inner[level]
        if d.eof:
            return
        try:
            out = d.decompress(piece, _OUT)
            while True:
                feed(level + 1, out)
                if d.eof or not d.unconsumed_tail:
                    break
                out = d.decompress(d.unconsumed_tail, _OUT)
        except zlib.error:
            return  # the inner data is not Flate after all: pdfium stops there as well

    try:
        while pos < len(chunks) and not first.eof:
            piece = chunks[pos:pos + _CHUNK]
            pos += len(piece)
            out = first.decompress(piece, _OUT)
            while True:
                feed(0, out)
                if first.eof or not first.unconsumed_tail:
                    break
                out = first.decompress(first.unconsumed_tail, _OUT)
    except zlib.error:
        pass  # broken data: pdfium inflates up to the error too; what came out is counted
    # at the end, what follows the stream sits in unused_data or (output limit) the tail
    consumed = pos - len(first.unused_data) - len(first.unconsumed_tail)
    return max(consumed, 0), size


def check_pdf_streams(data: bytes, *, max_stream_mb: int = MAX_STREAM_MB,
                      max_total_mb: int = MAX_TOTAL_MB) -> None:
    """Raise :class:`TooLarge` (41301) when a stream of the PDF inflates past
    ``max_stream_mb``, an image declares more pixels than that decodes to, or all streams
    together inflate past ``max_total_mb``; measured without keeping the output."""
    budget = _Budget(max_stream_mb * MB, max_total_mb * MB)
    view = memoryview(data)
    pos = 0
    while True:
        m = _STREAM.search(data, pos)
        if m is None:
            return
        pos = m.end()
        if data[max(0, m.start() - 3):m.start()] == b"end":
            continue
        dictionary = _dictionary(data, m.start())
        _check_image(dictionary, budget)
        if not _is_zlib(data[pos:pos + 2]):
            continue
        layers = min(3, max(1, len(_FLATE.findall(dictionary))))
        consumed, _size = _inflate_layer(view[pos:], layers, budget)
        # never past this stream's own end: a lying stream that makes zlib eat the next
        # object must not hide that object's stream from the measure
        end = data.find(b"endstream", pos)
        pos = min(pos + max(consumed, 0), end if end >= 0 else len(data))
