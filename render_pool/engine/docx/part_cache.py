"""Per-worker caches of what a DOCX reader builds from its style sheet, numbering and notes
parts.

Why: documents from one source (pandoc, a company template, Word's normal.dotm) carry the
same ``styles.xml`` and ``numbering.xml`` byte for byte, and resolving a style sheet of a
few hundred styles costs more than reading a short document's body. A part is known by how
it is stored in the zip (its method, CRC and size, and its packed bytes compared: the same
packed bytes unpack to the same bytes; :meth:`Package.built`), so a cached value is only ever
used for the very bytes it was built from (which passed the XML guard when they were first
parsed), and a part seen before is neither unpacked nor hashed; its read still counts
against the package's budget (:meth:`Package.read_known`). Cached values are read-only: a
reader gets the resolved :class:`Styles` itself and a :class:`Numbering` of its own that
shares the parsed definitions but keeps its own counters. A notes part is kept only when it
holds no note to read (the separators Word and pandoc write into every document): what the
reader needs of it then is the bookmarks it refers to, not its tree.
"""

from __future__ import annotations

import re

from lxml import etree

from render_pool.engine.docx.numbering import Numbering
from render_pool.engine.docx.package import CacheKey, Package, W
from render_pool.engine.docx.styles import Styles

_W = f"{{{W}}}"
_WHYPERLINK = _W + "hyperlink"
_WINSTR = _W + "instrText"
_WFLDSIMPLE = _W + "fldSimple"
_WANCHOR = _W + "anchor"
_WINSTR_ATTR = _W + "instr"
_WTYPE = _W + "type"
_WID = _W + "id"
_NOTE_LOCALS = ("footnote", "endnote")
_NORMAL_NOTE = (None, "normal")
# the bookmarks a field refers to: a hyperlink's \\l "name", a REF or PAGEREF name
_REF_NAMES = re.compile(r'\\l\s+"?([^"\s]+)"?|(?:REF|PAGEREF)\s+(\S+)').finditer

_STYLES: dict[CacheKey, tuple[bytes, Styles]] = {}
_NUMBERING: dict[CacheKey, tuple[bytes, Numbering]] = {}
# the notes to read of a notes part, by id, and the bookmarks the part refers to
Notes = tuple[dict[str, etree._Element], frozenset[str]]
_NOTES: dict[CacheKey, tuple[bytes, Notes]] = {}  # of parts without a note to read


def referenced_bookmarks(root: etree._Element) -> set[str]:
    """The bookmark names a part's hyperlinks and fields refer to (a hyperlink's anchor, a
    hyperlink field's ``\\l`` name, a REF or PAGEREF field's name)."""
    names: set[str] = set()
    # one walk of the tree for the three tags (a walk each cost twice the time)
    for el in root.iter(_WHYPERLINK, _WINSTR, _WFLDSIMPLE):
        tag = el.tag
        if tag == _WHYPERLINK:
            anchor = el.get(_WANCHOR)
            if anchor:
                names.add(anchor)
            continue
        instr = el.text if tag == _WINSTR else el.get(_WINSTR_ATTR)
        for m in _REF_NAMES(instr or ""):
            names.add(m.group(1) or m.group(2))
    return names


def _read_notes(root: etree._Element | None) -> Notes:
    """The notes of a footnotes or endnotes part to read (normal ones, by id) and the
    bookmarks the part refers to."""
    items: dict[str, etree._Element] = {}
    if root is None:
        return items, frozenset()
    for n in root:
        tag = n.tag
        if isinstance(tag, str) and tag.rpartition("}")[2] in _NOTE_LOCALS and n.get(
                _WTYPE) in _NORMAL_NOTE:
            items[n.get(_WID, "")] = n
    return items, frozenset(referenced_bookmarks(root))


def notes_for(pkg: Package, name: str) -> Notes:
    """The notes to read of notes part ``name`` ("" or absent: none), by id, and the
    bookmarks the part refers to; a part without a note to read is known by its bytes after
    its first reading (see the module)."""
    items, names = pkg.built(name, _read_notes, _NOTES, keep=_holds_no_note)
    return (items if items else {}), names


def _holds_no_note(notes: Notes) -> bool:
    return not notes[0]


def styles_for(pkg: Package, name: str | None) -> Styles:
    """The resolved style sheet of part ``name``."""
    return pkg.built(name, Styles, _STYLES)


def numbering_for(pkg: Package, name: str | None, styles: Styles) -> Numbering:
    """A fresh :class:`Numbering` of part ``name`` (its list styles from ``styles``: what
    it depends on besides the part, so part of its key)."""
    styles_num = styles.numbered

    def build(root: etree._Element | None) -> Numbering:
        return Numbering(root, styles_num)

    salt = repr(sorted(styles_num.items())).encode() if styles_num else b""
    return pkg.built(name, build, _NUMBERING, salt=salt).fresh()
