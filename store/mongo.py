"""MongoDB connection (motor) and the indexes the service relies on."""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase
from pymongo import ASCENDING, ReturnDocument


def connect(url: str, db_name: str) -> tuple[Any, AsyncIOMotorDatabase]:
    """Open a client for ``url``; ``mongomock://`` gives an in-memory mongomock-motor one."""
    if url.startswith("mongomock://"):
        from mongomock_motor import AsyncMongoMockClient  # test/dev only dependency

        client: Any = AsyncMongoMockClient()
    else:
        client = AsyncIOMotorClient(url, serverSelectionTimeoutMS=5000, tz_aware=True)
    return client, client[db_name]


async def ensure_indexes(db: AsyncIOMotorDatabase) -> None:
    """Create the unique indexes that enforce tenant-scoped identity."""
    await db.companies.create_index([("code", ASCENDING)], unique=True)
    await db.users.create_index([("companyId", ASCENDING), ("username", ASCENDING)], unique=True)
    await db.users.create_index([("companyId", ASCENDING), ("role", ASCENDING),
                                 ("status", ASCENDING)])


async def next_id(db: AsyncIOMotorDatabase, sequence: str) -> int:
    """Next integer of a named counter (atomic ``$inc`` upsert)."""
    doc = await db.counters.find_one_and_update(
        {"_id": sequence}, {"$inc": {"value": 1}}, upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    return int(doc["value"])
