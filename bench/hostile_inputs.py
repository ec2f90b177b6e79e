"""The hostile inputs of issue 20, made on the spot (shared by ``bench/hostile.py`` and the
tests): each is small to send or cheap to make, and costly to convert when unchecked."""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib


def large_png(mb: float, *, noise: bool = False) -> bytes:
    """A valid RGB PNG of about ``mb`` MB, its pixels in stored (uncompressed) deflate
    blocks, so the file is as large as its pixels: a gradient (which a writer that
    recompresses makes small again) or, with ``noise``, random pixels."""
    width = 1024
    rows = max(1, int(mb * 1024 * 1024 / (width * 3 + 1)))
    if noise:
        raw = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(rows))
    else:
        ramp = bytes(v for x in range(width) for v in (x % 256, 128, 64))
        raw = b"".join(b"\x00" + ramp[y % 3:] + ramp[:y % 3] for y in range(rows))
    return _png(width, rows, zlib.compress(raw, 0))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(width: int, height: int, idat: bytes) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat)
            + _chunk(b"IEND", b""))


def zip_of(members: dict[str, bytes]) -> bytes:
    """A zip archive (deflated) holding ``members``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def quadratic_markdown(n: int = 8000) -> bytes:
    """``![](a (`` repeated: every image opener with an open title (issue 20)."""
    return b"![](a (" * n


def open_links(n: int = 25_000) -> str:
    """``[a](`` repeated: link openers that never close."""
    return "[a](" * n


def footnotes(n: int = 50_000) -> str:
    """``n`` footnote references and their definitions."""
    refs = " ".join(f"x[^{i}]" for i in range(n))
    defs = "\n".join(f"[^{i}]: note {i}" for i in range(n))
    return f"{refs}\n\n{defs}\n"


def style_imports(n: int = 5000) -> str:
    """``<style>@import url(`` repeated, unclosed, in Markdown's raw HTML."""
    return "<style>@import url(" * n


def space_bomb_pdf(mb: int = 2048) -> bytes:
    """One page whose content stream is ``mb`` MB of spaces, Flate-compressed (about
    1000:1: 2 GB of spaces is a 2 MB file)."""
    squeeze = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    packed = b"".join(squeeze.compress(chunk) for _ in range(mb)) + squeeze.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
        b"<< /Filter /FlateDecode /Length %d >>\nstream\n" % len(packed) + packed
        + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for num, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def random_upload(mb: float) -> bytes:
    """``mb`` MB of random bytes: an upload no reader recognises, as large as the limit
    allows (issue 30: four at once used to stall the event loop while their bodies were
    parsed)."""
    return os.urandom(int(mb * 1024 * 1024))
