"""JSON writer: the document model as versioned JSON (schema in ``document.schema.json``).

The body keeps ``Image.src`` as written by the reader (a key of ``resources`` or an external
URL); ``resources`` maps each key to its MIME type, size in bytes and resolved ``src``
(a data URI by default, or the uploaded link when the service saves to object storage).
Blocks and table cells carry their ``prov`` (where they were read) when the reader says, and
a PDF's ``pages`` their sizes (the frame of the page boxes). The layout is described in
docs/document-json-schema.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from render_pool.engine import model
from render_pool.engine.common.image_links import ImageResolver, data_uri_resolver
from render_pool.engine.model import Document
from render_pool.engine.url_safety import is_safe_image_src, is_safe_link

SCHEMA_NAME = "docservice.document"
SCHEMA_PATH = Path(__file__).with_name("document.schema.json")

__all__ = ["SCHEMA_NAME", "SCHEMA_PATH", "document_to_json_data", "write_json"]


def document_to_json_data(doc: Document,
                          resolve_image: ImageResolver | None = None) -> dict[str, Any]:
    """The JSON-ready dict that :func:`write_json` serialises."""
    resolve = resolve_image or data_uri_resolver(doc)
    data: dict[str, Any] = {
        "schema": SCHEMA_NAME,
        "version": model.SCHEMA_VERSION,
        "meta": {str(k): str(v) for k, v in doc.meta.items()},
        "blocks": _neutralise(model.to_dict(doc.blocks)),
        "notes": {str(k): _neutralise(model.to_dict(v)) for k, v in doc.notes.items()},
        "furniture": _neutralise(model.to_dict(doc.furniture)),
        **({"pages": [{"page": n, "width": w, "height": h}
                      for n, (w, h) in sorted(doc.pages.items())]} if doc.pages else {}),
        "resources": {
            key: {"mime": res.mime, "size": len(res.data), "src": resolve(key)}
            for key, res in doc.resources.items()
        },
        "warnings": list(doc.warnings),
    }
    return data


def _neutralise(data: Any) -> Any:
    """``data`` with refused link targets and image sources emptied (``url_safety``): a
    consumer that turns the JSON into HTML must not get a live ``javascript:`` link."""
    if isinstance(data, list):
        return [_neutralise(d) for d in data]
    if isinstance(data, dict):
        out = {k: _neutralise(v) for k, v in data.items()}
        if out.get("type") == "Link" and not is_safe_link(str(out.get("target", ""))):
            out["target"] = ""
        if out.get("type") == "Image" and not is_safe_image_src(str(out.get("src", ""))):
            out["src"] = ""
        return out
    return data


def write_json(doc: Document, resolve_image: ImageResolver | None = None) -> str:
    """Serialise ``doc`` as pretty-printed UTF-8 JSON (``ensure_ascii=False``).

    ``model.from_dict(data["blocks"])`` rebuilds the body, so the output can be read back.
    """
    return json.dumps(document_to_json_data(doc, resolve_image), ensure_ascii=False,
                      indent=2) + "\n"
