"""Uploads of conversion outputs, on top of the storage access of ``store.storage_io``."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from render_pool import jobs
from store.keys import asset_key, result_key
from store.storage_io import StorageIO, link_for_documents

# The company of the docs request being served, set by ``DocsHandler`` with its caller. Only
# ``save_conversion`` reads it, for the ``/api/convert`` handler that does not pass the company
# yet (the conversion orchestration moves to ``tornado_app/docs/conversion.py``, which takes
# ``company_id`` as an argument like every other service function).
request_company: ContextVar[str | None] = ContextVar("request_company", default=None)


class StorageManager(StorageIO):
    """Storage access plus the uploads of conversion outputs."""

    async def save_conversion(self, svc: Any, data: bytes, *, export: str, engine: str,
                              filename: str, options: dict[str, Any],
                              company_id: str | None = None) -> dict[str, Any]:
        """Read the document in the pool, upload its images beside the output, write the
        output with links to them, upload it under the company's prefix at an unguessable
        key, and answer the link pair."""
        company = company_id or request_company.get()
        if not company:
            raise RuntimeError("save_conversion needs the caller's company")
        store = await self.store(company)
        prefix = store.config.prefix
        doc = await svc.pool.run(jobs.read_document, data, engine, options)
        urls: dict[str, str] = {}
        for name, resource in doc.resources.items():
            key = asset_key(prefix, resource.data, name.rsplit("/", 1)[-1])
            links = await self.put(store, key, resource.data, resource.mime)
            urls[name] = link_for_documents(store, links)
        result: jobs.Converted = await svc.pool.run(jobs.write_document, doc, export, urls)
        ext = jobs.FILE_EXTENSIONS[export]
        key = result_key(prefix, "converted", f"{filename}.{ext}")
        links = await self.put(store, key, result.content.encode("utf-8"), result.media_type)
        return {**links.as_dict(), "warnings": result.warnings}

    async def save_rendered(self, company_id: str, rendered: jobs.Rendered, name: str
                            ) -> dict[str, Any]:
        """Upload a rendered PDF/DOCX under the company's prefix at an unguessable key and
        answer the link pair."""
        store = await self.store(company_id)
        key = result_key(store.config.prefix, "rendered", name)
        links = await self.put(store, key, rendered.data, rendered.media_type)
        return {**links.as_dict(), "warnings": rendered.warnings}
