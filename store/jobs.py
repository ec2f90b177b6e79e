"""Job ids: the shape :mod:`store.job_queue` hands out and every job or staging lookup checks
before it reaches Redis."""

from __future__ import annotations


def is_job_id(text: str) -> bool:
    """True for the shape of a job or staging id (32 lowercase hex digits)."""
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)
