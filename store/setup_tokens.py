"""One-time setup tokens for the first run, in Redis, stored only as SHA-256 hashes.

``serve`` with no company creates one and prints the setup address; the first company and
its ADMIN are created with it. A token is valid until used or until its TTL (1 h) ends;
using one (or ``create-admin``) removes every token, so none outlives the first company.

Keys: ``setup:{sha256(token)}`` (TTL), ``setup:lock`` (serialises the one setup).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid

from redis.asyncio import Redis

from store.sessions import PREFIX

_KEY = PREFIX + "setup:"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class SetupTokens:
    """Create, check and retire setup tokens."""

    def __init__(self, redis: Redis, ttl_seconds: int = 3600) -> None:
        self.redis = redis
        self.ttl = ttl_seconds

    async def create(self) -> str:
        """A new random token (URL-safe), valid for ``ttl_seconds``."""
        token = secrets.token_urlsafe(32)
        await self.redis.set(_KEY + _hash(token), "1", ex=self.ttl)
        return token

    async def valid(self, token: str) -> bool:
        return bool(token) and bool(await self.redis.exists(_KEY + _hash(token)))

    async def retire_all(self) -> int:
        """Remove every setup token (after the first company exists)."""
        keys = [k async for k in self.redis.scan_iter(match=_KEY + "*", count=100)
                if not k.endswith("lock")]
        return int(await self.redis.delete(*keys)) if keys else 0

    def lock(self) -> SetupLock:
        return SetupLock(self.redis)


class SetupLock:
    """Held while a setup runs, so two setups at once cannot create two companies."""

    def __init__(self, redis: Redis, ttl_seconds: int = 30) -> None:
        self.redis = redis
        self.value = str(uuid.uuid4())
        self.ttl = ttl_seconds

    async def __aenter__(self) -> bool:
        """True when this caller holds the lock (False: another setup is running)."""
        self.held = bool(await self.redis.set(_KEY + "lock", self.value, nx=True, ex=self.ttl))
        return self.held

    async def __aexit__(self, *exc: object) -> None:
        if self.held:
            await self.redis.eval(
                "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', "
                "KEYS[1]) end return 0", 1, _KEY + "lock", self.value)
