"""Minimal PNG encoder for pdfium bitmaps (no Pillow needed)."""

from __future__ import annotations

import struct
import zlib

import pypdfium2.raw as pdfium_c


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(buffer: bytes, width: int, height: int, stride: int, fmt: int) -> bytes:
    """Encode a pdfium bitmap buffer (Gray, BGR, BGRx or BGRA rows) as PNG.

    BGRA with a fully opaque alpha channel is written as RGB to keep files small.
    """
    channels = {pdfium_c.FPDFBitmap_Gray: 1, pdfium_c.FPDFBitmap_BGR: 3,
                pdfium_c.FPDFBitmap_BGRx: 4, pdfium_c.FPDFBitmap_BGRA: 4}.get(fmt)
    if channels is None:
        raise ValueError(f"unsupported bitmap format {fmt}")
    row_len = width * channels
    if stride == row_len:
        src = bytes(buffer[: row_len * height])
    else:
        src = b"".join(bytes(buffer[r * stride: r * stride + row_len]) for r in range(height))
    if channels == 1:
        pixels, color_type, out_ch = src, 0, 1
    else:
        alpha = src[3::4] if fmt == pdfium_c.FPDFBitmap_BGRA else b""
        opaque = not alpha or alpha.count(255) == len(alpha)
        out_ch = 3 if opaque else 4
        out = bytearray(width * height * out_ch)
        out[0::out_ch] = src[2::channels]
        out[1::out_ch] = src[1::channels]
        out[2::out_ch] = src[0::channels]
        if out_ch == 4:
            out[3::4] = alpha
        pixels, color_type = bytes(out), (2 if out_ch == 3 else 6)
    line = width * out_ch
    raw = b"".join(b"\x00" + pixels[r * line:(r + 1) * line] for r in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b""))
