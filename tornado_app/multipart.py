"""A streaming ``multipart/form-data`` parser (RFC 7578): a body is parsed as it arrives, chunk
by chunk, and each part's bytes are handed to a sink as soon as they are known not to hold the
delimiter. Nothing here waits for the whole body, and no pass is more than linear in its size.

Why: parsing a whole body once it is in (Tornado's ``parse_body_arguments``) joins, searches
and slices tens of megabytes on the event loop at once; four concurrent 47 MB uploads held
everyone else's requests for most of a second (issue 30). Here each chunk costs one
``bytes.find`` of the delimiter over that chunk (plus a carry-over of fewer than
``len(delimiter)`` bytes from the one before, so a delimiter split across chunks is found)
and a copy into the sink.

Bounds, each a ``MultipartError`` (the caller answers 40001): a boundary of at most
:data:`MAX_BOUNDARY` characters, at most :data:`MAX_PARTS` parts, a part's header block of at
most :data:`MAX_HEADER_BYTES` bytes in at most :data:`MAX_PART_HEADERS` header lines, UTF-8
headers, no NUL in a file name, and a final boundary. A part without a name or whose
disposition is not ``form-data`` is skipped, as Tornado skipped it.

No I/O and no Tornado here: :class:`MultipartParser` calls a :class:`PartSink`.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Protocol

MAX_BOUNDARY = 200  # RFC 2046 says 70; some clients are generous. Guards, not tunables.
MAX_PARTS = 256
MAX_HEADER_BYTES = 8 * 1024
MAX_PART_HEADERS = 16
MAX_PADDING = 64  # blanks a sender may put between a boundary and its line break

_PREAMBLE, _AFTER_DELIMITER, _HEADERS, _BODY, _END, _FAILED = range(6)


class MultipartError(ValueError):
    """The body is not well-formed multipart/form-data (the message is safe to show)."""


@dataclass(frozen=True)
class PartInfo:
    """A part's form name, its file name (None for a plain field) and its content type."""

    name: str
    filename: str | None
    content_type: str


class PartSink(Protocol):
    """Receives the parts in order: ``start`` (None: a part to skip), ``write``s, ``end``."""

    def start(self, part: PartInfo | None) -> None: ...

    def write(self, data: bytes) -> None: ...

    def end(self) -> None: ...


def boundary_of(content_type: str) -> bytes | None:
    """The boundary parameter of a ``multipart/form-data`` content type (quotes removed), or
    None when it has none; a MultipartError when it is not a usable boundary."""
    _, params = parse_header_value(content_type)
    value = params.get("boundary")
    if not value:
        return None
    if len(value) > MAX_BOUNDARY:
        raise MultipartError(f"the multipart boundary is longer than {MAX_BOUNDARY} characters")
    try:
        return value.encode("ascii")
    except UnicodeEncodeError:
        raise MultipartError("the multipart boundary is not ASCII") from None


# one parameter of a header value: up to the next ``;`` outside a quoted string; in a quoted
# string a backslash escapes the character after it, and an unclosed one runs to the end.
# Each alternative starts with a character no other can start with: linear, no backtracking.
_PARAM = re.compile(r'(?:[^;"]+|"(?:[^"\\]+|\\.)*\\?(?:"|\Z))*', re.S)


def _split_params(value: str) -> list[str]:
    """``value`` split at each ``;`` outside a quoted string (see :data:`_PARAM`). Why a
    pattern: walking the value character by character in Python cost about 4 us a header,
    two headers every upload (tests/test_multipart_params.py holds that walk as the
    reference both split alike)."""
    if '"' not in value:
        return value.split(";")
    items: list[str] = []
    pos, size = 0, len(value)
    while True:
        match = _PARAM.match(value, pos)
        assert match is not None  # the pattern matches the empty string
        end = match.end()
        items.append(value[pos:end])
        if end >= size:
            return items
        pos = end + 1  # past the ``;`` the parameter stopped at


def _unquote(value: str) -> str:
    """A parameter value without its quotes; ``\\"`` and ``\\\\`` unescaped (a lone backslash,
    as in a Windows path some browsers send, stays)."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].replace('\\\\', "\\").replace('\\"', '"')
    return value


def _extended(value: str) -> str | None:
    """An RFC 5987 ``charset'lang'percent-encoded`` value decoded, or None when it is not."""
    charset, sep, rest = value.partition("'")
    _, sep2, encoded = rest.partition("'")
    if not (sep and sep2):
        return None
    try:
        return urllib.parse.unquote(encoded, encoding=charset or "utf-8", errors="strict")
    except (LookupError, UnicodeDecodeError):
        return None


def parse_header_value(value: str) -> tuple[str, dict[str, str]]:
    """``form-data; name="a"; filename="b"`` as ("form-data", {"name": "a", ...}): names
    lower-cased, quotes removed, a ``name*`` (RFC 5987) preferred to ``name``."""
    head, *rest = _split_params(value)
    params: dict[str, str] = {}
    extended: dict[str, str] = {}
    for item in rest:
        key, sep, raw = item.partition("=")
        key = key.strip().lower()
        if not sep or not key:
            continue
        if key.endswith("*"):
            decoded = _extended(_unquote(raw))
            if decoded is not None:
                extended[key[:-1]] = decoded
        else:
            params[key] = _unquote(raw)
    params.update(extended)
    return head.strip().lower(), params


def _base_name(filename: str) -> str:
    """The last path segment of a file name a client sent (``C:\\x\\a.pdf`` -> ``a.pdf``)."""
    return filename.replace("\\", "/").rsplit("/", 1)[-1]


def parse_part_headers(block: bytes) -> PartInfo | None:
    """A part's header block (without its blank line) as a PartInfo; None for a part to skip
    (no name, or not ``form-data``)."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        raise MultipartError("a part's headers are not UTF-8 (its field or file name?)") from None
    headers: list[list[str]] = []
    for line in text.split("\r\n") if text else []:
        if line[:1] in (" ", "\t") and headers:  # an obsolete folded line continues the last
            headers[-1][1] += " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise MultipartError("a part has a malformed header line")
        headers.append([name.strip().lower(), value.strip()])
        if len(headers) > MAX_PART_HEADERS:
            raise MultipartError(f"a part has more than {MAX_PART_HEADERS} header lines")
    found = dict(reversed([(k, v) for k, v in headers]))  # the first of a repeated header
    disposition, params = parse_header_value(found.get("content-disposition", ""))
    name = params.get("name", "")
    if disposition != "form-data" or not name:
        return None
    filename = params.get("filename")
    if filename and "\x00" in filename:
        raise MultipartError(f"the file name of field {name!r} contains a NUL character")
    return PartInfo(name=name, filename=_base_name(filename) if filename else None,
                    content_type=found.get("content-type", "application/octet-stream"))


class MultipartParser:
    """Feeds one body's chunks to a :class:`PartSink`; see the module docstring.

    ``feed`` raises MultipartError at the first fault (the parser then ignores the rest);
    ``close`` raises it when the body ended before the final boundary."""

    def __init__(self, boundary: bytes, sink: PartSink) -> None:
        if not boundary:
            raise MultipartError("the multipart boundary is empty")
        self._delimiter = b"\r\n--" + boundary
        self._sink = sink
        self._state = _PREAMBLE
        # the body may open with the delimiter itself: read as if a line break came first
        self._carry = b"\r\n"
        self._head = bytearray()
        self._padding = 0
        self.parts = 0

    @property
    def finished(self) -> bool:
        """True once the final boundary was read."""
        return self._state == _END

    def feed(self, data: bytes) -> None:
        if self._state in (_END, _FAILED):
            return  # the epilogue, or the rest of a body already refused
        buf = self._carry + data if self._carry else data
        self._carry = b""
        try:
            self._parse(buf)
        except MultipartError:
            self._state = _FAILED
            raise

    def close(self) -> None:
        """The body ended: a MultipartError unless its final boundary was read."""
        if self._state == _END:
            return
        if self._state == _FAILED:
            raise MultipartError("malformed multipart body")
        self._state = _FAILED
        if self.parts == 0:
            raise MultipartError("no part starts with the boundary the Content-Type names")
        raise MultipartError("the body ends without its final boundary")

    def _parse(self, buf: bytes) -> None:
        pos, size = 0, len(buf)
        while True:
            if self._state in (_PREAMBLE, _BODY):
                pos = self._scan(buf, pos)
                if pos < 0:
                    return
            elif self._state == _AFTER_DELIMITER:
                pos = self._after_delimiter(buf, pos)
                if pos < 0:
                    return
            elif self._state == _HEADERS:
                pos = self._headers(buf, pos)
                if pos < 0:
                    return
            else:  # _END: whatever follows the final boundary is ignored
                return
            if pos >= size and self._state != _AFTER_DELIMITER:
                return

    def _scan(self, buf: bytes, pos: int) -> int:
        """Preamble or part body: up to the next delimiter (its bytes go to the sink in a
        body). The position after it, or -1 with the undecided tail kept for the next chunk."""
        found = buf.find(self._delimiter, pos)
        in_body = self._state == _BODY
        if found < 0:
            keep = max(pos, len(buf) - (len(self._delimiter) - 1))
            if in_body and keep > pos:
                self._sink.write(buf[pos:keep])
            self._carry = buf[keep:]
            return -1
        if in_body:
            if found > pos:
                self._sink.write(buf[pos:found])
            self._sink.end()
        self._state = _AFTER_DELIMITER
        self._padding = 0
        return found + len(self._delimiter)

    def _after_delimiter(self, buf: bytes, pos: int) -> int:
        """``--`` ends the body, a line break (after optional blanks) opens a part."""
        size = len(buf)
        while pos < size and buf[pos] in b" \t":
            pos += 1
            self._padding += 1
            if self._padding > MAX_PADDING:
                raise MultipartError("a boundary is followed by too many blanks")
        if size - pos < 2:
            self._carry = buf[pos:]
            return -1
        pair = buf[pos:pos + 2]
        if pair == b"--":
            self._state = _END
            return size
        if pair != b"\r\n":
            raise MultipartError("a boundary is followed by neither a line break nor --")
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise MultipartError(f"the form has more than {MAX_PARTS} parts")
        self._state = _HEADERS
        self._head = bytearray(b"\r\n")  # so a part without headers ends at offset 0
        return pos + 2

    def _headers(self, buf: bytes, pos: int) -> int:
        """A part's header block, up to its blank line (bounded by MAX_HEADER_BYTES)."""
        before = len(self._head)
        room = MAX_HEADER_BYTES + 6 - before  # the leading and the final two line breaks
        self._head += buf[pos:pos + room]
        end = self._head.find(b"\r\n\r\n", max(0, before - 3))
        if end < 0:
            if len(self._head) >= MAX_HEADER_BYTES + 6:
                raise MultipartError(f"a part's headers are longer than {MAX_HEADER_BYTES} "
                                     "bytes")
            return -1
        block = bytes(self._head[2:end])
        self._head = bytearray()
        self._sink.start(parse_part_headers(block))
        self._state = _BODY
        return pos + (end + 4 - before)
