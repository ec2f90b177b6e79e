"""Object storage as the HTTP layer uses it: the store of the active configuration (its
persistence is ``store.storage_settings``), the link map (``store.linkmap``), and uploads of
conversion outputs. minio calls block, so they run in a bounded thread pool, never on the
event loop."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from render_pool import jobs
from store.keys import asset_key, object_key
from store.linkmap import LinkMap
from store.objects import LinkPair, ObjectStore
from store.storage_config import StorageConfig
from store.storage_errors import StorageError
from store.storage_settings import StorageSettings
from tornado_app.docs.base import DocsError

log = logging.getLogger("tornado_app.docs.storage")
T = TypeVar("T")

class StorageManager:
    """Runs storage I/O for handlers: the active store, uploads, the configuration records."""

    def __init__(self, db: Any, *, io_threads: int = 8) -> None:
        self.db = db
        self.executor = ThreadPoolExecutor(max_workers=io_threads, thread_name_prefix="s3")
        self._stores: dict[tuple, ObjectStore] = {}
        self.configs = StorageSettings(db)
        self.linkmap = LinkMap(db)

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
            store = self._stores[key] = ObjectStore(config)
            if len(self._stores) > 16:
                self._stores.pop(next(iter(self._stores)))
        return store

    async def store(self) -> ObjectStore:
        """The store of the active configuration, or 50201 when none is configured."""
        config = await self.configs.active_config()
        if config is None:
            raise DocsError(50201, "storage not configured")
        return self.store_for(config)

    async def put(self, store: ObjectStore, key: str, data: bytes, content_type: str
                  ) -> LinkPair:
        try:
            return await self.io(store.put_bytes, key, data, content_type)
        except StorageError as exc:
            raise DocsError(50201, exc.message) from exc

    # ------------------------------------------------------------ conversion outputs
    async def save_conversion(self, svc: Any, data: bytes, *, export: str, engine: str,
                              filename: str, options: dict[str, Any]) -> dict[str, Any]:
        """Read the document in the pool, upload its images beside the output, write the
        output with links to them, upload it, and answer the link pair."""
        store = await self.store()
        prefix = store.config.prefix
        doc = await svc.pool.run(jobs.read_document, data, engine, options)
        urls: dict[str, str] = {}
        for name, resource in doc.resources.items():
            key = asset_key(prefix, resource.data, name.rsplit("/", 1)[-1])
            links = await self.put(store, key, resource.data, resource.mime)
            urls[name] = link_for_documents(store, links)
        result: jobs.Converted = await svc.pool.run(jobs.write_document, doc, export, urls)
        ext = jobs.FILE_EXTENSIONS[export]
        key = object_key(prefix, "converted", f"{filename}.{ext}")
        links = await self.put(store, key, result.content.encode("utf-8"), result.media_type)
        return {**links.as_dict(), "warnings": result.warnings}

    async def save_rendered(self, svc: Any, rendered: jobs.Rendered, name: str
                            ) -> dict[str, Any]:
        """Upload a rendered PDF/DOCX and answer the link pair."""
        store = await self.store()
        key = object_key(store.config.prefix, "rendered", name)
        links = await self.put(store, key, rendered.data, rendered.media_type)
        return {**links.as_dict(), "warnings": rendered.warnings}

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def link_for_documents(store: ObjectStore, links: LinkPair) -> str:
    """The link written into stored documents: the direct link on a public-read bucket
    (it never expires), else the presigned one (a private bucket answers 403 otherwise)."""
    return links.storage_url if store.config.public_read else links.storage_presigned_url
