"""Uploads of conversion outputs, on top of the storage access of ``store.storage_io``."""

from __future__ import annotations

from typing import Any

from render_pool import jobs
from store.keys import asset_key, object_key
from store.storage_io import StorageIO, link_for_documents


class StorageManager(StorageIO):
    """Storage access plus the uploads of conversion outputs."""

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

