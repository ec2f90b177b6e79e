"""Throttled logins are audited once per account, address and window, with a count (issue 20:
a flood wrote one record each, 15,000 in 25 s, kept 90 days). Over HTTP against the real app,
Redis and SecantusDB."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from store.audit import MAX_ACCOUNTS_PER_ADDRESS, AuditLog, Who
from tests.conftest import add_user, login

FLOOD = 60


WRONG = "wrong pw!!"


async def _attempt(api, username: str, *, xff: str = "") -> int:
    headers = {"X-Forwarded-For": xff} if xff else {}
    r = await api.call("POST", "/api/auth/login", {"companyCode": "ACME", "username": username,
                                                   "password": WRONG}, headers=headers)
    return r.status


async def _records(api, token: str, **query: str) -> list[dict]:
    q = "&".join(f"{k}={v}" for k, v in {"pageSize": "100", **query}.items())
    r = await api.call("GET", f"/api/audit?{q}", token=token)
    assert r.status == 200, r.body
    return r.body["data"]["items"]


async def test_a_flood_of_throttled_logins_is_one_record_with_a_count(api, services):
    services.settings = dataclasses.replace(
        services.settings, account_failure_limit=2, address_failure_limit=1000,
        trusted_proxies=("127.0.0.1/32",))
    await add_user(services, "ACME", "boss", role="ADMIN")
    await add_user(services, "ACME", "victim")
    admin = await login(api, "ACME", "boss")
    for _ in range(2):
        assert await _attempt(api, "victim") == 401
    statuses = await asyncio.gather(*(_attempt(api, "victim") for _ in range(FLOOD)))
    assert set(statuses) == {429}
    # the same account from a second address: its own record
    for _ in range(2):
        assert await _attempt(api, "victim", xff="192.0.2.7") == 401
    for _ in range(5):
        assert await _attempt(api, "Victim", xff="192.0.2.7") == 429  # one account, any case
    await services.audit.flush()
    throttled = [i for i in await _records(api, admin, action="login", target="victim")
                 if i["outcome"] == "throttled"]
    by_address = {i["address"]: i for i in throttled}
    assert len(throttled) == 2 and set(by_address) == {"127.0.0.1", "192.0.2.7"}
    assert by_address["127.0.0.1"]["detail"]["count"] == str(FLOOD)
    assert by_address["192.0.2.7"]["detail"]["count"] == "5"
    assert by_address["127.0.0.1"]["target"]["username"] == "victim"
    assert by_address["127.0.0.1"]["detail"]["last"] >= by_address["127.0.0.1"]["time"]
    # more of the same later adds to the count, it inserts nothing
    for _ in range(7):
        assert await _attempt(api, "victim") == 429
    await services.audit.flush()
    again = [i for i in await _records(api, admin, action="login", target="victim")
             if i["outcome"] == "throttled"]
    assert len(again) == 2
    assert {i["address"]: i["detail"]["count"] for i in again}["127.0.0.1"] == str(FLOOD + 7)
    # the other outcomes keep one record each
    wrong = [i for i in await _records(api, admin, action="login", target="victim")
             if i["outcome"] == "wrong_password"]
    assert len(wrong) == 4
    assert await services.db.audit.count_documents({"outcome": "throttled"}) == 2


async def test_rotating_usernames_from_a_blocked_address_cannot_grow_the_trail(api, services):
    services.settings = dataclasses.replace(services.settings, address_failure_limit=3)
    await add_user(services, "ACME", "boss", role="ADMIN")
    admin = await login(api, "ACME", "boss")
    for i in range(3):
        assert await _attempt(api, f"guess{i}") == 401
    names = [f"name{i}" for i in range(MAX_ACCOUNTS_PER_ADDRESS * 3)]
    for name in names:
        assert await _attempt(api, name) == 429
    await services.audit.flush()
    docs = await services.db.audit.find({"outcome": "throttled"}).to_list(None)
    assert len(docs) == MAX_ACCOUNTS_PER_ADDRESS + 1
    assert sum(d["detail"]["count"] for d in docs) == len(names)
    shared = [d for d in docs if d["actor"]["username"] == "*"]
    assert len(shared) == 1 and shared[0]["detail"]["count"] == len(names) - \
        MAX_ACCOUNTS_PER_ADDRESS
    assert admin  # (unknown names match no user: their records have no company to list them)


async def test_a_new_window_starts_a_new_record(services):
    log = AuditLog(services.db)
    who = Who(None, "kim")
    deadline = time.monotonic() + 5
    start = int(time.time())
    while time.monotonic() < deadline:  # until the 1 s window has turned at least once
        log.record_repeated(company_id=7, action="login", outcome="throttled", actor=who,
                            target=who, address="198.51.100.1", window_seconds=1)
        if int(time.time()) > start + 1:
            break
        await asyncio.sleep(0.05)
    await log.flush()
    docs = await services.db.audit.find({"companyId": 7}).to_list(None)
    assert len(docs) >= 2
    assert all(d["detail"]["count"] >= 1 for d in docs)
