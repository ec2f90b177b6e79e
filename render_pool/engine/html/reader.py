"""An uploaded (or fetched) HTML file to the document model, through the HTML reader.

Why a module: the HTML reader (``readers/html.py``) takes text; an upload is bytes in any
encoding. The encoding comes from a BOM, the page's ``<meta charset>``, UTF-8, or a guess.
Images the page links stay links (they are never fetched here); embedded ``data:`` images
become resources.
"""

from __future__ import annotations

import re

from render_pool.engine.common.text_decode import decode_text
from render_pool.engine.html.build import read_html
from render_pool.engine.model import Document
from render_pool.engine.provenance import locate_parts

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")


def read_html_file(data: bytes) -> Document:
    """An HTML page's bytes as a document."""
    text, warning = decode_text(data, declared_scan=True)
    # lxml refuses text that still declares a byte encoding (XHTML's <?xml ... ?>)
    doc = read_html(_XML_DECL.sub("", text.lstrip("\ufeff"), count=1))
    locate_parts(doc.blocks, "body")  # the page's top-level blocks in order
    if warning:
        doc.warn(warning)
    return doc
