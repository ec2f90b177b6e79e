"""The text of an uploaded text file (CSV, HTML) whatever its encoding.

Why one place: uploads come from every system: UTF-8 with or without a BOM, UTF-16 from
Excel's "Unicode text", Windows-1252 or Latin-1 from older tools. A BOM decides, then an
encoding the file declares (HTML ``<meta charset>``, XML declaration; but bytes that are
valid UTF-8 with non-ASCII characters are read as UTF-8 whatever is declared), then strict UTF-8,
then charset-normalizer's best guess (from 4 KiB on; on less text it guesses wildly, so
Windows-1252 below that); the last resort is UTF-8 with replacement characters and a
warning, never an error.
"""

from __future__ import annotations

import codecs
import re

# UTF-32 first: its little-endian mark starts with UTF-16's
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"))
_DECLARED = re.compile(rb"""(?:<meta[^>]+charset\s*=\s*["']?|<\?xml[^>]+encoding\s*=\s*["'])"""
                       rb"""([A-Za-z0-9._-]+)""", re.I)


def _is_utf8(data: bytes) -> bool:
    """Whether ``data`` is strict UTF-8 holding at least one non-ASCII character."""
    if data.isascii():
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_text(data: bytes, declared_scan: bool = False) -> tuple[str, str | None]:
    """(text, warning or None). ``declared_scan``: honour an encoding the head declares."""
    for bom, enc in BOMS:
        if data.startswith(bom):
            return data.decode(enc, "replace"), None
    if declared_scan:
        m = _DECLARED.search(data[:4096])
        if m:
            declared = m.group(1).decode("ascii")
            if _is_utf8(data):
                # bytes that are valid UTF-8 with multi-byte characters are UTF-8, whatever
                # the page claims (a page saved as UTF-8 still declaring gb2312): the
                # chance that legacy text decodes as UTF-8 is tiny, as browsers reason
                return data.decode("utf-8"), None
            try:
                return data.decode(declared, "replace"), None
            except LookupError:
                pass
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    if len(data) < 4096:  # too little text for a statistical guess: the Western default
        return data.decode("cp1252", "replace"), None
    from charset_normalizer import from_bytes

    best = from_bytes(data[: 1024 * 1024]).best()
    if best is not None and best.encoding:
        try:
            return data.decode(best.encoding, "replace"), None
        except LookupError:
            pass
    return data.decode("utf-8", "replace"), "The file's encoding could not be told; some " \
        "characters were replaced."
