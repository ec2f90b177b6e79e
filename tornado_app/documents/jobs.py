"""Jobs a caller can manage: ``GET /api/jobs`` (the company's jobs, newest first, paged),
``GET /api/jobs/{id}``, ``POST /api/jobs/{id}/cancel`` and ``GET /api/jobs/{id}/events``
(server-sent events until the job ends). Another company's job id answers 40401, as if it did
not exist."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tornado.iostream import StreamClosedError

from store.job_queue import ENDED, public_view
from tornado_app.documents.base import DocsError, DocsHandler

# API contract and event-stream pacing, not deployment tunables
MAX_PAGE_SIZE = 100
EVENT_POLL_SECONDS = 0.25
EVENT_KEEPALIVE_SECONDS = 15.0  # under the usual 30-60 s proxy idle timeouts


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    """A list entry: the record without its (possibly large) result."""
    return {k: v for k, v in public_view(record).items() if k != "result"}


def _positive(text: str, name: str, default: int) -> int:
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise DocsError(40001, f"{name} must be a positive integer")
    return int(text)


class JobsListHandler(DocsHandler):
    async def get(self) -> None:
        page = _positive(self.get_query_argument("page", ""), "page", 1)
        size = min(MAX_PAGE_SIZE, _positive(self.get_query_argument("pageSize", ""),
                                            "pageSize", 20))
        records, total = await self.services.job_queue().list(self.company_id,
                                                             (page - 1) * size, size)
        self.success({"items": [_summary(r) for r in records], "total": total, "page": page,
                      "pageSize": size})


class JobHandler(DocsHandler):
    async def get(self, job_id: str) -> None:
        record = await self.services.job_queue().get(self.company_id, job_id)
        if record is None:
            raise DocsError(40401, "no such job (it may have expired)")
        self.success(public_view(record))


class JobCancelHandler(DocsHandler):
    async def post(self, job_id: str) -> None:
        record, cancelled = await self.services.job_queue().cancel(self.company_id, job_id)
        if record is None:
            raise DocsError(40401, "no such job (it may have expired)")
        if not cancelled:
            raise DocsError(40901, f"the job has ended already ({record['state']})")
        self.success(_summary(record))


class JobEventsHandler(DocsHandler):
    """``text/event-stream``: a ``progress`` event whenever state, done, total or the current
    file change, then one ``end`` event with the final record (without the result). When the
    process shuts down the stream ends without ``end``: the client reads the job again (any
    replica answers)."""

    async def get(self, job_id: str) -> None:
        queue = self.services.job_queue()
        record = await queue.get(self.company_id, job_id)
        if record is None:
            raise DocsError(40401, "no such job (it may have expired)")
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Accel-Buffering", "no")
        last: tuple[Any, ...] | None = None
        quiet = 0.0
        try:
            while record is not None and not self.services.extras.get("closing"):
                view = {k: record.get(k) for k in ("id", "state", "done", "total", "current")}
                now = tuple(view.values())
                if record["state"] in ENDED:
                    self.write(f"event: end\ndata: {json.dumps(_summary(record))}\n\n")
                    await self.flush()
                    break
                if now != last:
                    self.write(f"event: progress\ndata: {json.dumps(view)}\n\n")
                    await self.flush()
                    last, quiet = now, 0.0
                elif quiet >= EVENT_KEEPALIVE_SECONDS:
                    self.write(": keep-alive\n\n")
                    await self.flush()
                    quiet = 0.0
                await asyncio.sleep(EVENT_POLL_SECONDS)
                quiet += EVENT_POLL_SECONDS
                record = await queue.get(self.company_id, job_id)
        except StreamClosedError:
            return
        self.finish()
