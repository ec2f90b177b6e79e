"""The output check of a LibreOffice conversion: what the reader got from LibreOffice's DOCX,
XLSX or PPTX must come from the uploaded file, and must not describe the server.

Why a check after the sandbox and the link neutralising: DOC, XLS and PPT cannot be
rewritten before LibreOffice opens them, and a field or formula kind nobody listed could
still fetch something or name where it ran. So, whatever the input:

- **images** must be pictures the uploaded file holds: for OpenDocument a member of the
  package or an inline ``office:binary-data`` picture, for RTF a ``\\pict`` picture (same
  bytes, by SHA-256); for DOC, XLS and PPT bytes found in one of its streams or in a block
  deflated there (Office keeps metafiles deflated). A WMF is also compared without the
  22-byte placeable header LibreOffice may add. Any other image (a file LibreOffice read,
  a page it rendered) is left out, its alternative text kept, with a warning; an image
  that points outside the document instead of holding its bytes goes the same way;
- **text** naming the machine is replaced: the kernel's release and version (``INFO``),
  the job's folder and profile as the host and as the sandbox see them, any other
  conversion's folder (``docservice-lo-*``).
"""

from __future__ import annotations

import os
import re
from dataclasses import fields, is_dataclass

from render_pool.engine.model import Document, Image, Inline, Text, map_inlines, walk_document
from render_pool.engine.office.links import Prepared, digest
from render_pool.engine.office.sandbox import JOB, PROFILE

WMF_PLACEABLE = b"\xd7\xcd\xc6\x9a"
HIDDEN = "[removed]"
_TEXT_FIELDS = ("text", "url", "title", "alt", "tex", "caption")


def allowed(data: bytes, prepared: Prepared) -> bool:
    """Whether the picture ``data`` is one the uploaded file holds."""
    candidates = [data]
    if data.startswith(WMF_PLACEABLE) and len(data) > 22:
        candidates.append(data[22:])
    if any(digest(c) in prepared.pictures for c in candidates):
        return True
    return any(c in source for c in candidates for source in prepared.streams)


def host_pattern(places: list[str]) -> re.Pattern[str]:
    """What names the machine: ``places`` (host folders of this job), the sandbox's mount
    points and any conversion folder, as paths or ``file:`` URLs; the kernel's release."""
    uname = os.uname()
    parts = [rf"(?:file://)?{re.escape(p)}[^\s'\"#<>|]*" for p in places if len(p) > 4]
    parts.append(rf"(?:file://)?(?:{re.escape(JOB)}|{re.escape(PROFILE)})(?![\w-])"
                 r"[^\s'\"#<>|]*")
    parts.append(r"(?:file://)?[^\s'\"#<>|]*docservice-lo-[^\s'\"#<>|]*")
    parts.append(re.escape(uname.release))
    major_minor = ".".join(uname.release.split(".")[:2])
    parts.append(rf"\b{re.escape(uname.sysname)}\s+{re.escape(major_minor)}(?![\d.])")
    if len(uname.version) >= 10:
        parts.append(re.escape(uname.version))
    return re.compile("|".join(parts), re.I)


def _drop_foreign_images(doc: Document, prepared: Prepared) -> int:
    foreign = {key for key, res in doc.resources.items() if not allowed(res.data, prepared)}
    for key in foreign:
        del doc.resources[key]
    dropped = 0

    def keep_alt(node: Inline) -> list[Inline] | None:
        nonlocal dropped
        if isinstance(node, Image) and node.src not in doc.resources:
            dropped += 1
            return [Text(node.alt)] if node.alt else []
        return None

    map_inlines(doc, keep_alt)
    return max(dropped, len(foreign))


def _scrub(doc: Document, pattern: re.Pattern[str]) -> int:
    count = 0
    for node in walk_document(doc):
        if not is_dataclass(node):
            continue
        for f in fields(node):
            value = getattr(node, f.name)
            if f.name in _TEXT_FIELDS and isinstance(value, str) and value:
                new, n = pattern.subn(HIDDEN, value)
                if n:
                    setattr(node, f.name, new)
                    count += n
    for key, value in list(doc.meta.items()):
        new, n = pattern.subn(HIDDEN, value)
        doc.meta[key] = new
        count += n
    return count


def check(doc: Document, prepared: Prepared, places: list[str]) -> Document:
    """``doc`` (read from LibreOffice's output) without images the upload does not hold and
    without text naming the machine; a warning for each kind of removal."""
    if prepared.neutralised:
        doc.warn(f"{prepared.neutralised} link(s) to other files (pictures, linked sections, "
                 "sheets or objects, fields, formulas) were removed before LibreOffice opened "
                 "the file; their last shown text was kept.")
    dropped = _drop_foreign_images(doc, prepared)
    if dropped:
        doc.warn(f"{dropped} image(s) LibreOffice produced that the uploaded file does not "
                 "hold were left out (a picture linked from elsewhere, or one LibreOffice "
                 "drew itself).")
    if _scrub(doc, host_pattern(places)):
        doc.warn("Text naming the conversion server (its folders or kernel) was replaced "
                 f"by {HIDDEN}.")
    return doc
