"""Server-side sessions, the per-user permission cache and login throttles, in Redis.

Keys (all under ``PREFIX``):
- ``sess:{token}``      hash userId, companyId, loginAt; TTL = session lifetime
- ``usess:{userId}``    set of the user's tokens; its TTL slides forward at each login
- ``perm:{userId}``     hash role, status and the profile ``me`` shows (username, realName,
                        companyName) plus ``cv``, the company version it was filled under;
                        short TTL; evicted on every change that can alter it
- ``permv:{userId}``    eviction counter: a cache fill that raced an eviction is dropped
- ``compv:{companyId}`` company version: a company rename bumps it, which turns every cached
                        profile of the company into a miss at once (no scan of its users)
- ``fail:*``            failure counters with a window TTL (see ``Throttle``)

Validating a request is one round trip: a Lua script reads the session, the cached
profile (with what is left of its life) and both versions together. A warm request needs
no MongoDB read at all; ``tornado_app.auth.profiles`` refills the cache. The scripts run on
every request go down one connection shared by all requests (``store.redis_pipe``), not
through the client's pool, whose own work per command cost more than the script.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from store.redis_pipe import Arg, RedisPipe

PREFIX = "ds:"


def _texts(values: set[bytes | str] | set[str]) -> set[str]:
    """Set members as text: the client decodes responses, but its types also allow bytes."""
    return {v.decode() if isinstance(v, bytes) else v for v in values}


_VALIDATE = """
local s = redis.call('HMGET', KEYS[1], 'userId', 'companyId', 'loginAt')
if not s[1] then return false end
local uid = s[1]
local p = redis.call('HMGET', ARGV[1] .. 'perm:' .. uid, 'role', 'status', 'username',
                     'realName', 'companyName', 'cv')
local v = redis.call('GET', ARGV[1] .. 'permv:' .. uid) or '0'
local cv = redis.call('GET', ARGV[1] .. 'compv:' .. s[2]) or '0'
local ttl = -2
if p[6] ~= cv then p = {} else ttl = redis.call('PTTL', ARGV[1] .. 'perm:' .. uid) end
return cjson.encode({s[1], s[2], s[3], p[1] or '', p[2] or '', v, p[3] or '', p[4] or '',
                     p[5] or '', cv, ttl})
"""

_FILL = """
local v = redis.call('GET', KEYS[2]) or '0'
if v ~= ARGV[1] then return 0 end
local cv = redis.call('GET', KEYS[3]) or '0'
if cv ~= ARGV[5] then return 0 end
redis.call('HSET', KEYS[1], 'role', ARGV[2], 'status', ARGV[3], 'cv', cv,
           'username', ARGV[6], 'realName', ARGV[7], 'companyName', ARGV[8])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

# the cached role and status of one user (no session): API keys check their owner with it
_PROFILE = """
local p = redis.call('HMGET', KEYS[1], 'role', 'status', 'cv')
local v = redis.call('GET', KEYS[2]) or '0'
local cv = redis.call('GET', KEYS[3]) or '0'
local ttl = -2
if p[3] ~= cv then p = {} else ttl = redis.call('PTTL', KEYS[1]) end
return cjson.encode({p[1] or '', p[2] or '', v, cv, ttl})
"""


def _source(script: AsyncScript) -> str | bytes:
    """The text of a registered script, for EVAL."""
    source = script.script
    return source if isinstance(source, str) else bytes(source)


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
    username: str = ""
    real_name: str = ""
    company_name: str = ""
    company_version: str = "0"
    profile_ttl_ms: int = -2  # what is left of the cached profile's life (-2: a miss)


@dataclass(frozen=True)
class Profile:
    """What the per-user cache holds: role and status (checked on every request) and the
    profile ``GET /api/auth/me`` shows."""

    role: str
    status: str
    username: str
    real_name: str
    company_name: str


class SessionStore:
    """Sessions and permission cache over one Redis connection pool."""

    def __init__(self, redis: Redis, *, ttl_seconds: int, perm_ttl_seconds: int = 60) -> None:
        self.redis = redis
        self.ttl = ttl_seconds
        self.perm_ttl = perm_ttl_seconds
        self._validate = redis.register_script(_VALIDATE)
        self._fill = redis.register_script(_FILL)
        self._profile = redis.register_script(_PROFILE)
        self._pipe = RedisPipe.for_client(redis)

    async def _run(self, script: AsyncScript, keys: list[str], args: tuple[Arg, ...] = ()
                   ) -> Any:
        """Run a registered script through the shared connection (by its digest, sending
        its text once when Redis does not know it yet), or the pool when there is none. The
        scripts run here only read, so one that met a lost connection is sent once more (on
        a new one), as the pool's client retries."""
        pipe = self._pipe
        if pipe is None:
            return await script(keys=keys, args=list(args))
        # the first attempt written out (the usual case, one coroutine fewer): by digest,
        # then by text when Redis answers NOSCRIPT; a lost connection: the whole once more
        try:
            return await pipe.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
            lost = False
        except RedisConnectionError:
            lost = True
        if not lost:
            try:
                return await pipe.call("EVAL", _source(script), len(keys), *keys, *args)
            except RedisConnectionError:
                pass
        return await self._script_call(pipe, script, keys, args)

    @staticmethod
    async def _script_call(pipe: RedisPipe, script: AsyncScript, keys: list[str],
                           args: tuple[Arg, ...]) -> Any:
        try:
            return await pipe.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        return await pipe.call("EVAL", _source(script), len(keys), *keys, *args)

    def close(self) -> None:
        """Close the shared connection (the pool is the client's to close)."""
        if self._pipe is not None:
            self._pipe.close()

    async def create(self, user_id: int, company_id: int) -> str:
        """Start a session; returns its token (UUID4). Prunes the user's stale tokens."""
        token = str(uuid.uuid4())
        user_set = f"{PREFIX}usess:{user_id}"
        members = _texts(await self.redis.smembers(user_set))
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
        raw = await self._run(self._validate, [f"{PREFIX}sess:{token}"], (PREFIX,))
        if not raw:
            return None
        # one JSON string rather than a ten-element reply: far cheaper to parse
        uid, cid, login_at, role, status, version, username, real_name, cname, cv, ttl = \
            json.loads(raw)
        return SessionInfo(token, int(uid), int(cid), float(login_at), role, status, version,
                           username, real_name, cname, cv, int(ttl))

    async def cached_user(self, user_id: int, company_id: int) -> SessionInfo:
        """The cached role and status of a user without a session (an API key's owner), in
        one round trip: ``role`` is empty on a miss; the versions let
        ``tornado_app.auth.profiles`` refill the entry exactly as for a session."""
        raw = await self._run(self._profile, [f"{PREFIX}perm:{user_id}",
                                              f"{PREFIX}permv:{user_id}",
                                              f"{PREFIX}compv:{company_id}"])
        role, status, version, cv, ttl = json.loads(raw)
        return SessionInfo("", user_id, company_id, 0.0, role, status, version,
                           company_version=cv, profile_ttl_ms=int(ttl))

    async def cache_profile(self, user_id: int, company_id: int, version: str,
                            company_version: str, profile: Profile) -> bool:
        """Fill the per-user cache unless the user was evicted since ``version`` was read or
        the company changed since ``company_version`` was read (a fill that raced a change
        is dropped, so the cache never holds data older than the last eviction)."""
        return bool(await self._fill(
            keys=[f"{PREFIX}perm:{user_id}", f"{PREFIX}permv:{user_id}",
                  f"{PREFIX}compv:{company_id}"],
            args=[version, profile.role, profile.status, self.perm_ttl, company_version,
                  profile.username, profile.real_name, profile.company_name],
        ))

    async def cache_permissions(self, user_id: int, version: str, role: str, status: str,
                                company_id: int = 0, company_version: str = "0") -> None:
        """Fill role and status only (the profile fields stay empty). Kept for callers that
        have no profile at hand; :meth:`cache_profile` is the complete form."""
        await self.cache_profile(user_id, company_id, version, company_version,
                                 Profile(role, status, "", "", ""))

    async def evict_company(self, company_id: int) -> None:
        """Every cached profile of the company becomes a miss (after a company rename)."""
        await self.redis.incr(f"{PREFIX}compv:{company_id}")

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

    async def delete_all_for_user(self, user_id: int, keep: str | None = None) -> int:
        """End every session of a user (on disable or a password change), except the
        token ``keep`` when given; returns how many were live."""
        user_set = f"{PREFIX}usess:{user_id}"
        tokens = [t for t in _texts(await self.redis.smembers(user_set)) if t != keep]
        if not tokens:
            return 0
        async with self.redis.pipeline(transaction=True) as pipe:
            for t in tokens:
                pipe.delete(f"{PREFIX}sess:{t}")
            pipe.srem(user_set, *tokens)
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

    async def record_sliding_failure(self, key: str, window_seconds: int) -> int:
        """Count one failure; the count lasts until ``window_seconds`` pass without one."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(PREFIX + key)
            pipe.expire(PREFIX + key, window_seconds)
            count, _ = await pipe.execute()
        return int(count)

    async def pause(self, key: str, seconds: int, count_key: str, count_ttl: int) -> None:
        """Mark ``key`` for ``seconds`` (``counts`` then reads it as 1 with that TTL) and keep
        ``count_key`` for ``count_ttl`` seconds (past the pause, so the count outlives it)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(PREFIX + key, 1, ex=max(int(seconds), 1))
            pipe.expire(PREFIX + count_key, max(int(count_ttl), 1))
            await pipe.execute()

    async def counts(self, *keys: str) -> list[tuple[int, int]]:
        """(failures, seconds left in the window) of each key, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.get(PREFIX + key)
                pipe.ttl(PREFIX + key)
            raw = await pipe.execute()
        return [(int(raw[i] or 0), max(int(raw[i + 1]), 0)) for i in range(0, len(raw), 2)]

    async def record_failures(self, keys: dict[str, int]) -> None:
        """Count one failure on each key (key -> window seconds), in one round trip."""
        async with self.redis.pipeline(transaction=True) as pipe:
            for key, window in keys.items():
                pipe.incr(PREFIX + key)
                pipe.expire(PREFIX + key, window, nx=True)
            await pipe.execute()


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

