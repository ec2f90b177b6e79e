"""Pool job of ``POST /md/preview``: Markdown to the HTML fragment of the service's own HTML
writer, so the browser app's live preview shows what the service reads, never what a
second parser in the browser guesses.

Why a job of its own rather than ``convert_document``: the preview answers as the user types,
so it loads nothing from the network. ``data:`` images are shown; every other image (remote,
relative) becomes a visible placeholder naming it, and an ``<img>`` in raw HTML that is not a
``data:`` image is left out with a warning (the rule of :func:`attach_images`). The fragment is
the body :func:`render_pool.engine.html.writer.write_html` wraps into a page: the same escaping,
URL allow-list and raw-HTML sanitiser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from render_pool.engine import registry
from render_pool.engine.common.images import resolver_for
from render_pool.engine.html.render import html_body
from render_pool.engine.markdown.limits import MarkdownLimits, check_markdown
from render_pool.engine.markdown.reader import attach_images
from render_pool.engine.model import Image, Inline, Placeholder, map_inlines

__all__ = ["MarkdownPreview", "preview_markdown"]


@dataclass
class MarkdownPreview:
    """The HTML fragment of a Markdown text and the warnings of its reading."""

    html: str
    warnings: list[str] = field(default_factory=list)


def _short(src: str) -> str:
    return src if len(src) <= 80 else src[:77] + "..."


def _placeholder_for_loaded_image(node: Inline) -> list[Inline] | None:
    """An image that would need loading (anything but a ``data:`` URI) as a placeholder."""
    if not isinstance(node, Image) or node.src.strip().lower().startswith("data:"):
        return None
    label = f"{node.alt}: " if node.alt.strip() else ""
    return [Placeholder(f"[image {label}{_short(node.src)}, not loaded in the preview]")]


def preview_markdown(text: str, limits: MarkdownLimits | None = None) -> MarkdownPreview:
    """Pool job: the cost and nesting checks (40003), the registry's Markdown reader, then the
    HTML writer's body fragment (``data:`` images embedded, bounded like any HTML export)."""
    check_markdown(text, limits)
    doc = registry.read(text.encode("utf-8"), kind="markdown")
    map_inlines(doc, _placeholder_for_loaded_image)
    attach_images(doc, {})  # decodes the data: images; drops other <img> of raw HTML
    return MarkdownPreview(html_body(doc, resolver_for(doc, "embed")), list(doc.warnings))
