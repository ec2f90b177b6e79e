"""Object keys: safe joining of prefixes and names, the company prefix, result and
content-addressed asset keys. (The type a stored object is given: ``store.stored_content``.)"""

from __future__ import annotations

import hashlib
import re
import secrets

from store.storage_errors import StorageConfigError


class UnsafeKey(ValueError):
    """An object key part would escape its prefix (``..``) or holds a control character."""


def _key_parts(part: str) -> list[str]:
    pieces = []
    for piece in part.replace("\\", "/").split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            raise UnsafeKey(f"object key part {part!r} contains '..'")
        if any(ord(c) < 32 or ord(c) == 127 for c in piece):
            raise UnsafeKey(f"object key part {part!r} contains a control character")
        pieces.append(piece)
    return pieces


def clean_prefix(prefix: str) -> str:
    """Normalise a key prefix: ``\\`` read as ``/``, no leading/trailing/double slash, no ``..``.

    Raises :class:`StorageConfigError` on ``..`` or control characters.
    """
    try:
        return "/".join(_key_parts(prefix))
    except UnsafeKey as exc:
        raise StorageConfigError(str(exc), "use a plain path like docs/2024") from exc


def object_key(prefix: str, *parts: str) -> str:
    """Join a prefix and parts into an object key (no leading slash, empty/``.`` dropped).

    Raises :class:`UnsafeKey` for ``..`` or control characters anywhere.
    """
    pieces: list[str] = []
    for part in (prefix, *parts):
        pieces += _key_parts(part or "")
    if not pieces:
        raise UnsafeKey("empty object key")
    return "/".join(pieces)


TENANT_SEGMENT = "t"
_COMPANY_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def tenant_prefix(prefix: str, company_id: str) -> str:
    """The key prefix of one company's objects: ``{prefix}/t/{company_id}``. Everything a
    company stores lives under it, and it may read nothing outside it."""
    if not _COMPANY_ID_RE.match(company_id):
        raise UnsafeKey(f"not a company id: {company_id!r}")
    return object_key(prefix, TENANT_SEGMENT, company_id)


def result_key(prefix: str, kind: str, filename: str, *, token: str | None = None) -> str:
    """Key of a saved result: ``{prefix}/{kind}/{32 random hex}/{filename}``. The random segment
    means a result is never overwritten by another of the same name and cannot be found by
    guessing its name. ``token`` (a job's random id) replaces it, so that a job run again
    writes the same key."""
    return object_key(prefix, kind, token or secrets.token_hex(16), filename)


def asset_key(prefix: str, data: bytes, filename: str) -> str:
    """Content-addressed key ``{prefix}/assets/{sha256[:16]}/{basename}``: the same asset
    uploaded twice lands on the same key (stored once)."""
    return asset_key_for_digest(prefix, hashlib.sha256(data).hexdigest(), filename)


def asset_key_for_digest(prefix: str, sha256_hex: str, filename: str) -> str:
    """:func:`asset_key` from the SHA-256 of the content (a file hashed in chunks)."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if base in ("", ".", "..") or any(ord(c) < 32 for c in base):
        base = "file"
    return object_key(prefix, "assets", sha256_hex[:16], base)
