"""The durable job queue: job records in Redis, job ids on Redis Streams read by a consumer
group (``XADD``, ``XREADGROUP``, ``XACK``, ``XAUTOCLAIM``), one stream per company.

Companies are served in turn: a consumer (a ``serve`` or ``worker`` process) that is free
takes the next entry of the company served least recently (a company new to the queue comes
first), so one company's backlog of slow jobs delays another company's job by at most about
one job per consumer instead of the whole backlog. The pick and the read are one Lua script
(:data:`_NEXT`), atomic across consumers. A submit may hold the company to ``limit`` jobs
queued or running (the async requests pass ``JOB_QUEUE_LIMIT_PER_COMPANY``); more are refused
(:class:`QueueFull`, the service answers 50301 with ``Retry-After``) by the same script that
would enqueue them (:data:`_SUBMIT`).

An entry stays pending until its consumer acknowledges it. A consumer that dies leaves its
entry pending and idle; another claims it with ``XAUTOCLAIM`` (before any new entry) once it
has been idle for ``claim_idle_ms`` and runs the job again (the work is idempotent:
content-hash keys). A running consumer keeps its entry fresh with ``XCLAIM ... JUSTID``
(Redis' own idle clock, no lock of ours). A job started ``max_attempts`` times without
finishing ends ``failed``. Entries a release before the per-company streams left on the one
stream :data:`STREAM` are still read (as if it were one more company) until it is empty.

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

from redis.exceptions import WatchError

from store.jobs import is_job_id

STREAM = "ds:jobq"  # the single stream of earlier releases: drained, never written
GROUP = "ds:workers"
ACTIVE = "ds:jobq:active"  # set of the streams holding entries (queued or running)
TURNS = "ds:jobq:turns"  # sorted set: stream -> the turn its company was last served at
TURN = "ds:jobq:turn"  # the turn counter
BELL = "ds:jobq:bell"  # a short stream written on every submit: idle consumers wake on it
RETRY_AFTER_SECONDS = 10  # the Retry-After of a refusal for a full company queue
ENDED = ("done", "failed", "cancelled")
PRIVATE_FIELDS = ("input", "company_id")
IDEMPOTENCY_TTL_SECONDS = 24 * 3600  # clients retry within minutes: slack, not a tunable
OUTBOX = "ds:hooks"  # pending webhook deliveries: member "<company>:<job>", score = due time


# KEYS: the company's stream, ACTIVE, BELL. ARGV: group, job id, company id, limit (0: none).
# Returns 0 (refused: the company has ``limit`` entries) or 1 (queued).
_SUBMIT = """
local limit = tonumber(ARGV[4])
local queued = redis.call('XLEN', KEYS[1])
if limit > 0 and queued >= limit then
  return 0
end
if queued == 0 then
  redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
end
redis.call('XADD', KEYS[1], '*', 'job', ARGV[2], 'company', ARGV[3])
redis.call('SADD', KEYS[2], KEYS[1])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', '100', '*', 's', KEYS[1])
return 1
"""

# KEYS: ACTIVE, TURNS, TURN, BELL, STREAM (legacy). ARGV: group, consumer, claim idle ms.
# The active streams in turn order (least recently served first; ties by name): first an
# entry idle too long at a dead consumer (XAUTOCLAIM), else a new one (XREADGROUP). Returns
# {stream, id, fields, claimed} for an entry, or {'', last bell id} for none.
_NEXT = """
local streams = redis.call('SMEMBERS', KEYS[1])
if redis.call('XLEN', KEYS[5]) > 0 then
  table.insert(streams, KEYS[5])
end
local order = {}
for _, s in ipairs(streams) do
  order[#order + 1] = {s, tonumber(redis.call('ZSCORE', KEYS[2], s) or '0')}
end
table.sort(order, function(a, b)
  if a[2] == b[2] then return a[1] < b[1] end
  return a[2] < b[2]
end)
local function served(s)
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), s)
end
for _, o in ipairs(order) do
  local c = redis.pcall('XAUTOCLAIM', o[1], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', '1')
  local e = type(c) == 'table' and not c.err and c[2][1]
  if e and e[2] then
    served(o[1])
    return {o[1], e[1], e[2], 1}
  end
end
for _, o in ipairs(order) do
  local r = redis.pcall('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', '1',
                        'STREAMS', o[1], '>')
  if type(r) == 'table' and not r.err and r[1] then
    local e = r[1][2][1]
    if e then
      served(o[1])
      return {o[1], e[1], e[2], 0}
    end
  end
end
local last = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', '1')
if last[1] then
  return {'', last[1][1]}
end
return {'', '0-0'}
"""

# KEYS: the stream, ACTIVE. ARGV: group, entry id. Acknowledge and delete the entry; an empty
# stream is deleted and leaves the active set (the next submit makes it again).
_ACK = """
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], KEYS[1])
end
return 1
"""

# KEYS: the stream, ACTIVE. ARGV: group, job id. Delete the job's entries that no consumer
# holds (a cancelled queued job leaves the company's queue, and its room, at once); an
# emptied stream goes as in _ACK. Returns how many entries were deleted.
_DROP = """
local dropped = 0
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'job' and f[i + 1] == ARGV[2] then
      local held = redis.pcall('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
      if type(held) ~= 'table' or held.err or #held == 0 then
        redis.call('XDEL', KEYS[1], e[1])
        dropped = dropped + 1
      end
    end
  end
end
if dropped > 0 and redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], KEYS[1])
end
return dropped
"""


def stream_key(company_id: str) -> str:
    """The stream of a company's queued and running jobs."""
    return f"ds:jobq:c:{company_id}"


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


class QueueFull(Exception):
    """The company has as many jobs queued or running as it may (50301 with Retry-After)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"this company already has {limit} jobs queued or running (the limit "
                         "per company); try again when one has ended")
        self.limit = limit
        self.retry_after = RETRY_AFTER_SECONDS


@dataclass(frozen=True)
class Delivery:
    """One stream entry handed to a consumer: which job, on which stream, and whether it was
    claimed from a consumer that stopped answering."""

    message_id: str
    job_id: str
    company_id: str
    claimed: bool
    stream: str = STREAM


class JobQueue:
    """Submit, read, list, cancel and consume jobs."""

    def __init__(self, redis: Any, *, result_ttl: int = 24 * 3600, claim_idle_ms: int = 30000,
                 max_attempts: int = 3) -> None:
        self.redis = redis
        self.result_ttl = result_ttl
        self.claim_idle_ms = claim_idle_ms
        self.max_attempts = max_attempts
        self._submit = redis.register_script(_SUBMIT)
        self._next = redis.register_script(_NEXT)
        self._ack = redis.register_script(_ACK)
        self._drop = redis.register_script(_DROP)

    # -- producers -------------------------------------------------------------------------

    async def queued(self, company_id: str) -> int:
        """The company's jobs queued or running."""
        return int(await self.redis.xlen(stream_key(company_id)))

    async def check_room(self, company_id: str, limit: int) -> None:
        """Raise :class:`QueueFull` when the company has ``limit`` jobs queued or running (a
        cheap early check, so that a refused request stores nothing; :meth:`submit` checks
        again atomically). ``limit`` 0: none."""
        if limit > 0 and await self.queued(company_id) >= limit:
            raise QueueFull(limit)

    async def submit(self, company_id: str, kind: str, job_input: dict[str, Any], *,
                     callback_url: str = "", job_id: str | None = None,
                     limit: int = 0, name: str = "") -> dict[str, Any]:
        """Save a ``queued`` record and enqueue it on the company's stream; returns the
        record. ``name`` (what the job works on: a file or folder name) is part of the record
        its owner reads, so every tab and device lists the job by it. With ``limit`` (jobs the
        company may have queued or running; 0: none) raises :class:`QueueFull`, keeping no
        record, when the company has that many."""
        job_id = job_id or uuid.uuid4().hex
        now = time.time()
        record: dict[str, Any] = {
            "id": job_id, "kind": kind, "name": name, "state": "queued", "done": 0,
            "total": None,
            "current": "", "created": now, "started": None, "finished": None, "attempts": 0,
            "company_id": company_id, "input": job_input, "callback_url": callback_url,
            "deliveries": [],
        }
        await self._write(company_id, job_id, record)  # before the entry: a consumer reads it
        queued = await self._submit(keys=[stream_key(company_id), ACTIVE, BELL],
                                    args=[GROUP, job_id, company_id, limit])
        if not int(queued):
            await self.redis.delete(record_key(company_id, job_id))
            raise QueueFull(limit)
        await self.redis.zadd(_index_key(company_id), {job_id: now})
        await self.redis.expire(_index_key(company_id), self.result_ttl)
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

    async def release_idempotency(self, company_id: str, key: str, job_id: str) -> None:
        """Unbind ``key`` when it is bound to ``job_id`` (a job that was refused and never
        existed: the same request may be sent again later)."""
        name = "ds:idem:" + company_id + ":" + hashlib.sha256(key.encode()).hexdigest()
        raw = await self.redis.get(name)
        if raw and json.loads(raw).get("job") == job_id:
            await self.redis.delete(name)

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
                    record: dict[str, Any] = json.loads(raw)
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
        """Mark a queued or running job ``cancelled`` (a running job's consumer drops it at
        its next step; a queued job's entry leaves the company's queue now, so it no longer
        counts against the company's limit). Returns (record, whether this call cancelled
        it); (None, False) when unknown."""
        record = await self.update(company_id, job_id,
                                   {"state": "cancelled", "finished": time.time(),
                                    "msg": "cancelled by the caller"})
        if record is not None:
            await self._drop(keys=[stream_key(company_id), ACTIVE], args=[GROUP, job_id])
            return record, True
        return await self.get(company_id, job_id), False

    # -- consumers -------------------------------------------------------------------------

    async def next(self, consumer: str, block_ms: int = 1000) -> Delivery | None:
        """The next entry for ``consumer``, companies in turn: first one idle too long at a
        dead consumer, else a new one; with none, wait up to ``block_ms`` for a submit and
        look once more."""
        delivery, bell = await self._pick(consumer)
        if delivery is not None or block_ms <= 0:
            return delivery
        if await self.redis.xread({BELL: bell}, count=1, block=block_ms):
            return (await self._pick(consumer))[0]
        return None

    async def _pick(self, consumer: str) -> tuple[Delivery | None, str]:
        """One run of :data:`_NEXT`: a delivery, or None and the bell's last id."""
        got = await self._next(keys=[ACTIVE, TURNS, TURN, BELL, STREAM],
                               args=[GROUP, consumer, self.claim_idle_ms])
        if not got[0]:
            return None, str(got[1])
        stream, message_id, flat, claimed = got
        data = dict(zip(flat[::2], flat[1::2], strict=True))
        return Delivery(message_id, data.get("job", ""), data.get("company", ""),
                        bool(claimed), stream), ""

    async def start(self, delivery: Delivery, consumer: str) -> dict[str, Any] | None:
        """Count one more attempt and mark the job ``running`` at ``consumer``. Returns the
        record to run, or None when there is nothing to run (the job ended, was cancelled or
        expired, or has now been started ``max_attempts`` times: then it ends ``failed``)."""
        record = await self.get(delivery.company_id, delivery.job_id)
        if record is None or record["state"] in ENDED:
            await self.ack(delivery)
            return None
        if record["attempts"] >= self.max_attempts:
            await self.update(delivery.company_id, delivery.job_id, {
                "state": "failed", "code": 50001, "finished": time.time(),
                "msg": f"abandoned: the job was started {record['attempts']} times and its "
                       "consumer stopped each time before it ended"})
            await self.ack(delivery)
            return None
        return await self.update(delivery.company_id, delivery.job_id, {
            "state": "running", "attempts": record["attempts"] + 1, "consumer": consumer,
            "started": time.time(), "claims": record.get("claims", 0) + int(delivery.claimed)})

    async def touch(self, consumer: str, delivery: Delivery) -> None:
        """Reset the entry's idle time: its consumer is alive (``XCLAIM ... JUSTID``)."""
        await self.redis.xclaim(delivery.stream, GROUP, consumer, 0, [delivery.message_id],
                                justid=True)

    async def hand_back(self, consumer: str, delivery: Delivery) -> None:
        """Give a job up unfinished (shutdown): the attempt does not count, and the entry is
        made idle at once so another consumer claims it on its next read."""
        record = await self.get(delivery.company_id, delivery.job_id)
        if record is not None:
            await self.update(delivery.company_id, delivery.job_id, {
                "state": "queued", "attempts": max(0, record["attempts"] - 1)})
        await self.redis.xclaim(delivery.stream, GROUP, consumer, 0, [delivery.message_id],
                                idle=self.claim_idle_ms + 1, justid=True)
        await self.redis.xadd(BELL, {"s": delivery.stream}, maxlen=100, approximate=True)

    async def ack(self, delivery: Delivery) -> None:
        """The entry is dealt with: acknowledge and delete it (and its stream once empty)."""
        await self._ack(keys=[delivery.stream, ACTIVE], args=[GROUP, delivery.message_id])

    async def length(self) -> int:
        """Entries in all streams: queued plus running."""
        streams = [*await self.redis.smembers(ACTIVE), STREAM]
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream in streams:
                pipe.xlen(stream)
            return sum(int(n) for n in await pipe.execute())
