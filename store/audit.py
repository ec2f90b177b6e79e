"""The audit trail: who did what to whom, when, from where, and how it ended.

Records go to the ``audit`` collection (kept 90 days by a TTL index on ``time``). Writing
one never delays or fails the request it describes: :meth:`AuditLog.record` only puts the
record on a bounded in-process queue, and one background task writes batches to MongoDB.
A full queue drops the record (``on_drop`` is called, a metric counts it); a failed write
drops the batch (``on_error``), logged without the records' contents. Records never hold a
password or token: callers pass names, ids, an action, an outcome and small details only.

Repeated events (:meth:`AuditLog.record_repeated`, used for throttled logins) are one record
per account, address and time window, with a count: the first occurrence inserts it, later
ones add to ``detail.count`` (and set ``detail.last``) in place. Counts are summed in memory
between writes, so a flood costs one update per batch, not one record per request. Past
:data:`MAX_ACCOUNTS_PER_ADDRESS` accounts from one address in a window, further accounts
share one record whose actor is ``*`` (a guesser rotating names cannot grow the trail either).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING
from pymongo.errors import OperationFailure

from store.usernames import username_key

log = logging.getLogger("store.audit")

RETENTION_SECONDS = 90 * 24 * 3600  # without the service; it passes AUDIT_RETENTION_SECONDS
_INDEX_CONFLICTS = (85, 86)  # IndexOptionsConflict, IndexKeySpecsConflict
MAX_ACCOUNTS_PER_ADDRESS = 20  # distinct accounts with own repeated-event records per window
ANY_ACCOUNT = "*"
ACTIONS = ("login", "logout", "setup", "user.create", "user.rename", "user.status",
           "user.role", "password.change", "password.reset",
           "key.create", "key.revoke",
           "key.use",  # an API key used below its role, refused for its maker, or revoked
           # the company's storage settings changed
           "storage.config", "storage.profile", "storage.linkmap")


async def ensure_indexes(db: AsyncIOMotorDatabase,
                         retention_seconds: int = RETENTION_SECONDS) -> None:
    """TTL index (records expire after ``retention_seconds``) and the listing index. A
    retention changed since the index was made is changed in place (``collMod``), so a new
    ``AUDIT_RETENTION_SECONDS`` applies at the next start instead of stopping it."""
    try:
        await db.audit.create_index([("time", ASCENDING)], expireAfterSeconds=retention_seconds,
                                    name="time_ttl")
    except OperationFailure as exc:
        if exc.code not in _INDEX_CONFLICTS:
            raise
        await db.command({"collMod": "audit", "index": {
            "name": "time_ttl", "expireAfterSeconds": retention_seconds}})
        log.info("audit retention changed", extra={"retention_seconds": retention_seconds})
    await db.audit.create_index([("companyId", ASCENDING), ("time", DESCENDING)])
    await db.audit.create_index([("aggKey", ASCENDING)], sparse=True)


@dataclass(frozen=True)
class Who:
    """An actor or target: the user id when known, the username as shown or typed."""

    id: int | None
    username: str


def _who(who: Who | None) -> dict[str, Any] | None:
    if who is None:
        return None
    return {"id": who.id, "username": who.username, "key": username_key(who.username)}


class AuditLog:
    """A bounded queue drained by one background task into MongoDB."""

    def __init__(self, db: AsyncIOMotorDatabase, *, queue_limit: int = 1000,
                 batch_size: int = 100, on_drop: Callable[[], None] | None = None,
                 on_error: Callable[[int], None] | None = None) -> None:
        self.db = db
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=queue_limit)
        self.batch_size = batch_size
        self.on_drop = on_drop or (lambda: None)
        self.on_error = on_error or (lambda n: None)
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0
        self._pending: dict[str, dict[str, Any]] = {}  # repeated events queued, by key
        self._accounts: dict[str, set[str]] = {}  # address -> account keys, this window
        self._window = -1

    def record(self, *, company_id: int | None, action: str, outcome: str,
               actor: Who | None, target: Who | None = None, address: str = "",
               detail: dict[str, str] | None = None) -> None:
        """Queue one record; returns at once (a full queue drops it and counts it)."""
        doc = {
            "time": datetime.now(UTC), "companyId": company_id, "action": action,
            "outcome": outcome, "actor": _who(actor), "target": _who(target),
            "address": address, "detail": detail or {},
        }
        self._enqueue(doc)

    def record_repeated(self, *, company_id: int | None, action: str, outcome: str,
                        actor: Who | None, target: Who | None = None, address: str = "",
                        window_seconds: int = 900) -> None:
        """Count one more occurrence of an event that floods (a throttled login): one record
        per company, action, outcome, account, address and ``window_seconds`` window, whose
        ``detail.count`` grows. Returns at once, like :meth:`record`."""
        now = datetime.now(UTC)
        window = int(now.timestamp() // max(1, window_seconds))
        account = username_key(actor.username) if actor is not None else ""
        if window != self._window:  # a new window: the accounts of the last one are done
            self._accounts.clear()
            self._window = window
        seen = self._accounts.setdefault(address, set())
        if account not in seen and len(seen) >= MAX_ACCOUNTS_PER_ADDRESS:
            actor = target = Who(None, ANY_ACCOUNT)
            account = ANY_ACCOUNT
        else:
            seen.add(account)
        key = hashlib.sha256(repr((company_id, action, outcome, account, address, window))
                             .encode("utf-8", "replace")).hexdigest()[:32]
        pending = self._pending.get(key)
        if pending is not None:
            pending["detail"]["count"] += 1
            pending["last"] = now
            return
        doc = {"time": now, "last": now, "companyId": company_id, "action": action,
               "outcome": outcome, "actor": _who(actor), "target": _who(target),
               "address": address, "detail": {"count": 1}, "aggKey": key}
        if self._enqueue(doc):
            self._pending[key] = doc

    def _enqueue(self, doc: dict[str, Any]) -> bool:
        try:
            self.queue.put_nowait(doc)
        except asyncio.QueueFull:
            self.dropped += 1
            self.on_drop()
            return False
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())
        return True

    async def _drain(self) -> None:
        while not self.queue.empty():
            batch = [self.queue.get_nowait()]
            while len(batch) < self.batch_size and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            for doc in batch:  # from here on, occurrences start a new increment
                if "aggKey" in doc:
                    self._pending.pop(doc["aggKey"], None)
            plain = [d for d in batch if "aggKey" not in d]
            try:
                if plain:
                    await self.db.audit.insert_many(plain, ordered=False)
                for doc in batch:
                    if "aggKey" in doc:
                        await self._add_count(doc)
            except Exception as exc:  # the store is down: drop, count, keep serving
                self.on_error(len(batch))
                log.warning("audit records not written", extra={
                    "records": len(batch), "error": type(exc).__name__})

    async def _add_count(self, doc: dict[str, Any]) -> None:
        """Insert the repeated event's record, or add this batch's count to it."""
        count = doc["detail"]["count"]
        last = doc.pop("last").isoformat(timespec="milliseconds").replace("+00:00", "Z")
        fixed = {k: v for k, v in doc.items() if k not in ("detail", "aggKey")}
        await self.db.audit.update_one(
            {"aggKey": doc["aggKey"]},
            {"$setOnInsert": fixed, "$inc": {"detail.count": count},
             "$set": {"detail.last": last}}, upsert=True)

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait (at most ``timeout`` s) until the queued records are written."""
        if self._task is not None:
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._task), timeout)

    async def close(self) -> None:
        await self.flush()
        if self._task is not None and not self._task.done():
            self._task.cancel()


async def query(db: AsyncIOMotorDatabase, company_id: int, *, page: int, page_size: int,
                action: str | None = None, actor: str | None = None,
                target: str | None = None, since: datetime | None = None,
                until: datetime | None = None) -> tuple[list[dict[str, Any]], int]:
    """One page of the company's records, newest first, and the total matching.
    ``actor``/``target`` are usernames, compared like usernames are (look-alikes match)."""
    if type(company_id) is not int:
        raise TypeError("company_id must be an int")
    filt: dict[str, Any] = {"companyId": company_id}
    if action is not None:
        filt["action"] = str(action)
    if actor is not None:
        filt["actor.key"] = username_key(str(actor))
    if target is not None:
        filt["target.key"] = username_key(str(target))
    if since is not None or until is not None:
        filt["time"] = {k: v for k, v in (("$gte", since), ("$lt", until)) if v is not None}
    total = await db.audit.count_documents(filt)
    cursor = db.audit.find(filt).sort([("time", DESCENDING), ("_id", DESCENDING)]) \
        .skip((page - 1) * page_size).limit(page_size)
    return await cursor.to_list(length=page_size), total
