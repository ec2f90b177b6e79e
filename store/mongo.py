"""MongoDB connection (motor) and atomic counters."""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError


def connect(url: str, db_name: str) -> tuple[Any, AsyncIOMotorDatabase]:
    """Open a client for ``url``; ``mongomock://`` gives an in-memory mongomock-motor one."""
    if url.startswith("mongomock://"):
        from mongomock_motor import AsyncMongoMockClient  # test/dev only dependency

        client: Any = AsyncMongoMockClient()
    else:
        client = AsyncIOMotorClient(url, serverSelectionTimeoutMS=5000, tz_aware=True)
    return client, client[db_name]


async def next_id(db: AsyncIOMotorDatabase, sequence: str) -> int:
    """Next integer of a named counter (atomic ``$inc``).

    The counter document is created first with an insert that tolerates a concurrent
    creator, because concurrent upserts can race (duplicate key, or no document returned).
    """
    for _ in range(5):
        doc = await db.counters.find_one_and_update(
            {"_id": sequence}, {"$inc": {"value": 1}}, return_document=ReturnDocument.AFTER,
        )
        if doc is not None:
            return int(doc["value"])
        try:
            await db.counters.insert_one({"_id": sequence, "value": 0})
        except DuplicateKeyError:
            pass
    raise RuntimeError(f"counter {sequence} could not be created")
