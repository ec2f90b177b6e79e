"""Per-worker caches of what a DOCX reader builds from its style sheet and numbering parts.

Why: documents from one source (pandoc, a company template, Word's normal.dotm) carry the
same ``styles.xml`` and ``numbering.xml`` byte for byte, and resolving a style sheet of a
few hundred styles costs more than reading a short document's body. The key is a hash of
the part as stored in the zip (its method, CRC, size and packed bytes: the same packed bytes
unpack to the same bytes), so a cached value is only ever used for the very bytes it was
built from (which passed the XML guard when they were first parsed), and a part seen before
is neither unpacked nor hashed in full; its read still counts against the package's
budget (:meth:`Package.read_known`). Cached values are read-only: a
reader gets the resolved :class:`Styles` itself and a :class:`Numbering` of its own that
shares the parsed definitions but keeps its own counters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from lxml import etree

from render_pool.engine.docx.numbering import Numbering
from render_pool.engine.docx.package import Package
from render_pool.engine.docx.styles import Styles

T = TypeVar("T")
MAX_ENTRIES = 32  # per cache; a worker meets few distinct templates, and entries are small

_STYLES: dict[bytes, Styles] = {}
_NUMBERING: dict[bytes, Numbering] = {}


def _key(kind: bytes, body: bytes, salt: bytes) -> bytes:
    """A cache key: ``kind`` keeps keys of the stored form and of the bytes apart."""
    return hashlib.blake2b(body + salt, digest_size=20, person=kind).digest()


def _cached(pkg: Package, name: str | None, build: Callable[[etree._Element | None], T],
            cache: dict[bytes, T], salt: bytes = b"") -> tuple[T, bytes]:
    """``build`` of the part ``name`` (None when absent) and the part's key; from ``cache``
    when the same bytes were built before. The key is taken from the part as stored in the
    zip, so a part seen before is neither unpacked nor hashed in full (a Word style sheet
    is 350 KB); its read is still counted against the package's budget, and a part whose
    read would fail is read, to fail as it would have. A part that is not an ordinary zip
    entry is keyed by its bytes."""
    if not name or not pkg.has(name):
        return build(None), b""
    if pkg.is_parsed(name):  # already read for another purpose: no second read
        return build(pkg.xml(name)), b""
    stored = pkg.stored_key(name)
    if stored is not None:
        key = _key(b"stored", stored, salt)
        found = cache.get(key)
        if found is not None and pkg.read_known(name):
            return found, key
    data = pkg.read(name)
    if stored is None or len(data) != pkg.size(name):  # not the bytes the key promises
        key = _key(b"bytes", data, salt)
        found = cache.get(key)
        if found is not None:
            return found, key
    value = build(pkg.xml_from(name, data))
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = value
    return value, key


def styles_for(pkg: Package, name: str | None) -> tuple[Styles, bytes]:
    """The resolved style sheet of part ``name`` and its key (b"" when not cached)."""
    return _cached(pkg, name, Styles, _STYLES)


def numbering_for(pkg: Package, name: str | None, styles: Styles, styles_key: bytes
                  ) -> Numbering:
    """A fresh :class:`Numbering` of part ``name`` (its list styles from ``styles``)."""
    styles_num = styles.numbered

    def build(root: etree._Element | None) -> Numbering:
        return Numbering(root, styles_num)

    if not styles_key and styles_num:  # the style sheet was not keyed: do not cache
        return build(pkg.xml(name) if name else None)
    template, _ = _cached(pkg, name, build, _NUMBERING, salt=styles_key)
    return template.fresh()
