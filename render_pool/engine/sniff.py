"""The input kind of an upload from its bytes, never from its file name.

Why one module: the same bytes must always take the same reader (a ``.doc`` named ``.docx``
is read as DOC, a PDF named ``.docx`` as PDF), and protected files of every format must
answer the same way (40003). Containers are told apart by what they hold: the parts of an
OOXML zip, the ``mimetype`` entry of an OpenDocument or EPUB zip, the stream names of an
OLE compound file (legacy Office, or an encrypted OOXML package).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile

from render_pool.engine.common.ole import root_names
from render_pool.engine.common.text_decode import decode_text
from render_pool.engine.common.zipdir import read_directory
from render_pool.engine.common.zipread import ZIP_DAMAGE, entry_chunks
from render_pool.errors import CorruptDocument, UnsupportedFormat

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

_ODF_KINDS = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/epub+zip": "epub",
}
_OOXML_DIRS = (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx"))
# the usual main part of each OOXML kind: with it (or a kind's folder beside _rels/.rels) a
# zip is that kind of package, damaged when it cannot be read as one
_OOXML_MAIN_PARTS = (("word/document.xml", "docx"), ("ppt/presentation.xml", "pptx"),
                     ("xl/workbook.xml", "xlsx"))
_LOCAL_ENTRIES = 2000  # zip entries looked at to tell a damaged Office package
# what a zip directory cut short or overwritten at its end raises (the rest of ZIP_DAMAGE:
# a directory that reads but asks for what cannot be read, say a zip version from the future)
_CUT_SHORT = (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError)
_OLE_STREAMS = (("WordDocument", "doc"), ("PowerPoint Document", "ppt"), ("Workbook", "xls"),
                ("Book", "xls"))
# a comment may not run past its own "-->": ``.*?`` there made a failed match exponential
_HTML_START = re.compile(rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--(?:(?!-->).)*-->\s*)*"
                         rb"<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)
# a fragment: starts with a tag and holds common HTML elements
# an HTML document whose markup starts after a script or style block (a "preamble")
_PREAMBLE = re.compile(rb"\s*<(?:script|style|!--|meta|link|noscript|title)\b", re.I)
_HTML_DOC = re.compile(rb"<(?:!doctype\s+html|html|head|body)\b", re.I)
_HTML_TAGS = re.compile(rb"<(?:div|p|h[1-6]|table|ul|ol|article|section|main|title|meta|br)"
                        rb"\b[^>]*>", re.I)
# images read by OCR (PNG, JPEG, TIFF, WebP): kinds of their own, see _IMAGE_KINDS
_IMAGE_KINDS = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpeg"), (b"II*\x00", "tiff"),
                (b"MM\x00*", "tiff"))
_MAGIC_NAMES = ((b"GIF8", "a GIF image"), (b"\x1f\x8b", "a gzip file"),
                (b"Rar!", "a RAR archive"), (b"7z\xbc\xaf", "a 7z archive"))
SUPPORTED = ("PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, DOC, XLS, PPT, RTF, EPUB, HTML, CSV and "
             "images (PNG, JPEG, TIFF, WebP)")


def _utf16(name: str) -> bytes:
    return name.encode("utf-16-le")


def _ole_kind(data: bytes) -> str:
    """DOC/XLS/PPT from the stream names in an OLE file; protected files are 40003.

    The main stream is looked for among the root's own entries (an embedded workbook's
    ``Book`` stream sits in a storage below, so a slide show holding a chart stays a slide
    show). Only when the directory cannot be walked is its name looked for in the first
    directory sector and then anywhere, the earliest winning."""
    if _utf16("EncryptionInfo") in data or _utf16("EncryptedPackage") in data:
        raise CorruptDocument("The document is password-protected (encrypted); remove the "
                              "password and retry.")
    names = {name.lower() for name in root_names(data) or []}  # OLE names ignore case
    if names:
        for stream, kind in _OLE_STREAMS:
            if stream.lower() in names:
                return kind
        if "pp40" in names:  # PowerPoint 4 (Mac): LibreOffice opens it as a PPT
            return "ppt"
    shift = int.from_bytes(data[0x1E:0x20], "little")
    first = int.from_bytes(data[0x30:0x34], "little")
    size = 1 << shift if 7 <= shift <= 16 else 512
    start = (first + 1) * size
    windows = [data[start:start + size]] if start < len(data) else []
    for window in [*windows, data]:
        found = [(window.find(_utf16(s) + b"\x00\x00"), kind) for s, kind in _OLE_STREAMS]
        found = [f for f in found if f[0] >= 0]
        if found:
            return min(found)[1]
    raise UnsupportedFormat("This is an OLE file that holds no Word, Excel or PowerPoint "
                            f"document; supported: {SUPPORTED}.")


# the first record of an Excel 2-4 worksheet or workbook saved outside an OLE file: a BOF
# (BIFF2 0x0009, BIFF3 0x0209, BIFF4 0x0409, BIFF5+ 0x0809), its length, and its sheet type
_BIFF_BOF = (0x0009, 0x0209, 0x0409, 0x0809)
_BIFF_TYPES = (0x0005, 0x0006, 0x0010, 0x0020, 0x0040, 0x0100)


def _is_biff(data: bytes) -> bool:
    """Whether ``data`` is a bare BIFF stream (Excel 2.x to 4.0 saved it as the whole file)."""
    if len(data) < 8:
        return False
    record, length = int.from_bytes(data[:2], "little"), int.from_bytes(data[2:4], "little")
    if record not in _BIFF_BOF or length not in (4, 6, 8, 16):
        return False
    kind = int.from_bytes(data[6:8], "little")  # after the version
    return kind in _BIFF_TYPES


def _office_kind(names: list[str]) -> str | None:
    """The OOXML kind (``docx``, ``pptx``, ``xlsx``) whose parts a package's entry names hold:
    its main part, or a folder of its own beside the package relationships."""
    present = set(names)
    for part, kind in _OOXML_MAIN_PARTS:
        if part in present:
            return kind
    if "_rels/.rels" in present:
        for prefix, kind in _OOXML_DIRS:
            if any(n.startswith(prefix) for n in names):
                return kind
    return None


def _local_entries(data: bytes) -> list[tuple[str, bytes]]:
    """(name, first bytes of the data) of the local file headers found in ``data``: what a
    zip cut short still tells, its directory at the end being gone. Bounded (the first
    :data:`_LOCAL_ENTRIES` headers); a stray signature inside compressed data only adds a
    name nobody looks for."""
    found: list[tuple[str, bytes]] = []
    pos = data.find(b"PK\x03\x04")
    while pos >= 0 and len(found) < _LOCAL_ENTRIES and pos + 30 <= len(data):
        name_len = int.from_bytes(data[pos + 26:pos + 28], "little")
        extra_len = int.from_bytes(data[pos + 28:pos + 30], "little")
        start = pos + 30 + name_len + extra_len
        found.append((data[pos + 30:pos + 30 + name_len].decode("utf-8", "replace"),
                      data[start:start + 100]))
        pos = data.find(b"PK\x03\x04", pos + 30)
    return found


def _damaged(kind: str, what: str) -> CorruptDocument:
    return CorruptDocument(f"This {kind.upper()} file is damaged: {what}.")


def _unreadable_directory(data: bytes, exc: Exception) -> CorruptDocument:
    """40003 for a zip whose directory cannot be read (``exc``, one of ZIP_DAMAGE): named
    as the Office file its first entries say it was (a DOCX cut short), else as a corrupt
    zip."""
    entries = _local_entries(data)
    kind = _office_kind([name for name, _ in entries])
    if kind is None and entries and entries[0][0] == "mimetype":  # stored, uncompressed
        kind = _ODF_KINDS.get(entries[0][1].decode("ascii", "replace").strip()
                              .removesuffix("-template"))
    if not isinstance(exc, _CUT_SHORT):
        what = f"its zip directory is damaged ({exc})"
        return (CorruptDocument(f"The file is a corrupt zip: {what}.") if kind is None
                else _damaged(kind, what))
    if kind is None:
        return CorruptDocument("The file is a corrupt zip: its directory cannot be read.")
    return _damaged(kind, "it is cut short or broken at its end (the zip directory, "
                          "which lists its parts, is missing)")


def _damaged_start(data: bytes) -> None:
    """A file that does not start as a zip but ends with a zip directory naming the parts of
    an Office package is that package with its start overwritten: 40003, naming the parts
    that cannot be read. Anything else passes (None)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()[:_LOCAL_ENTRIES]
    except ZIP_DAMAGE:
        return
    kind = _office_kind([i.filename for i in infos])
    if kind is None:
        return
    unreadable = []
    for info in infos:
        try:  # opening reads and checks the entry's local header, not its data
            zf.open(info).close()
        except ZIP_DAMAGE:
            unreadable.append(info.filename)
    where = (f"its start is overwritten, so its part {unreadable[0]} cannot be read"
             if len(unreadable) == 1 else
             f"its start is overwritten, so its parts {', '.join(unreadable[:3])} cannot be "
             "read" if unreadable else "it does not start as a zip file does")
    raise _damaged(kind, where)


def _zip_names(data: bytes) -> list[str]:
    """The entry names of the zip ``data``, in directory order: a plain zip's read from its
    bytes (:mod:`render_pool.engine.common.zipdir`, the same names :mod:`zipfile` gives),
    any other by :mod:`zipfile`; a directory that cannot be read is 40003."""
    infos = read_directory(data)
    if infos is not None:
        return [info.filename for info in infos]
    try:
        return zipfile.ZipFile(io.BytesIO(data)).namelist()
    except ZIP_DAMAGE as exc:
        raise _unreadable_directory(data, exc) from None


def _zip_kind(data: bytes) -> str:
    names = _zip_names(data)
    if "mimetype" in names:
        try:  # an OpenDocument or EPUB: its entry is read through zipfile
            zf = zipfile.ZipFile(io.BytesIO(data))
        except ZIP_DAMAGE as exc:
            raise _unreadable_directory(data, exc) from None
        info = zf.getinfo("mimetype")
        if info.file_size < 200:
            try:  # in bounded steps (zipfile's read unpacks bzip2 and LZMA in one call)
                raw = b"".join(entry_chunks(zf, data, info))
            except ZIP_DAMAGE as exc:
                raise CorruptDocument(f"The file is a corrupt zip: {exc}") from None
            mime = raw.decode("ascii", "replace").strip()
            kind = _ODF_KINDS.get(mime.removesuffix("-template"))
            if kind:
                return kind
    if "META-INF/container.xml" in names and any(n.lower().endswith(".opf") for n in names):
        return "epub"  # an EPUB without its mimetype entry: its container names the book
    if "[Content_Types].xml" in names:
        for prefix, kind in _OOXML_DIRS:
            if any(n.startswith(prefix) for n in names):
                return kind
        raise CorruptDocument("The Office package holds no document, presentation or "
                              "workbook part (damaged?).")
    kind = _office_kind(names)
    if kind is not None:  # the parts of a package, without the list of their types
        raise _damaged(kind, "its part [Content_Types].xml is missing")
    raise UnsupportedFormat(f"This zip archive is not a document; supported: {SUPPORTED}.")


def _decode_text(data: bytes) -> str | None:
    """The text of the head of ``data``, or None for binary data (NUL bytes outside a
    UTF-16 file)."""
    head = data[: 256 * 1024]
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    text, _ = decode_text(head)
    return text


def sniff_dialect(lines: list[str]) -> type[csv.Dialect] | None:
    """The CSV dialect of the first lines, or None. The sample is capped (20 lines of at most
    1,000 characters, 4 KiB): ``csv.Sniffer`` is quadratic in its sample's length. When the
    sniffer finds none (lines longer than the sample, quoted fields holding the delimiter),
    the delimiter that splits most lines into the same number of fields is taken."""
    sample = "\n".join(line[:1000] for line in lines[:20])[:4096]
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return _counted_dialect(lines[:50])


class _Delimited(csv.excel):
    """The excel dialect with another delimiter (set per sniffed file)."""


def _counted_dialect(lines: list[str]) -> type[csv.Dialect] | None:
    """The excel dialect with the delimiter (``,`` ``;`` tab ``|``) that splits most lines
    of ``lines`` into the same number (2 or more) of fields; None when none does for 80%.
    Linear in the lines' length, whatever it is."""
    best: tuple[float, str] | None = None
    for delimiter in ",;\t|":
        widths = [len(row) for row in csv.reader(lines, delimiter=delimiter)]
        if len(widths) < 2:
            continue
        common = max(set(widths), key=widths.count)
        share = widths.count(common) / len(widths)
        if common >= 2 and share >= 0.8 and (best is None or share > best[0]):
            best = (share, delimiter)
    if best is None:
        return None
    return type("Delimited", (_Delimited,), {"delimiter": best[1]})


def looks_like_csv(text: str) -> bool:
    """Two or more columns, split alike on most of the first lines by a sniffed dialect;
    text that opens like JSON, code or markup is not a table."""
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()]
    if len(lines) < 2 or text.lstrip()[:1] in ("[", "{", "(", "<"):  # JSON, code, markup
        return False
    dialect = sniff_dialect(lines)
    if dialect is None:
        return False
    widths = [len(row) for row in csv.reader(lines[:-1] or lines, dialect)]
    common = max(set(widths), key=widths.count)
    return common >= 2 and widths.count(common) >= 0.8 * len(widths)


def _html_after_preamble(text: str) -> bool:
    """Whether markup that opens with a tag (a ``<script>`` or ``<style>`` block, say) holds
    an HTML document's ``<html>``, ``<head>`` or ``<body>`` further on, however long
    what comes first: the head read is 256 KiB."""
    return _HTML_DOC.search(text.encode("utf-8", "replace")) is not None


def detect_kind(data: bytes) -> str | None:
    """The kind of ``data`` (``pdf``, ``docx``, ``pptx``, ``xlsx``, ``odt``, ``ods``, ``odp``,
    ``epub``, ``doc``, ``xls``, ``ppt``, ``rtf``, ``html``, ``csv``, and the images ``png``,
    ``jpeg``, ``tiff``, ``webp``) or None when unknown.

    Raises CorruptDocument (40003) for empty, corrupt-container and password-protected
    inputs, UnsupportedFormat (40002) for files that say what else they are."""
    if not data:
        raise CorruptDocument("The file is empty.")
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        return _zip_kind(data)
    if data.startswith(OLE_MAGIC):
        return _ole_kind(data)
    if _is_biff(data):
        return "xls"
    if data.lstrip()[:5] == b"{\\rtf":
        return "rtf"
    for magic, kind in _IMAGE_KINDS:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    for magic, name in _MAGIC_NAMES:
        if data.startswith(magic):
            raise UnsupportedFormat(f"This file is {name}; supported: {SUPPORTED}.")
    if b"PK\x05\x06" in data[-(0xFFFF + 22):]:  # a zip directory's end: a damaged package?
        _damaged_start(data)
    text = _decode_text(data)
    if text is None:
        return None
    head = text.lstrip("\ufeff").encode("utf-8", "replace")[:4096]
    if _HTML_START.match(head) or (head.lstrip().startswith(b"<") and _HTML_TAGS.search(head)):
        return "html"
    if _PREAMBLE.match(head) and _html_after_preamble(text):
        return "html"
    if looks_like_csv(text):
        return "csv"
    return None
