"""Object storage as the service uses it: the active configuration and its profiles kept
in MongoDB (so every replica sees the same), the link map, and uploads of conversion
outputs. minio calls block, so they run in a bounded thread pool, never on the event loop."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from store.objects import (
    LinkPair,
    ObjectStore,
    StorageConfig,
    StorageError,
)
from tornado_app.docs.base import DocsError

log = logging.getLogger("tornado_app.docs.storage")
T = TypeVar("T")

SETTINGS = "settings"
PROFILES = "storage_profiles"
EMBEDDED_PROFILE = "embedded"


class StorageManager:
    """Reads the active storage configuration from MongoDB and runs storage I/O."""

    def __init__(self, db: Any, *, io_threads: int = 8) -> None:
        self.db = db
        self.executor = ThreadPoolExecutor(max_workers=io_threads, thread_name_prefix="s3")
        self._stores: dict[tuple, ObjectStore] = {}

    async def io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking storage call in the storage thread pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    # ------------------------------------------------------------ configuration
    async def active_config(self) -> StorageConfig | None:
        doc = await self.db[SETTINGS].find_one({"_id": "storage"})
        return StorageConfig.from_dict(doc["config"]) if doc else None

    async def set_active(self, config: StorageConfig, *, embedded: bool = False) -> None:
        await self.db[SETTINGS].replace_one(
            {"_id": "storage"}, {"config": config.to_dict(), "embedded": embedded}, upsert=True)

    async def active_is_embedded(self) -> bool:
        doc = await self.db[SETTINGS].find_one({"_id": "storage"})
        return bool(doc and doc.get("embedded"))

    async def save_profile(self, name: str, config: StorageConfig) -> None:
        await self.db[PROFILES].replace_one({"_id": name}, {"config": config.to_dict()},
                                            upsert=True)

    async def load_profile(self, name: str) -> StorageConfig | None:
        doc = await self.db[PROFILES].find_one({"_id": name})
        return StorageConfig.from_dict(doc["config"]) if doc else None

    async def profiles(self) -> list[dict[str, Any]]:
        out = []
        async for doc in self.db[PROFILES].find({}).sort("_id", 1):
            cfg = StorageConfig.from_dict(doc["config"])
            out.append({"name": doc["_id"], "endpoint": cfg.endpoint, "bucket": cfg.bucket,
                        "public": cfg.public or cfg.endpoint})
        return out

    async def linkmap(self) -> dict[str, str]:
        doc = await self.db[SETTINGS].find_one({"_id": "linkmap"})
        return dict(doc["map"]) if doc else {}

    async def set_linkmap(self, mapping: dict[str, str]) -> None:
        await self.db[SETTINGS].replace_one({"_id": "linkmap"}, {"map": mapping}, upsert=True)

    # ------------------------------------------------------------ stores
    def store_for(self, config: StorageConfig) -> ObjectStore:
        """A cached ObjectStore per distinct configuration (clients are reusable)."""
        key = tuple(sorted(config.to_dict().items()))
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = ObjectStore(config)
            if len(self._stores) > 16:
                self._stores.pop(next(iter(self._stores)))
        return store

    async def store(self) -> ObjectStore:
        """The store of the active configuration, or 50201 when none is configured."""
        config = await self.active_config()
        if config is None:
            raise DocsError(50201, "storage not configured")
        return self.store_for(config)

    async def put(self, store: ObjectStore, key: str, data: bytes, content_type: str
                  ) -> LinkPair:
        try:
            return await self.io(store.put_bytes, key, data, content_type)
        except StorageError as exc:
            raise DocsError(50201, exc.message) from exc

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def link_for_documents(store: ObjectStore, links: LinkPair) -> str:
    """The link written into stored documents: the direct link on a public-read bucket
    (it never expires), else the presigned one (a private bucket answers 403 otherwise)."""
    return links.storage_url if store.config.public_read else links.storage_presigned_url
