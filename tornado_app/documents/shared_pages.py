"""The OCR pages of an async job's scan, shared by every job consumer (issue 35, item 2), so
more worker processes or machines make one big scan faster.

The consumer running the job (the owner) publishes the pages in Redis
(:class:`store.page_work.PageWork`) when the reading stops at ``OcrPending``, then takes
them itself, one per worker of its pool at a time, as the pages of a direct request are run
(:func:`tornado_app.documents.conversion.read_and_write`). Meanwhile every other consumer
that has no job of its own (:class:`PageHelper`) takes pages too, recognises each in its own
pool for the document's company (so the pool's per-company turns still hold) and writes the
result back as JSON. The owner counts the pages done by anyone as the job's progress, and
reads the document again once every page has a result.

No page is lost and nothing waits on another consumer: the owner can run every page itself.
A helper renews its lease on a page while it runs it (every third of :data:`LEASE_SECONDS`);
a helper that stops or dies lets the lease pass, and the owner runs the page. A cancel ends
the owner's task, which withdraws the pages: helpers take no more, and those running one
stop at their next renewal. The owner's own pages are never taken back from it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from render_pool.engine import jobs
from render_pool.engine.ocr.page_json import Reading, reading_from_json, reading_to_json
from render_pool.errors import ConversionError, OcrPending
from render_pool.runtime.pool import RenderPool
from store.page_work import PageWork, TakenPage, take_any
from tornado_app.documents.page_progress import pages_done

log = logging.getLogger(__name__)

LEASE_SECONDS = 15.0  # a page a helper holds without renewing this long is run by the owner
POLL_SECONDS = 0.2  # how often the owner looks at the results and the leases
HELP_POLL_SECONDS = 0.5  # how often an idle consumer looks for pages to take

PageResult = Reading | str  # a page's reading, or the message of the failure it met


@dataclass(frozen=True)
class PageSharing:
    """Where the job being run shares its pages, and the consumer running it."""

    work: PageWork
    consumer: str


_sharing: ContextVar[PageSharing | None] = ContextVar("page_sharing", default=None)


@contextlib.contextmanager
def sharing_pages(sharing: PageSharing) -> Iterator[None]:
    """Within the block (and the tasks started in it), a scan's pages are shared."""
    token = _sharing.set(sharing)
    try:
        yield
    finally:
        _sharing.reset(token)


def current_sharing() -> PageSharing | None:
    """The sharing of this context: None outside a job (a direct request)."""
    return _sharing.get()


async def ocr_one_page(pool: RenderPool, company_id: str, pdf: bytes, index: int,
                       languages: str) -> PageResult:
    """Page ``index`` of ``pdf`` recognised in a pool job for ``company_id``: its reading, or
    the message of the failure it met (the document is then read without that page's OCR)."""
    try:
        reading: Reading = await pool.run(jobs.ocr_page, pdf, index, languages,
                                          tenant=company_id, admitted=True)
        return reading
    except ConversionError as exc:
        log.info("OCR of a page failed", extra={"page": index + 1, "error": exc.message})
        return exc.message


def result_to_json(result: PageResult) -> str:
    if isinstance(result, str):
        return json.dumps({"error": result})
    return json.dumps({"reading": reading_to_json(result)})


def result_from_json(text: str) -> PageResult:
    value: dict[str, Any] = json.loads(text)
    if "error" in value:
        return str(value["error"])
    return reading_from_json(value["reading"])


async def share_pages(pool: RenderPool, sharing: PageSharing, company_id: str,
                      pending: OcrPending, data: bytes, languages: str) -> dict[int, Any]:
    """The pages ``pending`` names, recognised by this consumer and any idle one (see the
    module doc): page index -> reading or failure message, as ``ocr_pages`` takes them."""
    work, me = sharing.work, sharing.consumer
    pdf = pending.pdf if pending.pdf is not None else data
    total = len(pending.pages)
    await work.publish(pending.pages, pending.page_pdfs, pdf, languages, LEASE_SECONDS)

    async def here(index: int) -> None:
        alone = pending.page_pdfs.get(index)  # the page alone, when it could be
        where = (alone, 0) if alone is not None else (pdf, index)
        await work.finish(index, result_to_json(
            await ocr_one_page(pool, company_id, *where, languages)))

    running: set[asyncio.Task[None]] = set()
    try:
        await pages_done(0, total)
        while True:
            while len(running) < max(1, pool.workers):
                index = await work.take(me)
                if index is None:
                    index = await work.reclaim(me)  # a helper that stopped answering
                if index is None:
                    break
                running.add(asyncio.ensure_future(here(index)))
            done = await work.done_count()
            await pages_done(done, total)
            if done >= total:
                break
            if running:
                finished, running = await asyncio.wait(running, timeout=POLL_SECONDS)
                for task in finished:
                    task.result()  # an unexpected error ends the job
            elif not await work.exists():
                raise RuntimeError("the shared pages of the job were withdrawn")
            else:
                await asyncio.sleep(POLL_SECONDS)
        found = await work.results()
        return {index: result_from_json(found[index]) for index in pending.pages}
    finally:
        for task in running:
            task.cancel()
        with contextlib.suppress(Exception):
            await work.delete()


class PageHelper:
    """Takes pages of other consumers' jobs while its own consumer has no job
    (``idle()``), up to one per worker of its pool at a time; counts the pages it wrote
    (``pages_helped``)."""

    def __init__(self, redis: Any, pool: Callable[[], RenderPool | None], consumer: str,
                 idle: Callable[[], bool]) -> None:
        self.redis = redis
        self.pool = pool
        self.consumer = consumer
        self.idle = idle
        self.pages_helped = 0
        self.stopping = asyncio.Event()  # set by stop(): the loop ends at its next turn

    async def stop(self, task: asyncio.Task[None], grace_seconds: float = 5.0) -> None:
        """End :meth:`run` (its ``task``): by the event, whatever an awaited client does with
        a cancel (a Redis command cancelled mid-reply may swallow it), then by cancelling."""
        self.stopping.set()
        task.cancel()
        await asyncio.wait([task], timeout=grace_seconds)

    async def run(self) -> None:
        """Help until cancelled; the pages in hand are dropped then (their leases pass)."""
        helping: set[asyncio.Task[None]] = set()
        try:
            while not self.stopping.is_set():
                helping = {task for task in helping if not task.done()}
                pool = self.pool()
                taken: TakenPage | None = None
                if pool is not None and self.idle() and len(helping) < pool.workers:
                    try:
                        taken = await take_any(self.redis, self.consumer)
                    except Exception as exc:  # Redis away a moment: look again later
                        log.warning("shared pages unavailable", extra={"error": str(exc)})
                if pool is not None and taken is not None:
                    helping.add(asyncio.ensure_future(self._one(pool, taken)))
                elif helping:
                    await asyncio.wait(helping, timeout=HELP_POLL_SECONDS)
                else:
                    await asyncio.sleep(HELP_POLL_SECONDS)
        finally:
            for task in helping:
                task.cancel()

    async def _one(self, pool: RenderPool, taken: TakenPage) -> None:
        """Recognise one taken page and write its result, renewing the lease meanwhile;
        stop when the lease cannot be renewed (the job was cancelled or has ended)."""
        work = PageWork(self.redis, taken.company_id, taken.job_id)
        page = asyncio.ensure_future(self._recognise(pool, taken))
        renewing = asyncio.ensure_future(self._renew(work, taken))
        try:
            await asyncio.wait([page, renewing], return_when=asyncio.FIRST_COMPLETED)
            if not page.done():
                page.cancel()
                return
            if await work.finish(taken.index, result_to_json(page.result())):
                self.pages_helped += 1
        except Exception:  # the owner runs the page when the lease passes
            log.exception("a shared page failed", extra={"job": taken.job_id})
        finally:
            page.cancel()
            renewing.cancel()

    @staticmethod
    async def _recognise(pool: RenderPool, taken: TakenPage) -> PageResult:
        with pool.spreading():  # one against the pool's queue limit, like a request's pages
            return await ocr_one_page(pool, taken.company_id, taken.pdf, taken.pdf_index,
                                      taken.languages)

    async def _renew(self, work: PageWork, taken: TakenPage) -> None:
        """Renew the lease every third of its length; return when it cannot be."""
        while True:
            await asyncio.sleep(taken.lease / 3)
            with contextlib.suppress(Exception):
                if not await work.renew(taken.index, self.consumer):
                    return
