"""The webhook outbox: pending deliveries of ended jobs, kept in Redis so that any process
running a job consumer makes the next attempt (the process that ended the job may be gone).

The outbox is one sorted set (:data:`store.job_queue.OUTBOX`): member ``<company>:<job>``,
score the time (epoch seconds) of the next attempt; :meth:`store.job_queue.JobQueue.update`
adds a job to it in the transaction that ends the job. A sender takes due members with
:meth:`WebhookOutbox.claim`, a Lua script that moves each one's score forward to the end of a
lease in the same step, so two processes never hold the same attempt at once. The holder (the
score is still its lease) reschedules or removes the member in :meth:`WebhookOutbox.finish`,
in the transaction that records the attempt on the job (``deliveries``, ``webhook``). A
sender that dies mid-attempt leaves the member at its lease end: another takes it then.
Times are wall-clock seconds: the processes' clocks are assumed to agree to a few seconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from redis.exceptions import WatchError

from store.job_queue import OUTBOX, JobQueue, outbox_member, record_key

# due members (score <= ARGV[1]), at most ARGV[3], get the lease end ARGV[2] as their score
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
"""

# if member ARGV[1] still has the lease ARGV[2] as its score: score ARGV[3], or remove when ''
_SWAP = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  if ARGV[3] == '' then
    redis.call('ZREM', KEYS[1], ARGV[1])
  else
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  end
  return 1
end
return 0
"""


@dataclass(frozen=True)
class Claim:
    """One due delivery taken by a sender until ``lease`` (the member's score meanwhile)."""

    company_id: str
    job_id: str
    lease: float

    @property
    def member(self) -> str:
        return outbox_member(self.company_id, self.job_id)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``first`` seconds after the first failure, doubling, each gap at
    most ``cap``; no attempt later than ``window`` seconds after the job ended."""

    first: float
    cap: float
    window: float

    def next_at(self, since: float, attempts: int, now: float) -> float | None:
        """When to try again after ``attempts`` failures, or None: give up."""
        gap = min(self.first * 2.0 ** min(max(attempts - 1, 0), 60), self.cap)
        at = now + gap
        return at if at <= since + self.window else None


class WebhookOutbox:
    """Claim, finish and release pending webhook deliveries of :class:`JobQueue` jobs."""

    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self.redis = queue.redis
        self._claim = self.redis.register_script(_CLAIM)
        self._swap = self.redis.register_script(_SWAP)

    async def claim(self, now: float, lease_seconds: float, limit: int = 16) -> list[Claim]:
        """Take up to ``limit`` deliveries due at ``now`` until ``now + lease_seconds``
        (atomically: a member is held by one sender at a time)."""
        lease = now + lease_seconds
        members = await self._claim(keys=[OUTBOX], args=[repr(now), repr(lease), limit])
        claims = []
        for member in members:
            company_id, _, job_id = str(member).rpartition(":")
            claims.append(Claim(company_id, job_id, lease))
        return claims

    async def release(self, claim: Claim, at: float) -> bool:
        """Give a held delivery back, due at ``at`` (the sender stops mid-attempt)."""
        return bool(await self._swap(keys=[OUTBOX], args=[claim.member, repr(claim.lease),
                                                          repr(at)]))

    async def drop(self, claim: Claim) -> bool:
        """Remove a held delivery whose job is gone (expired)."""
        return bool(await self._swap(keys=[OUTBOX], args=[claim.member, repr(claim.lease), ""]))

    async def finish(self, claim: Claim, attempt: dict[str, Any], *, final: str | None,
                     backoff: Backoff) -> dict[str, Any] | None:
        """Record ``attempt`` (``at``, ``status``, ``error``) in the job's ``deliveries`` and,
        while the claim is still held, settle the delivery in the same transaction: ``final``
        (``delivered``, ``refused``) removes it; otherwise it is due again by ``backoff``, or
        ``failed`` and removed once past the window. The job's ``webhook`` says which
        (``state``, ``next_attempt``). Returns the record, or None when the job is gone."""
        key = record_key(claim.company_id, claim.job_id)
        async with self.redis.pipeline() as pipe:
            while True:
                try:
                    await pipe.watch(key, OUTBOX)
                    raw = await pipe.get(key)
                    score = await pipe.zscore(OUTBOX, claim.member)
                    held = score is not None and float(score) == claim.lease
                    record = json.loads(raw) if raw else None
                    next_at: float | None = None
                    if record is not None:
                        deliveries = [*record.get("deliveries", []), attempt]
                        hook = dict(record.get("webhook") or {})
                        if final is None:
                            since = float(hook.get("since") or record.get("finished")
                                          or attempt["at"])
                            next_at = backoff.next_at(since, len(deliveries), attempt["at"])
                        if held:  # a sender that lost its lease only adds its attempt
                            pending = "pending" if next_at is not None else "failed"
                            hook["state"] = final or pending
                            hook["next_attempt"] = next_at
                        record["deliveries"], record["webhook"] = deliveries, hook
                    pipe.multi()
                    if record is not None:
                        pipe.set(key, json.dumps(record), ex=self.queue.result_ttl)
                    if held and next_at is None:
                        pipe.zrem(OUTBOX, claim.member)
                    elif held:
                        pipe.zadd(OUTBOX, {claim.member: next_at})
                    await pipe.execute()
                    return record
                except WatchError:
                    continue

    async def pending(self) -> int:
        """Deliveries waiting (due or not) or being attempted."""
        return int(await self.redis.zcard(OUTBOX))
