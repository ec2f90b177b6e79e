"""What a DOCX reader keeps per worker is only ever used for the bytes it was read from.

The caches of :meth:`render_pool.engine.docx.package.Package.built` (style sheets, numbering,
relationships, notes parts without notes) find a part by its method, CRC and size, then
compare its packed bytes: two parts whose CRC and size agree but whose bytes differ (a CRC
is easy to forge) must each give their own output, however often they alternate. And the
zip directory read from a package's bytes (:mod:`render_pool.engine.common.zipdir`) gives
the very entries :mod:`zipfile` gives, or leaves the package to it. Identity guards: these
hold on the code before the caches changed too.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib
from pathlib import Path

import pytest

from render_pool.engine.common.zipdir import _KNOWN_SLOTS, read_directory
from render_pool.engine.jobs import convert_document

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_FILLER = b"a" * 64  # letters of a comment a forged variant flips to "c" (bit 0x02)
_DATA = Path(__file__).parent / "data"


def _forged(reference: bytes, variant: bytes) -> bytes:
    """``variant`` (as long as ``reference``, holding :data:`_FILLER` in a comment) with
    filler letters flipped so that its CRC-32 is ``reference``'s: CRC-32 is affine in the
    bits of a message of fixed length, so the flips solve a linear system over GF(2)."""
    at = variant.index(_FILLER)
    base = zlib.crc32(variant)
    basis: dict[int, tuple[int, int]] = {}  # leading bit -> (CRC change, flips making it)
    for i in range(len(_FILLER)):
        flipped = bytearray(variant)
        flipped[at + i] ^= 0x02
        change, flips = zlib.crc32(bytes(flipped)) ^ base, 1 << i
        while change:
            top = change.bit_length() - 1
            if top not in basis:
                basis[top] = (change, flips)
                break
            change, flips = change ^ basis[top][0], flips ^ basis[top][1]
    want, chosen = base ^ zlib.crc32(reference), 0
    while want:
        change, flips = basis[want.bit_length() - 1]
        want, chosen = want ^ change, chosen ^ flips
    out = bytearray(variant)
    for i in range(len(_FILLER)):
        if chosen >> i & 1:
            out[at + i] ^= 0x02
    assert len(out) == len(reference) and zlib.crc32(bytes(out)) == zlib.crc32(reference)
    assert bytes(out) != reference
    return bytes(out)


def _styles(level: int) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="{_W}"><!-- '
            f'{_FILLER.decode()} --><w:style w:type="paragraph" w:styleId="S1">'
            f'<w:name w:val="heading {level}"/></w:style></w:styles>').encode()


def _rels(host: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
            f'openxmlformats.org/package/2006/relationships"><!-- {_FILLER.decode()} -->'
            f'<Relationship Id="rId1" Type="{_REL}styles" Target="styles.xml"/>'
            f'<Relationship Id="rId2" Type="{_REL}hyperlink" Target="https://{host}.example/"'
            f' TargetMode="External"/></Relationships>').encode()


def _docx(styles: bytes, rels: bytes) -> bytes:
    parts = {
        "[Content_Types].xml":
            b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
            b'.org/package/2006/content-types"><Default Extension="xml" ContentType="'
            b'application/xml"/></Types>',
        "_rels/.rels":
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
            f'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="'
            f'{_REL}officeDocument" Target="word/document.xml"/></Relationships>'.encode(),
        "word/document.xml":
            f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}" xmlns:r="{_R}">'
            f'<w:body><w:p><w:pPr><w:pStyle w:val="S1"/></w:pPr><w:r><w:t>Results</w:t></w:r>'
            f'</w:p><w:p><w:hyperlink r:id="rId2"><w:r><w:t>source</w:t></w:r></w:hyperlink>'
            f'</w:p></w:body></w:document>'.encode(),
        "word/_rels/document.xml.rels": rels,
        "word/styles.xml": styles,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, body in parts.items():
            package.writestr(name, body)
    return out.getvalue()


def test_style_sheets_alike_in_crc_and_size_each_give_their_own_headings() -> None:
    first = _styles(1)
    second = _forged(first, _styles(2))
    rels = _rels("a")
    one, two = _docx(first, rels), _docx(second, rels)
    for _ in range(2):  # each read after the other has been kept
        assert convert_document(one, "markdown").content.startswith("# Results\n")
        assert convert_document(two, "markdown").content.startswith("## Results\n")


def test_relationships_alike_in_crc_and_size_each_give_their_own_links() -> None:
    first = _rels("a")
    second = _forged(first, _rels("b"))
    styles = _styles(1)
    one, two = _docx(styles, first), _docx(styles, second)
    for _ in range(2):
        assert "(https://a.example/)" in convert_document(one, "markdown").content
        assert "(https://b.example/)" in convert_document(two, "markdown").content


def _zips() -> list[Path]:
    return sorted(p for p in _DATA.rglob("*") if p.suffix in (
        ".docx", ".pptx", ".xlsx", ".epub", ".odt", ".ods", ".odp"))


def _entries(data: bytes) -> list[tuple[object, ...]] | str:
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except Exception as exc:  # what zipfile refuses, read_directory must leave to it
        return type(exc).__name__
    return [tuple(getattr(i, name) for name in _KNOWN_SLOTS) for i in infos]


@pytest.mark.parametrize("path", _zips(), ids=lambda p: p.name)
def test_a_directory_read_from_the_bytes_is_the_one_zipfile_reads(path: Path) -> None:
    data = path.read_bytes()
    rng = random.Random(path.name)
    variants = [data, data[:-1], b"prefix" + data, data + b"\0"]
    for _ in range(20):  # one bit flipped in the directory (at the end of the file)
        at = rng.randrange(max(0, len(data) - 1500), len(data))
        variants.append(data[:at] + bytes([data[at] ^ 1 << rng.randrange(8)]) + data[at + 1:])
    assert read_directory(data) is not None  # a plain zip: read from its bytes
    for variant in variants:
        mine = read_directory(variant)
        if mine is not None:
            assert [tuple(getattr(i, name) for name in _KNOWN_SLOTS)
                    for i in mine] == _entries(variant)
