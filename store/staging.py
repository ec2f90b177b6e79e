"""Staged archives: the bytes under ``<company prefix>/_staging/<id>`` in object storage, the
record (name, size, key) in Redis under the company. Both live 24 hours: the record expires by
itself, the bytes are purged by :func:`purge_expired`."""

from __future__ import annotations

import datetime
import json
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from store.jobs import is_job_id
from store.object_keys import object_key
from store.objects import ObjectStore

# a staged archive is processed within minutes of its upload; a day is slack, not a tunable
STAGE_TTL_SECONDS = 24 * 3600
STAGING_PREFIX = "_staging"


@dataclass(frozen=True)
class StagedArchive:
    """One staged archive: its id, original file name, size and object key."""

    id: str
    name: str
    size: int
    key: str


class StagedArchives:
    """Records of staged archives in Redis, per company."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    @staticmethod
    def new(prefix: str, name: str, size: int) -> StagedArchive:
        """A fresh record (a new random id, its object key under ``prefix``: the company's
        key prefix), not saved yet."""
        stage_id = uuid.uuid4().hex
        return StagedArchive(stage_id, name, size, object_key(prefix, STAGING_PREFIX, stage_id))

    async def save(self, company_id: str, staged: StagedArchive) -> None:
        """Keep the record for the staging lifetime."""
        await self.redis.set(f"ds:stage:{company_id}:{staged.id}", json.dumps(asdict(staged)),
                             ex=STAGE_TTL_SECONDS)

    async def get(self, company_id: str, stage_id: str) -> StagedArchive | None:
        """The record, or None when unknown, malformed, expired or another company's."""
        if not is_job_id(stage_id):
            return None
        raw = await self.redis.get(f"ds:stage:{company_id}:{stage_id}")
        return StagedArchive(**json.loads(raw)) if raw else None


def purge_expired(store: ObjectStore, max_age_seconds: int = STAGE_TTL_SECONDS) -> int:
    """Delete the staged archive bytes under the store's prefix (a company's) older than their
    lifetime; returns how many (blocking: run it in the storage thread pool)."""
    cutoff = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=max_age_seconds)
    removed = 0
    prefix = object_key(store.config.prefix, STAGING_PREFIX) + "/"
    for key in store.keys_older_than(prefix, cutoff):
        store.remove(key)
        removed += 1
    return removed
