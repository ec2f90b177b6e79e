"""Damaged zip packages (DOCX, PPTX, XLSX): every refusal is the corrupt-document answer.

Why: :mod:`zipfile` and the decompressors it calls raise a dozen kinds of error on damaged
bytes (``NotImplementedError`` for a zip version from the future, ``LZMAError`` for a
garbled LZMA entry, ``OSError`` for bzip2, ``EOFError``, ``RuntimeError`` for an encrypted
entry...). A user who sends such a file must get 40003 like for any other damaged
document, never a raw library error (50001 with a class name). The packages are built here
from good ones, one damage each; bzip2 and LZMA entries are also checked to read as their
deflated twins, and a bzip2 bomb to be stopped before it is unpacked whole.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from render_pool.engine import registry
from render_pool.engine.common.zipread import BoundedZip, ZipLimits
from render_pool.engine.docx.reader import read_docx
from render_pool.engine.model import Document
from render_pool.engine.pptx.reader import read_pptx
from render_pool.engine.sniff import detect_kind
from render_pool.engine.xlsx.reader import read_xlsx
from render_pool.errors import CorruptDocument
from tests.conftest import post_form
from tests.docx_fixtures import build_feature_docx
from tests.office_fixtures import big_deck, build_xlsx
from tornado_app.app import make_app

ROOT = Path(__file__).resolve().parents[1]

# kind -> (a good package, the entry damaged, the kind's own reader)
PACKAGES: dict[str, tuple[Callable[[], bytes], str, Callable[[bytes], Document]]] = {
    "docx": (build_feature_docx, "word/document.xml", read_docx),
    "pptx": (lambda: big_deck(2), "ppt/slides/slide1.xml", read_pptx),
    "xlsx": (build_xlsx, "xl/worksheets/sheet1.xml", read_xlsx),
}


def repacked(data: bytes, part: str | None = None, method: int = zipfile.ZIP_DEFLATED,
             extract_version: int | None = None) -> bytes:
    """``data`` written again, every entry deflated but ``part`` (packed by ``method``, its
    directory entry asking for ``extract_version`` when given); ``part`` None: every entry
    packed by ``method``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            chosen = part is None or info.filename == part
            entry.compress_type = method if chosen else zipfile.ZIP_DEFLATED
            if chosen and extract_version is not None:
                entry.extract_version = extract_version
            dst.writestr(entry, src.read(info))
    return out.getvalue()


def headers(data: bytes, part: str) -> tuple[int, int, int]:
    """Where entry ``part`` starts in ``data``: its local header, its packed bytes and its
    directory entry."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(part)
    local = info.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    raw = part.encode()
    central = data.find(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(raw)] != raw:
        central = data.find(b"PK\x01\x02", central + 4)
    return local, local + 30 + name_len + extra_len, central


def future_version(data: bytes, part: str) -> bytes:
    """The directory entry of ``part`` asks for zip version 7.7 (zipfile knows up to 6.3)."""
    return repacked(data, part, extract_version=77)


def lzma_bad_properties(data: bytes, part: str) -> bytes:
    """``part`` packed with LZMA, its properties byte out of range (lc/lp/pb)."""
    out = bytearray(repacked(data, part, zipfile.ZIP_LZMA))
    _, body, _ = headers(bytes(out), part)
    out[body + 4] = 0xFF
    return bytes(out)


def lzma_garbled(data: bytes, part: str) -> bytes:
    """``part`` packed with LZMA, its stream garbled after its first bytes."""
    out = bytearray(repacked(data, part, zipfile.ZIP_LZMA))
    _, body, _ = headers(bytes(out), part)
    size = zipfile.ZipFile(io.BytesIO(bytes(out))).getinfo(part).compress_size
    for at in range(body + 29, body + size - 2):
        out[at] ^= 0x5A
    return bytes(out)


def bzip2_garbled(data: bytes, part: str) -> bytes:
    """``part`` packed with bzip2, its stream header overwritten."""
    out = bytearray(repacked(data, part, zipfile.ZIP_BZIP2))
    _, body, _ = headers(bytes(out), part)
    out[body:body + 4] = b"XXXX"
    return bytes(out)


def deflate_truncated(data: bytes, part: str) -> bytes:
    """``part``'s deflate stream cut to half: both headers declare half its packed size."""
    out = bytearray(repacked(data))
    local, _, central = headers(bytes(out), part)
    half = zipfile.ZipFile(io.BytesIO(bytes(out))).getinfo(part).compress_size // 2
    struct.pack_into("<L", out, local + 18, half)
    struct.pack_into("<L", out, central + 20, half)
    return bytes(out)


def encrypted(data: bytes, part: str) -> bytes:
    """``part`` flagged encrypted (bit 0) in both of its headers."""
    out = bytearray(repacked(data))
    local, _, central = headers(bytes(out), part)
    out[local + 6] |= 1
    out[central + 8] |= 1
    return bytes(out)


def entry_past_end(data: bytes, part: str) -> bytes:
    """The directory places ``part``'s local header past the end of the file."""
    out = bytearray(repacked(data))
    _, _, central = headers(bytes(out), part)
    struct.pack_into("<L", out, central + 42, len(out) + 1000)
    return bytes(out)


def directory_past_end(data: bytes, part: str) -> bytes:
    """The end record places the directory past the end of the file."""
    out = bytearray(repacked(data))
    end = out.rfind(b"PK\x05\x06")
    struct.pack_into("<L", out, end + 16, len(out) + 1000)
    return bytes(out)


DAMAGES: dict[str, Callable[[bytes, str], bytes]] = {
    "future version": future_version, "lzma properties": lzma_bad_properties,
    "lzma garbled": lzma_garbled, "bzip2 garbled": bzip2_garbled,
    "deflate truncated": deflate_truncated, "encrypted": encrypted,
    "entry past the end": entry_past_end, "directory past the end": directory_past_end,
}
_GOOD: dict[str, bytes] = {}


def damaged(kind: str, damage: str) -> bytes:
    """The good package of ``kind`` (built once) with ``damage`` done to its main entry."""
    build, part, _ = PACKAGES[kind]
    if kind not in _GOOD:
        _GOOD[kind] = build()
    return DAMAGES[damage](_GOOD[kind], part)


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("kind", list(PACKAGES))
def test_a_damaged_package_is_a_corrupt_document(kind: str, damage: str) -> None:
    """Through the service's read (the kind sniffed first) and through the kind's own
    reader (which opens the package itself): 40003, whatever zipfile raised."""
    data = damaged(kind, damage)
    with pytest.raises(CorruptDocument) as sniffed:
        registry.read(data)
    assert type(sniffed.value) is CorruptDocument and sniffed.value.code == 40003
    with pytest.raises(CorruptDocument) as direct:
        PACKAGES[kind][2](data)
    assert type(direct.value) is CorruptDocument
    if damage == "encrypted":
        assert "encrypted" in direct.value.message


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
                         ids=["bzip2", "lzma"])
@pytest.mark.parametrize("kind", list(PACKAGES))
def test_bzip2_and_lzma_packages_read_as_deflated_ones(kind: str, method: int) -> None:
    """Entries packed with bzip2 or LZMA (unpacked by the zip guard itself, in steps) give
    the document their deflated twin gives."""
    build, _, reader = PACKAGES[kind]
    good = build()
    expected = registry.write_text("markdown", reader(good))
    assert registry.write_text("markdown", reader(repacked(good, method=method))) == expected


def bzip2_bomb(unpacked: int) -> bytes:
    """A zip whose one bzip2 entry unpacks to ``unpacked`` zero bytes while both of its
    headers declare 100 (the directory checks pass; only unpacking tells)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        dst.writestr("bomb.xml", b"\0" * unpacked, compress_type=zipfile.ZIP_BZIP2)
    data = bytearray(out.getvalue())
    local, _, central = headers(bytes(data), "bomb.xml")
    struct.pack_into("<L", data, local + 22, 100)
    struct.pack_into("<L", data, central + 24, 100)
    return bytes(data)


def test_a_bzip2_bomb_is_refused_before_it_is_unpacked_whole() -> None:
    """A few hundred bytes of bzip2 unpacking to 32 MiB while declaring 100: refused (40003,
    its first 100 bytes fail the CRC, as zipfile's stream reads it) having held little,
    not the whole 32 MiB at once (zipfile's stream unpacks all it reads of a bzip2 entry
    in one call, and a worker under its memory limit dies of a bigger one)."""
    data = bzip2_bomb(32 << 20)
    assert len(data) < 1000
    package = BoundedZip(data, ZipLimits(), "The test package")
    tracemalloc.start()
    try:
        with pytest.raises(CorruptDocument):
            package.read(package.infos[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


def odf_with_mimetype(mimetype: bytes, method: int, declared: int | None = None) -> bytes:
    """A zip holding a ``mimetype`` entry packed by ``method`` (its headers declaring
    ``declared`` bytes when given) and a content part."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        dst.writestr("mimetype", mimetype, compress_type=method)
        dst.writestr("content.xml", b"<office:document-content/>")
    data = bytearray(out.getvalue())
    if declared is not None:
        local, _, central = headers(bytes(data), "mimetype")
        struct.pack_into("<L", data, local + 22, declared)
        struct.pack_into("<L", data, central + 24, declared)
    return bytes(data)


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                    zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
                         ids=["stored", "deflated", "bzip2", "lzma"])
def test_the_mimetype_entry_is_read_however_packed(method: int) -> None:
    """An OpenDocument's ``mimetype`` names its kind whatever packs it."""
    data = odf_with_mimetype(b"application/vnd.oasis.opendocument.text", method)
    assert detect_kind(data) == "odt"


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2],
                         ids=["deflated", "bzip2"])
def test_a_mimetype_bomb_is_refused_before_it_is_unpacked_whole(method: int) -> None:
    """A ``mimetype`` entry declaring 39 bytes that unpacks to 32 MiB: 40003 (its CRC),
    having held little (zipfile's ``read`` unpacks a deflated entry up to 2 GiB at a time,
    a bzip2 one whole)."""
    data = odf_with_mimetype(b"\0" * (32 << 20), method, declared=39)
    tracemalloc.start()
    try:
        with pytest.raises(CorruptDocument):
            detect_kind(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


def test_a_slide_its_relationships_do_not_name_is_a_corrupt_presentation() -> None:
    """A presentation whose slide list names a relationship its part lacks (what a flipped
    byte in the relationships' part does; found by fuzzing): 40003, not python-pptx's
    KeyError."""
    src = zipfile.ZipFile(io.BytesIO(big_deck(2)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "ppt/_rels/presentation.xml.rels":
                body = body.replace(b'Id="rId7"', b'Id="rId70"')
            dst.writestr(info, body)
    with pytest.raises(CorruptDocument, match="cannot be read"):
        read_pptx(out.getvalue())


@pytest.fixture
def app(docs_services: Any) -> Any:
    return make_app(docs_services)


async def test_damaged_packages_answer_40003_over_http(api: Any) -> None:
    """``POST /api/convert``: the corrupt-document code, a message with no traceback or
    library class name in it."""
    for kind, damage in (("docx", "future version"), ("pptx", "lzma garbled"),
                         ("xlsx", "lzma properties"), ("docx", "bzip2 garbled")):
        reply = await post_form(api, "/api/convert", {},
                                {"file": (f"damaged.{kind}", damaged(kind, damage))})
        assert reply.status == 200, reply.body
        assert reply.body["code"] == 40003, (kind, damage, reply.body)
        msg = reply.body["msg"]
        assert "Traceback" not in msg and "Error" not in msg, (kind, damage, msg)


@pytest.mark.slow
def test_damaged_packages_answer_40003_from_the_command_line(tmp_path: Path) -> None:
    """``python -m tornado_app convert``: each damaged file reported with 40003."""
    paths = []
    for kind, damage in (("docx", "future version"), ("pptx", "lzma garbled")):
        path = tmp_path / f"{damage.replace(' ', '-')}.{kind}"
        path.write_bytes(damaged(kind, damage))
        paths.append(path)
    done = subprocess.run([sys.executable, "-m", "tornado_app", "convert", *map(str, paths),
                           "-o", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    for path in paths:
        assert f"{path}: 40003 " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
