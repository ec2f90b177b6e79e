"""Revoked API keys, remembered so that a script still sending one shows up in its company's
audit trail (collection ``revoked_keys``).

Revoking a key deletes it from ``api_keys`` (so nothing can accept it again); this module
keeps, beside it, the key's SHA-256 (as ``api_keys`` held it, never the key itself), its
company, id, name and shown prefix, for as long as the audit trail keeps records. A request
presenting a key that ``api_keys`` does not know is looked up here by its hash: one indexed
read, the same as the lookup that failed. Each revoked key is reported at most once a minute
across all replicas (:func:`claim_notice`), so a script that keeps calling writes one record a
minute, not one per request.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING
from pymongo.errors import OperationFailure

from store import api_keys

COLLECTION = "revoked_keys"
REMEMBER_SECONDS = 90 * 24 * 3600  # as long as the audit trail keeps the revocation itself
NOTICE_INTERVAL = dt.timedelta(seconds=60)  # at most one audited use per key and minute
_INDEX_CONFLICTS = (85, 86)  # IndexOptionsConflict, IndexKeySpecsConflict


@dataclass(frozen=True)
class RevokedKey:
    """What is kept of a revoked key: enough to name it in its company's audit trail."""

    id: str
    hash: str  # the SHA-256 of the key, as api_keys held it
    company_id: int
    name: str
    prefix: str
    role: str
    created_by: int | None
    noticed_at: dt.datetime | None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


async def ensure_indexes(db: AsyncIOMotorDatabase,
                         remember_seconds: int = REMEMBER_SECONDS) -> None:
    """The lookup index (by hash) and the TTL index that forgets a key after
    ``remember_seconds`` (changed in place when that changed since)."""
    await db[COLLECTION].create_index([("hash", ASCENDING)], unique=True)
    try:
        await db[COLLECTION].create_index([("revokedAt", ASCENDING)],
                                          expireAfterSeconds=remember_seconds,
                                          name="revoked_ttl")
    except OperationFailure as exc:
        if exc.code not in _INDEX_CONFLICTS:
            raise
        await db.command({"collMod": COLLECTION, "index": {
            "name": "revoked_ttl", "expireAfterSeconds": remember_seconds}})


def _revoked(doc: dict[str, Any]) -> RevokedKey:
    noticed = doc.get("noticedAt")
    if noticed is not None and noticed.tzinfo is None:
        noticed = noticed.replace(tzinfo=dt.UTC)
    return RevokedKey(id=doc["keyId"], hash=doc["hash"], company_id=doc["companyId"],
                      name=doc.get("name", ""), prefix=doc.get("prefix", ""),
                      role=doc.get("role", ""),
                      created_by=doc.get("createdBy"), noticed_at=noticed)


async def revoke(db: AsyncIOMotorDatabase, company_id: int, key_id: str) -> RevokedKey | None:
    """Revoke the company's key ``key_id`` (deleted from ``api_keys`` at once) and remember
    it here; None when the company has no such key (or it is another company's)."""
    assert isinstance(company_id, int) and isinstance(key_id, str)
    doc = await db.api_keys.find_one({"_id": key_id, "companyId": company_id})
    if doc is None:
        return None
    kept = {"hash": doc["hash"], "keyId": key_id, "companyId": company_id,
            "name": doc.get("name", ""), "prefix": doc.get("prefix", ""),
            "role": doc.get("role", ""), "createdBy": doc.get("createdBy"),
            "revokedAt": _now(), "noticedAt": None}
    await db[COLLECTION].replace_one({"hash": doc["hash"]}, kept, upsert=True)
    if not await api_keys.revoke_key(db, company_id, key_id):
        return None  # revoked meanwhile by another request: that one reports it
    return _revoked(kept)


async def find_by_secret(db: AsyncIOMotorDatabase, secret: str) -> RevokedKey | None:
    """The revoked key ``secret`` was, or None (unknown, never a key, or forgotten)."""
    if not api_keys.looks_like_key(secret):
        return None
    doc = await db[COLLECTION].find_one({"hash": api_keys.hash_key(secret)})
    return None if doc is None else _revoked(doc)


async def claim_notice(db: AsyncIOMotorDatabase, key: RevokedKey) -> bool:
    """True when this use of the revoked ``key`` should be audited now: none was in the last
    :data:`NOTICE_INTERVAL` (by any replica; one conditional write decides)."""
    now = _now()
    if key.noticed_at is not None and now - key.noticed_at < NOTICE_INTERVAL:
        return False
    result = await db[COLLECTION].update_one(
        {"hash": key.hash,
         "$or": [{"noticedAt": None}, {"noticedAt": {"$lte": now - NOTICE_INTERVAL}}]},
        {"$set": {"noticedAt": now}})
    return result.modified_count == 1
