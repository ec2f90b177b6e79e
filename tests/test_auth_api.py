"""The annotation backend's auth and user API, over HTTP against real Redis and SecantusDB."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.conftest import PASSWORD, add_user, login
from tests.waiting import eventually


async def test_login_me_logout_cycle(api, services):
    uid = await add_user(services, "ACME", "alice", role="ADMIN", real_name="Alice A")
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "alice", "password": PASSWORD})
    assert r.status == 200
    assert r.body["code"] == "SUCCESS"
    data = r.body["data"]
    assert data["userId"] == uid and data["username"] == "alice" and data["role"] == "ADMIN"
    assert data["expiresIn"] == 86400
    token = data["token"]
    assert str(uuid.UUID(token)) == token and uuid.UUID(token).version == 4
    me = await api.call("GET", "/api/auth/me", token=token)
    assert me.status == 200
    assert me.body["data"] == {"id": uid, "username": "alice", "realName": "Alice A",
                               "role": "ADMIN", "companyId": me.body["data"]["companyId"],
                               "companyName": "ACME Ltd"}
    assert isinstance(me.body["data"]["companyId"], int)
    out = await api.call("POST", "/api/auth/logout", token=token)
    assert out.status == 200 and out.body == {"code": "SUCCESS", "data": None}
    again = await api.call("GET", "/api/auth/me", token=token)
    assert again.status == 401 and again.body["code"] == "UNAUTHORIZED"
    assert "message" in again.body


async def test_wrong_password_unknown_user_unknown_company_look_the_same(api, services):
    await add_user(services, "ACME", "bob")
    bodies = [
        {"companyCode": "ACME", "username": "bob", "password": "wrong password"},
        {"companyCode": "ACME", "username": "nobody", "password": PASSWORD},
        {"companyCode": "NOPE", "username": "bob", "password": PASSWORD},
    ]
    replies = [await api.call("POST", "/api/auth/login", b) for b in bodies]
    assert {r.status for r in replies} == {401}
    assert {r.body["code"] for r in replies} == {"USER_NOT_FOUND"}
    assert len({r.body["message"] for r in replies}) == 1


async def test_unknown_user_costs_a_hash_verification(services):
    calls: list[object] = []
    real = services.passwords.hasher

    class Spy:
        def verify(self, stored, password):
            calls.append(stored)
            return real.verify(stored, password)

    services.passwords.hasher = Spy()
    assert await services.passwords.verify(None, "whatever1") is False
    assert calls == [services.passwords.dummy_hash]
    params = real.check_needs_rehash(services.passwords.dummy_hash)
    assert params is False  # the dummy hash has the very parameters real hashes get


async def test_disabled_user_cannot_log_in_but_only_with_right_password(api, services):
    await add_user(services, "ACME", "carol", status="DISABLED")
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "carol", "password": PASSWORD})
    assert r.status == 403 and r.body["code"] == "USER_DISABLED"
    wrong = await api.call("POST", "/api/auth/login",
                           {"companyCode": "ACME", "username": "carol", "password": "x" * 9})
    assert wrong.status == 401 and wrong.body["code"] == "USER_NOT_FOUND"


async def test_usernames_are_per_company(api, services):
    a = await add_user(services, "ACME", "dave", password="acme password")
    b = await add_user(services, "GLOBEX", "dave", password="globex password")
    assert a != b
    ta = await login(api, "ACME", "dave", "acme password")
    tb = await login(api, "GLOBEX", "dave", "globex password")
    assert (await api.call("GET", "/api/auth/me", token=ta)).body["data"]["id"] == a
    assert (await api.call("GET", "/api/auth/me", token=tb)).body["data"]["id"] == b
    bad = await api.call("POST", "/api/auth/login",
                         {"companyCode": "GLOBEX", "username": "dave", "password": "acme password"})
    assert bad.status == 401


async def test_username_is_nfc_normalised(api, services):
    admin = await add_user(services, "ACME", "root", role="ADMIN")
    assert admin
    token = await login(api, "ACME", "root")
    decomposed = "jose\u0301"  # e + combining acute
    r = await api.call("POST", "/api/users", {"username": decomposed, "password": PASSWORD},
                       token=token)
    assert r.status == 201 and r.body["data"]["username"] == "jos\u00e9"
    dup = await api.call("POST", "/api/users", {"username": "jos\u00e9", "password": PASSWORD},
                         token=token)
    assert dup.status == 409 and dup.body["code"] == "USERNAME_EXISTS"
    assert (await login(api, "ACME", decomposed))


async def test_access_rules_401_403_200(api, services):
    await add_user(services, "ACME", "admin1", role="ADMIN")
    await add_user(services, "ACME", "annie", role="ANNOTATOR")
    await add_user(services, "ACME", "rev", role="REVIEWER")
    admin = await login(api, "ACME", "admin1")
    annie = await login(api, "ACME", "annie")
    rev = await login(api, "ACME", "rev")
    assert (await api.call("GET", "/api/users")).status == 401
    for token in (annie, rev):
        r = await api.call("GET", "/api/users", token=token)
        assert r.status == 403 and r.body["code"] == "FORBIDDEN"
        assert (await api.call("GET", "/api/auth/me", token=token)).status == 200
    assert (await api.call("GET", "/api/users", token=admin)).status == 200
    for method, path, body in [("POST", "/api/users", {"username": "x1y", "password": PASSWORD}),
                               ("PUT", "/api/users/1", {"realName": "x"}),
                               ("PUT", "/api/users/1/status", {"status": "DISABLED"}),
                               ("PUT", "/api/users/1/role", {"role": "ADMIN"})]:
        assert (await api.call(method, path, body, token=annie)).status == 403
        assert (await api.call(method, path, body)).status == 401


async def test_token_formats_refused(api, services):
    await add_user(services, "ACME", "erin")
    token = await login(api, "ACME", "erin")
    bad_headers = [
        f"Basic {token}", f"Token {token}", token, f"Bearer {token.upper()}",
        f"Bearer {token}x", "Bearer ", "Bearer {\"$ne\": null}", f"Bearer {uuid.uuid4()}",
        f"Bearer {token.replace('-', '')}",
    ]
    for h in bad_headers:
        r = await api.call("GET", "/api/auth/me", headers={"Authorization": h})
        assert r.status == 401, h
        assert r.body["code"] == "UNAUTHORIZED"
    for scheme in ("bearer", "BEARER", "BeArEr"):
        r = await api.call("GET", "/api/auth/me", headers={"Authorization": f"{scheme} {token}"})
        assert r.status == 200


async def test_malformed_token_needs_no_redis_lookup(api, services):
    seen: list[str] = []
    original = services.sessions.lookup

    async def spy(token):
        seen.append(token)
        return await original(token)

    services.sessions.lookup = spy
    r = await api.call("GET", "/api/auth/me", headers={"Authorization": "Bearer not-a-uuid"})
    assert r.status == 401 and seen == []


async def test_create_user_and_list_with_filters_and_paging(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    created = []
    for i in range(25):
        role = "REVIEWER" if i % 5 == 0 else "ANNOTATOR"
        r = await api.call("POST", "/api/users", {"username": f"user{i:02d}", "password": PASSWORD,
                                                  "realName": f"User {i}", "role": role},
                           token=token)
        assert r.status == 201, r.body
        assert r.body["code"] == "SUCCESS"
        d = r.body["data"]
        assert d["username"] == f"user{i:02d}" and isinstance(d["id"], int)
        assert d["role"] == role and d["status"] == "ACTIVE" and "password" not in d
        assert "passwordHash" not in d
        created.append(d["id"])
    page1 = (await api.call("GET", "/api/users", token=token)).body["data"]
    assert page1["total"] == 26 and page1["page"] == 1 and page1["pageSize"] == 20
    assert len(page1["items"]) == 20
    assert set(page1["items"][0]) == {"id", "username", "realName", "role", "status"}
    page2 = (await api.call("GET", "/api/users?page=2", token=token)).body["data"]
    assert len(page2["items"]) == 6
    ids = [u["id"] for u in page1["items"] + page2["items"]]
    assert len(set(ids)) == 26
    reviewers = (await api.call("GET", "/api/users?role=REVIEWER&pageSize=3",
                                token=token)).body["data"]
    assert reviewers["total"] == 5 and len(reviewers["items"]) == 3
    assert all(u["role"] == "REVIEWER" for u in reviewers["items"])
    clamped = (await api.call("GET", "/api/users?pageSize=1000", token=token)).body["data"]
    assert clamped["pageSize"] == 100 and len(clamped["items"]) == 26
    beyond = (await api.call("GET", "/api/users?page=9", token=token)).body["data"]
    assert beyond["items"] == [] and beyond["total"] == 26
    await api.call("PUT", f"/api/users/{created[0]}/status", {"status": "DISABLED"}, token=token)
    disabled = (await api.call("GET", "/api/users?status=DISABLED", token=token)).body["data"]
    assert [u["id"] for u in disabled["items"]] == [created[0]]


async def test_bad_paging_and_filters(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    for q in ("page=0", "page=-1", "page=abc", "pageSize=0", "pageSize=1.5", "page=",
              "status=GONE", "page=1&page=2", "page=%EF%BC%91"):
        r = await api.call("GET", f"/api/users?{q}", token=token)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", q
    r = await api.call("GET", "/api/users?role=KING", token=token)
    assert r.status == 400 and r.body["code"] == "INVALID_ROLE"
    # operator-looking query names are just unknown parameters: ignored, never a filter
    r = await api.call("GET", "/api/users?role[$ne]=ADMIN&status[$gt]=", token=token)
    assert r.status == 200 and r.body["data"]["total"] == 1


async def test_create_user_validation(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    cases = [
        {"password": PASSWORD},
        {"username": "ab", "password": PASSWORD},
        {"username": "a" * 65, "password": PASSWORD},
        {"username": "has space", "password": PASSWORD},
        {"username": "okname", "password": "short"},
        {"username": "okname", "password": "p" * 129},
        {"username": {"$ne": None}, "password": PASSWORD},
        {"username": ["x"], "password": PASSWORD},
        {"username": 12345, "password": PASSWORD},
        {"username": "okname", "password": {"$gt": ""}},
        {"username": "okname", "password": PASSWORD, "realName": {"$set": 1}},
        {"username": "nul\u0000name", "password": PASSWORD},
        {"username": "okname", "password": PASSWORD, "role": ["ADMIN"]},
    ]
    for body in cases:
        r = await api.call("POST", "/api/users", body, token=token)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", body
    r = await api.call("POST", "/api/users", {"username": "okname", "password": PASSWORD,
                                              "role": "admin"}, token=token)
    assert r.status == 400 and r.body["code"] == "INVALID_ROLE"
    lone = '{"username": "sur\\ud800x", "password": "correct horse battery"}'
    r = await api.call("POST", "/api/users", raw=lone, token=token,
                       headers={"Content-Type": "application/json"})
    assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR"
    listing = (await api.call("GET", "/api/users", token=token)).body["data"]
    assert listing["total"] == 1


async def test_mass_assignment_is_ignored(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    await add_user(services, "GLOBEX", "other")
    token = await login(api, "ACME", "boss")
    me = (await api.call("GET", "/api/auth/me", token=token)).body["data"]
    r = await api.call("POST", "/api/users", {
        "username": "sneaky", "password": PASSWORD, "role": "ANNOTATOR", "companyId": 999,
        "status": "DISABLED", "passwordHash": "x", "id": 1, "_id": 1}, token=token)
    assert r.status == 201
    d = r.body["data"]
    assert d["companyId"] == me["companyId"] and d["status"] == "ACTIVE" and d["id"] != 1
    assert await login(api, "ACME", "sneaky")


async def test_malformed_bodies(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    for raw in ("", "{", "null", "[]", "[1,2]", '"text"', "42", "{\"a\":}", "\xff\xfe"):
        r = await api.call("POST", "/api/auth/login", raw=raw.encode("latin-1"))
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", raw
        r = await api.call("POST", "/api/users", raw=raw.encode("latin-1"), token=token)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", raw
    for body in ({"companyCode": "ACME", "username": "boss"},
                 {"companyCode": {"$ne": None}, "username": "boss", "password": PASSWORD},
                 {"companyCode": "ACME", "username": {"$ne": None}, "password": PASSWORD},
                 {"companyCode": "ACME", "username": "boss", "password": {"$ne": None}},
                 {"companyCode": "ACME", "username": "boss", "password": 12345678}):
        r = await api.call("POST", "/api/auth/login", body)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", body


async def test_huge_bodies_and_passwords(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    huge = {"companyCode": "ACME", "username": "boss", "password": "p" * 100_000}
    r = await api.call("POST", "/api/auth/login", huge)
    assert r.status == 413 and r.body["code"] == "PAYLOAD_TOO_LARGE"
    r = await api.call("POST", "/api/users", {"username": "big", "password": "p" * 100_000},
                       token=token)
    assert r.status == 413
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "boss", "password": "p" * 5000})
    assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR"
    r = await api.call("POST", "/api/auth/login", raw=b"{" + b" " * 70_000 + b"}")
    assert r.status == 413


async def test_rename_status_role_and_not_found(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "frank")
    token = await login(api, "ACME", "boss")
    r = await api.call("PUT", f"/api/users/{uid}", {"realName": "Frank F"}, token=token)
    assert r.status == 200 and r.body == {"code": "SUCCESS", "data": None}
    items = (await api.call("GET", "/api/users", token=token)).body["data"]["items"]
    assert {u["username"]: u["realName"] for u in items}["frank"] == "Frank F"
    for path in ("/api/users/999999", "/api/users/abc", "/api/users/-1", "/api/users/1e3",
                 "/api/users/99999999999999999999999"):
        r = await api.call("PUT", path, {"realName": "x"}, token=token)
        assert r.status == 404 and r.body["code"] == "NOT_FOUND", path
    r = await api.call("PUT", f"/api/users/{uid}/status", {"status": "disabled"}, token=token)
    assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR"
    r = await api.call("PUT", f"/api/users/{uid}/role", {"role": "OWNER"}, token=token)
    assert r.status == 400 and r.body["code"] == "INVALID_ROLE"
    r = await api.call("PUT", f"/api/users/{uid}/role", {"role": {"$ne": None}}, token=token)
    assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR"
    r = await api.call("PUT", f"/api/users/{uid}", {"realName": ["x"]}, token=token)
    assert r.status == 400


async def test_cross_tenant_ids_look_missing(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    victim = await add_user(services, "GLOBEX", "victim", role="ADMIN")
    await add_user(services, "GLOBEX", "victim2", role="ANNOTATOR")
    token = await login(api, "ACME", "boss")
    missing = await api.call("PUT", "/api/users/987654", {"realName": "x"}, token=token)
    for method, path, body in [
        ("PUT", f"/api/users/{victim}", {"realName": "pwned"}),
        ("PUT", f"/api/users/{victim}/status", {"status": "DISABLED"}),
        ("PUT", f"/api/users/{victim}/role", {"role": "ANNOTATOR"}),
    ]:
        r = await api.call(method, path, body, token=token)
        assert (r.status, r.body) == (missing.status, missing.body), path
    listing = (await api.call("GET", "/api/users?pageSize=100", token=token)).body["data"]
    assert [u["username"] for u in listing["items"]] == ["boss"]
    victim_token = await login(api, "GLOBEX", "victim")
    me = (await api.call("GET", "/api/auth/me", token=victim_token)).body["data"]
    assert me["realName"] == "" and me["role"] == "ADMIN"
    dup = await api.call("POST", "/api/users", {"username": "victim2", "password": PASSWORD},
                         token=token)
    assert dup.status == 201  # another company's name is no conflict here


async def test_disable_kills_sessions_at_once(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "gina")
    admin = await login(api, "ACME", "boss")
    t1 = await login(api, "ACME", "gina")
    t2 = await login(api, "ACME", "gina")
    assert (await api.call("GET", "/api/auth/me", token=t1)).status == 200  # warms the cache
    r = await api.call("PUT", f"/api/users/{uid}/status", {"status": "DISABLED"}, token=admin)
    assert r.status == 200
    for t in (t1, t2):
        assert (await api.call("GET", "/api/auth/me", token=t)).status == 401
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "gina", "password": PASSWORD})
    assert r.status == 403 and r.body["code"] == "USER_DISABLED"
    await api.call("PUT", f"/api/users/{uid}/status", {"status": "ACTIVE"}, token=admin)
    assert await login(api, "ACME", "gina")


async def test_role_change_applies_to_existing_token_next_request(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "hank", role="ANNOTATOR")
    admin = await login(api, "ACME", "boss")
    hank = await login(api, "ACME", "hank")
    assert (await api.call("GET", "/api/users", token=hank)).status == 403
    assert (await api.call("PUT", f"/api/users/{uid}/role", {"role": "ADMIN"},
                           token=admin)).status == 200
    assert (await api.call("GET", "/api/users", token=hank)).status == 200
    assert (await api.call("GET", "/api/auth/me", token=hank)).body["data"]["role"] == "ADMIN"
    assert (await api.call("PUT", f"/api/users/{uid}/role", {"role": "REVIEWER"},
                           token=admin)).status == 200
    assert (await api.call("GET", "/api/users", token=hank)).status == 403


async def test_last_admin_is_protected(api, services):
    boss = await add_user(services, "ACME", "boss", role="ADMIN")
    token = await login(api, "ACME", "boss")
    r = await api.call("PUT", f"/api/users/{boss}/status", {"status": "DISABLED"}, token=token)
    assert r.status == 409 and r.body["code"] == "LAST_ADMIN"
    r = await api.call("PUT", f"/api/users/{boss}/role", {"role": "REVIEWER"}, token=token)
    assert r.status == 409 and r.body["code"] == "LAST_ADMIN"
    second = await add_user(services, "ACME", "boss2", role="ADMIN")
    t2 = await login(api, "ACME", "boss2")
    # two admins demoting each other at the same time: exactly one succeeds
    r1, r2 = await asyncio.gather(
        api.call("PUT", f"/api/users/{second}/role", {"role": "ANNOTATOR"}, token=token),
        api.call("PUT", f"/api/users/{boss}/role", {"role": "ANNOTATOR"}, token=t2),
    )
    assert sorted([r1.status, r2.status]) in ([200, 409], [200, 403])
    from store.users import count_active_admins

    company_id = (await api.call("GET", "/api/auth/me", token=token)).body["data"]["companyId"]
    assert await count_active_admins(services.db, company_id) == 1


async def test_account_throttle_and_reset(api, services):
    await add_user(services, "ACME", "ivan")
    await add_user(services, "ACME", "judy")
    wrong = {"companyCode": "ACME", "username": "ivan", "password": "wrong password"}
    for _ in range(services.settings.account_failure_limit):
        assert (await api.call("POST", "/api/auth/login", wrong)).status == 401
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "ivan", "password": PASSWORD})
    assert r.status == 429 and r.body["code"] == "RATE_LIMITED"
    assert 0 < int(r.headers["Retry-After"]) <= 900
    # another account from the same address is not locked out
    assert await login(api, "ACME", "judy")


async def test_success_resets_account_failures(api, services):
    await add_user(services, "ACME", "kate")
    wrong = {"companyCode": "ACME", "username": "kate", "password": "wrong password"}
    for _ in range(services.settings.account_failure_limit - 1):
        await api.call("POST", "/api/auth/login", wrong)
    assert await login(api, "ACME", "kate")
    for _ in range(services.settings.account_failure_limit - 1):
        assert (await api.call("POST", "/api/auth/login", wrong)).status == 401
    assert await login(api, "ACME", "kate")


async def test_address_throttle_needs_many_failures(api, services):
    limit = services.settings.address_failure_limit
    assert limit >= 100
    await add_user(services, "ACME", "leo")
    for i in range(limit):
        key = "fail:ip:127.0.0.1"
        await services.throttle.record_failure(key, 900)
        if i == limit - 2:
            assert await login(api, "ACME", "leo")
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "leo", "password": PASSWORD})
    assert r.status == 429 and "Retry-After" in r.headers


async def test_sessions_set_slides_and_prunes(api, services):
    uid = await add_user(services, "ACME", "mia")
    t1 = await login(api, "ACME", "mia")
    await services.redis.delete(f"ds:sess:{t1}")  # as if it expired
    t2 = await login(api, "ACME", "mia")
    members = await services.redis.smembers(f"ds:usess:{uid}")
    assert members == {t2}
    ttl = await services.redis.ttl(f"ds:usess:{uid}")
    assert 86000 < ttl <= 86400
    assert 86000 < await services.redis.ttl(f"ds:sess:{t2}") <= 86400


async def test_unknown_route_and_method(api, services):
    r = await api.call("GET", "/api/nothing")
    assert r.status == 404 and r.body["code"] == "NOT_FOUND"
    r = await api.call("DELETE", "/api/users")
    assert r.status == 405


async def test_health(api):
    r = await api.call("GET", "/health")
    assert r.status == 200 and r.body == {"status": "ok"}
    assert r.headers.get("X-Request-Id")


async def test_request_id_is_echoed_and_secrets_not_logged(api, services, caplog):
    await add_user(services, "ACME", "nora")
    caplog.set_level("DEBUG")
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "nora", "password": PASSWORD},
                       headers={"X-Request-Id": "req-123"})
    assert r.headers["X-Request-Id"] == "req-123"
    token = r.body["data"]["token"]
    await api.call("GET", "/api/auth/me", token=token)
    text = "\n".join(rec.getMessage() + str(vars(rec)) for rec in caplog.records)
    assert "req-123" in text
    assert PASSWORD not in text and token not in text


async def test_admin_change_while_the_company_lock_is_held_answers_503(api, services,
                                                                       monkeypatch):
    from store.sessions import CompanyLock

    await add_user(services, "ACME", "boss", role="ADMIN")
    uid = await add_user(services, "ACME", "ursula")
    token = await login(api, "ACME", "boss")
    me = (await api.call("GET", "/api/auth/me", token=token)).body["data"]
    monkeypatch.setattr(CompanyLock, "wait_seconds", 0.2)
    await services.redis.set(f"ds:lock:company:{me['companyId']}", "someone-else", ex=30)
    r = await api.call("PUT", f"/api/users/{uid}/role", {"role": "REVIEWER"}, token=token)
    assert r.status == 503 and r.body["code"] == "SERVICE_UNAVAILABLE"
    assert r.headers["Retry-After"] == "1"
    await services.redis.delete(f"ds:lock:company:{me['companyId']}")
    r = await api.call("PUT", f"/api/users/{uid}/role", {"role": "REVIEWER"}, token=token)
    assert r.status == 200


async def test_login_warns_before_pausing_and_pauses_grow(api, services, monkeypatch):
    """A person who mistypes is told how many tries are left, then paused for a short,
    growing time (not 15 minutes at once); the right password works once the pause ends."""
    import dataclasses

    monkeypatch.setattr(services, "settings", dataclasses.replace(
        services.settings, account_lock_first_seconds=1))
    limit = services.settings.account_failure_limit
    await add_user(services, "ACME", "nora")
    wrong = {"companyCode": "ACME", "username": "nora", "password": "wrong password"}
    right = {**wrong, "password": PASSWORD}
    seen = []
    for _ in range(limit):
        r = await api.call("POST", "/api/auth/login", wrong)
        assert r.status == 401 and r.body["code"] == "USER_NOT_FOUND"
        seen.append((r.body["attemptsLeft"], r.body["retryAfter"]))
    assert seen == [(limit - i, 0) for i in range(1, limit)] + [(0, 1)]
    from tornado_app.auth.throttling import keys_for

    keys = keys_for("ACME", "nora", "127.0.0.1")  # the count outlives the pause by a window
    assert await services.redis.ttl("ds:" + keys.pair) > 900 >= 1 == await services.redis.ttl(
        "ds:" + keys.pause)
    r = await api.call("POST", "/api/auth/login", right)  # paused, even with the right one
    assert r.status == 429 and r.body["retryAfter"] == 1 == int(r.headers["Retry-After"])
    assert "1 minute" in r.body["message"] and "second" not in r.body["message"]

    async def after_pause(body):
        async def answered():
            r = await api.call("POST", "/api/auth/login", body)
            return r if r.status != 429 else None

        return await eventually(answered, 10, interval=0.1, what="the pause ended")

    r = await after_pause(wrong)  # one more wrong try after the pause: a longer pause
    assert r.status == 401 and (r.body["attemptsLeft"], r.body["retryAfter"]) == (0, 2)
    assert (await api.call("POST", "/api/auth/login", right)).status == 429
    assert (await after_pause(right)).status == 200
    # a success starts the count again
    r = await api.call("POST", "/api/auth/login", wrong)
    assert r.body["attemptsLeft"] == limit - 1


def test_pause_schedule_grows_to_the_window(settings):
    from tornado_app.auth.throttling import pause_seconds

    limit = settings.account_failure_limit
    waits = [pause_seconds(settings, n) for n in range(1, limit + 7)]
    assert waits == [0] * (limit - 1) + [60, 120, 240, 480, 900, 900, 900]


async def test_company_code_case_does_not_change_the_throttled_account(api, services):
    await add_user(services, "ACME", "olga")
    for code in ("ACME", "acme", "Acme"):
        r = await api.call("POST", "/api/auth/login",
                           {"companyCode": code, "username": "olga", "password": "wrong one"})
        assert r.status == 401
    assert r.body["attemptsLeft"] == services.settings.account_failure_limit - 3


async def test_company_code_is_compared_case_insensitively(api, services):
    """``acme`` signs in to ``ACME`` (usernames already were case-insensitive)."""
    from store import companies

    await add_user(services, "ACME", "pia")
    for code in ("ACME", "acme", "Acme"):
        assert await login(api, code, "PIA")
    with pytest.raises(companies.CompanyExists):
        await companies.create_company(services.db, "acme", "Another Acme")
    assert (await companies.get_by_code(services.db, "acme")).code == "ACME"
