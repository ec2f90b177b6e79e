"""Refilling the per-user profile cache (``store.sessions``) from MongoDB without letting
the reads reach the request latency.

- **One read per user and cache version at a time** in this process: requests of a user
  whose cached profile is missing wait for the same MongoDB read instead of each making
  their own (32 clients of one user would otherwise send 64 finds at once when the entry
  expires). A miss after an eviction carries the new version, so it never waits for a read
  that began before the change: a disable still applies at the very next request.
- **Refresh ahead**: a request served from an entry in the last fifth of its life also
  starts one background read that replaces it, so the entry of a user who keeps working is
  renewed before it expires and no request pays for the miss. The fill is version-checked
  like any other: a change that lands meanwhile wins.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from store import companies, users
from store.sessions import Profile, SessionInfo, SessionStore

log = logging.getLogger("tornado_app.auth.profiles")

FlightKey = tuple[int, str, str]


class ProfileLoader:
    """Reads users' profiles into the cache; see the module docstring."""

    def __init__(self, sessions: SessionStore) -> None:
        self.sessions = sessions
        self.refresh_within_ms = sessions.perm_ttl * 1000 // 5
        self._flights: dict[FlightKey, asyncio.Task[Profile | None]] = {}

    async def load(self, db: Any, info: SessionInfo) -> Profile | None:
        """The profile of ``info``'s user, read from MongoDB and cached (None: the user or
        the company is gone). Concurrent calls for the same user and version share a read."""
        return await asyncio.shield(self._flight(db, info))

    def refresh_ahead(self, db: Any, info: SessionInfo) -> None:
        """Start a background refill when the cached profile ``info`` was served from is in
        the last fifth of its life (at most one per user and version)."""
        if 0 <= info.profile_ttl_ms < self.refresh_within_ms:
            self._flight(db, info)

    def _flight(self, db: Any, info: SessionInfo) -> asyncio.Task[Profile | None]:
        key = (info.user_id, info.perm_version, info.company_version)
        task = self._flights.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._read(db, info))
            self._flights[key] = task
            task.add_done_callback(lambda done: self._landed(key, done))
        return task

    def _landed(self, key: FlightKey, task: asyncio.Task[Profile | None]) -> None:
        self._flights.pop(key, None)
        if not task.cancelled() and task.exception() is not None:
            # a waiting request gets the error itself; a refresh ahead just tries next time
            log.warning("profile read failed", extra={"error": type(task.exception()).__name__})

    async def _read(self, db: Any, info: SessionInfo) -> Profile | None:
        user, company = await asyncio.gather(
            users.get_user(db, info.company_id, info.user_id),
            companies.get_by_id(db, info.company_id))
        if user is None or company is None:
            return None
        profile = Profile(user.role, user.status, user.username, user.real_name, company.name)
        await self.sessions.cache_profile(user.id, info.company_id, info.perm_version,
                                          info.company_version, profile)
        return profile
