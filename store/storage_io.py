"""Object storage as the service uses it: the store of the active configuration, a bounded
thread pool for its blocking calls (minio blocks; never on the event loop), and the records
of the configuration (``store.storage_settings``) and the link map (``store.linkmap``)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from store.link_keys import LinkKeys
from store.linkmap import LinkMap
from store.object_keys import tenant_prefix
from store.objects import DEFAULT_EXPIRY, LinkPair, ObjectStore
from store.storage_config import StorageConfig
from store.storage_errors import StorageError
from store.storage_settings import StorageSettings

T = TypeVar("T")


class StorageIO:
    """Runs storage I/O for handlers: the active store, uploads, the configuration records."""

    def __init__(self, db: Any, *, io_threads: int = 8,
                 presign_expiry: timedelta = DEFAULT_EXPIRY) -> None:
        self.db = db
        self.presign_expiry = presign_expiry  # of every presigned link (at most 7 days)
        self.executor = ThreadPoolExecutor(max_workers=io_threads, thread_name_prefix="s3")
        self._stores: dict[tuple[Any, ...], ObjectStore] = {}
        self.configs = StorageSettings(db)
        # host:port of storages the operator started or named (the embedded one, S3_*):
        # the address policy always allows them
        self.trusted_endpoints: set[str] = set()
        self.linkmap = LinkMap(db)
        self.link_keys = LinkKeys(db)  # sign the service's own download links

    async def io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking storage call in the storage thread pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    # ------------------------------------------------------------ stores
    def store_for(self, config: StorageConfig) -> ObjectStore:
        """A cached ObjectStore per distinct configuration (clients are reusable)."""
        key = tuple(sorted(config.to_dict().items()))
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = ObjectStore(config, expiry=self.presign_expiry)
            if len(self._stores) > 16:
                self._stores.pop(next(iter(self._stores)))
        return store

    async def store(self, company_id: str) -> ObjectStore:
        """The store of ``company_id``: its active configuration with the company's key
        prefix (``tenant_prefix``), so every key built from ``store.config.prefix`` is the
        company's. :class:`StorageError` (50201) when no storage is configured."""
        config = await self.configs.active_config(company_id)
        if config is None:
            raise StorageError("storage not configured", "configure it at /config/storage")
        return self.store_for(replace(config, prefix=tenant_prefix(config.prefix, company_id)))

    async def put(self, store: ObjectStore, key: str, data: bytes, content_type: str
                  ) -> LinkPair:
        """Upload ``data`` under ``key`` (in the I/O pool) and answer its links."""
        return await self.io(store.put_bytes, key, data, content_type)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
