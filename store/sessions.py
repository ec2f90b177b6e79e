"""Server-side sessions, the per-user permission cache and login throttles, in Redis.

Keys (all under ``PREFIX``):
- ``sess:{token}``      hash userId, companyId, loginAt; TTL = session lifetime
- ``usess:{userId}``    set of the user's tokens; its TTL slides forward at each login
- ``perm:{userId}``     hash role, status; short TTL; evicted on every role/status change
- ``permv:{userId}``    eviction counter: a cache fill that raced an eviction is dropped
- ``fail:a:{company}:{user}`` / ``fail:ip:{addr}``  failure counters with a window TTL

Validating a request is one round trip: a Lua script reads the session and the cached
permissions together.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from redis.asyncio import Redis

PREFIX = "ds:"

_VALIDATE = """
local s = redis.call('HMGET', KEYS[1], 'userId', 'companyId', 'loginAt')
if not s[1] then return false end
local uid = s[1]
local p = redis.call('HMGET', ARGV[1] .. 'perm:' .. uid, 'role', 'status')
local v = redis.call('GET', ARGV[1] .. 'permv:' .. uid) or '0'
return {s[1], s[2], s[3], p[1] or '', p[2] or '', v}
"""

_FILL = """
local v = redis.call('GET', KEYS[2]) or '0'
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'role', ARGV[2], 'status', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


@dataclass(frozen=True)
class SessionInfo:
    """What a valid token resolves to. ``role``/``status`` are empty on a cache miss."""

    token: str
    user_id: int
    company_id: int
    login_at: float
    role: str
    status: str
    perm_version: str


class SessionStore:
    """Sessions and permission cache over one Redis connection pool."""

    def __init__(self, redis: Redis, *, ttl_seconds: int, perm_ttl_seconds: int = 60) -> None:
        self.redis = redis
        self.ttl = ttl_seconds
        self.perm_ttl = perm_ttl_seconds
        self._validate = redis.register_script(_VALIDATE)
        self._fill = redis.register_script(_FILL)

    async def create(self, user_id: int, company_id: int) -> str:
        """Start a session; returns its token (UUID4). Prunes the user's stale tokens."""
        token = str(uuid.uuid4())
        user_set = f"{PREFIX}usess:{user_id}"
        members = await self.redis.smembers(user_set)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(f"{PREFIX}sess:{token}", mapping={
                "userId": user_id, "companyId": company_id, "loginAt": f"{time.time():.3f}",
            })
            pipe.expire(f"{PREFIX}sess:{token}", self.ttl)
            pipe.sadd(user_set, token)
            pipe.expire(user_set, self.ttl)
            await pipe.execute()
        if members:
            stale = [m for m, alive in zip(
                members, await self._exists_each(members), strict=True) if not alive]
            if stale:
                await self.redis.srem(user_set, *stale)
        return token

    async def _exists_each(self, tokens: set[str]) -> list[bool]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for t in tokens:
                pipe.exists(f"{PREFIX}sess:{t}")
            return [bool(x) for x in await pipe.execute()]

    async def lookup(self, token: str) -> SessionInfo | None:
        """Resolve a token (already checked to be a canonical UUID) in one round trip."""
        row = await self._validate(keys=[f"{PREFIX}sess:{token}"], args=[PREFIX])
        if not row:
            return None
        uid, cid, login_at, role, status, version = row
        return SessionInfo(token, int(uid), int(cid), float(login_at), role, status, version)

    async def cache_permissions(self, user_id: int, version: str, role: str, status: str) -> None:
        """Fill the permission cache unless an eviction happened since ``version`` was read."""
        await self._fill(
            keys=[f"{PREFIX}perm:{user_id}", f"{PREFIX}permv:{user_id}"],
            args=[version, role, status, self.perm_ttl],
        )

    async def evict_permissions(self, user_id: int) -> None:
        """Drop the cached role/status so the next request reads MongoDB."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(f"{PREFIX}permv:{user_id}")
            pipe.delete(f"{PREFIX}perm:{user_id}")
            await pipe.execute()

    async def delete(self, token: str, user_id: int) -> None:
        """Logout: the token stops working at once."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(f"{PREFIX}sess:{token}")
            pipe.srem(f"{PREFIX}usess:{user_id}", token)
            await pipe.execute()

    async def delete_all_for_user(self, user_id: int) -> int:
        """End every session of a user (on disable); returns how many were live."""
        user_set = f"{PREFIX}usess:{user_id}"
        tokens = await self.redis.smembers(user_set)
        if not tokens:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            for t in tokens:
                pipe.delete(f"{PREFIX}sess:{t}")
            pipe.delete(user_set)
            results = await pipe.execute()
        return sum(int(r) for r in results[:-1])


class Throttle:
    """Failure counters with a fixed window; used for login throttling."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def blocked_for(self, key: str, limit: int) -> int:
        """Seconds the key stays blocked (0 when under ``limit``)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(PREFIX + key)
            pipe.ttl(PREFIX + key)
            count, ttl = await pipe.execute()
        if count is not None and int(count) >= limit:
            return max(int(ttl), 1)
        return 0

    async def record_failure(self, key: str, window_seconds: int) -> int:
        """Count one failure; the window starts at the first failure."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(PREFIX + key)
            pipe.expire(PREFIX + key, window_seconds, nx=True)
            count, _ = await pipe.execute()
        return int(count)

    async def reset(self, key: str) -> None:
        await self.redis.delete(PREFIX + key)


class CompanyLock:
    """A short per-company lock that serialises admin-changing operations (LAST_ADMIN).

    The lock expires after ``ttl_seconds`` (a crashed holder cannot block for ever); a
    waiter gives up after ``wait_seconds`` with TimeoutError."""

    wait_seconds = 5.0

    def __init__(self, redis: Redis, company_id: int, ttl_seconds: int = 10) -> None:
        self.redis = redis
        self.key = f"{PREFIX}lock:company:{company_id}"
        self.token = str(uuid.uuid4())
        self.ttl = ttl_seconds

    async def __aenter__(self) -> CompanyLock:
        deadline = time.monotonic() + self.wait_seconds
        while not await self.redis.set(self.key, self.token, nx=True, ex=self.ttl):
            if time.monotonic() > deadline:
                raise TimeoutError("company lock busy")
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
            "end return 0", 1, self.key, self.token,
        )

