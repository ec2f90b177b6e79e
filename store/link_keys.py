"""The keys that sign the service's own download links (``/proxy/object/...``).

A link names one object of one company: its token is an HMAC-SHA256, under a random key of
that company kept in MongoDB (so every replica, and the service after a restart, checks the
same links), of the bucket and the object's full key. A token cannot be made without the key,
opens nothing but that object, and stops opening it when the company's storage moves to
another bucket or prefix (the signed bucket or key no longer matches) or when the company's
key is rotated (:meth:`LinkKeys.rotate` revokes every link of the company at once). Nothing
in a link expires by itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from typing import Any

from pymongo.errors import DuplicateKeyError

COLLECTION = "link_keys"
TOKEN_CHARS = 32  # base64url characters of the HMAC kept in a link (192 bits)
CACHE_SECONDS = 60.0  # a key rotated by another replica is seen here within this


def link_token(secret: bytes, bucket: str, key: str) -> str:
    """The token of object ``key`` in ``bucket`` under a company's ``secret``."""
    mac = hmac.new(secret, b"object\0" + bucket.encode() + b"\0" + key.encode(),
                   hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii")[:TOKEN_CHARS]


def token_matches(secret: bytes, bucket: str, key: str, token: str) -> bool:
    """True when ``token`` is the token of ``key`` in ``bucket`` (compared in constant
    time)."""
    return hmac.compare_digest(link_token(secret, bucket, key).encode(),
                               token.encode("ascii", "replace"))


class LinkKeys:
    """Each company's link-signing key: made on first use, read from MongoDB after that
    (and kept in memory for :data:`CACHE_SECONDS`: a key changes only by :meth:`rotate`)."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._cache: dict[str, tuple[float, bytes]] = {}

    async def get(self, company_id: str, *, create: bool) -> bytes | None:
        """The company's key; None when it has none and ``create`` is false (a link of a
        company that never made one opens nothing)."""
        found = self._cache.get(company_id)
        if found is not None and time.monotonic() - found[0] < CACHE_SECONDS:
            return found[1]
        doc = await self.db[COLLECTION].find_one({"_id": company_id})
        if doc is None and create:
            try:
                await self.db[COLLECTION].insert_one(
                    {"_id": company_id, "key": secrets.token_hex(32)})
            except DuplicateKeyError:
                pass  # another replica made it first: use that one
            doc = await self.db[COLLECTION].find_one({"_id": company_id})
        if doc is None:
            return None
        key = bytes.fromhex(str(doc["key"]))
        self._cache[company_id] = (time.monotonic(), key)
        return key

    async def rotate(self, company_id: str) -> None:
        """Give the company a new key: every link made before stops opening."""
        await self.db[COLLECTION].replace_one(
            {"_id": company_id}, {"key": secrets.token_hex(32)}, upsert=True)
        self._cache.pop(company_id, None)
