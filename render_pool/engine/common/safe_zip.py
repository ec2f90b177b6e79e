"""A zipped office file (PPTX, XLSX, EPUB, ODF) re-packed from bytes that passed the zip-bomb
and XML-bomb guards, for libraries that open zips themselves (python-pptx, openpyxl,
LibreOffice).

Why: those libraries read entries straight from the zip, trusting the declared sizes. Every
entry is read here through :class:`render_pool.engine.common.zipread.BoundedZip` (real bytes counted
against the caps); every entry a parser could read as XML (told by its first characters in
its own encoding, whatever its name: a library finds parts through the content types)
passes :func:`render_pool.engine.common.xml_guard.check_xml` (no entity declarations, DTD
subsets, external DTDs or undeclared entities: OOXML, ODF, OPF and XHTML parts never need
them); and the verified bytes are stored uncompressed in a new zip, so the library never
unpacks more than was checked.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

from render_pool.engine.common.xml_guard import check_xml, is_html_name, looks_like_xml
from render_pool.engine.common.zipread import BoundedZip, ZipLimits

OFFICE_LIMITS = ZipLimits(max_entries=10000, max_total=200 * 1024 * 1024,
                          max_entry=100 * 1024 * 1024, max_ratio=100, ratio_min_size=1024 * 1024)


def verified_zip(data: bytes, label: str, limits: ZipLimits = OFFICE_LIMITS,
                 transform: Callable[[str, bytes], bytes] | None = None,
                 strict_dtd: bool = False) -> bytes:
    """``data`` re-packed (stored) from entries read within ``limits``; raises TooLarge
    (41301) or CorruptDocument (40003: corrupt, encrypted, or an XML part that does what a
    DTD does). ``transform(name, bytes)`` may rewrite a verified entry before it is stored;
    ``strict_dtd``: for parts LibreOffice parses, of the external DTDs only the ones
    OpenOffice.org writes itself (a bare ``<!DOCTYPE name>`` passes too)."""
    src = BoundedZip(data, limits, label)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infos:
            # a folder; or a name that a NUL byte cut to nothing (ZipInfo.is_dir fails on
            # it): no part a library could ask for by name
            if not info.filename or info.filename.endswith("/"):
                continue
            body = src.read(info)
            if looks_like_xml(body) or info.filename.lower().endswith((".dtd", ".ent")):
                check_xml(body, f"A part of {label} ({info.filename})", strict=strict_dtd,
                          html=is_html_name(info.filename))
            if transform is not None:
                body = transform(info.filename, body)
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)), body)
    return out.getvalue()
