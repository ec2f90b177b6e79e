"""The orchestration of a conversion, in one place: one pool job per request, then (for
``save=true``) the uploads and the link pair to answer.

``/api/convert`` reads and writes the document in ONE pool job; when the output is saved,
that job also returns the document's images with placeholder tokens where their links go,
and this module uploads them beside the output, fills in their links and uploads the output.
A scan with several pages to OCR is the exception: the reading job names those pages
(``OcrPending``), each page is recognised as a pool job of its own, at most one per pool
worker of this request at a time (so the pages spread over the pool while the pool's
per-company turns still let other callers in between them, each page with the pool's time
limit and memory bound), and the document is read again with the results. In an async
job the pages are shared with every idle job consumer (:mod:`tornado_app.documents.shared_pages`).
``/md/convert`` renders in the pool and, when saved, uploads the file here too.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from render_pool.engine import jobs
from render_pool.errors import OcrPending
from render_pool.runtime.pool import RenderPool
from store.object_keys import result_key
from store.objects import ObjectStore
from store.storage_io import StorageIO
from tornado_app.documents.base import DocsError
from tornado_app.documents.object_links import link_maker
from tornado_app.documents.page_progress import pages_done
from tornado_app.documents.shared_pages import current_sharing, ocr_one_page, share_pages
from tornado_app.services import Services


async def _ocr_pages(pool: RenderPool, company_id: str, pending: OcrPending, data: bytes,
                     languages: str) -> dict[int, Any]:
    """Each page ``pending`` names recognised in a pool job of its own: its reading, or the
    message of the failure it met (the document is read without that page's OCR). Each page
    done is reported (:mod:`tornado_app.documents.page_progress`); cancelling the caller's
    task starts no further page."""
    pdf = pending.pdf if pending.pdf is not None else data
    window = asyncio.Semaphore(max(1, pool.workers))
    out: dict[int, Any] = {}
    await pages_done(0, len(pending.pages))

    async def one(index: int) -> None:
        async with window:
            alone = pending.page_pdfs.get(index)  # the page alone, when it could be
            out[index] = await ocr_one_page(
                pool, company_id, *((alone, 0) if alone is not None else (pdf, index)),
                languages)
        await pages_done(len(out), len(pending.pages))  # outside the window: no page waits

    await asyncio.gather(*(one(i) for i in pending.pages))
    return out


async def read_and_write(pool: RenderPool, company_id: str, data: bytes, export: str,
                         engine: str, options: jobs.ConvertOptions, for_upload: bool
                         ) -> jobs.Converted:
    """The conversion's pool job; a scan's OCR pages spread over the pool in between. The
    service and the command line (``python -m tornado_app convert``) both convert here."""
    fanout = (options if options.read.ocr_fanout  # asked already (with_service_limits)
              else replace(options, read=replace(options.read, ocr_fanout=True)))
    try:
        converted: jobs.Converted = await pool.run(
            jobs.convert_document, data, export, engine, fanout, for_upload=for_upload,
            tenant=company_id)
        await pages_done(converted.pages, converted.pages)
        return converted
    except OcrPending as pending:
        languages = options.read.ocr_languages
        sharing = current_sharing()  # an async job: its pages go to every job consumer
        with pool.spreading():  # one request against the queue's limit, not one a page
            pages = await (_ocr_pages(pool, company_id, pending, data, languages)
                           if sharing is None else
                           share_pages(pool, sharing, company_id, pending, data, languages))
            with_pages = replace(options, read=replace(options.read, ocr_pages=pages))
            converted = await pool.run(jobs.convert_document, data, export, engine,
                                       with_pages, for_upload=for_upload, tenant=company_id,
                                       admitted=True)
            await pages_done(converted.pages, converted.pages)
            return converted


def pool_of(svc: Services) -> RenderPool:
    """The render pool (open wherever the docs face or the job worker runs)."""
    if svc.pool is None:
        raise RuntimeError("the render pool is not open in this process")
    return svc.pool


def storage_of(svc: Services) -> StorageIO:
    """The storage layer results, batches and staged inputs go to, or 50201 when this
    server has no storage configured."""
    if svc.storage is None:
        raise DocsError(50201, "storage not configured")
    return svc.storage


async def _convert_job(svc: Services, company_id: str, data: bytes, export: str, engine: str,
                       options: jobs.ConvertOptions, for_upload: bool) -> jobs.Converted:
    return await read_and_write(pool_of(svc), company_id, data, export, engine, options,
                                for_upload)


async def _store(svc: Services, company_id: str) -> ObjectStore:
    """The company's object store, or 50201 when storage is not configured."""
    return await storage_of(svc).store(company_id)


async def convert(svc: Services, company_id: str, data: bytes, *, export: str, engine: str,
                  save: bool, filename: str, options: jobs.ConvertOptions,
                  result_token: str | None = None) -> dict[str, Any]:
    """Convert ``data`` in one pool job; when ``save``, store the output and its images under
    the company's prefix (the output at an unguessable key: ``result_token``, a job's id, makes
    a re-run of the job write the same key) and answer their links, else answer the content
    (images inline as data URIs)."""
    if not save:
        result = await _convert_job(svc, company_id, data, export, engine, options, False)
        return {"content": result.content, "media_type": result.media_type,
                "warnings": result.warnings, "notes": result.notes}
    store = await _store(svc, company_id)
    prefix = store.config.prefix
    result = await _convert_job(svc, company_id, data, export, engine, options, True)
    maker = await link_maker(svc, company_id, store)
    links: dict[str, str] = {}
    for image in result.images:  # typed by store.stored_content: an SVG is an attachment
        asset = await storage_of(svc).io(store.put_asset, prefix, image.name, image.data,
                                     image.content_type)
        links[image.token] = maker.for_documents(asset.key)
    content = jobs.fill_image_links(result, links)
    key = result_key(prefix, "converted", f"{filename}.{jobs.FILE_EXTENSIONS[export]}",
                     token=result_token)
    stored = await storage_of(svc).put(store, key, content.encode("utf-8"), result.media_type)
    return {**maker.pair(stored.key), "warnings": [*result.warnings, *maker.warnings],
            "notes": result.notes}


async def save_rendered(svc: Services, company_id: str, rendered: jobs.Rendered, name: str,
                        result_token: str | None = None) -> dict[str, Any]:
    """Upload a rendered PDF/DOCX under the company's prefix at an unguessable key and answer
    the link pair."""
    store = await _store(svc, company_id)
    key = result_key(store.config.prefix, "rendered", name, token=result_token)
    maker = await link_maker(svc, company_id, store)
    stored = await storage_of(svc).put(store, key, rendered.data, rendered.media_type)
    return {**maker.pair(stored.key), "warnings": [*rendered.warnings, *maker.warnings]}
