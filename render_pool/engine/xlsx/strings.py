"""The shared strings of an XLSX, decoded only for the cells that are read.

Why: a workbook keeps its text once, in a table of shared strings that the cells point into
by index. openpyxl reads the whole table when it opens the workbook, each entry as an
object, before any cell limit applies: a 10 MB XLSX with 1.5 million shared strings took
30 s to open, though the cell limit (``SHEET_MAX_CELLS``) keeps 50,000 cells at most. Here
the workbook is opened without the table (:class:`LazyStringsReader`) and the sheet parser
gets a :class:`SharedStrings` instead: at the first cell that needs one, a single scan notes
where each entry starts (a regular expression over the bytes, about half a second for 1.5
million entries, 8 bytes of memory each); then each cell read decodes its own entry only.
An index past the table's end reads as an empty cell.

The part has passed the zip-bomb and XML-bomb guards (``safe_zip.verified_zip``) before it
gets here; ``<`` cannot appear unescaped inside an entry's text, so counting ``<si`` tags
counts the entries (a comment or CDATA section holding one could only shift which text a
cell shows, as the file itself could).
"""

from __future__ import annotations

import html
import re
import zipfile
from array import array
from typing import Any

from openpyxl.reader.excel import (
    SHARED_STRINGS,
    ExcelReader,
)

_SI = re.compile(rb"<(?:[\w.-]+:)?si[\s/>]")
_SI_END = re.compile(rb"</(?:[\w.-]+:)?si\s*>")
_PHONETIC = re.compile(rb"<(?:[\w.-]+:)?rPh[\s>].*?</(?:[\w.-]+:)?rPh\s*>", re.S)
_TEXT = re.compile(rb"<(?:[\w.-]+:)?t(?:\s[^>]*)?>(.*?)</(?:[\w.-]+:)?t\s*>", re.S)


class LazyStringsReader(ExcelReader):  # type: ignore[misc]  # an untyped base
    """openpyxl's workbook reader, leaving the shared strings unread; ``strings_part`` names
    their part (empty when the workbook has none)."""

    strings_part = ""

    def read_strings(self) -> None:
        found = self.package.find(SHARED_STRINGS)
        self.strings_part = found.PartName[1:] if found is not None else ""
        self.shared_strings: list[str] = []


class SharedStrings:
    """The shared-string table as the sheet parser uses it (``table[int(value)]``), each
    entry decoded when asked for."""

    def __init__(self, package: zipfile.ZipFile, part: str) -> None:
        self.package = package
        self.part = part
        self.xml = b""
        self.starts: array[int] | None = None  # where each <si> begins, once scanned
        # entries decoded so far: each entry is decoded once, so all the decoding together
        # costs at most one pass over the part, however often cells repeat an entry
        self.decoded: dict[int, str] = {}

    def __getitem__(self, index: int) -> str:
        text = self.decoded.get(index)
        if text is not None:
            return text
        if self.starts is None:
            self._scan()
        assert self.starts is not None
        if not 0 <= index < len(self.starts):
            return ""
        stop = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.xml)
        text = self.decoded[index] = _entry(self.xml, self.starts[index], stop)
        return text

    def __len__(self) -> int:
        if self.starts is None:
            self._scan()
        return len(self.starts or ())

    def _scan(self) -> None:
        try:
            xml = self.package.read(self.part) if self.part else b""
        except KeyError:
            xml = b""
        if xml.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with its byte-order mark
            xml = xml.decode("utf-16").encode("utf-8")
        self.xml = xml
        self.starts = array("q", (m.start() for m in _SI.finditer(xml)))


def _entry(xml: bytes, start: int, stop: int) -> str:
    """The text of the ``<si>`` entry between ``start`` and ``stop`` (the next entry's
    start): rich-text runs joined, phonetic guides left out, as openpyxl reads them."""
    tag_end = xml.find(b">", start, stop)
    if tag_end < 0 or xml[tag_end - 1:tag_end] == b"/":  # <si/>: an empty entry
        return ""
    end = _SI_END.search(xml, tag_end, stop)
    body = _PHONETIC.sub(b"", xml[tag_end + 1:end.start() if end else stop])
    text = b"".join(_TEXT.findall(body)).decode("utf-8", "replace")
    # XML's character references; openpyxl's own treatment of the _x005F_ escape
    return html.unescape(text).replace("x005F_", "")


def open_workbook(source: Any) -> tuple[Any, str]:
    """(the read-only workbook, the part of its shared strings) of an XLSX file object."""
    reader = LazyStringsReader(source, read_only=True, data_only=True, keep_links=False)
    reader.read()
    return reader.wb, reader.strings_part
