"""The durable job queue: job records in Redis, job ids on a Redis Stream read by a consumer
group (``XADD``, ``XREADGROUP``, ``XACK``, ``XAUTOCLAIM``).

Every consumer (a ``serve`` or ``worker`` process) reads new entries with ``XREADGROUP``; an
entry stays pending until its consumer acknowledges it. A consumer that dies leaves its entry
pending and idle; another claims it with ``XAUTOCLAIM`` once it has been idle for
``claim_idle_ms`` and runs the job again (the work is idempotent: content-hash keys). A running
consumer keeps its entry fresh with ``XCLAIM ... JUSTID`` (Redis' own idle clock, no lock of
ours). A job started ``max_attempts`` times without finishing ends ``failed``.

The record of a job lives under its company (another company's id is not found) for
``result_ttl`` seconds after its last change; the company's index (a sorted set by creation
time) pages the list.

A job with a ``callback_url`` that ends (done, failed or cancelled) is put in the webhook
outbox (:data:`OUTBOX`, a sorted set scored by the next attempt's time) in the same
transaction that writes its final state, so no process death can lose the delivery;
:mod:`store.webhook_outbox` takes it from there.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from redis.exceptions import ResponseError, WatchError

from store.jobs import is_job_id

STREAM = "ds:jobq"
GROUP = "ds:workers"
ENDED = ("done", "failed", "cancelled")
PRIVATE_FIELDS = ("input", "company_id")
IDEMPOTENCY_TTL_SECONDS = 24 * 3600
OUTBOX = "ds:hooks"  # pending webhook deliveries: member "<company>:<job>", score = due time


def record_key(company_id: str, job_id: str) -> str:
    return f"ds:job:{company_id}:{job_id}"


def _index_key(company_id: str) -> str:
    return f"ds:jobs:{company_id}"


def outbox_member(company_id: str, job_id: str) -> str:
    """The outbox member of a job (a job id never holds a colon; a company id may)."""
    return f"{company_id}:{job_id}"


def public_view(record: dict[str, Any]) -> dict[str, Any]:
    """The record as its owner sees it (no storage keys, no tenant id)."""
    return {k: v for k, v in record.items() if k not in PRIVATE_FIELDS}


class IdempotencyConflict(Exception):
    """The idempotency key was used before with a different request body."""


@dataclass(frozen=True)
class Delivery:
    """One stream entry handed to a consumer: which job, and whether it was claimed from a
    consumer that stopped answering."""

    message_id: str
    job_id: str
    company_id: str
    claimed: bool


class JobQueue:
    """Submit, read, list, cancel and consume jobs."""

    def __init__(self, redis: Any, *, result_ttl: int = 24 * 3600, claim_idle_ms: int = 30000,
                 max_attempts: int = 3) -> None:
        self.redis = redis
        self.result_ttl = result_ttl
        self.claim_idle_ms = claim_idle_ms
        self.max_attempts = max_attempts

    # -- producers -------------------------------------------------------------------------

    async def ensure_group(self) -> None:
        """Create the stream and the consumer group when missing (idempotent)."""
        try:
            await self.redis.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def submit(self, company_id: str, kind: str, job_input: dict[str, Any], *,
                     callback_url: str = "", job_id: str | None = None) -> dict[str, Any]:
        """Save a ``queued`` record and enqueue it; returns the record."""
        await self.ensure_group()
        job_id = job_id or uuid.uuid4().hex
        now = time.time()
        record: dict[str, Any] = {
            "id": job_id, "kind": kind, "state": "queued", "done": 0, "total": None,
            "current": "", "created": now, "started": None, "finished": None, "attempts": 0,
            "company_id": company_id, "input": job_input, "callback_url": callback_url,
            "deliveries": [],
        }
        await self._write(company_id, job_id, record)
        await self.redis.zadd(_index_key(company_id), {job_id: now})
        await self.redis.expire(_index_key(company_id), self.result_ttl)
        await self.redis.xadd(STREAM, {"job": job_id, "company": company_id})
        return record

    async def claim_idempotency(self, company_id: str, key: str, body_digest: str,
                                job_id: str) -> str:
        """Bind ``key`` to ``job_id`` for 24 h; returns the job id the key is bound to (an
        earlier one for the same body). Raises :class:`IdempotencyConflict` for another
        body."""
        name = "ds:idem:" + company_id + ":" + hashlib.sha256(key.encode()).hexdigest()
        value = json.dumps({"job": job_id, "body": body_digest})
        if await self.redis.set(name, value, nx=True, ex=IDEMPOTENCY_TTL_SECONDS):
            return job_id
        raw = await self.redis.get(name)
        bound = json.loads(raw) if raw else {"job": job_id, "body": body_digest}
        if bound["body"] != body_digest:
            raise IdempotencyConflict(key)
        return str(bound["job"])

    # -- records ---------------------------------------------------------------------------

    async def _write(self, company_id: str, job_id: str, record: dict[str, Any]) -> None:
        await self.redis.set(record_key(company_id, job_id), json.dumps(record),
                             ex=self.result_ttl)

    async def get(self, company_id: str, job_id: str) -> dict[str, Any] | None:
        """The record, or None when unknown, expired or another company's."""
        if not is_job_id(job_id):
            return None
        raw = await self.redis.get(record_key(company_id, job_id))
        return json.loads(raw) if raw else None

    async def update(self, company_id: str, job_id: str, changes: dict[str, Any], *,
                     unless: tuple[str, ...] = ENDED) -> dict[str, Any] | None:
        """Apply ``changes`` atomically unless the job is gone or in a state of ``unless``;
        returns the new record, or None when nothing was changed. A change that ends a job
        with a ``callback_url`` also schedules its webhook (due now) in the same
        transaction."""
        key = record_key(company_id, job_id)
        async with self.redis.pipeline() as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if not raw:
                        return None
                    record = json.loads(raw)
                    if record.get("state") in unless:
                        return None
                    was_ended = record.get("state") in ENDED
                    record.update(changes)
                    hook = (not was_ended and record.get("state") in ENDED
                            and bool(record.get("callback_url")))
                    if hook:
                        now = time.time()
                        record["webhook"] = {"state": "pending", "since": now,
                                             "next_attempt": now}
                    pipe.multi()
                    pipe.set(key, json.dumps(record), ex=self.result_ttl)
                    if hook:
                        pipe.zadd(OUTBOX, {outbox_member(company_id, job_id): now})
                    await pipe.execute()
                    return record
                except WatchError:
                    continue

    async def list(self, company_id: str, offset: int = 0, limit: int = 20
                   ) -> tuple[list[dict[str, Any]], int]:
        """The company's jobs newest first (one page) and how many there are."""
        index = _index_key(company_id)
        await self.redis.zremrangebyscore(index, "-inf", time.time() - self.result_ttl)
        total = await self.redis.zcard(index)
        ids = await self.redis.zrevrange(index, offset, offset + limit - 1)
        records = []
        for job_id in ids:
            record = await self.get(company_id, job_id)
            if record is not None:
                records.append(record)
        return records, int(total)

    async def cancel(self, company_id: str, job_id: str
                     ) -> tuple[dict[str, Any] | None, bool]:
        """Mark a queued or running job ``cancelled`` (its consumer drops it at its next
        step). Returns (record, whether this call cancelled it); (None, False) when
        unknown."""
        record = await self.update(company_id, job_id,
                                   {"state": "cancelled", "finished": time.time(),
                                    "msg": "cancelled by the caller"})
        if record is not None:
            return record, True
        return await self.get(company_id, job_id), False

    # -- consumers -------------------------------------------------------------------------

    async def next(self, consumer: str, block_ms: int = 1000) -> Delivery | None:
        """The next entry for ``consumer``: first one idle too long at a dead consumer
        (``XAUTOCLAIM``), else a new one (``XREADGROUP``, waiting up to ``block_ms``)."""
        await self.ensure_group()
        claimed = await self.redis.xautoclaim(STREAM, GROUP, consumer, self.claim_idle_ms,
                                              start_id="0-0", count=1)
        entries = claimed[1] if claimed else []
        if entries and entries[0] and entries[0][1]:
            return self._delivery(entries[0], claimed=True)
        read = await self.redis.xreadgroup(GROUP, consumer, {STREAM: ">"}, count=1,
                                           block=block_ms)
        for _stream, items in read or []:
            for item in items:
                if item[1]:
                    return self._delivery(item, claimed=False)
                await self.ack(item[0])  # an entry deleted meanwhile
        return None

    @staticmethod
    def _delivery(entry: Any, *, claimed: bool) -> Delivery:
        message_id, data = entry
        return Delivery(message_id, data.get("job", ""), data.get("company", ""), claimed)

    async def start(self, delivery: Delivery, consumer: str) -> dict[str, Any] | None:
        """Count one more attempt and mark the job ``running`` at ``consumer``. Returns the
        record to run, or None when there is nothing to run (the job ended, was cancelled or
        expired, or has now been started ``max_attempts`` times: then it ends ``failed``)."""
        record = await self.get(delivery.company_id, delivery.job_id)
        if record is None or record["state"] in ENDED:
            await self.ack(delivery.message_id)
            return None
        if record["attempts"] >= self.max_attempts:
            await self.update(delivery.company_id, delivery.job_id, {
                "state": "failed", "code": 50001, "finished": time.time(),
                "msg": f"abandoned: the job was started {record['attempts']} times and its "
                       "consumer stopped each time before it ended"})
            await self.ack(delivery.message_id)
            return None
        return await self.update(delivery.company_id, delivery.job_id, {
            "state": "running", "attempts": record["attempts"] + 1, "consumer": consumer,
            "started": time.time(), "claims": record.get("claims", 0) + int(delivery.claimed)})

    async def touch(self, consumer: str, message_id: str) -> None:
        """Reset the entry's idle time: its consumer is alive (``XCLAIM ... JUSTID``)."""
        await self.redis.xclaim(STREAM, GROUP, consumer, 0, [message_id], justid=True)

    async def hand_back(self, consumer: str, delivery: Delivery) -> None:
        """Give a job up unfinished (shutdown): the attempt does not count, and the entry is
        made idle at once so another consumer claims it on its next read."""
        record = await self.get(delivery.company_id, delivery.job_id)
        if record is not None:
            await self.update(delivery.company_id, delivery.job_id, {
                "state": "queued", "attempts": max(0, record["attempts"] - 1)})
        await self.redis.xclaim(STREAM, GROUP, consumer, 0, [delivery.message_id],
                                idle=self.claim_idle_ms + 1, justid=True)

    async def ack(self, message_id: str) -> None:
        """The entry is dealt with: acknowledge and delete it."""
        await self.redis.xack(STREAM, GROUP, message_id)
        await self.redis.xdel(STREAM, message_id)

    async def length(self) -> int:
        """Entries in the stream: queued plus running."""
        return int(await self.redis.xlen(STREAM))
