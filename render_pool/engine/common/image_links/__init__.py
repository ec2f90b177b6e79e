"""Writers: one per output format, each serialising a :class:`render_pool.engine.model.Document`.

A writer never knows which reader built the document. Image sources are resolved through an
``ImageResolver``: by default to data URIs from ``Document.resources``; when the service saves
to object storage it passes the uploaded links instead.
"""

from __future__ import annotations

from collections.abc import Callable

from render_pool.engine.common.data_uri import encode_data_uri
from render_pool.engine.model import Document

ImageResolver = Callable[[str], str]


def data_uri_resolver(doc: Document) -> ImageResolver:
    """Resolve resource keys to ``data:`` URIs; other sources (URLs) pass through. Each
    resource is encoded once, however many times the document shows it (a logo on every
    page, or one picture used 3,000 times)."""
    encoded: dict[str, str] = {}

    def resolve(src: str) -> str:
        uri = encoded.get(src)
        if uri is not None:
            return uri
        res = doc.resources.get(src)
        if res is None:
            return src
        uri = encoded[src] = encode_data_uri(res.data, res.mime)
        return uri

    return resolve


def mapping_resolver(doc: Document, urls: dict[str, str]) -> ImageResolver:
    """Resolve resource keys through ``urls`` (uploaded links), falling back to data URIs."""
    fallback = data_uri_resolver(doc)
    return lambda src: urls.get(src) or fallback(src)
