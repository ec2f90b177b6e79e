"""The MongoDB indexes the service relies on, created at start-up by every replica."""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING

from store import api_keys, audit, companies, revoked_keys, users


async def ensure_indexes(db: AsyncIOMotorDatabase,
                         audit_retention_seconds: int = audit.RETENTION_SECONDS) -> None:
    """Create the indexes that enforce tenant-scoped identity and keep queries indexed
    (idempotent: creating an existing index is a no-op); audit records expire after
    ``audit_retention_seconds``."""
    await db.companies.create_index([("code", ASCENDING)], unique=True)
    await companies.ensure_indexes(db)
    await db.users.create_index([("companyId", ASCENDING), ("username", ASCENDING)], unique=True)
    await db.users.create_index([("companyId", ASCENDING), ("role", ASCENDING),
                                 ("status", ASCENDING)])
    await users.ensure_indexes(db)
    await audit.ensure_indexes(db, audit_retention_seconds)
    await api_keys.ensure_indexes(db)
    await revoked_keys.ensure_indexes(db, audit_retention_seconds)  # named in the trail
