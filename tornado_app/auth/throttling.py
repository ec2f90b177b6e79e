"""Login throttling that cannot be forged or turned against the account's owner.

Three counters:
- account + client address: after ``account_failure_limit`` (5) failures the pair pauses
  (429 with ``Retry-After``) for ``account_lock_first_seconds`` (1 minute), and each further
  failure pauses it again for twice as long (2, 4, 8 minutes, then at most the 15-minute
  window). The count runs until 15 minutes after the pair's last failure or pause, so a guesser
  at one address gets 5 tries and then one per growing pause (fewer per hour than a fixed
  5-per-15-minutes block), while a person who mistypes waits a minute, not a quarter of an
  hour, and is told beforehand how many tries are left (``attemptsLeft``);
- client address alone: ``address_failure_limit`` (100) failures in 15 minutes block the
  address;
- account alone (from anywhere): past ``account_slowdown_after`` failures every attempt on
  the account first waits ``base * 2**(n - after)`` seconds (capped at
  ``account_slowdown_max_seconds``), before the password is even looked at. Guessing from
  many addresses gets slow; the owner is delayed a few seconds at worst, never locked out.

The account is named by its company code and canonical username (``Admin`` and ``admin``
are one account), and the client address is the peer unless a trusted proxy says otherwise
(``tornado_app.clientaddr``). Used by login and by the password change alike.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.usernames import username_key
from tornado_app.api_errors import ApiError

if TYPE_CHECKING:
    from tornado_app.services import Services


@dataclass(frozen=True)
class ThrottleKeys:
    pair: str
    account: str
    address: str

    @property
    def pause(self) -> str:
        """The key whose life is the pair's current pause."""
        return "pause:" + self.pair


@dataclass(frozen=True)
class Failure:
    """What the caller may be told after a wrong password: tries left before a pause and,
    when this failure started one, its length in seconds."""

    attempts_left: int
    retry_after: int

    def details(self) -> dict[str, int]:
        return {"attemptsLeft": self.attempts_left, "retryAfter": self.retry_after}


def keys_for(company_code: str, username: str, address: str) -> ThrottleKeys:
    # company codes are ASCII and compared case-insensitively, like usernames
    name = f"{company_code.casefold()}\x00{username_key(username)}"
    account = hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:32]
    pair = hashlib.sha256(f"{account}\x00{address}".encode()).hexdigest()[:32]
    return ThrottleKeys(pair=f"fail:aa:{pair}", account=f"fail:a:{account}",
                        address=f"fail:ip:{address}")


def slowdown_seconds(settings: Any, account_failures: int) -> float:
    """The wait before an attempt on an account with ``account_failures`` recent failures."""
    over = account_failures - settings.account_slowdown_after
    if over < 0:
        return 0.0
    return float(min(settings.account_slowdown_max_seconds,
                     settings.account_slowdown_base_seconds * (2 ** min(over, 30))))


def pause_seconds(settings: Any, pair_failures: int) -> int:
    """How long the pair pauses after its ``pair_failures``-th failure (0: no pause yet)."""
    over = pair_failures - settings.account_failure_limit
    if over < 0:
        return 0
    return int(min(settings.account_failure_window_seconds,
                   settings.account_lock_first_seconds * (2 ** min(over, 30))))


def _in_words(seconds: int) -> str:
    minutes = max(1, -(-seconds // 60))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def throttled(seconds: int) -> ApiError:
    seconds = max(int(seconds), 1)
    return ApiError(429, "RATE_LIMITED",
                    f"too many failed attempts; try again in {_in_words(seconds)}",
                    {"Retry-After": str(seconds)}, details={"retryAfter": seconds})


async def check(svc: Services, keys: ThrottleKeys) -> None:
    """429 when the pair pauses or the address is blocked; otherwise wait out the
    account's slowdown (if any) and return."""
    st = svc.settings
    (paused, pause_ttl), (addr, addr_ttl), (account, _) = await svc.throttle.counts(
        keys.pause, keys.address, keys.account)
    for blocked, ttl in ((paused > 0, pause_ttl), (addr >= st.address_failure_limit, addr_ttl)):
        if blocked:
            svc.metrics.logins_throttled.inc()
            raise throttled(ttl)
    wait = slowdown_seconds(st, account)
    if wait:
        await asyncio.sleep(wait)


async def failed(svc: Services, keys: ThrottleKeys) -> Failure:
    """Count a wrong password; from the limit on, pause the pair for a growing time."""
    st = svc.settings
    await svc.throttle.record_failures({
        keys.account: st.account_failure_window_seconds,
        keys.address: st.address_failure_window_seconds,
    })
    count = await svc.throttle.record_sliding_failure(keys.pair,
                                                      st.account_failure_window_seconds)
    pause = pause_seconds(st, count)
    if pause:
        # the count lives a full window past the pause: a pause never restarts the count
        await svc.throttle.pause(keys.pause, pause, keys.pair,
                                 pause + st.account_failure_window_seconds)
    svc.metrics.logins_failed.inc()
    return Failure(attempts_left=max(st.account_failure_limit - count, 0), retry_after=pause)


async def succeeded(svc: Services, keys: ThrottleKeys) -> None:
    """The pair's count starts again; the account-wide count runs out with its window (so
    an attacker cannot learn from a shrinking wait that the owner signed in)."""
    await svc.throttle.reset(keys.pair)
    await svc.throttle.reset(keys.pause)
