"""A company API key works only while the user who made it is active: disabling the user
stops their keys (also keys made with those keys) on both faces at the very next request,
enabling them again brings the keys back, and other admins' keys are untouched. A key acts
with the lower of its own role and its maker's current role (issue 30: a demoted ADMIN kept
administering with an ADMIN key), the keys list names each key's maker, and the audit trail
records a key used below its role or refused for its maker. Over HTTP against the real app on
real Redis and SecantusDB."""

from __future__ import annotations

import uuid

from store import api_keys, companies
from tests.conftest import add_user, login, post_form

PASSWORD_BODY = {"password": "a brand new password"}


async def _key(api, token: str, name: str, role: str = "ADMIN") -> str:
    made = await api.call("POST", "/api/keys", {"name": name, "role": role}, token=token)
    assert made.status == 201, made.body
    return made.body["data"]["key"]


async def _works(api, key: str, victim_id: int) -> dict[str, int]:
    """What a key gets on each face: docs, auth (list users), and a password reset."""
    docs = await api.call("GET", "/api/jobs", token=key)
    users = await api.call("GET", "/api/users", token=key)
    reset = await api.call("PUT", f"/api/users/{victim_id}/password", PASSWORD_BODY, token=key)
    return {"docs": docs.status, "users": users.status, "reset": reset.status,
            "docs_code": docs.body["code"]}


async def test_a_disabled_users_keys_stop_until_the_user_is_enabled(api, docs_services):
    svc = docs_services
    await add_user(svc, "ACME", "boss", role="ADMIN")
    dora_id = await add_user(svc, "ACME", "dora", role="ADMIN")
    victim_id = await add_user(svc, "ACME", "vic", role="ANNOTATOR")
    boss, dora = await login(api, "ACME", "boss"), await login(api, "ACME", "dora")
    doras_key = await _key(api, dora, "dora's CI")
    # a key made with dora's key is dora's too
    child_key = await _key(api, doras_key, "made by a key")
    boss_key = await _key(api, boss, "boss's CI")
    working = {"docs": 200, "users": 200, "reset": 200, "docs_code": 0}
    for key in (doras_key, child_key, boss_key):  # also warms the profile cache
        assert await _works(api, key, victim_id) == working

    off = await api.call("PUT", f"/api/users/{dora_id}/status", {"status": "DISABLED"},
                         token=boss)
    assert off.status == 200, off.body
    for key in (doras_key, child_key):
        docs = await api.call("GET", "/api/jobs", token=key)
        assert docs.status == 401 and docs.body["code"] == 40101, docs.body
        assert "disabled" in docs.body["msg"]
        users = await api.call("GET", "/api/users", token=key)
        assert users.status == 401 and users.body["code"] == "UNAUTHORIZED"
        reset = await api.call("PUT", f"/api/users/{victim_id}/password", PASSWORD_BODY,
                               token=key)
        assert reset.status == 401  # an offboarded admin's script resets nothing
        me = await api.call("GET", "/api/auth/me", token=key)
        assert me.status == 401
        made = await post_form(api, "/md/convert", {"markdown_text": "# x", "target": "html"},
                               token=key)
        assert made.body["code"] == 40101
    assert await _works(api, boss_key, victim_id) == working  # other admins' keys still work
    listed = (await api.call("GET", "/api/keys", token=boss)).body["data"]["items"]
    assert {k["name"] for k in listed} == {"dora's CI", "made by a key", "boss's CI"}

    on = await api.call("PUT", f"/api/users/{dora_id}/status", {"status": "ACTIVE"},
                        token=boss)
    assert on.status == 200
    for key in (doras_key, child_key):
        assert await _works(api, key, victim_id) == working


async def test_a_key_without_an_owner_keeps_working(api, docs_services):
    # the suite's default docs caller is an ADMIN key made through the store (no owner)
    assert (await api.call("GET", "/md/themes")).status == 200


# ---------------------------------------------------------------- issue 30, item 2: roles
# A key acts with the lower of its own role and its maker's current role: an ADMIN demoted to
# ANNOTATOR could otherwise keep administering the company with an ADMIN key made earlier.

async def _audit(api, svc, token: str, **query: str) -> list[dict]:
    await svc.audit.flush()
    q = "&".join(f"{k}={v}" for k, v in {"pageSize": "100", **query}.items())
    r = await api.call("GET", f"/api/audit?{q}", token=token)
    assert r.status == 200, r.body
    return r.body["data"]["items"]


async def _admin_rights(api, key: str, maker_id: int) -> dict[str, int]:
    """What a key gets on the admin endpoints of both faces (each would succeed for ADMIN)."""
    users = await api.call("GET", "/api/users", token=key)
    new_admin = await api.call("POST", "/api/users", {
        "username": f"ghost{uuid.uuid4().hex[:8]}", "password": "a long enough password",
        "role": "ADMIN"}, token=key)
    promote = await api.call("PUT", f"/api/users/{maker_id}/role", {"role": "ADMIN"},
                             token=key)
    keys = await api.call("GET", "/api/keys", token=key)
    new_key = await api.call("POST", "/api/keys", {"name": "escape", "role": "ADMIN"},
                             token=key)
    # the docs face's ADMIN-only endpoints (storage configuration, the webhook secret)
    config = await api.call("GET", "/api/webhook-secret", token=key)
    return {"users": users.status, "new_admin": new_admin.status, "promote": promote.status,
            "keys": keys.status, "new_key": new_key.status, "config": config.status}


async def test_a_demoted_makers_admin_key_loses_admin_rights_at_the_next_request(
        api, docs_services):
    svc = docs_services
    boss_id = await add_user(svc, "ACME", "boss", role="ADMIN")
    dora_id = await add_user(svc, "ACME", "dora", role="ADMIN")
    boss, dora = await login(api, "ACME", "boss"), await login(api, "ACME", "dora")
    doras_key = await _key(api, dora, "dora's ADMIN key")
    child_key = await _key(api, doras_key, "made by dora's key")
    boss_key = await _key(api, boss, "boss's key")
    allowed = {"users": 200, "new_admin": 201, "promote": 200, "keys": 200, "new_key": 201,
               "config": 200}
    assert await _admin_rights(api, doras_key, dora_id) == allowed  # warms dora's cache

    demoted = await api.call("PUT", f"/api/users/{dora_id}/role", {"role": "ANNOTATOR"},
                             token=boss)
    assert demoted.status == 200, demoted.body
    assert (await api.call("GET", "/api/users", token=dora)).status == 403  # her session
    refused = {name: 403 for name in allowed}
    for key in (doras_key, child_key):  # the keys too, at the very next request
        assert await _admin_rights(api, key, dora_id) == refused
        me = await api.call("GET", "/api/auth/me", token=key)
        assert me.status == 200 and me.body["data"]["role"] == "ANNOTATOR", me.body
        assert me.body["data"]["apiKey"]["role"] == "ADMIN"  # what it was made with
        themes = await api.call("GET", "/md/themes", token=key)
        assert themes.status == 200  # what an ANNOTATOR may do still works
    users = await api.call("GET", "/api/users?pageSize=100", token=boss)
    assert {u["username"]: u["role"] for u in users.body["data"]["items"]}["dora"] == \
        "ANNOTATOR"  # she did not promote herself back
    assert await _admin_rights(api, boss_key, boss_id) == allowed  # others' keys unaffected

    # a REVIEWER maker: her ADMIN key acts as REVIEWER, an ANNOTATOR key stays ANNOTATOR
    await api.call("PUT", f"/api/users/{dora_id}/role", {"role": "REVIEWER"}, token=boss)
    me = await api.call("GET", "/api/auth/me", token=doras_key)
    assert me.body["data"]["role"] == "REVIEWER"

    # the audit trail says the key was used below its role: once per key and minute, with
    # the maker as target
    records = await _audit(api, svc, boss, action="key.use")
    capped = [r for r in records if r["outcome"] == "role_capped"]
    key_ids = {k["name"]: k["id"] for k in (await api.call(
        "GET", "/api/keys", token=boss)).body["data"]["items"]}
    by_key = {r["actor"]["username"] for r in capped}
    assert by_key == {f"api-key:{key_ids[n]}" for n in ("dora's ADMIN key",
                                                         "made by dora's key")}
    assert len(capped) == 2, capped  # many requests each, one record each
    first = capped[-1]
    assert first["target"] == {"id": dora_id, "username": "dora"}
    assert first["detail"]["keyRole"] == "ADMIN"
    assert first["detail"]["makerRole"] in ("ANNOTATOR", "REVIEWER")
    assert first["detail"]["role"] == first["detail"]["makerRole"]

    # promoted back: the key administers again at its next request
    back = await api.call("PUT", f"/api/users/{dora_id}/role", {"role": "ADMIN"}, token=boss)
    assert back.status == 200
    assert await _admin_rights(api, doras_key, dora_id) == allowed
    assert (await api.call("GET", "/api/auth/me", token=child_key)).body["data"]["role"] == \
        "ADMIN"


async def test_a_key_of_a_disabled_maker_is_refused_and_audited(api, docs_services):
    svc = docs_services
    await add_user(svc, "ACME", "boss", role="ADMIN")
    dora_id = await add_user(svc, "ACME", "dora", role="ADMIN")
    boss, dora = await login(api, "ACME", "boss"), await login(api, "ACME", "dora")
    doras_key = await _key(api, dora, "dora's key")
    assert (await api.call("GET", "/api/users", token=doras_key)).status == 200
    off = await api.call("PUT", f"/api/users/{dora_id}/status", {"status": "DISABLED"},
                         token=boss)
    assert off.status == 200
    for _ in range(3):
        assert (await api.call("GET", "/api/users", token=doras_key)).status == 401
        assert (await api.call("GET", "/api/webhook-secret", token=doras_key)).status == 401
        assert (await api.call("GET", "/api/auth/me", token=doras_key)).status == 401
    records = await _audit(api, svc, boss, action="key.use")
    assert [r["outcome"] for r in records] == ["owner_disabled"]  # once a minute, not 9 times
    assert records[0]["target"] == {"id": dora_id, "username": "dora"}
    assert records[0]["actor"]["username"].startswith("api-key:")


async def test_the_keys_list_names_each_keys_maker(api, docs_services):
    svc = docs_services
    boss_id = await add_user(svc, "ACME", "boss", role="ADMIN")
    dora_id = await add_user(svc, "ACME", "dora", role="ADMIN")
    boss, dora = await login(api, "ACME", "boss"), await login(api, "ACME", "dora")
    doras_key = await _key(api, dora, "dora's key")
    made = await api.call("POST", "/api/keys", {"name": "by a key", "role": "REVIEWER"},
                          token=doras_key)
    assert made.status == 201
    assert made.body["data"]["createdBy"] == {"id": dora_id, "username": "dora"}
    await _key(api, boss, "boss's key", role="ANNOTATOR")
    company = await companies.get_by_code(svc.db, "ACME")
    await api_keys.create_key(svc.db, company_id=company.id, name="seeded", role="ADMIN",
                              created_by=None, expires_at=None)
    listed = await api.call("GET", "/api/keys", token=boss)
    assert listed.status == 200
    makers = {k["name"]: k["createdBy"] for k in listed.body["data"]["items"]}
    assert makers == {
        "dora's key": {"id": dora_id, "username": "dora"},
        "by a key": {"id": dora_id, "username": "dora"},
        "boss's key": {"id": boss_id, "username": "boss"},
        "seeded": None,
    }


async def test_a_key_without_a_maker_keeps_its_own_role(api, docs_services):
    svc = docs_services
    await add_user(svc, "ACME", "boss", role="ADMIN")
    company = await companies.get_by_code(svc.db, "ACME")
    _, secret = await api_keys.create_key(svc.db, company_id=company.id, name="seeded",
                                          role="ADMIN", created_by=None, expires_at=None)
    me = await api.call("GET", "/api/auth/me", token=secret)
    assert me.status == 200 and me.body["data"]["role"] == "ADMIN"
    assert (await api.call("GET", "/api/users", token=secret)).status == 200
    _, reviewer = await api_keys.create_key(svc.db, company_id=company.id, name="rev",
                                            role="REVIEWER", created_by=None, expires_at=None)
    assert (await api.call("GET", "/api/users", token=reviewer)).status == 403
