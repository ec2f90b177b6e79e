"""Which HTML elements are footnotes, note references and back links (EPUB and DPUB-ARIA).

Why: an EPUB marks its notes with ``epub:type`` (``noteref`` on the reference, ``footnote``,
``endnote`` or ``rearnote`` on the note, ``footnotes``/``endnotes`` on the section holding
them) and HTML from pandoc and others with the ARIA roles ``doc-noteref``, ``doc-footnote``,
``doc-endnote`` and ``doc-backlink``. The HTML reader turns them into the model's notes
(:class:`~render_pool.engine.model.NoteRef` and ``Document.notes``) rather than plain links and
trailing text; this module only answers the questions about one element.
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import unquote, urlsplit

_OPS_TYPE = "{http://www.idpf.org/2007/ops}type"
NOTE_TYPES = frozenset({"footnote", "endnote", "rearnote", "doc-footnote", "doc-endnote"})
NOTES_TYPES = frozenset({"footnotes", "endnotes", "rearnotes", "doc-endnotes",
                         "doc-footnotes"})
REF_TYPES = frozenset({"noteref", "doc-noteref"})
BACK_TYPES = frozenset({"backlink", "doc-backlink"})

NoteKey = tuple[str, str]  # (part the element is in, its id)


def types(el: Any) -> frozenset[str]:
    """The semantic types of an lxml element: its ``epub:type`` and ``role`` tokens."""
    if not isinstance(el.tag, str):
        return frozenset()
    value = f"{el.get('epub:type', '')} {el.get(_OPS_TYPE, '')} {el.get('role', '')}"
    return frozenset(value.lower().split())


def is_notes_section(el: Any) -> bool:
    """A section (or list) that holds notes: its rule and emptied lists are no content.
    Pandoc's EPUB 2 and HTML 4 write it as ``<div class="footnotes">`` with no type."""
    return bool(types(el) & NOTES_TYPES) or "footnotes" in _classes(el)


def is_note(el: Any) -> bool:
    """A footnote, endnote or rearnote with an id a reference can point at (or an item
    with an id of a list in a notes section)."""
    if not isinstance(el.tag, str) or not el.get("id"):
        return False
    if types(el) & NOTE_TYPES:
        return True
    parent = el.getparent()
    holder = parent.getparent() if parent is not None else None
    return (el.tag.lower() == "li" and holder is not None
            and str(parent.tag).lower() in ("ol", "ul") and is_notes_section(holder))


def _classes(el: Any) -> list[str]:
    """The class tokens of an element; none for a comment or processing instruction (lxml
    gives those a function as their tag and no attributes to ask)."""
    return str(el.get("class", "")).split() if isinstance(el.tag, str) else []


def is_back_link(el: Any) -> bool:
    """A link inside a note back to its reference (pandoc's ``footnote-back`` too)."""
    return bool(types(el) & BACK_TYPES) or "footnote-back" in _classes(el)


def is_note_ref(el: Any) -> bool:
    """A link marked as a note reference (pandoc's ``footnote-ref`` too)."""
    return bool(types(el) & REF_TYPES) or "footnote-ref" in _classes(el)


def target_key(href: str, part: str, base: str) -> NoteKey | None:
    """The (part, id) a link points at, ``href`` resolved against the part it is in
    (``#fn1`` in the same part; ``notes.xhtml#n1`` relative to the part's folder)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.fragment:
        return None
    if not parts.path:
        return (part, unquote(parts.fragment))
    return (posixpath.normpath(posixpath.join(base, unquote(parts.path))),
            unquote(parts.fragment))
