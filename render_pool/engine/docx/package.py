"""Safe access to the parts of a DOCX package (an OPC zip).

Why a module of its own: every byte of an uploaded DOCX is hostile until proven otherwise.
This module sniffs the format (PDF, OLE/encrypted, empty), caps the unpacked size both from
the zip directory and while actually reading (headers can lie), parses XML without entity
expansion or network access, maps Strict OOXML namespaces to Transitional ones so the rest
of the reader sees one vocabulary, and resolves relationships between parts.
"""

from __future__ import annotations

import hashlib
import posixpath
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from lxml import etree

from render_pool.engine.common.xml_guard import check_xml
from render_pool.engine.common.zipread import BoundedZip, ZipLimits
from render_pool.errors import CorruptDocument, UnsupportedFormat

# ---------------------------------------------------------------- limits
DOCX_LIMITS = ZipLimits(max_entries=5000, max_total=200 * 1024 * 1024,
                        max_entry=100 * 1024 * 1024, max_ratio=100, ratio_min_size=1024 * 1024)

# ---------------------------------------------------------------- namespaces
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
REL_TYPES = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
CORE_PROPS_REL = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"

NS = {
    "w": W,
    "r": R,
    "m": M,
    "a": A,
    "pic": PIC,
    "wp": WP,
    "v": "urn:schemas-microsoft-com:vml",
    "o": "urn:schemas-microsoft-com:office:office",
    "w14": "http://schemas.microsoft.com/office/word/2010/wordml",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wps": "http://schemas.microsoft.com/office/word/2010/wordprocessingShape",
    "wpg": "http://schemas.microsoft.com/office/word/2010/wordprocessingGroup",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
}

# Strict OOXML (ISO 29500 strict) -> Transitional, applied to the raw bytes before parsing.
_STRICT_MAP: list[tuple[bytes, bytes]] = [
    (b"http://purl.oclc.org/ooxml/wordprocessingml/main", W.encode()),
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships/",
     REL_TYPES.encode()),
    (b"http://purl.oclc.org/ooxml/officeDocument/relationships", R.encode()),
    (b"http://purl.oclc.org/ooxml/officeDocument/math", M.encode()),
    (b"http://purl.oclc.org/ooxml/officeDocument/sharedTypes",
     b"http://schemas.openxmlformats.org/officeDocument/2006/sharedTypes"),
    (b"http://purl.oclc.org/ooxml/officeDocument/customXml",
     b"http://schemas.openxmlformats.org/officeDocument/2006/customXml"),
    (b"http://purl.oclc.org/ooxml/officeDocument/extendedProperties",
     b"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"),
    (b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing", WP.encode()),
    (b"http://purl.oclc.org/ooxml/drawingml/", b"http://schemas.openxmlformats.org/drawingml/2006/"),
]
# Strict relationship type names that differ from Transitional beyond the prefix.
_STRICT_REL_RENAMES = {
    REL_TYPES + "extendedProperties": REL_TYPES + "extended-properties",
}

_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, huge_tree=False, remove_blank_text=False,
    load_dtd=False,
)

_MIME_BY_EXT = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg",
    "gif": "image/gif", "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff",
    "svg": "image/svg+xml", "webp": "image/webp", "emf": "image/emf", "wmf": "image/wmf",
    "ico": "image/x-icon", "jfif": "image/jpeg",
}


def mime_for(name: str, declared: str | None = None) -> str:
    """MIME type of a part, by extension first (content types are often generic)."""
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in _MIME_BY_EXT:
        return _MIME_BY_EXT[ext]
    return declared or "application/octet-stream"


def sniff(data: bytes) -> None:
    """Refuse inputs that are obviously not a DOCX, with a message that says what they are."""
    if not data:
        raise CorruptDocument("The file is empty (0 bytes), not a DOCX document.")
    head = data[:8]
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        if "EncryptionInfo".encode("utf-16-le") in data or "EncryptedPackage".encode(
            "utf-16-le"
        ) in data:
            raise CorruptDocument(
                "The DOCX document is encrypted (password-protected); "
                "remove the password and retry."
            )
        raise UnsupportedFormat(
            "This is a legacy binary Office file (OLE, e.g. Word 97-2003 .doc), not DOCX; "
            "save it as .docx first."
        )
    if head.startswith(b"%PDF"):
        raise UnsupportedFormat("This file is a PDF, not a DOCX document (wrong extension?).")
    if head.lstrip().startswith(b"{\\rtf"):
        raise UnsupportedFormat("This file is RTF, not a DOCX document.")
    for magic, kind in ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
                        (b"GIF8", "a GIF image"), (b"\x1f\x8b", "a gzip file"),
                        (b"Rar!", "a RAR archive"), (b"7z\xbc\xaf", "a 7z archive")):
        if head.startswith(magic):
            raise UnsupportedFormat(f"This file is {kind}, not a DOCX document.")
    if not head.startswith(b"PK"):
        raise CorruptDocument("Not a DOCX document: the file is not a zip package.")


def parse_xml(data: bytes, name: str = "") -> etree._Element:
    """Parse one XML part safely, mapping Strict namespaces: first the XML guard
    (:func:`render_pool.engine.common.xml_guard.check_xml`, 40003 for entity declarations, DTD
    subsets, external DTDs and undeclared entities, in whatever encoding the part is
    written), then a parser that expands no entity and loads nothing."""
    check_xml(data, f"A part of the DOCX package ({name or 'XML'})", strict=True)
    if b"purl.oclc.org/ooxml" in data:
        for old, new in _STRICT_MAP:
            data = data.replace(old, new)
    try:
        return etree.fromstring(data, parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise CorruptDocument(f"Malformed XML in the DOCX package: {exc}") from None


@dataclass(frozen=True)
class Rel:
    """One relationship of a part: its type, resolved target and whether it leaves the package
    (read only: the relationships of a part are shared by every package that holds the same
    bytes, see :meth:`Package.rels`)."""

    rid: str
    type: str
    target: str
    external: bool


T = TypeVar("T")
CACHE_ENTRIES = 32  # per cache of :meth:`Package.built`; a worker meets few templates
# the largest part (packed) a cache of Package.built keeps, with its packed bytes
CACHED_PART_MAX = 256 * 1024
# a cache of Package.built holds, by this key, the packed bytes a value was built from (b""
# when the key is a digest of the bytes themselves) and the value
CacheKey = tuple[object, ...]
# a part's relationships by its stored form and the folder they resolve from
_RELS: dict[CacheKey, tuple[bytes, dict[str, Rel]]] = {}


def _read_rels(root: etree._Element | None, folder: str) -> dict[str, Rel]:
    """The relationships of a ``.rels`` part (None: absent) keyed by id, their internal
    targets resolved from ``folder`` to part names."""
    out: dict[str, Rel] = {}
    if root is None:
        return out
    for el in root:
        tag = el.tag  # the local name by string work: QName builds an object a call
        if not isinstance(tag, str) or tag.rpartition("}")[2] != "Relationship":
            continue
        rtype = el.get("Type", "")
        rtype = _STRICT_REL_RENAMES.get(rtype, rtype)
        target = el.get("Target", "")
        external = el.get("TargetMode", "") == "External"
        if not external:
            if target.startswith("/"):
                target = target.lstrip("/")
            else:
                target = posixpath.normpath(posixpath.join(folder, target))
        rid = el.get("Id", "")
        out[rid] = Rel(rid, rtype, target, external)
    return out


class Package:
    """A DOCX zip with a size budget; every read goes through :meth:`read`."""

    def __init__(self, data: bytes, limits: ZipLimits | None = None) -> None:
        sniff(data)
        self.zip = BoundedZip(data, limits or DOCX_LIMITS, "The DOCX package")
        self._infos: dict[str, zipfile.ZipInfo] = {}
        for info in self.zip.infos:
            self._infos.setdefault(info.filename.replace("\\", "/").lstrip("/").lower(), info)
        self._xml_cache: dict[str, etree._Element | None] = {}
        self._rels_cache: dict[str, dict[str, Rel]] = {}
        self._content_types: tuple[dict[str, str], dict[str, str]] | None = None
        self.main_part = self._find_main_part()

    # ------------------------------------------------------------ raw access
    def has(self, name: str) -> bool:
        """Whether the package holds a part (case-insensitive, as OPC says)."""
        return name.lstrip("/").lower() in self._infos

    def names(self) -> list[str]:
        """All part names."""
        return [i.filename for i in self._infos.values()]

    def read(self, name: str) -> bytes:
        """Read a part through a size-capped stream (the zip header's size is not trusted)."""
        info = self._infos.get(name.lstrip("/").lower())
        if info is None:
            raise KeyError(name)
        return self.zip.read(info)

    def stored(self, name: str) -> tuple[tuple[int, int, int], memoryview] | None:
        """Part ``name`` as stored in the zip, taken without unpacking it
        (:meth:`BoundedZip.stored`): its method, CRC and size, and its packed bytes. None
        when the part is absent or is not an ordinary entry."""
        info = self._infos.get(name.lstrip("/").lower())
        return None if info is None else self.zip.stored(info)

    def size(self, name: str) -> int:
        """The unpacked size the zip directory declares for part ``name`` (KeyError when
        absent); :meth:`read` may find otherwise."""
        info = self._infos.get(name.lstrip("/").lower())
        if info is None:
            raise KeyError(name)
        return info.file_size

    def read_known(self, name: str) -> bool:
        """Count a read of part ``name`` whose bytes a cache knows by :meth:`stored`
        (:meth:`BoundedZip.read_known`): True when :meth:`read` would succeed, its bytes
        counted against the budget; False when it must be read to say what is wrong."""
        info = self._infos.get(name.lstrip("/").lower())
        return info is not None and self.zip.read_known(info)

    def xml(self, name: str) -> etree._Element | None:
        """Parsed XML of a part, or None when the part is absent."""
        key = name.lstrip("/").lower()
        if key not in self._xml_cache:
            self._xml_cache[key] = parse_xml(self.read(name), name) if self.has(name) else None
        return self._xml_cache[key]

    def is_parsed(self, name: str) -> bool:
        """Whether :meth:`xml` has parsed (or looked for) the part already."""
        return name.lstrip("/").lower() in self._xml_cache

    def xml_from(self, name: str, data: bytes) -> etree._Element:
        """Parse ``data``, the bytes :meth:`read` gave for part ``name``, and keep the tree
        for :meth:`xml` (for callers that needed the bytes too: read once, parse once)."""
        root = parse_xml(data, name)
        self._xml_cache[name.lstrip("/").lower()] = root
        return root

    # ------------------------------------------------------------ per-worker caches
    def built(self, name: str | None, build: Callable[[etree._Element | None], T],
              cache: dict[CacheKey, tuple[bytes, T]], salt: bytes = b"",
              keep: Callable[[T], bool] | None = None) -> T:
        """``build`` of the parsed part ``name`` (None when absent), from ``cache`` when the
        same bytes (with the same ``salt``: what else the value depends on) were built
        before; a value is kept only when ``keep`` says so (all when None). Values in
        ``cache`` are shared by every package of those bytes: read only.

        A part is known by its stored form (:meth:`stored`): its method, CRC and size key
        the cache, and its packed bytes are compared with those the value was built from,
        so a part seen before is neither unpacked nor hashed (a Word style sheet is 350 KB,
        12 KB packed), and a value is only ever used for the very bytes it was built from,
        which passed the XML guard when they were first parsed. Its read is still counted
        against the budget (:meth:`read_known`), and a part whose read would fail is read,
        to fail as it would have. A part that is not an ordinary zip entry is keyed by a
        digest of its bytes; one packed larger than :data:`CACHED_PART_MAX` is not kept."""
        if not name or not self.has(name):
            return build(None)
        if self.is_parsed(name):  # already read for another purpose: no second read
            return build(self.xml(name))
        form = self.stored(name)
        key: CacheKey | None = None
        if form is not None and len(form[1]) <= CACHED_PART_MAX:
            key = (form[0], salt)
            found = cache.get(key)
            if found is not None and found[0] == bytes(form[1]) and self.read_known(name):
                return found[1]
        data = self.read(name)
        proof = b""
        if key is None or len(data) != self.size(name):  # not the bytes the form promises
            key = (hashlib.blake2b(data + salt, digest_size=20).digest(),)
            found = cache.get(key)
            if found is not None:
                return found[1]
            if len(data) > CACHED_PART_MAX:
                key = None
        elif form is not None:
            proof = bytes(form[1])
        value = build(self.xml_from(name, data))
        if key is not None and (keep is None or keep(value)):
            if len(cache) >= CACHE_ENTRIES:
                cache.clear()
            cache[key] = (proof, value)
        return value

    # ------------------------------------------------------------ relationships
    def rels(self, part: str) -> dict[str, Rel]:
        """Relationships of ``part`` keyed by id, targets resolved to part names (read
        only). Kept per worker by the bytes of the ``.rels`` part and the folder its targets
        resolve from (:meth:`built`): documents from one source carry the same package
        and main part relationships, and reading them costs more than a short body."""
        part = part.lstrip("/")
        found = self._rels_cache.get(part)
        if found is not None:
            return found
        folder, base = posixpath.split(part)
        rels_name = posixpath.join(folder, "_rels", base + ".rels")

        def build(root: etree._Element | None) -> dict[str, Rel]:
            return _read_rels(root, folder)

        out = self.built(rels_name, build, _RELS, salt=folder.encode())
        self._rels_cache[part] = out
        return out

    def rel_by_type(self, part: str, suffix: str) -> list[Rel]:
        """Relationships of ``part`` whose type ends with ``/suffix``."""
        return [r for r in self.rels(part).values() if r.type.endswith("/" + suffix)]

    def content_type(self, name: str) -> str | None:
        """Declared content type of a part from [Content_Types].xml."""
        if self._content_types is None:
            defaults: dict[str, str] = {}
            overrides: dict[str, str] = {}
            root = self.xml("[Content_Types].xml")
            if root is not None:
                for el in root:
                    tag = el.tag
                    if not isinstance(tag, str):
                        continue
                    local = tag.rpartition("}")[2]  # as rels(): no QName object per element
                    if local == "Default":
                        defaults[el.get("Extension", "").lower()] = el.get("ContentType", "")
                    elif local == "Override":
                        overrides[el.get("PartName", "").lstrip("/").lower()] = el.get(
                            "ContentType", "")
            self._content_types = (defaults, overrides)
        defaults, overrides = self._content_types
        key = name.lstrip("/").lower()
        if key in overrides:
            return overrides[key]
        return defaults.get(key.rsplit(".", 1)[-1])

    def _find_main_part(self) -> str:
        for rel in self.rels("").values() if self.has("_rels/.rels") else []:
            if rel.type.endswith("/officeDocument") and not rel.external and self.has(rel.target):
                return rel.target
        if self.has("word/document.xml"):
            return "word/document.xml"
        lowered = set(self._infos)
        if "xl/workbook.xml" in lowered:
            raise UnsupportedFormat("This is an Excel workbook (XLSX), not a DOCX document.")
        if "ppt/presentation.xml" in lowered:
            raise UnsupportedFormat(
                "This is a PowerPoint presentation (PPTX), not a DOCX document.")
        if "content.xml" in lowered and "mimetype" in lowered:
            raise UnsupportedFormat("This is an OpenDocument file, not a DOCX document.")
        raise CorruptDocument("Not a DOCX document: word/document.xml is missing from the package.")
