"""Folders and archives of Markdown/HTML: assets uploaded to object storage, links
rewritten, results reported per document (``/md/convert-folder``, ``/api/upload-archive``,
``/api/archive/stage``, ``/api/archive/process``, ``GET /api/jobs/{id}``).

Planning and rewriting are pure (``render_pool.batch``, ``render_pool.links``); HTML to
Markdown runs in the process pool; file and storage I/O run in the storage thread pool.
"""

from __future__ import annotations

import asyncio
import logging
import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from render_pool import archives, batch, links
from render_pool.html_markdown import html_to_markdown
from store.keys import clean_prefix, object_key
from store.objects import ObjectStore
from store.staging import StagedArchives, purge_expired
from store.storage_errors import StorageConfigError, StorageError
from store.storage_io import link_for_documents
from tornado_app.docs.base import DocsError, UploadHandler, bool_field
from tornado_app.docs.config import PlainError, PlainHandler
from tornado_app.docs.folder_roots import NOT_A_FOLDER, allowed_folder
from tornado_app.services import Services

log = logging.getLogger(__name__)
Progress = Callable[[int, int, str], Awaitable[None]]


class BatchStorageFailed(Exception):
    """Storage failed mid-batch; ``files`` holds what was done before."""

    def __init__(self, message: str, files: list[dict[str, Any]], total: int) -> None:
        super().__init__(message)
        self.message, self.files, self.total = message, files, total


@dataclass
class _Context:
    svc: Services
    store: ObjectStore
    root: Path
    base: str
    linkmap: dict[str, str]
    files: list[str]
    asset_links: dict[str, str] = field(default_factory=dict)
    asset_errors: dict[str, str] = field(default_factory=dict)
    doc_links: dict[str, Any] = field(default_factory=dict)
    css_failed: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    company_id: str = ""  # the tenant whose turn the pool jobs take

    async def io(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.svc.storage.io(fn, *args)


def final_name(source: str) -> str:
    """Stored name of a processed document: HTML becomes Markdown."""
    stem, ext = posixpath.splitext(source)
    return f"{stem}.md" if ext.lower() in (".html", ".htm") else source


async def _upload_assets(ctx: _Context, wanted: list[str]) -> None:
    slots = asyncio.Semaphore(ctx.svc.settings.upload_concurrency)

    async def one(rel: str) -> None:
        async with slots:
            try:
                data = await ctx.io(archives.read_inside, ctx.root, rel)
                stored = await ctx.io(ctx.store.put_asset, ctx.base, posixpath.basename(rel),
                                      data)
                ctx.asset_links[rel] = link_for_documents(ctx.store, stored.links)
            except OSError as exc:
                ctx.asset_errors[rel] = f"unreadable: {exc.strerror or exc}"

    await asyncio.gather(*(one(rel) for rel in wanted))


async def _upload_stylesheet(ctx: _Context, rel: str, seen: set[str]) -> None:
    """Upload a CSS file after the files its ``url()``/``@import`` name (CSS it imports
    first, depth first), with those references rewritten; its failures are kept for the
    documents that use it."""
    if rel in seen or rel in ctx.asset_links or rel in ctx.asset_errors:
        return
    seen.add(rel)
    try:
        text = batch.decode_text(await ctx.io(archives.read_inside, ctx.root, rel))
    except OSError as exc:
        ctx.asset_errors[rel] = f"unreadable: {exc.strerror or exc}"
        return
    plan = batch.plan_document(rel, text, ctx.files, kind="css")
    deps = [f for f in plan.asset_files if f not in ctx.asset_links]
    await _upload_assets(ctx, [f for f in deps if not f.lower().endswith(".css")])
    for dep in deps:
        if dep.lower().endswith(".css"):
            await _upload_stylesheet(ctx, dep, seen)
    mapping, _, failed = _mapping_for(ctx, plan)
    ctx.css_failed[rel] = failed
    data = links.rewrite_css(text, mapping).encode("utf-8")
    stored = await ctx.io(ctx.store.put_asset, ctx.base, posixpath.basename(rel), data)
    ctx.asset_links[rel] = link_for_documents(ctx.store, stored.links)


def _mapping_for(ctx: _Context, plan: batch.DocumentPlan) -> tuple[dict[str, str], int, list]:
    mapping: dict[str, str] = {}
    failed: list[dict[str, str]] = []
    ok = 0
    for ref in plan.refs:
        if ref.target in ctx.linkmap or (ref.file and ref.file in ctx.linkmap):
            mapping[ref.target] = ctx.linkmap.get(ref.target) or ctx.linkmap[ref.file or ""]
            ok += 1
        elif ref.status == batch.OK and ref.document and ref.file in ctx.doc_links:
            mapping[ref.target] = ref.link(ctx.doc_links[ref.file])
        elif ref.status == batch.OK and ref.file in ctx.asset_links:
            mapping[ref.target] = ref.link(ctx.asset_links[ref.file])
            ok += 1
            failed += [{"ref": f"{ref.target}: {x['ref']}", "reason": x["reason"]}
                       for x in ctx.css_failed.get(ref.file or "", [])]
        else:
            reason = ctx.asset_errors.get(ref.file or "", ref.status)
            failed.append({"ref": ref.target, "reason": reason})
    return mapping, ok, failed


async def _process_document(ctx: _Context, plan: batch.DocumentPlan, text: str
                            ) -> dict[str, Any]:
    mapping, ok, failed = _mapping_for(ctx, plan)
    # base64 images (Markdown and HTML) uploaded once by content hash
    for uri, data, mime in links.data_uri_images(text, markdown=plan.kind == "markdown"):
        ext = mime.split("/", 1)[-1].split("+", 1)[0]
        stored = await ctx.io(ctx.store.put_asset, ctx.base, f"inline.{ext}", data)
        mapping[uri] = link_for_documents(ctx.store, stored.links)
        ok += 1
    if plan.kind == "markdown":
        final = links.rewrite_markdown(text, mapping)
    else:
        # phase 1: HTML assets uploaded, HTML rewritten
        html = links.rewrite_html(text, mapping)
        # phase 2: HTML to Markdown (pool); phase 3: links left in the Markdown rewritten
        markdown = await ctx.svc.pool.run(html_to_markdown, html, tenant=ctx.company_id)
        again = batch.plan_document(final_name(plan.source), markdown, ctx.files)
        second, ok2, failed2 = _mapping_for(ctx, again)
        final = links.rewrite_markdown(markdown, second)
        mapping.update(second)
        ok += ok2
        failed += [f for f in failed2 if f["ref"] not in {x["ref"] for x in failed}]
    entry: dict[str, Any] = {"source": plan.source, "storage_url": "",
                             "storage_presigned_url": "", "asset_ok": ok,
                             "asset_fail": len(failed),
                             "mappings": batch.mappings_entries(
                                 {k: v for k, v in mapping.items() if not k.startswith("data:")}),
                             "failed": failed}
    if ctx.store.config.store_final:
        key = object_key(ctx.base, final_name(plan.source))
        stored = await ctx.io(ctx.store.put_bytes, key, final.encode("utf-8"),
                              "text/markdown; charset=utf-8")
        entry.update(stored.as_dict())
    return entry


async def process_tree(svc: Services, company_id: str, root: Path, *, prefix: str = "",
                       version_id: str = "",
                       progress: Progress | None = None) -> list[dict[str, Any]]:
    """Process every Markdown/HTML document under ``root``; returns the result entries.
    Raises :class:`BatchStorageFailed` with the entries done so far when storage fails."""
    store = await svc.storage.store(company_id)
    base = "/".join(clean_prefix(p) for p in (store.config.prefix, prefix, version_id) if p)
    files = await svc.storage.io(archives.list_files, root)
    texts: dict[str, str] = {}
    for source in batch.documents(files):
        try:  # never through a link, never outside root (a file swapped after the listing)
            raw = await svc.storage.io(archives.read_inside, root, source)
        except OSError:
            continue
        texts[source] = batch.decode_text(raw)
    files = [f for f in files if f in texts or not batch.document_kind(f)]
    plan = batch.plan_batch(str(root), files, texts)
    ctx = _Context(svc, store, root, base, await svc.storage.linkmap.get(company_id), files,
                   company_id=company_id)
    for doc in plan.documents:
        key = object_key(base, final_name(doc.source))
        ctx.doc_links[doc.source] = link_for_documents(store, store.links(key))
    wanted = sorted({r.file for d in plan.documents for r in d.resolved
                     if r.file and not r.document and r.target not in ctx.linkmap
                     and r.file not in ctx.linkmap})
    done: list[dict[str, Any]] = []
    total = len(plan.documents)
    try:
        await _upload_assets(ctx, [f for f in wanted if not f.lower().endswith(".css")])
        seen: set[str] = set()
        for sheet in (f for f in wanted if f.lower().endswith(".css")):
            await _upload_stylesheet(ctx, sheet, seen)
        for i, doc in enumerate(plan.documents):
            done.append(await _process_document(ctx, doc, texts[doc.source]))
            if progress:
                await progress(i + 1, total, doc.source)
    except StorageError as exc:
        raise BatchStorageFailed(f"storage failed after {len(done)} of {total} documents: "
                                 f"{exc.message}", done, total) from exc
    return done


async def process_archive(svc: Services, company_id: str, data: bytes, filename: str, *,
                          prefix: str = "",
                          version_id: str = "", encoding: str | None = None,
                          progress: Progress | None = None) -> list[dict[str, Any]]:
    """Unpack safely into a temporary directory (always removed) and process it."""
    if archives.detect_archive_kind(filename, data) is None:
        raise DocsError(40002, "not a zip, tar.gz or tgz archive")
    context = archives.unpacked(data, filename, encoding=encoding or None)
    root = await svc.storage.io(context.__enter__)
    try:
        return await process_tree(svc, company_id, root, prefix=prefix, version_id=version_id,
                                  progress=progress)
    finally:
        await svc.storage.io(context.__exit__, None, None, None)


def _params(fields: dict[str, str]) -> tuple[str, str]:
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


class ArchiveRunner(UploadHandler):
    """Shared by upload-archive and archive/process: run now, or as a polled job."""

    async def run_archive(self, data: bytes, filename: str, fields: dict[str, str],
                          staged_key: str = "") -> None:
        prefix, version = _params(fields)
        encoding = (fields.get("encoding") or "").strip() or None
        svc = self.services
        if self.services.storage is None:
            raise DocsError(50201, "storage not configured")
        await svc.storage.store(self.company_id)  # 50201 before any work without storage
        if bool_field(fields, "async"):
            await self.enqueue_archive(data, filename, fields, prefix, version, encoding,
                                       staged_key)
            return
        try:
            files = await process_archive(svc, self.company_id, data, filename, prefix=prefix,
                                          version_id=version, encoding=encoding)
        except BatchStorageFailed as exc:
            self.write_json(200, {"code": 50201, "msg": exc.message,
                                  "data": {"count": len(exc.files), "total": exc.total,
                                           "files": exc.files}})
            return
        self.success({"count": len(files), "files": files})

    async def enqueue_archive(self, data: bytes, filename: str, fields: dict[str, str],
                              prefix: str, version: str, encoding: str | None,
                              staged_key: str = "") -> None:
        """Store the input (unless already staged) and queue a job; answers its id."""
        from tornado_app.docs.async_requests import answer, submit

        if archives.detect_archive_kind(filename, data) is None:
            raise DocsError(40002, "not a zip, tar.gz or tgz archive")
        job_input = {"key": staged_key, "owned": False, "name": filename, "prefix": prefix,
                     "versionId": version, "encoding": encoding or ""}
        answer(self, await submit(self, "archive", fields, {"file": (filename, data)},
                                  None if staged_key else data, job_input))


class UploadArchiveHandler(ArchiveRunner):
    async def post(self) -> None:
        fields, files = self.form()
        upload = files.get("file")
        if not upload:
            raise DocsError(40001, "file (zip, tar.gz or tgz) is required")
        await self.run_archive(upload[1], upload[0], fields)


class StageArchiveHandler(UploadHandler):
    async def post(self) -> None:
        _, files = self.form()
        upload = files.get("file")
        if not upload:
            raise DocsError(40001, "file (zip, tar.gz or tgz) is required")
        name, data = upload
        if archives.detect_archive_kind(name, data) is None:
            raise DocsError(40002, "not a zip, tar.gz or tgz archive")
        if self.services.storage is None:
            raise DocsError(50201, "storage not configured")
        store = await self.services.storage.store(self.company_id)
        staged = StagedArchives.new(store.config.prefix, name, len(data))
        await self.services.storage.put(store, staged.key, data, "application/octet-stream")
        await StagedArchives(self.services.redis).save(self.company_id, staged)
        self.success({"id": staged.id, "name": name, "size": len(data)})
        try:  # staging is a good moment to drop what expired; a failure here is harmless
            await self.services.storage.io(purge_expired, store)
        except StorageError:
            pass


class ProcessArchiveHandler(ArchiveRunner):
    async def post(self) -> None:
        fields, _ = self.form()
        stage_id = (fields.get("id") or "").strip()
        if not stage_id:
            raise DocsError(40001, "id of a staged archive is required")
        staged = await StagedArchives(self.services.redis).get(self.company_id, stage_id)
        if staged is None:
            raise DocsError(40401, "no staged archive with this id (it may have expired)")
        storage = self.services.storage
        store = await storage.store(self.company_id)
        try:
            data = await storage.io(store.get_bytes, staged.key)
        except StorageError as exc:
            raise DocsError(40401, f"staged archive is gone: {exc.message}") from exc
        await self.run_archive(data, staged.name, fields, staged.key)


class ConvertFolderHandler(PlainHandler):
    """``/md/convert-folder`` (ADMIN): a folder under the caller's company's ``FOLDER_ROOTS``
    (:mod:`tornado_app.docs.folder_roots`; plain response)."""

    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = self.form()
        raw = (fields.get("folder_path") or "").strip()
        if not raw:
            raise PlainError(400, "folder_path is required")
        folder = Path(raw)
        if not folder.is_absolute():
            raise PlainError(400, "folder_path must be an absolute path")
        real = await allowed_folder(self.services, self.company_id, folder)
        if real is None:  # outside the company's roots answers like a missing folder
            raise PlainError(404, NOT_A_FOLDER)
        prefix, version = _params(fields)
        if bool_field(fields, "async"):
            from tornado_app.docs.async_requests import submit

            job_id = await submit(self, "folder", fields, {}, None, {
                "folder": str(real), "name": real.name, "prefix": prefix, "versionId": version})
            self.reply({"ok": True, "job_id": job_id, "status_url": f"/api/jobs/{job_id}"})
            return
        try:
            files = await process_tree(self.services, self.company_id, real, prefix=prefix,
                                       version_id=version)
        except BatchStorageFailed as exc:
            self.write_json(502, {"ok": False, "error": exc.message, "hint": "",
                                  "count": len(exc.files), "files": exc.files})
            return
        self.reply({"ok": True, "count": len(files), "files": files})
