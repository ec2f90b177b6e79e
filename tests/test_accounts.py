"""Accounts as people use them, over HTTP against real Redis and SecantusDB: the cached
profile (warm ``me`` reads no MongoDB; every change evicts it, on a second replica too),
first-run setup, password change and reset, throttling that cannot be forged or turned
against the owner, look-alike usernames, and the audit trail."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pymongo.monitoring
import pytest
from motor.motor_asyncio import AsyncIOMotorClient
from tornado.httpclient import AsyncHTTPClient
from tornado.httpserver import HTTPServer
from tornado.testing import bind_unused_port

from store import companies
from store.setup_tokens import SetupTokens
from tests.conftest import PASSWORD, add_user, login
from tests.waiting import eventually
from tornado_app.app import make_app
from tornado_app.auth import setup as setup_service
from tornado_app.auth.service import rename_company
from tornado_app.auth.throttling import slowdown_seconds
from tornado_app.clientaddr import client_address
from tornado_app.services import open_services

FULLWIDTH_ADMIN = "\uff41\uff44\uff4d\uff49\uff4e"
CYRILLIC_A_ADMIN = "\u0430dmin"


class Commands(pymongo.monitoring.CommandListener):
    """Counts the commands a MongoDB client sends."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: pymongo.monitoring.CommandStartedEvent) -> None:
        self.names.append(event.command_name)

    def succeeded(self, event: object) -> None:
        pass

    def failed(self, event: object) -> None:
        pass


async def me(api, token):
    return await api.call("GET", "/api/auth/me", token=token)


async def redis_calls(redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


# ----------------------------------------------------------------------------- hot path
async def test_warm_me_reads_no_mongodb_and_makes_one_redis_call(api, services, mongo_server,
                                                               monkeypatch):
    from redis.asyncio.connection import AbstractConnection as Connection

    from store.redis_pipe import RedisPipe

    sends: list[int] = []
    real_send = Connection.send_packed_command
    real_call = RedisPipe.call

    async def counting_send(self, command, check_health=True):
        sends.append(1)
        return await real_send(self, command, check_health)

    async def counting_call(self, *args):  # the connection requests share
        sends.append(1)
        return await real_call(self, *args)

    uid = await add_user(services, "ACME", "alice", role="ADMIN", real_name="Alice A")
    listener = Commands()
    client = AsyncIOMotorClient(mongo_server.url, event_listeners=[listener])
    services.db = client[services.settings.mongo_db]
    try:
        token = await login(api, "ACME", "alice")
        cold = await me(api, token)
        assert cold.status == 200
        assert {"find"} <= set(listener.names)  # the first one filled the cache
        listener.names.clear()
        before = await redis_calls(services.redis)
        monkeypatch.setattr(Connection, "send_packed_command", counting_send)
        monkeypatch.setattr(RedisPipe, "call", counting_call)
        for _ in range(20):
            r = await me(api, token)
            assert r.body == {"code": "SUCCESS", "data": {
                "id": uid, "username": "alice", "realName": "Alice A", "role": "ADMIN",
                "companyId": cold.body["data"]["companyId"], "companyName": "ACME Ltd"}}
        monkeypatch.undo()
        after = await redis_calls(services.redis)
        assert listener.names == []  # no MongoDB command at all
        assert len(sends) == 20  # one Redis round trip per request: the validation script
        assert after["evalsha"] - before["evalsha"] == 20
    finally:
        client.close()


def _finds(listener: Commands) -> list[str]:
    return [n for n in listener.names if n == "find"]


async def test_concurrent_misses_of_one_user_share_one_read(api, services, mongo_server,
                                                            monkeypatch):
    """When a busy user's cached profile is gone (expired or evicted), the requests that
    miss together wait for one MongoDB read instead of each making their own."""
    from store import users

    real_get_user = users.get_user

    async def slow_get_user(*args, **kwargs):  # a loaded database: the read takes a while
        await asyncio.sleep(0.3)
        return await real_get_user(*args, **kwargs)

    uid = await add_user(services, "ACME", "mira", real_name="Mira M")
    token = await login(api, "ACME", "mira")
    listener = Commands()
    client = AsyncIOMotorClient(mongo_server.url, event_listeners=[listener])
    services.db = client[services.settings.mongo_db]
    try:
        assert (await me(api, token)).status == 200
        await services.redis.delete(f"ds:perm:{uid}")  # the entry expired
        listener.names.clear()
        monkeypatch.setattr(users, "get_user", slow_get_user)
        answers = await asyncio.gather(*(me(api, token) for _ in range(8)))
        assert {a.status for a in answers} == {200}
        assert {a.body["data"]["realName"] for a in answers} == {"Mira M"}
        assert len(_finds(listener)) == 2  # one user and one company read for all eight
    finally:
        client.close()


async def test_an_entry_near_its_end_is_renewed_in_the_background(api, services,
                                                                 mongo_server):
    """A request served from an entry in the last fifth of its life answers from the cache
    at once and renews the entry behind it, so the user never meets a miss."""
    uid = await add_user(services, "ACME", "remy")
    await add_user(services, "ACME", "rhea", role="ADMIN")
    token = await login(api, "ACME", "remy")
    assert (await me(api, token)).status == 200
    key = f"ds:perm:{uid}"
    full = services.sessions.perm_ttl * 1000
    assert await services.redis.pttl(key) > full * 0.9
    await services.redis.pexpire(key, full // 10)  # near its end
    listener = Commands()
    client = AsyncIOMotorClient(mongo_server.url, event_listeners=[listener])
    services.db = client[services.settings.mongo_db]
    try:
        assert (await me(api, token)).status == 200
        async def renewed() -> bool:
            return await services.redis.pttl(key) > full * 0.9

        await eventually(renewed, timeout=5, what="the entry renewed")  # never expired
        assert len(_finds(listener)) == 2
        listener.names.clear()
        for _ in range(5):  # a fresh entry: no further reads
            assert (await me(api, token)).status == 200
        assert listener.names == []
        # a disable that lands after the renewal still applies at the very next request
        await services.redis.pexpire(key, full // 10)
        admin = await login(api, "ACME", "rhea")
        r = await api.call("PUT", f"/api/users/{uid}/status", {"status": "DISABLED"},
                           token=admin)
        assert r.status == 200
        assert (await me(api, token)).status == 401
    finally:
        client.close()


@pytest.fixture
def second_replica(io_loop, settings, redis_server, mongo_server):
    """Another process's view: its own services and HTTP server on the same stores."""
    svc = io_loop.run_sync(lambda: open_services(settings, mongo_url=mongo_server.url,
                                                 redis_url=redis_server.url))
    sock, port = bind_unused_port()
    server = HTTPServer(make_app(svc))
    server.add_sockets([sock])
    yield f"http://127.0.0.1:{port}"
    server.stop()
    io_loop.run_sync(svc.close)


async def me_at(base: str, token: str) -> tuple[int, dict]:
    resp = await AsyncHTTPClient().fetch(f"{base}/api/auth/me", raise_error=False,
                                         headers={"Authorization": f"Bearer {token}"})
    return resp.code, json.loads(resp.body or b"null")


async def test_every_change_is_visible_at_once_on_both_replicas(api, services, second_replica):
    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "bea", real_name="Bea")
    admin = await login(api, "ACME", "boss")
    bea = await login(api, "ACME", "bea")

    async def both() -> list[tuple[int, dict]]:
        here = await me(api, bea)
        return [(here.status, here.body), await me_at(second_replica, bea)]

    for status, body in await both():  # warm both caches
        assert status == 200 and body["data"]["realName"] == "Bea"
    assert (await api.call("PUT", f"/api/users/{uid}", {"realName": "B\u00e9a \u674e"},
                           token=admin)).status == 200
    for status, body in await both():
        assert status == 200 and body["data"]["realName"] == "B\u00e9a \u674e"
    assert (await api.call("PUT", f"/api/users/{uid}/role", {"role": "REVIEWER"},
                           token=admin)).status == 200
    for _, body in await both():
        assert body["data"]["role"] == "REVIEWER"
    company_id = (await me(api, bea)).body["data"]["companyId"]
    await rename_company(services, company_id, "Acme Renamed")
    for _, body in await both():
        assert body["data"]["companyName"] == "Acme Renamed"
    assert (await api.call("PUT", f"/api/users/{uid}/status", {"status": "DISABLED"},
                           token=admin)).status == 200
    for status, _ in await both():
        assert status == 401
    await api.call("PUT", f"/api/users/{uid}/status", {"status": "ACTIVE"}, token=admin)
    bea = await login(api, "ACME", "bea")
    for status, _ in await both():
        assert status == 200
    assert (await api.call("PUT", f"/api/users/{uid}/password", {"password": "brand new pw"},
                           token=admin)).status == 200
    for status, _ in await both():
        assert status == 401


async def test_a_fill_that_raced_an_eviction_is_dropped(services):
    from store.sessions import Profile

    uid = await add_user(services, "ACME", "carl")
    company = await companies.get_by_code(services.db, "ACME")
    token = await services.sessions.create(uid, company.id)
    info = await services.sessions.lookup(token)
    stale = Profile("ANNOTATOR", "ACTIVE", "carl", "old name", "ACME Ltd")
    await services.sessions.evict_permissions(uid)  # a change lands between read and fill
    assert await services.sessions.cache_profile(uid, company.id, info.perm_version,
                                                 info.company_version, stale) is False
    info = await services.sessions.lookup(token)
    await services.sessions.evict_company(company.id)  # a company rename lands
    assert await services.sessions.cache_profile(uid, company.id, info.perm_version,
                                                 info.company_version, stale) is False
    info = await services.sessions.lookup(token)
    assert info.role == "" and info.username == ""  # still a miss: nothing stale cached
    assert await services.sessions.cache_profile(uid, company.id, info.perm_version,
                                                 info.company_version, stale) is True
    assert (await services.sessions.lookup(token)).real_name == "old name"


# ----------------------------------------------------------------------------- first run
async def test_setup_token_single_use_and_404_once_a_company_exists(api, services):
    token = await setup_service.first_run_token(services)
    assert token and len(token) >= 32
    assert (await services.redis.keys(f"*{token}*")) == []  # only its hash is stored
    r = await api.call("GET", f"/api/setup?token={token}")
    assert r.status == 200 and r.body["data"] == {"pending": True, "tokenValid": True}
    r = await api.call("GET", "/api/setup?token=wrong-token-wrong-token")
    assert r.body["data"]["tokenValid"] is False
    body = {"token": "x" * 43, "companyCode": "FIRST", "companyName": "First Co",
            "username": "founder", "password": PASSWORD, "realName": "Fay Founder"}
    r = await api.call("POST", "/api/setup", body)
    assert r.status == 403 and r.body["code"] == "SETUP_TOKEN_INVALID"
    r = await api.call("POST", "/api/setup", {**body, "token": token, "password": "short"})
    assert r.status == 400  # nothing created, the token still valid
    r = await api.call("POST", "/api/setup", {**body, "token": token})
    assert r.status == 201, r.body
    data = r.body["data"]
    assert data["role"] == "ADMIN" and data["companyCode"] == "FIRST"
    who = await me(api, data["token"])
    assert who.body["data"]["companyName"] == "First Co" and who.body["data"]["role"] == "ADMIN"
    again = await api.call("POST", "/api/setup", {**body, "token": token, "companyCode": "X2"})
    assert again.status == 404  # used: and a company exists now
    assert (await api.call("GET", f"/api/setup?token={token}")).status == 404
    assert await setup_service.first_run_token(services) is None
    assert await companies.count(services.db) == 1


async def test_setup_token_expires(api, services):
    tokens = SetupTokens(services.redis, ttl_seconds=1)
    token = await tokens.create()

    async def expired() -> bool:
        return not await tokens.valid(token)

    await eventually(expired, timeout=10, what="the token expired")
    r = await api.call("POST", "/api/setup", {
        "token": token, "companyCode": "LATE", "companyName": "Late", "username": "late",
        "password": PASSWORD})
    assert r.status == 403 and r.body["code"] == "SETUP_TOKEN_INVALID"
    assert await companies.count(services.db) == 0


async def test_root_redirects_to_the_ui(http_server_client):
    resp = await http_server_client.fetch("/", follow_redirects=False, raise_error=False)
    assert resp.code == 302 and resp.headers["Location"] == "/ui/"


# ----------------------------------------------------------------------------- passwords
async def test_password_change_ends_other_sessions_and_keeps_this_one(api, services):
    await add_user(services, "ACME", "dora")
    here, other = await login(api, "ACME", "dora"), await login(api, "ACME", "dora")
    r = await api.call("PUT", "/api/auth/password",
                       {"oldPassword": PASSWORD, "newPassword": "a new passphrase"}, token=here)
    assert r.status == 200 and r.body == {"code": "SUCCESS", "data": None}
    assert (await me(api, here)).status == 200
    assert (await me(api, other)).status == 401
    bad = await api.call("POST", "/api/auth/login", {"companyCode": "ACME", "username": "dora",
                                                      "password": PASSWORD})
    assert bad.status == 401
    assert await login(api, "ACME", "dora", "a new passphrase")
    stored = (await services.db.users.find_one({"username": "dora"}))["passwordHash"]
    assert stored.startswith("$argon2id$") and not services.passwords.needs_rehash(stored)
    for body in ({"oldPassword": "a new passphrase", "newPassword": "short"},
                 {"oldPassword": "a new passphrase", "newPassword": "p" * 129},
                 {"oldPassword": "a new passphrase"},
                 {"oldPassword": {"$ne": None}, "newPassword": "long enough pw"}):
        r = await api.call("PUT", "/api/auth/password", body, token=here)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", body
    assert (await api.call("PUT", "/api/auth/password", {"oldPassword": "x" * 8,
                                                         "newPassword": "y" * 8})).status == 401


async def test_wrong_old_password_is_throttled_like_login(api, services):
    await add_user(services, "ACME", "egon")
    token = await login(api, "ACME", "egon")
    wrong = {"oldPassword": "not my password", "newPassword": "whatever new pw"}
    for _ in range(services.settings.account_failure_limit):
        r = await api.call("PUT", "/api/auth/password", wrong, token=token)
        assert r.status == 400 and r.body["code"] == "WRONG_PASSWORD"
    r = await api.call("PUT", "/api/auth/password",
                       {"oldPassword": PASSWORD, "newPassword": "whatever new pw"}, token=token)
    assert r.status == 429 and int(r.headers["Retry-After"]) > 0
    # the same counters as login: this address is blocked for this account there too
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "egon", "password": PASSWORD})
    assert r.status == 429
    assert (await me(api, token)).status == 200  # the session itself is untouched


async def test_admin_reset_ends_all_sessions_and_stays_in_the_company(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "finn")
    other = await add_user(services, "GLOBEX", "gus")
    await add_user(services, "GLOBEX", "globoss", role="ADMIN")
    admin = await login(api, "ACME", "boss")
    finn = await login(api, "ACME", "finn")
    annie = await add_user(services, "ACME", "annie")
    annie_token = await login(api, "ACME", "annie")
    r = await api.call("PUT", f"/api/users/{uid}/password", {"password": "reset by admin"},
                       token=annie_token)
    assert r.status == 403
    missing = await api.call("PUT", "/api/users/999999/password", {"password": "12345678"},
                             token=admin)
    foreign = await api.call("PUT", f"/api/users/{other}/password", {"password": "12345678"},
                             token=admin)
    assert foreign.status == 404 and (foreign.status, foreign.body) == (missing.status,
                                                                        missing.body)
    assert await login(api, "GLOBEX", "gus")  # untouched
    r = await api.call("PUT", f"/api/users/{uid}/password", {"password": "short"}, token=admin)
    assert r.status == 400
    r = await api.call("PUT", f"/api/users/{uid}/password", {"password": "reset by admin"},
                       token=admin)
    assert r.status == 200
    assert (await me(api, finn)).status == 401
    assert await login(api, "ACME", "finn", "reset by admin")
    assert annie and (await me(api, admin)).status == 200


# ----------------------------------------------------------------------------- throttling
def test_client_address_trusts_forwarded_for_only_from_trusted_proxies():
    import ipaddress

    nets = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128")]
    assert client_address("203.0.113.9", "1.2.3.4", []) == "203.0.113.9"
    assert client_address("203.0.113.9", "1.2.3.4", nets) == "203.0.113.9"  # not trusted
    assert client_address("10.0.0.2", "198.51.100.7", nets) == "198.51.100.7"
    # a client-supplied (forged) entry left of the real one is never used
    assert client_address("10.0.0.2", "6.6.6.6, 198.51.100.7", nets) == "198.51.100.7"
    assert client_address("10.0.0.2", "198.51.100.7, 10.0.0.9", nets) == "198.51.100.7"
    assert client_address("10.0.0.2", "garbage", nets) == "10.0.0.2"
    assert client_address("10.0.0.2", "6.6.6.6, garbage", nets) == "10.0.0.2"
    assert client_address("::1", "[2001:db8::5]:443", nets) == "2001:db8::5"
    assert client_address("::ffff:10.0.0.3", "192.0.2.1:5555", nets) == "192.0.2.1"


async def attempt(api, username: str, password: str, xff: str) -> int:
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": username, "password": password},
                       headers={"X-Forwarded-For": xff})
    return r.status


async def test_forged_forwarded_for_is_ignored_unless_the_peer_is_trusted(api, services,
                                                                          monkeypatch):
    await add_user(services, "ACME", "hugo")
    limit = services.settings.account_failure_limit
    for i in range(limit):
        assert await attempt(api, "hugo", "wrong password", f"203.0.113.{i}") == 401
    # a new forged address each time changes nothing: the peer 127.0.0.1 is blocked
    assert await attempt(api, "hugo", PASSWORD, "198.51.100.77") == 429
    await services.audit.flush()
    addresses = {d["address"] async for d in services.db.audit.find({"action": "login"})}
    assert addresses == {"127.0.0.1"}  # the forged one is not recorded either
    # behind a trusted proxy (the peer is listed) the forwarded address is the client's
    monkeypatch.setattr(services, "settings", dataclasses.replace(services.settings,
        trusted_proxies=("127.0.0.0/8",)))
    assert await attempt(api, "hugo", PASSWORD, "198.51.100.77") == 200
    await services.audit.flush()
    last = await services.db.audit.find_one({"action": "login", "outcome": "success"})
    assert last["address"] == "198.51.100.77"


async def test_failures_elsewhere_never_lock_the_owner_out(api, services, monkeypatch):
    monkeypatch.setattr(services, "settings", dataclasses.replace(services.settings,
        trusted_proxies=("127.0.0.1/32",), account_slowdown_base_seconds=0.05,
        account_slowdown_max_seconds=0.2))
    await add_user(services, "ACME", "ines")
    limit = services.settings.account_failure_limit
    for attacker in ("203.0.113.1", "203.0.113.2", "203.0.113.3"):
        for _ in range(limit):
            assert await attempt(api, "ines", "wrong password", attacker) == 401
        assert await attempt(api, "ines", PASSWORD, attacker) == 429  # that pair is blocked
    # 15 failures of the account from elsewhere: the owner is slowed (capped), not locked
    from tornado_app.auth import throttling

    waits: list[float] = []

    def recorded(settings: object, failures: int) -> float:
        waits.append(slowdown_seconds(settings, failures))
        return waits[-1]

    monkeypatch.setattr(throttling, "slowdown_seconds", recorded)
    t0 = time.monotonic()
    assert await attempt(api, "ines", PASSWORD, "198.51.100.20") == 200
    assert waits == [0.2]  # the cap, chosen by the service (not measured on a busy machine)
    assert time.monotonic() - t0 >= 0.2  # and waited out
    # a look-alike spelling of the name is the same account for the pair block
    assert await attempt(api, "INES", PASSWORD, "203.0.113.1") == 429


def test_slowdown_grows_then_stays_capped(settings):
    waits = [slowdown_seconds(settings, n) for n in range(0, 40)]
    assert waits[:settings.account_slowdown_after] == [0.0] * settings.account_slowdown_after
    growing = waits[settings.account_slowdown_after:]
    assert growing == sorted(growing) and growing[0] > 0
    assert max(waits) == settings.account_slowdown_max_seconds <= 10


# ----------------------------------------------------------------------------- usernames
async def test_look_alike_usernames_cannot_coexist(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")

    async def create(name: str):
        return await api.call("POST", "/api/users", {"username": name, "password": PASSWORD},
                              token=token)

    assert (await create("admin")).status == 201
    for look_alike in ("Admin", "ADMIN", FULLWIDTH_ADMIN, CYRILLIC_A_ADMIN):
        r = await create(look_alike)
        assert r.status == 409 and r.body["code"] == "USERNAME_EXISTS", look_alike
    assert (await create("admin2")).status == 201
    r = await create("admin\u00b2")  # superscript two
    assert r.status == 409 and r.body["code"] == "USERNAME_EXISTS"
    r = await create("p\u0430vel")  # Cyrillic a inside a Latin name, nothing like it yet
    assert r.status == 400 and "writing systems" in r.body["message"]
    r = await create("Zo\u00eb")
    assert r.status == 201 and r.body["data"]["username"] == "Zo\u00eb"  # kept as typed
    assert (await create("\u0438\u0432\u0430\u043d")).status == 201  # all Cyrillic: fine
    assert (await create("tanaka\u592a\u90ce")).status == 201  # Latin + Han: fine
    assert await login(api, "ACME", "ZO\u00cb")  # the same account under case folding
    other = await add_user(services, "GLOBEX", "Admin")  # another company: no conflict
    assert other


# ----------------------------------------------------------------------------- audit
async def test_audit_records_each_action_for_the_own_company_only(api, services):
    boss_id = await add_user(services, "ACME", "boss", role="ADMIN")
    await add_user(services, "ACME", "off", status="DISABLED")
    await add_user(services, "GLOBEX", "globoss", role="ADMIN")
    admin = await login(api, "ACME", "boss")
    await api.call("POST", "/api/auth/login",
                   {"companyCode": "ACME", "username": "boss", "password": "wrong one!"})
    await api.call("POST", "/api/auth/login",
                   {"companyCode": "ACME", "username": "off", "password": PASSWORD})
    created = (await api.call("POST", "/api/users", {"username": "joe", "password": PASSWORD},
                              token=admin)).body["data"]["id"]
    await api.call("PUT", f"/api/users/{created}", {"realName": "Joe J"}, token=admin)
    await api.call("PUT", f"/api/users/{created}/role", {"role": "REVIEWER"}, token=admin)
    await api.call("PUT", f"/api/users/{created}/status", {"status": "DISABLED"}, token=admin)
    await api.call("PUT", f"/api/users/{created}/password", {"password": "new one 123"},
                   token=admin)
    await api.call("PUT", f"/api/users/{boss_id}/role", {"role": "REVIEWER"}, token=admin)
    boss2 = await login(api, "ACME", "boss")
    await api.call("PUT", "/api/auth/password",
                   {"oldPassword": PASSWORD, "newPassword": "boss new pw"}, token=boss2)
    for _ in range(services.settings.account_failure_limit + 1):
        await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "joe", "password": "wrong pw!"})
    await api.call("POST", "/api/auth/logout", token=boss2)
    await services.audit.flush()
    admin = await login(api, "ACME", "boss", "boss new pw")
    await services.audit.flush()
    r = await api.call("GET", "/api/audit?pageSize=100", token=admin)
    assert r.status == 200, r.body
    items = r.body["data"]["items"]
    seen = {(i["action"], i["outcome"]) for i in items}
    assert {("login", "success"), ("login", "wrong_password"), ("login", "disabled"),
            ("login", "throttled"), ("logout", "success"), ("user.create", "success"),
            ("user.rename", "success"), ("user.role", "success"), ("user.status", "success"),
            ("password.reset", "success"), ("password.change", "success"),
            ("user.role", "last_admin")} <= seen
    text = json.dumps(items)
    assert PASSWORD not in text and "new one 123" not in text and admin not in text
    times = [i["time"] for i in items]
    assert times == sorted(times, reverse=True)  # newest first
    role = next(i for i in items if i["action"] == "user.role" and i["outcome"] == "success")
    assert role["actor"] == {"id": boss_id, "username": "boss"}
    assert role["target"] == {"id": created, "username": "joe"}
    assert role["detail"] == {"role": "REVIEWER"} and role["address"] == "127.0.0.1"
    # filters and paging
    only = (await api.call("GET", "/api/audit?action=user.status", token=admin)).body["data"]
    assert only["total"] == 1 and only["items"][0]["target"]["username"] == "joe"
    by_target = (await api.call("GET", "/api/audit?target=JOE&pageSize=2",
                                token=admin)).body["data"]
    assert by_target["pageSize"] == 2 and len(by_target["items"]) == 2
    assert by_target["total"] >= 6
    page2 = (await api.call("GET", "/api/audit?target=joe&pageSize=2&page=2",
                            token=admin)).body["data"]
    assert {i["id"] for i in page2["items"]}.isdisjoint(i["id"] for i in by_target["items"])
    by_actor = (await api.call("GET", "/api/audit?actor=off", token=admin)).body["data"]
    assert [(i["action"], i["outcome"]) for i in by_actor["items"]] == [("login", "disabled")]
    future = (await api.call("GET", "/api/audit?from=2999-01-01", token=admin)).body["data"]
    assert future["total"] == 0
    end_of_time = (await api.call("GET", "/api/audit?to=9999-12-31", token=admin)).body["data"]
    assert end_of_time["total"] == r.body["data"]["total"]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    window = (await api.call("GET", f"/api/audit?from={today}&to={today}",
                             token=admin)).body["data"]
    assert window["total"] == r.body["data"]["total"]
    for q in ("page=0", "pageSize=x", "action=delete.everything", "from=yesterday",
              "to=2020-13-01", "actor=" + "a" * 65):
        bad = await api.call("GET", f"/api/audit?{q}", token=admin)
        assert bad.status == 400 and bad.body["code"] == "VALIDATION_ERROR", q
    # another company's ADMIN sees none of it; non-admins get 403
    globoss = await login(api, "GLOBEX", "globoss")
    await services.audit.flush()
    globex = await companies.get_by_code(services.db, "GLOBEX")
    theirs = (await api.call("GET", "/api/audit", token=globoss)).body["data"]
    assert theirs["total"] == 1 and theirs["items"][0]["companyId"] == globex.id
    assert theirs["items"][0]["actor"]["username"] == "globoss"
    assert (await api.call("GET", "/api/audit")).status == 401


async def test_audit_is_kept_90_days(services):
    info = await services.db.audit.index_information()
    ttl = [ix for ix in info.values() if "expireAfterSeconds" in ix]
    assert ttl and ttl[0]["expireAfterSeconds"] == 90 * 24 * 3600
    assert ttl[0]["key"] == [("time", 1)]


async def test_a_full_audit_queue_drops_and_counts(api, services):
    from store.audit import AuditLog

    dropped = services.metrics.audit_dropped
    services.audit = AuditLog(services.db, queue_limit=1,
                              on_drop=dropped.labels("queue_full").inc)
    for _ in range(5):  # no await in between: the writer cannot run, the queue fills
        services.audit.record(company_id=1, action="login", outcome="success", actor=None)
    assert services.audit.dropped == 4
    await add_user(services, "ACME", "kim")
    assert await login(api, "ACME", "kim")
    services.settings = dataclasses.replace(services.settings, docs_api_token="operator-token")
    metrics = (await api.call("GET", "/metrics", token="operator-token")).raw.decode()
    assert 'audit_records_dropped_total{reason="queue_full"} 4.0' in metrics
