"""Batch job records in Redis (state, progress, result), so any replica can answer a poll.
A record expires an hour after its last update."""

from __future__ import annotations

import json
import uuid
from typing import Any

JOB_TTL_SECONDS = 3600


def is_job_id(text: str) -> bool:
    """True for the shape of an id :meth:`JobRecords.create` hands out (32 hex digits)."""
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


class JobRecords:
    """Create, update and read batch job records."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    async def create(self) -> str:
        """A new running job; returns its id."""
        job_id = uuid.uuid4().hex
        await self.save(job_id, {"id": job_id, "state": "running", "done": 0, "total": None})
        return job_id

    async def save(self, job_id: str, state: dict[str, Any]) -> None:
        """Replace the record of ``job_id`` (its lifetime starts again)."""
        await self.redis.set(f"ds:job:{job_id}", json.dumps(state), ex=JOB_TTL_SECONDS)

    async def get(self, job_id: str) -> dict[str, Any] | None:
        """The record, or None when unknown or expired."""
        if not is_job_id(job_id):
            return None
        raw = await self.redis.get(f"ds:job:{job_id}")
        return json.loads(raw) if raw else None
