"""The pages of one job's scan, offered in Redis to every job consumer: the consumer running
the job (the owner) publishes them, any consumer takes one at a time, recognises it and
writes the result back; the owner reads the results (see
:mod:`tornado_app.documents.shared_pages`).

Keys of one job (``ds:pages:<company>:<job>:``...), all expiring after :data:`TTL_SECONDS`
(the owner deletes them when the document is read or the job cancelled; an owner that died
leaves them to expire):

- ``todo``: list of the page indexes no one has taken yet; ``LPOP`` takes one atomically;
- ``pdfs``: hash of each page's one-page PDF (base64: the connection decodes replies as
  text) and, under ``doc``, the whole document for pages without their own;
- ``meta``: hash of ``languages``, ``total`` and ``lease`` (seconds);
- ``taken``: hash page -> ``<deadline ms>|<consumer>``: the lease of whoever runs it, renewed
  while it runs; a lease past its deadline without a result is taken back by the owner;
- ``done``: hash page -> the result as JSON (the first one written stays).

:data:`OPEN` is the set of jobs with pages to take (member ``<company>:<job>``, a job id
never holds a colon); a take that finds a job's ``todo`` empty removes it there.
"""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass
from typing import Any

OPEN = "ds:pages:open"
TTL_SECONDS = 6 * 3600  # far beyond any scan's time; only an owner that died leaves keys
DOC = "doc"  # the ``pdfs`` field of the whole document

# KEYS: todo, taken, meta, OPEN. ARGV: consumer, the job's OPEN member. Take the next page
# and lease it to the consumer for the job's lease; returns the page index, or nil when none
# is left (the job then leaves OPEN).
_TAKE = """
local index = redis.call('LPOP', KEYS[1])
if not index then
  redis.call('SREM', KEYS[4], ARGV[2])
  return false
end
local lease = tonumber(redis.call('HGET', KEYS[3], 'lease') or '60')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[2], index, tostring(now + lease * 1000) .. '|' .. ARGV[1])
return index
"""

# KEYS: taken, done, meta. ARGV: consumer. One page another consumer's lease on has passed
# with no result, leased again to the consumer; nil when there is none.
_RECLAIM = """
local lease = tonumber(redis.call('HGET', KEYS[3], 'lease') or '60')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mine = '|' .. ARGV[1]
local taken = redis.call('HGETALL', KEYS[1])
for i = 1, #taken, 2 do
  local deadline = tonumber(string.match(taken[i + 1], '^(%d+)|'))
  if deadline < now and string.sub(taken[i + 1], -#mine) ~= mine
      and redis.call('HEXISTS', KEYS[2], taken[i]) == 0 then
    redis.call('HSET', KEYS[1], taken[i], tostring(now + lease * 1000) .. '|' .. ARGV[1])
    return taken[i]
  end
end
return false
"""

# KEYS: taken, meta. ARGV: page, consumer. Push the page's deadline on, while the consumer
# holds its lease; returns 1 when renewed.
_RENEW = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held or string.sub(held, -#ARGV[2] - 1) ~= '|' .. ARGV[2] then return 0 end
local lease = tonumber(redis.call('HGET', KEYS[2], 'lease') or '60')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], tostring(now + lease * 1000) .. '|' .. ARGV[2])
return 1
"""

# KEYS: done, meta. ARGV: page, result. Keep the page's first result, unless the work is
# gone (cancelled or finished): returns 1 when written.
_FINISH = """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
"""


@dataclass(frozen=True)
class TakenPage:
    """A page a consumer took: whose, which, the PDF to read it from (``pdf_index``: the
    page's index in that PDF) and the job's OCR languages and lease."""

    company_id: str
    job_id: str
    index: int
    pdf: bytes
    pdf_index: int
    languages: str
    lease: float


class PageWork:
    """The shared pages of one job (company-scoped keys)."""

    def __init__(self, redis: Any, company_id: str, job_id: str) -> None:
        self.redis = redis
        self.company_id = company_id
        self.job_id = job_id
        base = f"ds:pages:{company_id}:{job_id}:"
        self.todo, self.pdfs, self.meta = base + "todo", base + "pdfs", base + "meta"
        self.taken, self.done = base + "taken", base + "done"
        self.member = f"{company_id}:{job_id}"

    def _keys(self) -> list[str]:
        return [self.todo, self.pdfs, self.meta, self.taken, self.done]

    async def publish(self, pages: list[int], page_pdfs: dict[int, bytes], document: bytes,
                      languages: str, lease: float) -> None:
        """Offer ``pages`` (any earlier offer of this job replaced: a job run again); a page
        not in ``page_pdfs`` is read from ``document``."""
        pdfs = {str(i): base64.b64encode(page_pdfs[i]).decode() for i in pages
                if i in page_pdfs}
        if len(pdfs) < len(pages):
            pdfs[DOC] = base64.b64encode(document).decode()
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*self._keys())
            pipe.hset(self.pdfs, mapping=pdfs)
            pipe.hset(self.meta, mapping={"languages": languages, "total": len(pages),
                                          "lease": lease})
            pipe.rpush(self.todo, *[str(i) for i in pages])
            for key in self._keys()[:3]:
                pipe.expire(key, TTL_SECONDS)
            pipe.sadd(OPEN, self.member)
            await pipe.execute()

    async def take(self, consumer: str) -> int | None:
        """The next page no one has taken, leased to ``consumer``; None when none is left."""
        index = await self.redis.eval(_TAKE, 4, self.todo, self.taken, self.meta, OPEN,
                                      consumer, self.member)
        if index is None:
            return None
        await self.redis.expire(self.taken, TTL_SECONDS)
        return int(index)

    async def reclaim(self, consumer: str) -> int | None:
        """A page whose lease has passed with no result, leased again to ``consumer``."""
        index = await self.redis.eval(_RECLAIM, 3, self.taken, self.done, self.meta, consumer)
        return None if index is None else int(index)

    async def renew(self, index: int, consumer: str) -> bool:
        """Push on the lease ``consumer`` holds on page ``index``."""
        return bool(await self.redis.eval(_RENEW, 2, self.taken, self.meta, str(index),
                                          consumer))

    async def finish(self, index: int, result: str) -> bool:
        """Record page ``index``'s result (JSON); False when the work is gone or the page
        had a result already."""
        written = bool(await self.redis.eval(_FINISH, 2, self.done, self.meta, str(index),
                                             result))
        if written:
            await self.redis.expire(self.done, TTL_SECONDS)
        return written

    async def done_count(self) -> int:
        return int(await self.redis.hlen(self.done))

    async def results(self) -> dict[int, str]:
        """Each page's result written so far (JSON)."""
        found: dict[str, str] = await self.redis.hgetall(self.done)
        return {int(k): v for k, v in found.items()}

    async def exists(self) -> bool:
        return bool(await self.redis.exists(self.meta))

    async def page_pdf(self, index: int) -> tuple[bytes, int] | None:
        """The PDF page ``index`` is read from and its index there; None when gone."""
        alone, whole = await self.redis.hmget(self.pdfs, [str(index), DOC])
        if alone is not None:
            return base64.b64decode(alone), 0
        if whole is not None:
            return base64.b64decode(whole), index
        return None

    async def delete(self) -> None:
        """Withdraw the work: nothing more is taken, and late results are dropped."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*self._keys())
            pipe.srem(OPEN, self.member)
            await pipe.execute()


def _work_of(redis: Any, member: str) -> PageWork:
    company_id, job_id = member.rsplit(":", 1)
    return PageWork(redis, company_id, job_id)


async def take_any(redis: Any, consumer: str) -> TakenPage | None:
    """A page of any open job, leased to ``consumer``; None when no job has one. A job
    found with nothing left to take leaves :data:`OPEN`."""
    members = list(await redis.smembers(OPEN))
    random.shuffle(members)  # several open jobs: each gets a share of the idle consumers
    for member in members:
        work = _work_of(redis, member)
        index = await work.take(consumer)
        if index is None:
            continue
        meta: dict[str, str] = await redis.hgetall(work.meta)
        found = await work.page_pdf(index)
        if found is None or not meta:  # withdrawn meanwhile
            continue
        return TakenPage(work.company_id, work.job_id, index, found[0], found[1],
                         meta.get("languages", ""), float(meta.get("lease", "60")))
    return None
