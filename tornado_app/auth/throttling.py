"""Login throttling that cannot be forged or turned against the account's owner.

Three counters, each with a 15-minute window from its first failure:
- account + client address: a handful of failures (``account_failure_limit``) block that
  pair (429 with ``Retry-After``): a guesser at one address stops, the owner elsewhere not;
- client address alone: ``address_failure_limit`` (100) failures block the address;
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
from tornado_app.http import ApiError

if TYPE_CHECKING:
    from tornado_app.services import Services


@dataclass(frozen=True)
class ThrottleKeys:
    pair: str
    account: str
    address: str


def keys_for(company_code: str, username: str, address: str) -> ThrottleKeys:
    account = hashlib.sha256(
        f"{company_code}\x00{username_key(username)}".encode("utf-8", "replace")).hexdigest()[:32]
    pair = hashlib.sha256(f"{account}\x00{address}".encode()).hexdigest()[:32]
    return ThrottleKeys(pair=f"fail:aa:{pair}", account=f"fail:a:{account}",
                        address=f"fail:ip:{address}")


def slowdown_seconds(settings: Any, account_failures: int) -> float:
    """The wait before an attempt on an account with ``account_failures`` recent failures."""
    over = account_failures - settings.account_slowdown_after
    if over < 0:
        return 0.0
    return min(settings.account_slowdown_max_seconds,
               settings.account_slowdown_base_seconds * (2 ** min(over, 30)))


async def check(svc: Services, keys: ThrottleKeys) -> None:
    """429 when the pair or the address is blocked; otherwise wait out the account's
    slowdown (if any) and return."""
    st = svc.settings
    (pair, pair_ttl), (addr, addr_ttl), (account, _) = await svc.throttle.counts(
        keys.pair, keys.address, keys.account)
    for count, ttl, limit in ((pair, pair_ttl, st.account_failure_limit),
                              (addr, addr_ttl, st.address_failure_limit)):
        if count >= limit:
            svc.metrics.logins_throttled.inc()
            raise ApiError(429, "RATE_LIMITED", "too many failed attempts; try again later",
                           {"Retry-After": str(max(ttl, 1))})
    wait = slowdown_seconds(st, account)
    if wait:
        await asyncio.sleep(wait)


async def failed(svc: Services, keys: ThrottleKeys) -> None:
    st = svc.settings
    await svc.throttle.record_failures({
        keys.pair: st.account_failure_window_seconds,
        keys.account: st.account_failure_window_seconds,
        keys.address: st.address_failure_window_seconds,
    })
    svc.metrics.logins_failed.inc()


async def succeeded(svc: Services, keys: ThrottleKeys) -> None:
    """The pair's count starts again; the account-wide count runs out with its window (so
    an attacker cannot learn from a shrinking wait that the owner signed in)."""
    await svc.throttle.reset(keys.pair)
