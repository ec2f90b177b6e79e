"""The ``images`` option of a conversion: how a writer's output carries images.

* ``embed``: each image inline as a ``data:`` URI (the output holds the image bytes);
* ``placeholder``: each image keeps its alt text and title, and its source is the image's
  resource name (``page1-img1.png``), so the output stays small;
* ``omit``: images are left out altogether.

Markdown and DocTags default to ``placeholder`` (a PDF full of pictures must not give
megabytes of base64 text); HTML and JSON default to ``embed``, where a self-contained
document is what callers expect.
"""

from __future__ import annotations

from render_pool.model import Document, Image, Paragraph, document_blocks, map_inlines
from render_pool.writers import ImageResolver, data_uri_resolver

MODES = ("embed", "placeholder", "omit")
_DEFAULTS = {"markdown": "placeholder", "doctags": "placeholder"}


def images_mode(export: str, requested: str | None) -> str:
    """The mode to use: the requested one, else the export format's default."""
    if requested in MODES:
        return requested
    return _DEFAULTS.get(export, "embed")


def resolver_for(doc: Document, mode: str) -> ImageResolver:
    """Resolve resource keys to data URIs (``embed``) or leave the key as the source."""
    if mode == "embed":
        return data_uri_resolver(doc)
    return lambda src: src


def drop_images(doc: Document) -> None:
    """Remove every image from the document (``omit``): inlines, notes, furniture and the
    resources they pointed at. Paragraphs left empty are dropped."""
    map_inlines(doc, lambda node: [] if isinstance(node, Image) else None)
    for blocks in document_blocks(doc):
        blocks[:] = [b for b in blocks if not (isinstance(b, Paragraph) and not b.children)]
    doc.resources.clear()
