"""The job consumer every ``serve`` (unless ``--no-worker``) and every ``worker`` runs: it takes
jobs from the Redis Stream (:mod:`store.job_queue`), runs them in this process's render pool,
and records progress and the result on the job. Beside it runs the webhook sender
(:class:`tornado_app.documents.webhooks.WebhookSender`), which delivers any ended job's callback.

A job is acknowledged only when it has ended, so a consumer that dies leaves it to another
(claimed after ``JOB_CLAIM_IDLE_SECONDS``). A cancel is seen at the job's next step: the run is
abandoned; a batch records as its result the documents it stored before and those it did not.
A conversion (``convert``, ``markdown``) counts pages in ``done``/``total`` as they finish (the
pages of a scan as they are recognised, :mod:`tornado_app.documents.page_progress`) and is
watched for a cancel while it runs: its task is cancelled within ``CANCEL_POLL_SECONDS``, so
no further page starts (the pages in the pool's workers at that moment run out there).
A scan's OCR pages are shared with every consumer: one without a job of its own takes pages
of the others' scans (:mod:`tornado_app.documents.shared_pages`).
On shutdown the running job is given a grace period to end, then handed back to the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from typing import Any

from store.job_queue import ENDED, Delivery
from store.page_work import PageWork
from store.staging import STAGING_PREFIX
from store.storage_errors import StorageError
from tornado_app import request_base
from tornado_app.documents.batches.batch_service import BatchStopped
from tornado_app.documents.page_progress import reporting_pages
from tornado_app.documents.shared_pages import PageHelper, PageSharing, sharing_pages
from tornado_app.documents.webhooks import WebhookSender
from tornado_app.services import Services

log = logging.getLogger(__name__)

CANCEL_POLL_SECONDS = 0.25  # how soon a running conversion sees its cancel (one Redis GET)


class JobCancelled(BatchStopped):
    """The job was cancelled (or ended elsewhere) while it ran; a batch fills in what it had
    stored (:class:`BatchStopped`)."""


def consumer_name() -> str:
    """A name unique to this process (host, pid and a random part)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class JobWorker:
    """One consumer: one job at a time, run in this process's render pool."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.queue = svc.job_queue()
        self.name = consumer_name()
        self._stopping = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._job_task: asyncio.Task[None] | None = None
        self._delivery: Delivery | None = None
        self.sender = WebhookSender(svc)
        # while this consumer has no job, it takes pages of other consumers' scans
        self.helper = PageHelper(svc.redis, lambda: svc.pool, self.name, self._idle)
        self._help_task: asyncio.Task[None] | None = None

    def _idle(self) -> bool:
        job = self._job_task
        return not self._stopping.is_set() and (job is None or job.done())

    def start(self) -> None:
        """Begin consuming (and delivering webhooks) in the background."""
        self._loop_task = asyncio.ensure_future(self._loop())
        self._help_task = asyncio.ensure_future(self.helper.run())
        self.sender.start()
        log.info("job consumer started", extra={"consumer": self.name})

    async def stop(self, grace_seconds: float) -> None:
        """Take no more jobs; let the running one end within ``grace_seconds``, else hand
        it back to the queue (never dropped). Webhook attempts in flight end meanwhile or go
        back to the outbox."""
        self._stopping.set()
        sending = asyncio.ensure_future(self.sender.stop(min(grace_seconds, 5.0)))
        if self._help_task is not None:  # pages taken for others: their leases pass
            await self.helper.stop(self._help_task)
        job = self._job_task
        if job is not None and not job.done():
            await asyncio.wait([job], timeout=grace_seconds)
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await job
                delivery = self._delivery  # the loop clears it once the job has ended
                if delivery is not None:
                    with contextlib.suppress(Exception):
                        await self.queue.hand_back(self.name, delivery)
                    log.info("job handed back", extra={"job": delivery.job_id})
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        await sending

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                delivery = await self.queue.next(self.name, block_ms=1000)
                self.svc.metrics.job_queue_length.set(await self.queue.length())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: wait and try again
                log.warning("job queue unavailable", extra={"error": str(exc)})
                await asyncio.sleep(1)
                continue
            if delivery is None or self._stopping.is_set():
                continue
            if delivery.claimed:
                self.svc.metrics.job_claims.inc()
            self._delivery = delivery
            self._job_task = asyncio.ensure_future(self._run(delivery))
            try:
                await asyncio.shield(self._job_task)
            except asyncio.CancelledError:
                if self._stopping.is_set():
                    return
                raise
            except Exception:
                log.exception("job consumer step failed")
            finally:
                self._delivery = None

    async def _heartbeat(self, delivery: Delivery) -> None:
        every = max(0.1, self.svc.settings.job_claim_idle_seconds / 3)
        while True:
            await asyncio.sleep(every)
            with contextlib.suppress(Exception):
                await self.queue.touch(self.name, delivery)

    async def _run(self, delivery: Delivery) -> None:
        record = await self.queue.start(delivery, self.name)
        if record is None:
            return
        company_id, job_id = delivery.company_id, delivery.job_id
        beat = asyncio.ensure_future(self._heartbeat(delivery))
        began = time.monotonic()
        try:
            changes = await self._outcome(company_id, job_id, record)
        except JobCancelled as stop:
            changes = None
            if stop.files is not None and stop.not_processed is not None:
                await self._keep_partial(company_id, job_id, {
                    "done": stop.total - len(stop.not_processed), "total": stop.total,
                    "result": {"count": len(stop.files), "files": stop.files,
                               "not_processed": stop.not_processed}})
        finally:
            beat.cancel()
        if changes is not None:
            changes["finished"] = time.time()
            ended = await self.queue.update(company_id, job_id, changes)
            if ended is None and changes.get("result") is not None:  # cancelled at its end
                await self._keep_partial(company_id, job_id, {
                    k: changes[k] for k in ("done", "total", "result") if k in changes})
            if ended is not None:
                self.svc.metrics.jobs_ended.labels(ended["state"]).inc()
                self.svc.metrics.job_duration.observe(time.monotonic() - began)
                await self._after_end(ended)
        else:
            self.svc.metrics.jobs_ended.labels("cancelled").inc()
        await self.queue.ack(delivery)
        if record["input"].get("owned"):
            await self._drop_input(company_id, record["input"]["key"])

    async def _keep_partial(self, company_id: str, job_id: str, changes: dict[str, Any]
                            ) -> None:
        """A cancelled job's record keeps what was stored before the cancel took effect (a
        batch: ``result.files`` and the sources it did not process, ``not_processed``), so
        its caller can see both."""
        with contextlib.suppress(Exception):  # the record may be gone: nothing to keep
            await self.queue.update(company_id, job_id, {**changes, "current": ""},
                                    unless=("done", "failed"))

    async def _after_end(self, record: dict[str, Any]) -> None:
        if record.get("callback_url"):  # its delivery is in the outbox: send it now
            self.sender.wake()

    async def _drop_input(self, company_id: str, key: str) -> None:
        storage = self.svc.storage
        if storage is None or f"/{STAGING_PREFIX}/" not in f"/{key}":
            return
        with contextlib.suppress(StorageError):
            store = await storage.store(company_id)
            await storage.io(store.remove, key)

    async def _convert(self, company_id: str, job_id: str, kind: str, data: bytes
                       ) -> dict[str, Any]:
        """An async ``/api/convert`` or ``/md/convert``: the stored form run as the request
        would run it, the output saved at a key named by the job id (a re-run rewrites it)."""
        from tornado_app.documents.async_requests import unpack_form
        from tornado_app.documents.conversion import save_rendered
        from tornado_app.documents.convert import convert_form
        from tornado_app.documents.markdown import render_markdown_form

        fields, files = await asyncio.to_thread(unpack_form, data)  # base64 of a large upload
        if kind == "convert":
            return await convert_form(self.svc, company_id, fields, files, save=True,
                                      result_token=job_id)
        rendered, name = await render_markdown_form(self.svc, company_id, fields, files)
        return await save_rendered(self.svc, company_id, rendered, name, result_token=job_id)

    async def _watched_convert(self, company_id: str, job_id: str, kind: str, data: bytes
                               ) -> tuple[dict[str, Any], tuple[int, int]]:
        """:meth:`_convert` with its pages counted on the record as they finish, stopped by a
        cancel (raises :class:`JobCancelled`). Returns the result and the last (done, total)
        reported ((1, 1) when none was: a document without pages)."""
        last = [0, 0]
        writing = asyncio.Lock()

        async def report(done: int, total: int) -> None:
            async with writing:  # in order, and never a count below one written before
                if total == last[1] and done <= last[0]:
                    return
                last[:] = [done, total]
                await self.queue.update(company_id, job_id, {"done": done, "total": total})

        sharing = PageSharing(PageWork(self.svc.redis, company_id, job_id), self.name)
        with reporting_pages(report), sharing_pages(sharing):  # the task copies the context
            task = asyncio.ensure_future(self._convert(company_id, job_id, kind, data))
        stopped = asyncio.Event()
        watcher = asyncio.ensure_future(self._watch_cancel(company_id, job_id, task, stopped))
        try:
            result = await task
        except asyncio.CancelledError:
            if stopped.is_set():
                raise JobCancelled(job_id) from None
            raise
        finally:
            watcher.cancel()
        return result, ((last[0], last[1]) if last[1] else (1, 1))

    async def _watch_cancel(self, company_id: str, job_id: str, task: asyncio.Future[Any],
                            stopped: asyncio.Event) -> None:
        """Cancel ``task`` once the job has ended elsewhere (cancelled) or is gone."""
        while not task.done():
            await asyncio.sleep(CANCEL_POLL_SECONDS)
            with contextlib.suppress(Exception):  # Redis away a moment: look again
                record = await self.queue.get(company_id, job_id)
                if record is None or record["state"] in ENDED:
                    stopped.set()
                    task.cancel()
                    return

    async def _folder(self, company_id: str, job_input: dict[str, Any], progress: Any
                      ) -> list[dict[str, Any]]:
        """An async ``/md/convert-folder``: the folder must be under the job's company's
        ``FOLDER_ROOTS`` of this process too (a worker on another machine may not have it)."""
        from pathlib import Path

        from tornado_app.documents.base import DocsError
        from tornado_app.documents.batches.batch_service import process_tree
        from tornado_app.documents.folder_roots import allowed_folder

        folder = await allowed_folder(self.svc, company_id, Path(job_input["folder"]))
        if folder is None:
            raise DocsError(40401, "the folder is not under this worker's FOLDER_ROOTS "
                                   "of the job's company")
        return await process_tree(self.svc, company_id, folder,
                                  prefix=job_input.get("prefix", ""),
                                  version_id=job_input.get("versionId", ""), progress=progress,
                                  chunks=job_input.get("chunks"))

    async def _outcome(self, company_id: str, job_id: str, record: dict[str, Any]
                       ) -> dict[str, Any]:
        """Run the job; the record changes that end it (raises :class:`JobCancelled`)."""
        from tornado_app.documents.base import DocsError, docs_error_for
        from tornado_app.documents.batches.batch_service import (
            BatchStorageFailed,
            process_archive,
        )

        async def progress(done: int, total: int, current: str) -> None:
            if await self.queue.update(company_id, job_id, {
                    "done": done, "total": total, "current": current}) is None:
                raise JobCancelled(job_id)

        job_input = record["input"]
        request_base.use(str(job_input.get("base") or ""))  # this job's task only
        try:
            storage = self.svc.storage
            if storage is None:
                raise DocsError(50201, "storage not configured")
            if record["kind"] == "folder":
                files = await self._folder(company_id, job_input, progress)
                return {"state": "done", "done": len(files), "total": len(files),
                        "current": "", "result": {"count": len(files), "files": files}}
            store = await storage.store(company_id)
            data = await storage.io(store.get_bytes, job_input["key"])
            if record["kind"] != "archive":
                result, (done, total) = await self._watched_convert(
                    company_id, job_id, record["kind"], data)
                return {"state": "done", "done": done, "total": total, "current": "",
                        "result": result}
            files = await process_archive(
                self.svc, company_id, data, job_input["name"],
                prefix=job_input.get("prefix", ""), version_id=job_input.get("versionId", ""),
                encoding=job_input.get("encoding") or None, progress=progress,
                chunks=job_input.get("chunks"))
            return {"state": "done", "done": len(files), "total": len(files), "current": "",
                    "result": {"count": len(files), "files": files}}
        except BatchStorageFailed as exc:
            return {"state": "failed", "code": 50201, "msg": exc.message,
                    "done": len(exc.files), "total": exc.total,
                    "result": {"count": len(exc.files), "files": exc.files}}
        except JobCancelled:
            raise
        except Exception as exc:  # the job must end, and the poller learn it
            known = docs_error_for(exc)
            if known is not None:
                return {"state": "failed", "code": known.code, "msg": known.msg}
            log.exception("job failed", extra={"job": job_id})
            return {"state": "failed", "code": 50001, "msg": "job failed"}
