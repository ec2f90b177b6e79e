"""What LibreOffice is given: the uploaded file with its links to other files neutralised,
and the pictures it really holds (for the output check, :mod:`render_pool.engine.office.output`).

Why: an OpenDocument or RTF file can name files on the server (an image by ``file:///`` or
``../../..``, a linked section, sheet or OLE object, an RTF ``INCLUDEPICTURE`` field) and ask
where it runs (Calc's ``INFO`` and ``CELL("filename")``, file-name fields). The sandbox
(:mod:`render_pool.engine.office.sandbox`) keeps the server's files out of LibreOffice's
sight; this removes the requests before LibreOffice reads them, so a document gets the same
answer with the sandbox on or off.

OpenDocument (every XML part but the manifest, embedded objects' too):

- an ``xlink:href`` that does not name a member of the package (a scheme, an absolute
  path, ``..``, or a relative name the package does not hold) is removed: from pictures,
  fill and background images, list bullets, linked OLE objects, floating frames, media,
  linked sections (``text:section-source``) and sheets (``table:table-source``,
  ``table:cell-range-source``), fonts, templates and macros bindings; the element goes with
  it unless it also holds the picture inline (``office:binary-data``) or it is a bullet.
  Hyperlinks (``text:a``, ``draw:a``) stay: they are text, nothing is loaded;
- DDE links and file-name, template-name and DDE fields: fields are replaced by the text
  they show, the rest removed;
- formulas calling ``INFO``, ``CELL``, ``WEBSERVICE``, ``DDE``, ``INDIRECT`` or
  ``HYPERLINK``, or naming another file (``'file:...'#$Sheet``, a URL): a cell keeps its
  cached value without the formula, a named expression, condition or validation is removed;
- ``settings.xml`` is replaced by an empty one (a document's own ``LinkUpdateMode`` could
  ask for links to be updated).

RTF: :mod:`render_pool.engine.office.rtf_links`. DOC, XLS and PPT cannot be rewritten here: the
sandbox and the output check cover them; their pictures are looked for in their streams
(:mod:`render_pool.engine.common.ole`) and in the blocks deflated there (:func:`picture_sources`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from urllib.parse import unquote

from lxml import etree

from render_pool.engine.common import ole
from render_pool.engine.common.safe_zip import verified_zip
from render_pool.engine.common.zipread import ZIP_DAMAGE
from render_pool.engine.office import rtf_links
from render_pool.errors import CorruptDocument

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "anim": "urn:oasis:names:tc:opendocument:xmlns:animation:1.0",
    "form": "urn:oasis:names:tc:opendocument:xmlns:form:1.0",
    "calcext": "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
}


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{_NS[prefix]}}}{local}"


HREF = _q("xlink:href")
_BINARY = _q("office:binary-data")
_HYPERLINKS = frozenset(map(_q, ("text:a", "draw:a")))
# elements that load what they name: removed with an outside link
_LOADERS = frozenset(map(_q, (
    "draw:image", "draw:object", "draw:object-ole", "draw:floating-frame", "draw:plugin",
    "draw:applet", "draw:fill-image", "style:background-image", "text:section-source",
    "table:table-source", "table:cell-range-source", "text:alphabetical-index-auto-mark-file",
    "svg:font-face-uri", "presentation:sound", "anim:audio", "meta:template",
    "meta:auto-reload", "text:script", "office:dde-source")))
_REMOVED = frozenset(map(_q, ("text:dde-connection-decls", "table:dde-links")))
_FIELDS_AS_TEXT = frozenset(map(_q, ("text:file-name", "text:template-name",
                                     "text:dde-connection", "text:execute-macro")))
_URL_ATTRIBUTES = frozenset(map(_q, ("form:image-data",)))
_FORMULA_NAMES = frozenset(("formula", "expression", "condition"))
_FORMULA_ATTRIBUTES = frozenset((_q("calcext:value"),))
_FORMULA_HOLDERS = ("//*[@*[local-name()='formula' or local-name()='expression' or "
                    "local-name()='condition'] or @calcext:value]")
DENIED_FORMULA = re.compile(
    r"\b(?:INFO|CELL|WEBSERVICE|DDE|INDIRECT|HYPERLINK|FILTERXML)\s*\(|#\$|file:"
    r"|\b[a-z][a-z0-9+.-]*://", re.I)
_CELL = _q("table:table-cell")
_TABLE = f"{{{_NS['table']}}}"
_EMPTY_SETTINGS = (b'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-settings '
                   b'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                   b'office:version="1.3"/>')
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True,
                          load_dtd=False)
_ODF = ("odt", "ods", "odp")
_OLE = ("doc", "xls", "ppt")


@dataclass
class Prepared:
    """The file LibreOffice opens, how many links were neutralised in it, and the SHA-256
    of every picture the uploaded file holds (or, for DOC/XLS/PPT, its ``streams``, the
    bytes a picture of the output must be found in)."""

    data: bytes
    neutralised: int = 0
    pictures: set[str] = field(default_factory=set)
    streams: list[bytes] = field(default_factory=list)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def package_names(members: set[str]) -> set[str]:
    """The names a link inside the package may use: its members and their folders."""
    names = set(members)
    for member in members:
        parts = member.split("/")
        names.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return names


def internal(href: str, names: set[str]) -> bool:
    """Whether ``href`` names a member or folder of the package (``names``, see
    :func:`package_names`), or a place in the document itself (``#...``); anything else
    would be looked up outside the package."""
    if href == "" or href.startswith("#"):
        return True
    return any(name.removeprefix("./").rstrip("/") in names for name in (href, unquote(href)))


def _drop(el: etree._Element, keep_text: bool = False) -> None:
    """Remove ``el``, keeping its tail (and, if asked, its text) in the document."""
    parent = el.getparent()
    if parent is None:
        return
    text = ("".join(el.itertext()) if keep_text else "") + (el.tail or "")
    prev = el.getprevious()
    if prev is not None:
        prev.tail = (prev.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(el)


def _formula(el: etree._Element) -> tuple[int, bool]:
    """Neutralise the denied formulas of ``el``: how many, and whether ``el`` must go."""
    count = 0
    for name, value in list(el.attrib.items()):
        local = name.rsplit("}", 1)[-1]
        if (local in _FORMULA_NAMES or name in _FORMULA_ATTRIBUTES) \
                and DENIED_FORMULA.search(value):
            if el.tag == _CELL or (local == "formula" and not el.tag.startswith(_TABLE)):
                del el.attrib[name]  # the cell (or text field) keeps its cached value
                count += 1
            else:
                return count + 1, True  # a named expression, condition or validation
    return count, False


def neutralise_xml(body: bytes, names: set[str]) -> tuple[bytes, int]:
    """One XML part with its outside links, fields and formulas neutralised, and how many;
    the part unchanged when nothing was found. CorruptDocument if it is not XML."""
    try:
        root = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError:
        raise CorruptDocument("The document cannot be read: a part of it is not "
                              "well-formed XML.") from None
    count = 0
    # only the elements that matter, found by the XML library (a big part has millions)
    for el in root.xpath(_FORMULA_HOLDERS, namespaces=_NS):
        formulas, drop = _formula(el)
        count += formulas
        if drop:
            _drop(el)
    for el in list(root.iter(*_REMOVED, *_FIELDS_AS_TEXT)):
        _drop(el, keep_text=el.tag in _FIELDS_AS_TEXT)
        count += 1
    for el in root.xpath("//*[@xlink:href]", namespaces=_NS):
        href = el.get(HREF, "")
        if el.tag in _HYPERLINKS or internal(href, names):
            continue
        if el.tag in _LOADERS and el.find(_BINARY) is None:
            _drop(el)
        else:
            del el.attrib[HREF]
        count += 1
    for el in root.xpath("//*[@form:image-data]", namespaces=_NS):
        for name in _URL_ATTRIBUTES & set(el.attrib):
            if not internal(el.get(name, ""), names):
                del el.attrib[name]
                count += 1
    if not count:
        return body, 0
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8"), count


def _inline_pictures(body: bytes) -> list[bytes]:
    """Pictures held inline in an XML part (``office:binary-data``)."""
    found = []
    for m in re.finditer(rb"<office:binary-data>([^<]*)</office:binary-data>", body):
        try:
            found.append(base64.b64decode(m.group(1), validate=False))
        except ValueError:
            continue
    return found


def prepare_odf(data: bytes, kind: str) -> Prepared:
    """The package re-packed from verified entries (zip-bomb and XML-bomb guards), its
    links neutralised; an encrypted package answers 40003."""
    label = f"The {kind.upper()} package"
    try:
        members = package_names(set(zipfile.ZipFile(io.BytesIO(data)).namelist()))
    except ZIP_DAMAGE:
        raise CorruptDocument(f"{label} is not a readable zip file.") from None
    prepared = Prepared(data)
    failed: list[str] = []

    def transform(name: str, body: bytes) -> bytes:
        prepared.pictures.add(digest(body))
        if not name.endswith(".xml") or name.startswith("META-INF/") or not body.strip():
            return body  # an empty part (Configurations2/.../current.xml) holds nothing
        if name == "settings.xml" or name.endswith("/settings.xml"):
            return _EMPTY_SETTINGS
        for picture in _inline_pictures(body):
            prepared.pictures.add(digest(picture))
        try:
            clean, count = neutralise_xml(body, members)
        except CorruptDocument:
            failed.append(name)
            return body
        prepared.neutralised += count
        return clean

    # LibreOffice's own XML parser reads these parts: no DOCTYPE at all (ODF has none)
    prepared.data = verified_zip(data, label, strict_dtd=True, transform=transform)
    safe = zipfile.ZipFile(io.BytesIO(prepared.data))
    try:
        manifest = safe.read("META-INF/manifest.xml")
    except KeyError:
        manifest = b""
    if b"encryption-data" in manifest:
        raise CorruptDocument(f"The {kind.upper()} document is password-protected "
                              "(encrypted); remove the password and retry.")
    if failed:
        raise CorruptDocument(f"The {kind.upper()} document cannot be read: {failed[0]} is "
                              "not well-formed XML.")
    return prepared


def prepare(data: bytes, kind: str) -> Prepared:
    """What LibreOffice opens for ``data`` of ``kind`` (odt/ods/odp/rtf/doc/xls/ppt)."""
    if kind in _ODF:
        return prepare_odf(data, kind)
    if kind == "rtf":
        found = rtf_links.scan(data, pictures=True)
        clean = rtf_links.apply(data, found.edits) if found.edits else data
        return Prepared(clean, found.fields + found.removed,
                        {digest(p) for p in found.pictures})
    if kind in _OLE:
        return Prepared(data, streams=picture_sources(data))
    return Prepared(data)


# Where the pictures of a DOC, XLS or PPT can be. Office keeps metafile pictures (EMF, WMF,
# PICT) deflated, so the deflated blocks found in the streams are inflated too; the tries
# and their output are bounded.
_ZLIB = re.compile(rb"\x78[\x01\x5e\x9c\xda]")
MAX_INFLATE_TRIES = 4096
MAX_INFLATED = 64 * 1024 * 1024
MIN_PICTURE = 32  # smaller streams and blocks hold no picture worth keeping


def inflated_blocks(blobs: list[bytes]) -> list[bytes]:
    """The deflated (zlib) blocks found in ``blobs``, inflated: bounded tries and output."""
    out: list[bytes] = []
    tries = total = 0
    for blob in blobs:
        view = memoryview(blob)  # a try reads from its offset without copying the rest
        for m in _ZLIB.finditer(blob):
            if tries >= MAX_INFLATE_TRIES or total >= MAX_INFLATED:
                return out
            tries += 1
            inflater = zlib.decompressobj()
            try:
                block = inflater.decompress(view[m.start():], MAX_INFLATED - total)
            except zlib.error:
                continue
            if len(block) >= MIN_PICTURE:
                out.append(block)
                total += len(block)
    return out


def picture_sources(data: bytes) -> list[bytes]:
    """Where a picture of a legacy Office file can be: its streams (:mod:`ole`) and the
    blocks inflated from them (or, if ``data`` is not a readable compound file, ``data``
    itself)."""
    found = [s for s in ole.streams(data) if len(s) >= MIN_PICTURE] or [data]
    return found + inflated_blocks(found)

