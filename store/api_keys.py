"""Company API keys for scripts and CI, in MongoDB (collection ``api_keys``).

A key is ``dsk_`` + 32 random bytes (URL-safe base64). Only its SHA-256 is stored: the key
has 256 bits of entropy, so a fast hash is enough (nothing to brute-force), and a lookup is
one indexed read. Every function takes the company id; a key of another company is
indistinguishable from a missing one. A key is checked against MongoDB on every request,
so a revoke applies at once on every replica (no cache outlives it).

A key belongs to the user who made it (``createdBy``; a key made with an ADMIN key belongs
to that key's owner): while that user is disabled the key does not work
(``tornado_app.callers.live_key``), and it acts with the lower of its own role and the
owner's current one. Keys without an owner (made by the command line or a seed) depend on
nobody and keep their own role.

Notices (``noticedAt.<kind>``): the moment an event about the key (used below its role,
refused for its owner) was last audited, so each is recorded at most once a minute per key
across all replicas (:func:`claim_notice`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING

from store.clock import aware_utc, iso_utc

KEY_PREFIX = "dsk_"
SHOWN_PREFIX_CHARS = 12  # "dsk_" + 8 characters: enough to tell keys apart, useless to guess
MAX_KEYS_PER_COMPANY = 100  # a bound on one company's listing, not a capacity to tune
LAST_USED_PRECISION = dt.timedelta(seconds=60)  # at most one write per key and minute
NOTICE_INTERVAL = dt.timedelta(seconds=60)  # at most one audited notice per key, kind, minute
NOTICE_KINDS = ("role_capped", "owner_disabled")


@dataclass(frozen=True)
class ApiKey:
    """A stored key (never the key itself)."""

    id: str
    company_id: int
    name: str
    prefix: str
    role: str
    created_at: dt.datetime
    created_by: int | None
    last_used_at: dt.datetime | None
    expires_at: dt.datetime | None
    noticed_at: dict[str, dt.datetime] = field(default_factory=dict, compare=False)

    def expired(self, now: dt.datetime | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or _now())

    def public(self) -> dict[str, Any]:
        """The key as the API lists it."""
        return {
            "id": self.id, "name": self.name, "prefix": self.prefix, "role": self.role,
            "createdAt": iso_utc(self.created_at), "lastUsedAt": iso_utc(self.last_used_at),
            "expiresAt": iso_utc(self.expires_at),
        }


class TooManyKeys(Exception):
    """The company already has :data:`MAX_KEYS_PER_COMPANY` keys."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def looks_like_key(value: str) -> bool:
    """Cheap shape check before any database read."""
    return value.startswith(KEY_PREFIX) and 40 <= len(value) <= 64 and value[4:].replace(
        "-", "").replace("_", "").isalnum() and value.isascii()


def _key(doc: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=doc["_id"], company_id=doc["companyId"], name=doc["name"], prefix=doc["prefix"],
        role=doc["role"], created_at=aware_utc(doc["createdAt"]) or _now(),
        created_by=doc.get("createdBy"), last_used_at=aware_utc(doc.get("lastUsedAt")),
        expires_at=aware_utc(doc.get("expiresAt")),
        noticed_at={kind: when for kind in NOTICE_KINDS
                    if (when := aware_utc((doc.get("noticedAt") or {}).get(kind)))},
    )


async def ensure_indexes(db: AsyncIOMotorDatabase) -> None:
    await db.api_keys.create_index([("hash", ASCENDING)], unique=True)
    await db.api_keys.create_index([("companyId", ASCENDING), ("createdAt", DESCENDING)])


async def create_key(db: AsyncIOMotorDatabase, *, company_id: int, name: str, role: str,
                     created_by: int | None, expires_at: dt.datetime | None
                     ) -> tuple[ApiKey, str]:
    """Make a key; returns it and the secret (shown once, never stored)."""
    assert isinstance(company_id, int) and isinstance(name, str) and isinstance(role, str)
    if await db.api_keys.count_documents({"companyId": company_id}) >= MAX_KEYS_PER_COMPANY:
        raise TooManyKeys()
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    now = _now().replace(microsecond=0)
    doc = {
        "_id": uuid.uuid4().hex, "companyId": company_id, "name": name,
        "prefix": secret[:SHOWN_PREFIX_CHARS], "role": role, "hash": hash_key(secret),
        "createdAt": now, "createdBy": created_by, "lastUsedAt": None, "expiresAt": expires_at,
    }
    await db.api_keys.insert_one(doc)
    return _key(doc), secret


async def list_keys(db: AsyncIOMotorDatabase, company_id: int) -> list[ApiKey]:
    assert isinstance(company_id, int)
    cursor = db.api_keys.find({"companyId": company_id}).sort("createdAt", DESCENDING)
    return [_key(d) for d in await cursor.to_list(MAX_KEYS_PER_COMPANY * 2)]


async def revoke_key(db: AsyncIOMotorDatabase, company_id: int, key_id: str) -> bool:
    """Delete the key of this company; False when there is none (or it is another's)."""
    assert isinstance(company_id, int) and isinstance(key_id, str)
    result = await db.api_keys.delete_one({"_id": key_id, "companyId": company_id})
    return result.deleted_count == 1


async def find_by_secret(db: AsyncIOMotorDatabase, secret: str, *, record: bool = True
                         ) -> ApiKey | None:
    """The live key for ``secret``: None when unknown, revoked or expired. Records the use
    unless ``record`` is False (then :func:`record_use` does, once the caller accepts it)."""
    if not looks_like_key(secret):
        return None
    doc = await db.api_keys.find_one({"hash": hash_key(secret)})
    if doc is None:
        return None
    key = _key(doc)
    now = _now()
    if key.expired(now):
        return None
    if record:
        await record_use(db, key)
    return key


async def record_use(db: AsyncIOMotorDatabase, key: ApiKey) -> None:
    """Set the key's ``lastUsedAt`` (at most once a minute per key, so a busy script does not
    write on every request)."""
    now = _now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_PRECISION:
        await db.api_keys.update_one({"_id": key.id}, {"$set": {"lastUsedAt": now.replace(
            microsecond=0)}})


async def get_key(db: AsyncIOMotorDatabase, company_id: int, key_id: str) -> ApiKey | None:
    assert isinstance(company_id, int) and isinstance(key_id, str)
    doc = await db.api_keys.find_one({"_id": key_id, "companyId": company_id})
    return None if doc is None else _key(doc)


async def claim_notice(db: AsyncIOMotorDatabase, key: ApiKey, kind: str) -> bool:
    """True when the caller should audit event ``kind`` of this key now: none was audited in
    the last :data:`NOTICE_INTERVAL` (by any replica). Costs nothing while the key's document,
    as read for this request, says one was; otherwise one conditional write decides, so two
    replicas never both claim the same minute."""
    assert kind in NOTICE_KINDS
    now = _now()
    last = key.noticed_at.get(kind)
    if last is not None and now - last < NOTICE_INTERVAL:
        return False
    path = f"noticedAt.{kind}"
    result = await db.api_keys.update_one(
        {"_id": key.id, "$or": [{path: None}, {path: {"$lte": now - NOTICE_INTERVAL}}]},
        {"$set": {path: now}})
    return result.modified_count == 1


async def maker_names(db: AsyncIOMotorDatabase, company_id: int, keys: list[ApiKey]
                      ) -> dict[int, str]:
    """The usernames of the keys' makers (user id -> username), in one read; a maker no
    longer in the company is absent."""
    assert isinstance(company_id, int)
    ids = sorted({k.created_by for k in keys if k.created_by is not None})
    if not ids:
        return {}
    cursor = db.users.find({"_id": {"$in": ids}, "companyId": company_id}, {"username": 1})
    return {d["_id"]: d["username"] for d in await cursor.to_list(len(ids))}


def maker_of(key: ApiKey, names: dict[int, str]) -> dict[str, Any] | None:
    """A key's maker as the API shows it: ``{"id", "username"}`` (username null when the
    user is gone), or None for a key made by the command line or a seed."""
    if key.created_by is None:
        return None
    return {"id": key.created_by, "username": names.get(key.created_by)}
