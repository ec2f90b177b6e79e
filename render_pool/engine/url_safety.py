"""The one allow-list of link and image targets every writer applies.

Why one module: a document can carry any hyperlink target (a DOCX relationship, an HTML
``href``, a Markdown destination), and an export read in a browser or in Word must never
turn ``javascript:``/``vbscript:``/``data:`` targets into live links. Every writer (HTML and
the PDF built on it, Markdown, DOCX, JSON) asks this module; none keeps its own list.

Allowed link targets: ``http``, ``https``, ``mailto``, relative references (no scheme, which
includes ``//host/path`` and ``#fragment``). Everything else is refused: an allow-list, so
schemes nobody thought of are refused too. Image sources may also be raster ``data:image/*``
URIs (never SVG, which can carry script).
"""

from __future__ import annotations

import html
import re

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_RASTER_DATA = re.compile(
    r"^data:image/(png|jpe?g|gif|webp|bmp|x-icon|vnd\.microsoft\.icon|tiff|avif)[;,]",
    re.IGNORECASE,
)


_IGNORED = re.compile(r"[\x00-\x20\x7f]+")


def _as_browser_sees(url: str) -> str:
    """``url`` without the characters browsers and Word ignore inside a scheme: ASCII
    control characters, whitespace and DEL (``java\\tscript:`` is ``javascript:``)."""
    return _IGNORED.sub("", url)  # one pass in C: a data URI can be megabytes long


def _scheme_allowed(url: str) -> bool:
    m = _SCHEME.match(_as_browser_sees(url))
    return m is None or m.group(1).lower() in LINK_SCHEMES


def is_safe_link(url: str) -> bool:
    """True when ``url`` may become a live link: relative, ``#frag`` or an allowed scheme,
    also once character references in it are decoded (``jav&#x61;script:`` is refused:
    written into Markdown or an HTML attribute by a careless consumer it would decode)."""
    return _scheme_allowed(url) and ("&" not in url or _scheme_allowed(html.unescape(url)))


def is_safe_image_src(url: str) -> bool:
    """True when ``url`` may be an image source: a safe link or a raster ``data:image``."""
    return bool(_RASTER_DATA.match(_as_browser_sees(url))) or is_safe_link(url)


def is_safe_url(url: str, *, image: bool = False) -> bool:
    """:func:`is_safe_image_src` when ``image`` else :func:`is_safe_link`."""
    return is_safe_image_src(url) if image else is_safe_link(url)
