"""Batch job records in Redis (state, progress, result), so any replica can answer a poll.
A record belongs to a company (another company's id is not found) and expires an hour after
its last update."""

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

    async def create(self, company_id: str) -> str:
        """A new running job of ``company_id``; returns its id."""
        job_id = uuid.uuid4().hex
        await self.save(company_id, job_id,
                        {"id": job_id, "state": "running", "done": 0, "total": None})
        return job_id

    async def save(self, company_id: str, job_id: str, state: dict[str, Any]) -> None:
        """Replace the record of ``job_id`` (its lifetime starts again)."""
        await self.redis.set(f"ds:job:{company_id}:{job_id}", json.dumps(state),
                             ex=JOB_TTL_SECONDS)

    async def get(self, company_id: str, job_id: str) -> dict[str, Any] | None:
        """The record, or None when unknown, expired or another company's."""
        if not is_job_id(job_id):
            return None
        raw = await self.redis.get(f"ds:job:{company_id}:{job_id}")
        return json.loads(raw) if raw else None
