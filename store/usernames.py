"""Usernames that look alike are one name: the canonical key under which they are unique.

``username_key`` folds a name the way a reader's eye does: NFKC (fullwidth "admin" and
``admin²`` become ``admin`` and ``admin2``), case folding (``Admin``), and a small map of
Cyrillic and Greek letters that are drawn like Latin ones ("admin" with a Cyrillic a).
The display form stays as typed; the key is what the unique index compares.

``mixed_scripts`` tells whether a name mixes writing systems in a way no real name does
(Unicode UTS #39 "highly restrictive": one script, or Latin with Han and the Japanese kana,
or with Han and Bopomofo, or with Han and Hangul).
"""

from __future__ import annotations

import unicodedata

# Letters drawn like a Latin letter (after case folding), from Unicode's confusables list.
_CONFUSABLE = str.maketrans({
    # Cyrillic
    "\u0430": "a", "\u0432": "b", "\u0435": "e", "\u0451": "e", "\u04bb": "h", "\u0456": "i",
    "\u0457": "i", "\u0458": "j", "\u043a": "k", "\u04cf": "l", "\u043c": "m", "\u043d": "h",
    "\u043e": "o", "\u0440": "p", "\u051b": "q", "\u0455": "s", "\u0442": "t", "\u0441": "c",
    "\u0443": "y", "\u04af": "y", "\u0445": "x", "\u051d": "w", "\u0501": "d",
    # Greek
    "\u03b1": "a", "\u03b2": "b", "\u03b5": "e", "\u03b7": "n", "\u03b9": "i", "\u03ba": "k",
    "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x",
    "\u03f2": "c", "\u03f3": "j",
    # Latin letters that pass for others
    "\u0261": "g", "\u0131": "i", "\u0237": "j", "\u0251": "a", "\u01c0": "l",
})

_ALLOWED_MIXES = (
    {"LATIN", "CJK", "HIRAGANA", "KATAKANA"},
    {"LATIN", "CJK", "BOPOMOFO"},
    {"LATIN", "CJK", "HANGUL"},
)


def username_key(name: str) -> str:
    """The canonical key: NFKC, case folded, confusable letters mapped to Latin."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return folded.translate(_CONFUSABLE)


def _script(ch: str) -> str | None:
    """The writing system of a letter (None for digits, marks and punctuation)."""
    if not ch.isalpha() or unicodedata.category(ch).startswith("M"):
        return None
    name = unicodedata.name(ch, "")
    if not name:
        return "UNKNOWN"
    first = name.split(" ", 1)[0]
    return "KATAKANA" if first == "KATAKANA-HIRAGANA" else first


def scripts(name: str) -> set[str]:
    """The writing systems of the letters of ``name`` (after NFKC)."""
    return {s for s in map(_script, unicodedata.normalize("NFKC", name)) if s}


def mixed_scripts(name: str) -> bool:
    """True when ``name`` mixes writing systems beyond UTS #39's highly restrictive level."""
    found = scripts(name)
    if len(found) <= 1:
        return False
    return not any(found <= allowed for allowed in _ALLOWED_MIXES)
