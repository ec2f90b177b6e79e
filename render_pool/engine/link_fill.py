"""Links to uploaded images, filled into a written document after the upload.

Why: ``save=true`` reads and writes a document in ONE pool job, but the links of its images
are known only once the service has uploaded them. The job writes each image source as a
placeholder token (letters, digits and ``-`` only, so every writer copies it verbatim) and
returns the images; the service uploads them and puts each link where its token stands,
quoted the way that export quotes a URL in that place.
"""

from __future__ import annotations

import html
import json
import re
import secrets
from collections.abc import Callable, Mapping

LinkQuoter = Callable[[str], str]
_MARKDOWN_UNSAFE = re.compile(r"[\x00-\x20\x7f<>()\\|]")


def placeholder_tokens(keys: list[str]) -> dict[str, str]:
    """A token per resource key, unique to this call (a random nonce per document)."""
    nonce = secrets.token_hex(8)
    return {key: f"docsvc-upload-{nonce}-{i}" for i, key in enumerate(keys, 1)}


def quote_html_attribute(url: str) -> str:
    """``url`` inside a double-quoted HTML attribute."""
    return html.escape(url, quote=True)


def quote_json_string(url: str) -> str:
    """``url`` inside a JSON string."""
    return json.dumps(url, ensure_ascii=False)[1:-1]


def quote_markdown_destination(url: str) -> str:
    """``url`` as a bare Markdown link destination (also inside a table cell): blanks,
    brackets, backslashes and pipes percent-encoded."""
    return _MARKDOWN_UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", url)


def quote_nothing(url: str) -> str:
    """``url`` unchanged (exports that carry no image links)."""
    return url


def fill_links(text: str, links: Mapping[str, str], quote: LinkQuoter) -> str:
    """``text`` with each placeholder token replaced by its quoted link."""
    for token, url in links.items():
        text = text.replace(token, quote(url))
    return text
