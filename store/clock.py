"""The storage's clock compared with ours (presigned links fail beyond 15 minutes of skew)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import urllib3

from store.storage_errors import StorageError, error_hint, error_text

# S3 refuses signatures more than 15 minutes off (its rule, so not a setting); a minute gets a hint
SKEW_HINT_SECONDS = 60.0
SKEW_FATAL_SECONDS = 15 * 60.0


def server_time(endpoint: str, secure: bool = False, *, timeout: float = 5.0) -> datetime:
    """``Date`` header of ``HEAD http(s)://endpoint/`` as an aware UTC datetime.

    Raises :class:`StorageError` when unreachable or the answer has no usable ``Date``.
    """
    scheme = "https" if secure else "http"
    http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=timeout, read=timeout))
    try:
        resp = http.request("HEAD", f"{scheme}://{endpoint}/", retries=False)
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"cannot reach {endpoint}: {error_text(exc)}",
                           error_hint(exc)) from exc
    finally:
        http.clear()
    date = resp.headers.get("Date")
    try:
        when = parsedate_to_datetime(date) if date else None
    except (TypeError, ValueError):
        when = None
    if when is None:
        raise StorageError(f"{endpoint} answered without a usable Date header")
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def time_check(endpoint: str, secure: bool = False, *, threshold: float = SKEW_HINT_SECONDS,
               timeout: float = 5.0) -> dict[str, Any]:
    """Compare the storage clock with ours. ``diff_sec`` = server - local (the local time is
    taken mid-request; the header has 1 s resolution). ``ok`` is False when unreachable or
    ``|diff| > threshold``; ``hint`` explains (presigned links fail beyond 15 minutes)."""
    t0 = time.time()
    try:
        remote = server_time(endpoint, secure, timeout=timeout)
    except StorageError as exc:
        return {"ok": False, "server_time": None,
                "local_time": datetime.now(UTC).isoformat(timespec="seconds"),
                "diff_sec": None, "error": exc.message, "hint": exc.hint or None}
    local = datetime.fromtimestamp((t0 + time.time()) / 2, UTC)
    diff = round((remote - local).total_seconds(), 1)
    hint = None
    if abs(diff) > SKEW_FATAL_SECONDS:
        hint = (f"clocks differ by {diff:+.0f} s: signed requests and presigned links are "
                "refused beyond 15 minutes of skew; sync both clocks (NTP)")
    elif abs(diff) > threshold:
        hint = (f"clocks differ by {diff:+.0f} s: presigned links break at 15 minutes of skew; "
                "sync both clocks (NTP)")
    return {"ok": abs(diff) <= threshold,
            "server_time": remote.isoformat(timespec="seconds"),
            "local_time": local.isoformat(timespec="seconds"),
            "diff_sec": diff, "hint": hint}


def aware_utc(value: Any) -> datetime | None:
    """Datetimes from any driver as UTC-aware (mongomock and some clients drop the zone);
    None for anything that is not a datetime."""
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def iso_utc(value: datetime | None) -> str | None:
    """``2026-11-26T03:00:00Z`` (None stays None): how the API writes times."""
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")
