"""The ``images`` option of a conversion: how a writer's output carries images.

* ``embed``: each image inline as a ``data:`` URI (the output holds the image bytes);
* ``placeholder``: each image keeps its alt text and title, and its source is the image's
  resource name (``page1-img1.png``), so the output stays small;
* ``omit``: images are left out altogether.

Markdown, DocTags and chunks default to ``placeholder`` (a PDF full of pictures must not give
megabytes of base64 text); HTML and JSON default to ``embed``, where a self-contained
document is what callers expect.

What ``embed`` writes is bounded (``limits.embedded_images_max_bytes``): HTML and Markdown
repeat an image's data URI wherever the image is shown, so a 3 MB DOCX showing one 2 MB
picture 3,000 times would be an 8 GB page. Each image is encoded once; the data the output
has embedded is counted as the writer asks for it, and once past the bound the conversion
stops with 41301 (the estimate of the whole and the bound in the message), after at most
the bound's worth of writing.
"""

from __future__ import annotations

from collections import Counter

from render_pool.engine import limits
from render_pool.engine.common.image_links import ImageResolver, data_uri_resolver
from render_pool.engine.model import (
    Document,
    Image,
    Paragraph,
    document_blocks,
    map_inlines,
    walk_document,
)
from render_pool.errors import TooLarge

_MB = 1024 * 1024

MODES = ("embed", "placeholder", "omit")
_DEFAULTS = {"markdown": "placeholder", "doctags": "placeholder", "chunks": "placeholder"}


def images_mode(export: str, requested: str | None) -> str:
    """The mode to use: the requested one, else the export format's default."""
    if requested in MODES:
        return requested
    return _DEFAULTS.get(export, "embed")


def resolver_for(doc: Document, mode: str, max_bytes: int | None = None) -> ImageResolver:
    """Resolve resource keys to data URIs (``embed``, at most ``max_bytes`` of them in one
    output; default: this worker's ``embedded_images_max_bytes``) or leave the key as the
    source."""
    if mode == "embed":
        bound = limits.current().embedded_images_max_bytes if max_bytes is None else max_bytes
        return bounded_resolver(doc, data_uri_resolver(doc), bound)
    return lambda src: src


def bounded_resolver(doc: Document, resolve: ImageResolver, max_bytes: int) -> ImageResolver:
    """``resolve``, counting the size of what it answers for the document's resources; once
    the total passes ``max_bytes``: :class:`TooLarge` (41301)."""
    given = 0

    def counted(src: str) -> str:
        nonlocal given
        out = resolve(src)
        if src in doc.resources:
            given += len(out)
            if given > max_bytes:
                raise TooLarge(_too_much(doc, max_bytes))
        return out

    return counted


def _too_much(doc: Document, max_bytes: int) -> str:
    """The refusal: about how much image data the output would embed, and the bound."""
    shown = Counter(n.src for n in walk_document(doc) if isinstance(n, Image))
    total = sum(count * (len(doc.resources[src].data) + 2) // 3 * 4
                for src, count in shown.items() if src in doc.resources)
    most = max(shown.values(), default=0)
    repeated = f" (one image is shown {most:,} times)" if most > 1 else ""
    return (f"The output would embed about {max(total, max_bytes) / _MB:,.0f} MB of image data"
            f"{repeated}, more than the {max_bytes / _MB:,.0f} MB limit; ask for "
            "images=placeholder or images=omit, or save=true to store the images as files.")


def drop_images(doc: Document) -> None:
    """Remove every image from the document (``omit``): inlines, notes, furniture and the
    resources they pointed at. Paragraphs left empty are dropped."""
    map_inlines(doc, lambda node: [] if isinstance(node, Image) else None)
    for blocks in document_blocks(doc):
        blocks[:] = [b for b in blocks if not (isinstance(b, Paragraph) and not b.children)]
    doc.resources.clear()
