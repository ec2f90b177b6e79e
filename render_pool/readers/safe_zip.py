"""A zipped office file (PPTX, XLSX, EPUB) re-packed from bytes that passed the zip-bomb and
XML-bomb guards, for libraries that open zips themselves (python-pptx, openpyxl).

Why: those libraries read entries straight from the zip, trusting the declared sizes. Every
entry is read here through :class:`render_pool.zipread.BoundedZip` (real bytes counted
against the caps), XML parts declaring entities or an internal DTD subset are refused
(entity expansion bombs, external entities; OOXML, OPF and XHTML parts never need one), and
the verified bytes are stored
uncompressed in a new zip, so the library never unpacks more than was checked.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable

from render_pool.errors import UnsafeArchive
from render_pool.zipread import BoundedZip, ZipLimits

OFFICE_LIMITS = ZipLimits(max_entries=10000, max_total=200 * 1024 * 1024,
                          max_entry=100 * 1024 * 1024, max_ratio=100, ratio_min_size=1024 * 1024)
_XML_NAME = re.compile(r"\.(xml|rels|opf|ncx|xhtml|html?|vml)$", re.I)
_DTD = re.compile(rb"<!(DOCTYPE|ENTITY)", re.I)


def _declares_dtd(data: bytes, strict: bool = False) -> bool:
    """An entity declaration or a DOCTYPE with an internal subset (``[...]``), in UTF-8 or
    UTF-16. A plain DOCTYPE naming an external DTD (XHTML, EPUB 2's NCX) is allowed: no
    parser here loads external DTDs or touches the network. ``strict``: any DOCTYPE (for
    files another program parses, whose parser we do not control)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        data = data.decode("utf-16", "replace").encode("utf-8", "replace")
    pos = 0
    while (m := _DTD.search(data, pos)) is not None:
        if strict or m.group(1).upper() == b"ENTITY":
            return True
        end = data.find(b">", m.end())
        if end < 0:  # an unclosed declaration: nothing after it can close one either
            return data.find(b"[", m.end()) >= 0
        if data.find(b"[", m.end(), end) >= 0:
            return True
        pos = end + 1  # each byte is looked at once, however many declarations open
    return False


def verified_zip(data: bytes, label: str, limits: ZipLimits = OFFICE_LIMITS,
                 transform: Callable[[str, bytes], bytes] | None = None,
                 strict_dtd: bool = False) -> bytes:
    """``data`` re-packed (stored) from entries read within ``limits``; raises TooLarge
    (41301), CorruptDocument (40003: corrupt or encrypted) or UnsafeArchive (40004: DTD).
    ``transform(name, bytes)`` may rewrite a verified entry before it is stored;
    ``strict_dtd`` refuses every DOCTYPE (see :func:`_declares_dtd`)."""
    src = BoundedZip(data, limits, label)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infos:
            if info.is_dir():
                continue
            body = src.read(info)
            if _XML_NAME.search(info.filename) and _declares_dtd(body, strict_dtd):
                raise UnsafeArchive(f"A part of {label} ({info.filename}) declares a DTD "
                                    "(entity expansion or external entities); refused.")
            if transform is not None:
                body = transform(info.filename, body)
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), body)
    return out.getvalue()
