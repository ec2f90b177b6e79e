"""The set-up of a DOCX conversion made cheaper without changing what it reads (issue 34, item 1).

What must hold: an ordinary zip entry is unpacked in one step, and a damaged or oversized one
fails exactly as the checked stream says; a style sheet or numbering part seen before is
neither unpacked nor hashed again, yet its read still counts against the package's budget
and fails as before when it would; the XML guard's byte searches find what its full scans
found.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable

import docx
import pytest

from render_pool.engine.common.xml_guard import check_xml
from render_pool.engine.common.zipread import BoundedZip, ZipLimits
from render_pool.engine.docx import part_cache
from render_pool.engine.docx.package import Package
from render_pool.engine.docx.reader import DocxReader
from render_pool.engine.jobs import convert_document
from render_pool.errors import CorruptDocument, TooLarge

_TEXT = b"<w:p>" + b"quarterly revenue grew in every region " * 300 + b"</w:p>"
_LIMITS = ZipLimits(max_entries=10, max_total=1 << 20, max_entry=1 << 20, max_ratio=100,
                    ratio_min_size=1 << 16)


def _zip(entries: dict[str, tuple[bytes, int]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name, (body, method) in entries.items():
            package.writestr(name, body, compress_type=method)
    return out.getvalue()


def _ordinary() -> bytes:
    return _zip({"a.xml": (_TEXT, zipfile.ZIP_DEFLATED), "b.bin": (b"\x89PNG" * 50,
                                                                 zipfile.ZIP_STORED)})


def _outcome(data: bytes, limits: ZipLimits = _LIMITS) -> list[tuple[object, ...]]:
    """What reading every entry gives: its bytes and the budget left, or the error."""
    package = BoundedZip(data, limits, "The package")
    out: list[tuple[object, ...]] = []
    for info in package.infos:
        try:
            out.append(("ok", package.read(info), package.remaining))
        except (CorruptDocument, TooLarge) as exc:
            out.append((type(exc).__name__, str(exc)))
    return out


def _central(data: bytes, name: bytes) -> int:
    """Offset of the central directory record of entry ``name``."""
    at = data.index(b"PK\x01\x02")
    while data[at + 46:at + 46 + len(name)] != name:
        at = data.index(b"PK\x01\x02", at + 1)
    return at


def _patched(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def test_an_ordinary_entry_is_unpacked_without_zipfiles_stream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_stream(*args: object, **kwargs: object) -> None:
        raise AssertionError("read through zipfile's stream")

    data = _ordinary()
    package = BoundedZip(data, _LIMITS, "The package")
    monkeypatch.setattr(zipfile.ZipFile, "open", no_stream)
    assert package.read(package.infos[0]) == _TEXT
    assert package.read(package.infos[1]) == b"\x89PNG" * 50
    assert package.remaining == _LIMITS.max_total - len(_TEXT) - 200


def test_a_wrong_crc_is_still_refused_as_corrupt() -> None:
    data = _ordinary()
    at = _central(data, b"a.xml")
    crc = struct.unpack_from("<I", data, at + 16)[0]
    outcome = _outcome(_patched(data, at + 16, "<I", crc ^ 1))
    assert outcome[0][0] == "CorruptDocument" and "Bad CRC-32" in str(outcome[0][1])
    assert outcome[1][0] == "ok"


@pytest.mark.parametrize("field, change", [
    (24, lambda size: size - 1),   # declares fewer bytes than it holds
    (24, lambda size: size + 1),   # declares more
    (20, lambda size: size - 7),   # a packed size that cuts the stream short
])
def test_an_entry_whose_sizes_lie_reads_as_the_stream_reads_it(
        field: int, change: Callable[[int], int]) -> None:
    data = _ordinary()
    at = _central(data, b"a.xml")
    size = struct.unpack_from("<I", data, at + field)[0]
    damaged = _patched(data, at + field, "<I", change(size))
    package = BoundedZip(damaged, _LIMITS, "The package")
    try:
        expected: tuple[object, ...] = ("ok", package._streamed(package.infos[0]))
    except CorruptDocument as exc:
        expected = ("CorruptDocument", str(exc))
    got = _outcome(damaged)[0]
    assert got[:2] == expected


def test_a_local_header_that_disagrees_with_the_directory_is_refused() -> None:
    data = _ordinary()
    damaged = data.replace(b"a.xml", b"c.xml", 1)  # the first: the local header's name
    outcome = _outcome(damaged)
    assert outcome[0][0] == "CorruptDocument" and "differ" in str(outcome[0][1])


def test_too_small_a_budget_stops_as_before() -> None:
    data = _ordinary()
    exact = ZipLimits(max_entries=10, max_total=len(_TEXT) + 200, max_entry=1 << 20,
                      max_ratio=100, ratio_min_size=1 << 20)
    package = BoundedZip(data, exact, "The package")
    text, stored = package.infos
    assert package.read(stored) == b"\x89PNG" * 50
    assert package.read(text) == _TEXT
    assert package.remaining == 0
    for info in (text, stored):  # a second read finds the budget spent
        with pytest.raises(TooLarge, match=r"^The package unpacks to more than the size "
                                           r"limit \(zip bomb\?\)\.$"):
            package.read(info)


def _word_docx(text: str = "Revenue grew in every region.") -> bytes:
    document = docx.Document()
    document.add_paragraph("First step", style="List Number")
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_style_sheet_seen_before_is_not_unpacked_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = _word_docx()
    first = convert_document(data, "markdown").content
    read: list[str] = []
    original = Package.read

    def recording(self: Package, name: str) -> bytes:
        read.append(name)
        return original(self, name)

    monkeypatch.setattr(Package, "read", recording)
    assert convert_document(_word_docx(), "markdown").content == first
    assert "word/styles.xml" not in read
    assert "word/numbering.xml" not in read
    assert "word/document.xml" in read


def test_a_known_part_counts_against_the_budget_as_a_read() -> None:
    data = _word_docx()
    part_cache._STYLES.clear()
    part_cache._NUMBERING.clear()
    cold = DocxReader(data, False, "accept").pkg.zip.remaining
    warm = DocxReader(data, False, "accept").pkg.zip.remaining
    assert warm == cold < Package(data).zip.remaining


@pytest.mark.parametrize("known", [False, True])
def test_a_known_part_whose_read_would_fail_now_still_fails(known: bool) -> None:
    data = _word_docx()
    part_cache._STYLES.clear()
    if known:
        part_cache.styles_for(Package(data), "word/styles.xml")
    package = Package(data)
    package.zip.remaining = package.size("word/styles.xml") - 1  # spent by other reads
    with pytest.raises(TooLarge, match=r"^The DOCX package unpacks to more than the size "
                                       r"limit \(zip bomb\?\)\.$"):
        part_cache.styles_for(package, "word/styles.xml")
    assert package.zip.remaining == package.size("word/styles.xml") - 1


@pytest.mark.parametrize("part, refused", [
    (b"<a>&amp; &lt; &#38; &#x26; A&B &gt;&quot;&apos;</a>", None),
    (b"<a>&amp;&amp;&nbsp;</a>", "undeclared entity (&nbsp;)"),
    (b"<a>&amp;x &foo; &bar;</a>", "undeclared entity (&foo;)"),
    (b"<a>Hello! &amp; bye!</a>", None),
    (b"<!DOCTYPE a><a>Hello!</a>", None),
    (b"<!doctype a [<!ENTITY e 'x'>]><a/>", "internal DTD subset"),
    (b"<a><!ENTITY e 'x'></a>", "declares an entity"),
    (b"<a>&e;</a><!-- ! -->", "undeclared entity (&e;)"),
])
def test_the_xml_guard_refuses_what_its_full_scans_refused(
        part: bytes, refused: str | None) -> None:
    if refused is None:
        check_xml(part, "A part")
    else:
        with pytest.raises(CorruptDocument, match=refused.replace("(", r"\(").replace(
                ")", r"\)")):
            check_xml(part, "A part")
