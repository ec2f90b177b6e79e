"""``data:`` URIs: the one decoder and the one encoder every reader, writer and the batch
pipeline use (RFC 2397: ``data:[<mime>][;param]*[;base64],<payload>``)."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote, unquote_to_bytes

_DATA_URI = re.compile(r"^data:([^,]*?),(.*)$", re.S | re.I)


def decode_data_uri(uri: str, *, max_bytes: int | None = None) -> tuple[bytes, str] | None:
    """``(bytes, mime)`` of a ``data:`` URI (base64, also %-encoded, or %-encoded text);
    None when it is malformed or its payload is larger than ``max_bytes``. The MIME type is
    lower case, ``text/plain`` when the URI names none."""
    m = _DATA_URI.match(uri.strip())
    if not m:
        return None
    payload = m.group(2)
    if max_bytes is not None and len(payload) > max_bytes * 4 // 3 + 1024:
        return None
    params = [p.strip() for p in m.group(1).split(";")]
    mime = (params[0] or "text/plain").lower()
    try:
        if any(p.lower() == "base64" for p in params[1:]):
            data = base64.b64decode(re.sub(r"\s+", "", unquote(payload)), validate=True)
        else:
            data = unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None
    if max_bytes is not None and len(data) > max_bytes:
        return None
    return data, mime


def encode_data_uri(data: bytes, mime: str) -> str:
    """``data:<mime>;base64,...`` of ``data``."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


_IMAGE_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
                     "image/svg+xml": "svg", "image/webp": "webp", "image/bmp": "bmp",
                     "image/tiff": "tiff"}


def image_extension(mime: str) -> str:
    """File extension (no dot) of an image MIME type; ``bin`` for anything else."""
    return _IMAGE_EXTENSIONS.get(mime.lower().split(";")[0].strip(), "bin")
