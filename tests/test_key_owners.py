"""A company API key works only while the user who made it is active: disabling the user
stops their keys (also keys made with those keys) on both faces at the very next request,
enabling them again brings the keys back, and other admins' keys are untouched. Over HTTP
against the real app on real Redis and SecantusDB."""

from __future__ import annotations

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
