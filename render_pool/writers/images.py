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

from render_pool.model import Block, Document, Image, Inline, ListBlock, Paragraph, Table
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


def _inlines(nodes: list[Inline]) -> list[Inline]:
    out: list[Inline] = []
    for node in nodes:
        if isinstance(node, Image):
            continue
        kids = getattr(node, "children", None)
        if isinstance(kids, list):
            node.children = _inlines(kids)  # type: ignore[union-attr]
        out.append(node)
    return out


def _blocks(blocks: list[Block]) -> None:
    for block in blocks:
        kids = getattr(block, "children", None)
        if isinstance(kids, list):
            block.children = _inlines(kids)  # type: ignore[union-attr]
        if isinstance(block, ListBlock):
            for item in block.items:
                _blocks(item.blocks)
        elif isinstance(block, Table):
            block.caption = _inlines(block.caption)
            for row in block.rows:
                for cell in row.cells:
                    _blocks(cell.blocks)
        else:
            inner = getattr(block, "blocks", None)
            if isinstance(inner, list):
                _blocks(inner)


def drop_images(doc: Document) -> None:
    """Remove every image from the document (``omit``): inlines, notes, furniture and the
    resources they pointed at. Paragraphs left empty are dropped."""
    for blocks in (doc.blocks, doc.furniture, *doc.notes.values()):
        _blocks(blocks)
        blocks[:] = [b for b in blocks if not (isinstance(b, Paragraph) and not b.children)]
    doc.resources.clear()
