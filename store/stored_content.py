"""How a stored object is typed and disposed: the one decision every upload to object
storage goes through (:meth:`store.objects.ObjectStore.put_bytes`, ``put_file``,
``put_asset``, ``put_asset_file``: convert results and their images, rendered files, archive
and folder assets, inline ``data:`` images, staged inputs) and the download proxy.

Why: a stored object is served by the storage host (a presigned or direct link), with the
``Content-Type`` and ``Content-Disposition`` stored with it and without ``nosniff``. An SVG,
HTML, XML or script served inline there runs its script on the storage origin. So:

- raster images (PNG, JPEG, GIF, WebP) and PDF keep their type and may be shown inline;
- passive types (plain text, Markdown, CSV, JSON, office files, BMP/TIFF/AVIF/ICO) keep
  their type and are shown inline too, unless their bytes are markup: then an attachment;
- everything else (SVG, HTML, XHTML, XML, XSL, JavaScript, CSS, anything unknown), and a
  raster or PDF type whose bytes are markup (an SVG named ``.png``), is stored as
  ``application/octet-stream`` with ``Content-Disposition: attachment``.

The type is decided from the declared type AND the name AND a sniff of the first bytes:
any one of them naming active content makes the object opaque.
"""

from __future__ import annotations

import mimetypes
import posixpath
import re
import urllib.parse
from dataclasses import dataclass

OPAQUE = "application/octet-stream"
SNIFF_BYTES = 4096  # how much of an object's start the sniff reads

# may be shown inline when their bytes are not markup
_INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"})
# never run script in a browser; kept with their type
_TEXTUAL = frozenset({"text/plain", "text/markdown", "text/csv", "application/json"})
_PASSIVE = _TEXTUAL | frozenset({
    "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    "image/bmp", "image/tiff", "image/avif", "image/x-icon", "image/vnd.microsoft.icon"})
_OFFICE_FAMILIES = ("application/vnd.openxmlformats-officedocument.",
                    "application/vnd.oasis.opendocument.")
_BINARY_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-",
                 b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
# an element or declaration a browser would parse as a document
_MARKUP = re.compile(
    rb"<\s*(?:svg|html|xhtml|script|body|head|iframe|frame|object|embed|meta|link|style|img"
    rb"|math|xsl|foreignobject|[a-z][\w.-]*:[a-z]|\?xml|!doctype|!entity|!\[cdata\[)",
    re.I)


@dataclass(frozen=True)
class StoredForm:
    """How one object is stored: its ``Content-Type`` and ``Content-Disposition`` (None:
    it may be shown inline), and whether it is opaque (``application/octet-stream``)."""

    content_type: str
    disposition: str | None

    @property
    def opaque(self) -> bool:
        return self.content_type == OPAQUE

    def key(self, key: str) -> str:
        """The object key to store under: an opaque object whose name has an extension gets
        ``.bin`` appended, because some S3 servers (SeaweedFS) replace
        ``application/octet-stream`` with a guess from the key's extension (``.svg`` ->
        ``image/svg+xml``). The attachment keeps the original file name."""
        base = key.rsplit("/", 1)[-1]
        ext = posixpath.splitext(base)[1].lower()
        if self.opaque and ext and ext != ".bin":
            return key + ".bin"
        return key


def content_type_for(filename: str) -> str:
    """MIME type from the file name (text types get ``charset=utf-8``); ``OPAQUE`` when the
    name says nothing."""
    lower = filename.lower()
    if lower.endswith((".md", ".markdown")):
        return "text/markdown; charset=utf-8"
    mime = mimetypes.guess_type(lower)[0] or OPAQUE
    if mime.startswith("text/") or mime in ("application/json", "image/svg+xml"):
        return f"{mime}; charset=utf-8"
    return mime


def attachment(filename: str) -> str:
    """``attachment`` with the file name (an ASCII fallback and the RFC 5987 UTF-8 form);
    plain ``attachment`` without one. Safe as a header value (ASCII, no quotes inside)."""
    name = "".join(c for c in filename if ord(c) >= 32 and ord(c) != 127).strip()
    if not name:
        return "attachment"
    fallback = "".join(c if c.isascii() and c not in '"\\' else "_" for c in name)
    quoted = urllib.parse.quote(name, safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quoted}"


def looks_like_markup(head: bytes) -> bool:
    """True when the first bytes of an object are a document a browser would parse as
    markup (HTML, SVG, XML: a leading ``<`` or a telling element early on), also in UTF-16
    and after a byte order mark. Known binary formats (PNG, JPEG, GIF, PDF, ZIP, OLE) are
    not."""
    if head.startswith(_BINARY_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return False
    text = head.replace(b"\x00", b"")  # UTF-16/32 markup reads as ASCII without its NULs
    for bom in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"):
        if text.startswith(bom):
            text = text[len(bom):]
    return text.lstrip().startswith(b"<") or _MARKUP.search(text) is not None


def _base(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _known(base: str) -> bool:
    """True for a type that cannot run script: shown inline or kept as it is."""
    return base in _INLINE or base in _PASSIVE or base.startswith(_OFFICE_FAMILIES)


def stored_form(name: str, declared: str | None, head: bytes) -> StoredForm:
    """How an object named ``name`` (its file name; a path's last part is used), declared
    as ``declared`` (None or ``application/octet-stream``: not declared), whose first bytes
    are ``head`` (up to :data:`SNIFF_BYTES`), is stored. See the module docstring."""
    base_name = name.replace("\\", "/").rsplit("/", 1)[-1]
    declared_base = _base(declared)
    named = content_type_for(base_name) if posixpath.splitext(base_name)[1] else OPAQUE
    claims = [t for t in (declared_base, _base(named)) if t and t != OPAQUE]
    opaque = StoredForm(OPAQUE, attachment(base_name))
    if not claims or not all(_known(t) for t in claims):
        return opaque  # active (SVG, HTML, XML, script...) or unknown
    content_type = declared.strip() if declared and declared_base != OPAQUE else named
    chosen = _base(content_type)
    if looks_like_markup(head[:SNIFF_BYTES]):
        if chosen in _TEXTUAL:
            return StoredForm(content_type, attachment(base_name))
        return opaque  # an "image" or office file whose bytes are SVG/HTML/XML
    return StoredForm(content_type, None)
