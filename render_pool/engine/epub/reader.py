"""EPUB (e-book) to the document model: the spine's XHTML documents through the HTML reader.

Why this shape: an EPUB is a zip of XHTML chapters, a package file (OPF) that lists them in
reading order (the spine) and the book's metadata, and the images the chapters show. The
chapters are read in spine order, each once however often the spine lists it, by one HTML
reader (heading ids stay unique across the book), pictures the chapters reference inside
the package become resources, links between chapters become links to their ``#fragment``,
notes (``epub:type`` ``noteref`` and ``footnote``/``endnote``/``rearnote``, in any chapter)
become the document's notes, and the package title becomes the document title. Nothing
outside the package is fetched.

Every entry is read under the zip-bomb and XML-bomb guards (``safe_zip.verified_zip``).
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any
from urllib.parse import unquote, urlsplit

import lxml.html
from lxml import etree

from render_pool.engine.common.data_uri import image_extension
from render_pool.engine.common.safe_zip import verified_zip
from render_pool.engine.docx.package import mime_for
from render_pool.engine.html.build import _HtmlReader
from render_pool.engine.model import Document, Image, Inline, Link, Placeholder, Resource
from render_pool.engine.provenance import locate_parts
from render_pool.errors import CorruptDocument

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                          huge_tree=False)
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_XHTML_TYPES = {"application/xhtml+xml", "text/html", "application/x-dtbook+xml"}


class _BookReader(_HtmlReader):
    """The HTML reader, with chapter-relative image sources resolved inside the package."""

    def __init__(self, doc: Document, package: zipfile.ZipFile) -> None:
        super().__init__(doc)
        self.package = package
        self.names = set(package.namelist())
        self.base = ""
        self.keys: dict[str, str] = {}  # package path -> resource key

    def image(self, c: Any) -> Inline:
        src = c.get("src", "") or c.get("{http://www.w3.org/1999/xlink}href", "")
        parts = urlsplit(src)
        if src.startswith("data:") or parts.scheme or parts.netloc:
            return super().image(c)
        path = posixpath.normpath(posixpath.join(self.base, unquote(parts.path)))
        alt = c.get("alt", "")
        if path not in self.names:
            self.doc.warn("An image missing from the EPUB package was left out.")
            return Placeholder(f"[image{': ' + alt if alt else ''}]")
        key = self.keys.get(path)
        if key is None:
            mime = mime_for(path)
            self.images += 1
            key = f"media/image{self.images}.{image_extension(mime)}"
            self.doc.resources[key] = Resource(self.package.read(path), mime)
            self.keys[path] = key
        return Image(src=key, alt=alt, title=c.get("title", ""))

    def inlines_of(self, c: Any) -> list[Inline]:
        out = super().inlines_of(c)
        if isinstance(c.tag, str) and c.tag.lower() == "a":
            for node in out:
                if isinstance(node, Link):
                    node.target = _local_target(node.target)
        return out


def _local_target(href: str) -> str:
    """A link to another chapter of the book as a link to its fragment (``#id``)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith("#"):
        return href
    return f"#{parts.fragment}" if parts.fragment else href


def _xml(package: zipfile.ZipFile, path: str) -> etree._Element:
    try:
        return etree.fromstring(package.read(path), parser=_PARSER)
    except KeyError:
        raise CorruptDocument(f"The EPUB package has no {path}.") from None
    except etree.XMLSyntaxError as exc:
        raise CorruptDocument(f"Malformed XML in the EPUB package ({path}): {exc}") from None


def _spine(package: zipfile.ZipFile) -> tuple[list[str], dict[str, str]]:
    """(chapter paths in reading order, metadata) from the container and the OPF."""
    container = _xml(package, "META-INF/container.xml")
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise CorruptDocument("The EPUB package names no package document (OPF).")
    opf_path = rootfile.get("full-path", "")
    opf = _xml(package, opf_path)
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in opf.iter(f"{_OPF}item")}
    chapters: list[str] = []
    for ref in opf.iter(f"{_OPF}itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type", "") not in _XHTML_TYPES:
            continue
        chapters.append(posixpath.normpath(posixpath.join(base, unquote(item.get("href", "")))))
    meta: dict[str, str] = {}
    for key, tag in (("title", "title"), ("author", "creator"), ("language", "language")):
        el = opf.find(f".//{_DC}{tag}")
        if el is not None and (el.text or "").strip():
            meta[key] = el.text.strip()
    return chapters, meta


def _read_once(chapters: list[str], doc: Document) -> list[str]:
    """The spine's chapters, each once, in the order of its first entry, with a warning when
    the spine lists one more than once. Why: a chapter listed again is almost always a broken
    or hostile book (one 1 MB chapter listed 2,000 times took 91 s to read, and would have
    been 2,000 copies of the same text with clashing heading ids), never what a reader
    would want repeated; reading it once costs its unique content only."""
    unique = list(dict.fromkeys(chapters))
    repeats = len(chapters) - len(unique)
    if repeats:
        doc.warn(f"The EPUB spine lists the same chapter more than once ({repeats} repeated "
                 f"entr{'y' if repeats == 1 else 'ies'} of {len(unique)} chapters); each "
                 "chapter was read once.")
    return unique


def read_epub(data: bytes) -> Document:
    """An EPUB book as one document: its chapters in spine order (see the module doc)."""
    package = zipfile.ZipFile(io.BytesIO(verified_zip(data, "The EPUB package")))
    chapters, meta = _spine(package)
    doc = Document(meta=meta)
    reader = _BookReader(doc, package)
    roots: list[tuple[str, etree._Element]] = []
    for path in _read_once(chapters, doc):
        try:
            raw = package.read(path)
        except KeyError:
            doc.warn(f"A chapter missing from the EPUB package ({path}) was left out.")
            continue
        try:
            root = lxml.html.document_fromstring(raw)
        except (etree.ParserError, ValueError):
            doc.warn(f"An unreadable chapter ({path}) was left out.")
            continue
        reader.part = path
        reader.collect_notes(root)  # all chapters first: a note may live in another one
        roots.append((path, root))
    for path, root in roots:
        reader.part, reader.base = path, posixpath.dirname(path)
        body = root.find("body")
        doc.blocks.extend(locate_parts(reader.blocks(body if body is not None else root), path))
    reader.finish_notes()
    if not chapters:
        doc.warn("The EPUB package lists no chapters.")
    return doc
