"""Folders and archives of Markdown/HTML, apart from HTTP: assets uploaded to object
storage, links rewritten, results reported per document. The handlers
(:mod:`.archive_handlers`, :mod:`.folder_handlers`) and the job worker
(:mod:`tornado_app.documents.job_worker`, ``GET /api/jobs/{id}``) call :func:`process_tree`,
:func:`process_archive` and the staging functions here.

Every pass over uploaded content (planning, data-URI extraction, rewriting, HTML to
Markdown) runs in the process pool (``render_pool.batch.jobs``), never on the event loop;
unpacking and storage I/O run in the storage thread pool. Assets, inline images and final
documents are uploaded from files in chunks, so the service never holds one whole.

With ``chunks=true`` (:mod:`.batch_chunks`) each final Markdown document is also cut into
chunks in the pool (the Markdown reader, then the ``export=chunks`` writer) and stored
beside it as ``<name>.chunks.json``; its entry reports them under ``chunks``.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from render_pool.batch import archives
from render_pool.batch import jobs as batch_jobs
from render_pool.batch.jobs import Lookups, chunks_name, final_name
from render_pool.batch.plan import DocumentPlan
from render_pool.runtime.pool import RenderPool
from store.object_keys import clean_prefix, object_key
from store.objects import ObjectStore, StoredAsset
from store.staging import StagedArchive, StagedArchives, purge_expired
from store.storage_errors import StorageConfigError, StorageError
from store.storage_io import StorageIO
from tornado_app.documents.base import DocsError
from tornado_app.documents.conversion import pool_of, storage_of
from tornado_app.documents.object_links import LinkMaker, link_maker
from tornado_app.services import Services

log = logging.getLogger(__name__)
Progress = Callable[[int, int, str], Awaitable[None]]


class BatchStopped(Exception):
    """Raised by a :data:`Progress` callback to stop a batch between two documents (its job
    was cancelled). :func:`process_tree` fills in what a cancelled batch reports: ``files``,
    the entries of the documents processed (and stored) before the stop, ``not_processed``,
    the sources of the others, and ``total``."""

    files: list[dict[str, Any]] | None = None
    not_processed: list[str] | None = None
    total = 0


class BatchStorageFailed(Exception):
    """Storage failed mid-batch; ``files`` holds what was done before."""

    def __init__(self, message: str, files: list[dict[str, Any]], total: int) -> None:
        super().__init__(message)
        self.message, self.files, self.total = message, files, total


@dataclass
class _Context:
    storage: StorageIO
    render_pool: RenderPool
    upload_concurrency: int
    store: ObjectStore
    root: str
    base: str
    files: list[str]
    scratch: str  # the pool jobs' output files (removed with the batch)
    known: Lookups
    company_id: str  # the tenant whose turn the pool jobs take
    links: LinkMaker  # the links answered and written into documents (STORAGE_LINKS)
    chunks: dict[str, Any] | None = None  # the chunks writer's options, or no chunks

    async def io(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.storage.io(fn, *args)

    async def pool(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.render_pool.run(fn, *args, tenant=self.company_id)


def _upload_inside(store: ObjectStore, prefix: str, root: str, rel: str) -> StoredAsset:
    """Upload ``root/rel`` (opened inside the root only) as an asset, in chunks."""
    with archives.open_inside(root, rel) as fh:
        return store.put_asset_file(prefix, posixpath.basename(rel), fh)


def _upload_scratch(store: ObjectStore, prefix: str, path: str, name: str) -> StoredAsset:
    with open(path, "rb") as fh:
        return store.put_asset_file(prefix, name, fh)


def _put_document(links: LinkMaker, key: str, path: str,
                  content_type: str = "text/markdown; charset=utf-8") -> dict[str, Any]:
    with open(path, "rb") as fh:
        return links.pair(links.store.put_file(key, fh, content_type).key)


async def _upload_assets(ctx: _Context, wanted: list[str]) -> None:
    slots = asyncio.Semaphore(ctx.upload_concurrency)

    async def one(rel: str) -> None:
        async with slots:
            try:
                stored = await ctx.io(_upload_inside, ctx.store, ctx.base, ctx.root, rel)
                ctx.known.asset_links[rel] = ctx.links.for_documents(stored.key)
            except OSError as exc:
                ctx.known.asset_errors[rel] = f"unreadable: {exc.strerror or exc}"

    await asyncio.gather(*(one(rel) for rel in wanted))


async def _upload_stylesheet(ctx: _Context, rel: str, seen: set[str]) -> None:
    """Upload a CSS file after the files its ``url()``/``@import`` name (CSS it imports
    first, depth first), with those references rewritten (in the pool); its failures are
    kept for the documents that use it."""
    known = ctx.known
    if rel in seen or rel in known.asset_links or rel in known.asset_errors:
        return
    seen.add(rel)
    try:
        plan = await ctx.pool(batch_jobs.plan_stylesheet, ctx.root, rel, ctx.files)
    except OSError as exc:
        known.asset_errors[rel] = f"unreadable: {exc.strerror or exc}"
        return
    deps = [f for f in plan.asset_files if f not in known.asset_links]
    await _upload_assets(ctx, [f for f in deps if not f.lower().endswith(".css")])
    for dep in deps:
        if dep.lower().endswith(".css"):
            await _upload_stylesheet(ctx, dep, seen)
    try:
        path, known.css_failed[rel] = await ctx.pool(
            batch_jobs.rewrite_stylesheet, ctx.root, rel, plan, known, ctx.scratch)
    except OSError as exc:
        known.asset_errors[rel] = f"unreadable: {exc.strerror or exc}"
        return
    stored = await ctx.io(_upload_scratch, ctx.store, ctx.base, path, posixpath.basename(rel))
    known.asset_links[rel] = ctx.links.for_documents(stored.key)


async def _process_document(ctx: _Context, plan: DocumentPlan) -> dict[str, Any] | None:
    """One document: its inline images uploaded, then rewritten in the pool and stored;
    None when it can no longer be read (swapped since the listing)."""
    try:
        images = await ctx.pool(batch_jobs.inline_images, ctx.root, plan.source, plan.kind,
                                ctx.scratch)
    except OSError:
        return None
    inline: dict[str, str] = {}
    for image in images:  # uploaded once by content hash
        stored = await ctx.io(_upload_scratch, ctx.store, ctx.base, image.path, image.name)
        inline[image.uri] = ctx.links.for_documents(stored.key)
    try:
        result = await ctx.pool(batch_jobs.finish_document, ctx.root, plan, ctx.known,
                                inline, ctx.files, ctx.scratch)
    except OSError:
        return None
    entry: dict[str, Any] = {"source": plan.source, "storage_url": "",
                             "storage_presigned_url": "",
                             **batch_jobs.entry_fields(result)}
    if ctx.store.config.store_final:
        key = object_key(ctx.base, final_name(plan.source))
        entry.update(await ctx.io(_put_document, ctx.links, key, result.path))
    if ctx.chunks is not None:
        entry["chunks"] = await _store_chunks(ctx, plan.source, result.path)
    return entry


async def _store_chunks(ctx: _Context, source: str, final: str) -> dict[str, Any]:
    """The chunks of a final document, cut in the pool and stored beside it (when final
    documents are stored); its entry's ``chunks``: count, links, warnings or error."""
    got = await ctx.pool(batch_jobs.chunk_final, final, ctx.chunks, ctx.scratch)
    if got.error:
        return {"count": 0, "storage_url": "", "storage_presigned_url": "",
                "warnings": [], "error": got.error}
    out: dict[str, Any] = {"count": got.count, "storage_url": "", "storage_presigned_url": "",
                           "warnings": got.warnings}
    if ctx.store.config.store_final:
        key = object_key(ctx.base, chunks_name(source))
        out.update(await ctx.io(_put_document, ctx.links, key, got.path,
                                "application/json; charset=utf-8"))
    return out


def _document_links(links: LinkMaker, base: str, sources: list[str]) -> dict[str, str]:
    """The link each document will have once stored (presigning is CPU: a thread runs it)."""
    return {s: links.for_documents(object_key(base, final_name(s))) for s in sources}


async def process_tree(svc: Services, company_id: str, root: Path, *, prefix: str = "",
                       version_id: str = "", progress: Progress | None = None,
                       chunks: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Process every Markdown/HTML document under ``root``; returns the result entries.
    ``chunks``: the chunks writer's options (:func:`.batch_chunks.chunk_options`) to store
    each document's chunks beside it, None for none. Raises :class:`BatchStorageFailed`
    with the entries done so far when storage fails."""
    storage, render_pool = storage_of(svc), pool_of(svc)
    store = await storage.store(company_id)
    base = "/".join(clean_prefix(p) for p in (store.config.prefix, prefix, version_id) if p)
    linkmap = await storage.linkmap.get(company_id)
    tree = await render_pool.run(batch_jobs.plan_tree, str(root), linkmap, tenant=company_id)
    links = await link_maker(svc, company_id, store)
    scratch = await storage.io(tempfile.mkdtemp, "", "batch-")
    try:
        doc_links = await storage.io(_document_links, links, base,
                                     [d.source for d in tree.documents])
        ctx = _Context(storage, render_pool, svc.settings.upload_concurrency, store, str(root),
                       base, tree.files, scratch,
                       Lookups(linkmap=linkmap, doc_links=doc_links), company_id, links,
                       chunks)
        return await _run(ctx, tree, progress)
    finally:
        await storage.io(shutil.rmtree, scratch, True)


async def _run(ctx: _Context, tree: batch_jobs.TreePlan, progress: Progress | None
               ) -> list[dict[str, Any]]:
    done: list[dict[str, Any]] = []
    total = len(tree.documents)
    try:
        await _upload_assets(ctx, [f for f in tree.assets if not f.lower().endswith(".css")])
        seen: set[str] = set()
        for sheet in (f for f in tree.assets if f.lower().endswith(".css")):
            await _upload_stylesheet(ctx, sheet, seen)
        for i, doc in enumerate(tree.documents):
            entry = await _process_document(ctx, doc)
            if entry is not None:
                done.append(entry)
            if progress:
                try:
                    await progress(i + 1, total, doc.source)
                except BatchStopped as stop:
                    stop.files, stop.total = done, total
                    stop.not_processed = [d.source for d in tree.documents[i + 1:]]
                    raise
    except StorageError as exc:
        raise BatchStorageFailed(f"storage failed after {len(done)} of {total} documents: "
                                 f"{exc.message}", done, total) from exc
    return done


async def process_archive(svc: Services, company_id: str, data: bytes, filename: str, *,
                          prefix: str = "",
                          version_id: str = "", encoding: str | None = None,
                          progress: Progress | None = None,
                          chunks: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Unpack safely into a temporary directory (always removed) and process it
    (``chunks`` as for :func:`process_tree`)."""
    if archives.detect_archive_kind(filename, data) is None:
        raise DocsError(40002, "not a zip, tar.gz or tgz archive")
    storage = storage_of(svc)
    limits = archives.ArchiveLimits(svc.settings.archive_max_entries,
                                    svc.settings.archive_max_unpacked_bytes)
    context = archives.unpacked(data, filename, encoding=encoding or None, limits=limits)
    root = await storage.io(context.__enter__)
    try:
        return await process_tree(svc, company_id, root, prefix=prefix, version_id=version_id,
                                  progress=progress, chunks=chunks)
    finally:
        await storage.io(context.__exit__, None, None, None)


def batch_params(fields: dict[str, str]) -> tuple[str, str]:
    """``prefix`` and ``versionId`` of a batch form, each a valid key prefix (40001 if not)."""
    prefix = (fields.get("prefix") or "").strip().strip("/")
    version = (fields.get("versionId") or "").strip().strip("/")
    for value, name in ((prefix, "prefix"), (version, "versionId")):
        try:
            clean_prefix(value)
        except StorageConfigError as exc:
            raise DocsError(40001, f"{name} is not a valid key prefix: {exc.error}") from exc
        if len(value) > 200 or ".." in value.split("/") or "\\" in value:
            raise DocsError(40001, f"{name} is not a valid key prefix")
    return prefix, version




async def stage_archive(svc: Services, company_id: str, name: str, data: bytes
                        ) -> StagedArchive:
    """Keep an archive in the company's storage under ``_staging/`` for a later
    ``/api/archive/process``; drops the company's expired staged archives on the way (a
    failure there is harmless)."""
    if archives.detect_archive_kind(name, data) is None:
        raise DocsError(40002, "not a zip, tar.gz or tgz archive")
    storage = storage_of(svc)
    store = await storage.store(company_id)
    staged = StagedArchives.new(store.config.prefix, name, len(data))
    await storage.put(store, staged.key, data, "application/octet-stream")
    await StagedArchives(svc.redis).save(company_id, staged)
    try:
        await storage.io(purge_expired, store)
    except StorageError:
        pass
    return staged


async def staged_archive(svc: Services, company_id: str, stage_id: str
                         ) -> tuple[StagedArchive, bytes]:
    """A staged archive of the company and its bytes (40401 when expired or gone)."""
    staged = await StagedArchives(svc.redis).get(company_id, stage_id)
    if staged is None:
        raise DocsError(40401, "no staged archive with this id (it may have expired)")
    storage = storage_of(svc)
    store = await storage.store(company_id)
    try:
        data = await storage.io(store.get_bytes, staged.key)
    except StorageError as exc:
        raise DocsError(40401, f"staged archive is gone: {exc.message}") from exc
    return staged, data
