"""The service objects one process shares between handlers, opened and closed together."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis

from store import indexes, mongo
from store.audit import AuditLog
from store.job_queue import JobQueue
from store.sessions import SessionStore, Throttle
from tornado_app.auth.passwords import PasswordService
from tornado_app.auth.profiles import ProfileLoader
from tornado_app.metrics import Metrics
from tornado_app.settings import Settings

if TYPE_CHECKING:
    from render_pool.runtime.pool import RenderPool
    from store.storage_io import StorageIO

log = logging.getLogger("tornado_app.services")


@dataclass
class Services:
    """Everything a handler may call: settings, database, Redis stores, hashing, pool."""

    settings: Settings
    mongo_client: Any
    db: Any
    redis: Redis
    sessions: SessionStore
    throttle: Throttle
    passwords: PasswordService
    profiles: ProfileLoader
    pool: RenderPool | None = None  # when the docs service is mounted
    storage: StorageIO | None = None  # likewise
    metrics: Metrics = field(default_factory=Metrics)
    extras: dict[str, Any] = field(default_factory=dict)
    audit: Any = None  # store.audit.AuditLog: the audit trail's background writer

    def job_queue(self) -> JobQueue:
        """The durable job queue (Redis Streams) with this process's settings."""
        s = self.settings
        return JobQueue(self.redis, result_ttl=s.job_result_ttl_seconds,
                        claim_idle_ms=int(s.job_claim_idle_seconds * 1000),
                        max_attempts=s.job_max_attempts)

    async def close(self) -> None:
        if self.audit is not None:
            await self.audit.close()
        for closer in self.extras.get("closers", []):
            await closer()
        if self.pool is not None:
            self.pool.close(wait=False)
        self.sessions.close()
        await self.redis.aclose()
        self.mongo_client.close()
        self.passwords.close()


async def open_services(settings: Settings, *, mongo_url: str, redis_url: str) -> Services:
    """Connect to MongoDB and Redis and build the shared services (indexes ensured)."""
    client, db = mongo.connect(mongo_url, settings.mongo_db)
    await indexes.ensure_indexes(db, settings.audit_retention_seconds)
    redis = Redis.from_url(redis_url, decode_responses=True, socket_timeout=5,
                           socket_connect_timeout=2, health_check_interval=30)
    passwords = PasswordService(
        time_cost=settings.argon2_time_cost, memory_kib=settings.argon2_memory_kib,
        parallelism=settings.argon2_parallelism, workers=settings.hash_workers,
        queue_limit=settings.hash_queue_limit, wait_seconds=settings.hash_wait_seconds,
        nice=settings.hash_thread_nice,
    )
    sessions = SessionStore(redis, ttl_seconds=settings.session_ttl_seconds,
                            perm_ttl_seconds=settings.permission_cache_seconds)
    svc = Services(
        settings=settings, mongo_client=client, db=db, redis=redis, sessions=sessions,
        throttle=Throttle(redis), passwords=passwords, profiles=ProfileLoader(sessions),
    )
    dropped = svc.metrics.audit_dropped
    svc.audit = AuditLog(db, queue_limit=settings.audit_queue_limit,
                         on_drop=dropped.labels("queue_full").inc,
                         on_error=lambda n: dropped.labels("store_error").inc(n))
    return svc
