"""Activity records the security events an admin looks for after the fact (issue 35, item 4):
an API key made, an API key revoked, a revoked key still being used (recorded against the
key's company, without the key), and the company's storage settings changed (without their
secrets). Over HTTP against the real app on real Redis, SecantusDB and an S3 server."""

from __future__ import annotations

import json

import pytest

from tests.conftest import add_user, login, post_form
from tornado_app.app import make_app


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


async def _activity(api, svc, token: str, action: str) -> list[dict]:
    await svc.audit.flush()
    r = await api.call("GET", f"/api/audit?pageSize=100&action={action}", token=token)
    assert r.status == 200, r.body
    return r.body["data"]["items"]


async def test_making_and_revoking_a_key_and_using_it_afterwards_are_in_activity(
        api, storage_services):
    svc = storage_services
    boss_id = await add_user(svc, "ACME", "boss", role="ADMIN")
    await add_user(svc, "OTHER", "olga", role="ADMIN")
    boss, olga = await login(api, "ACME", "boss"), await login(api, "OTHER", "olga")
    made = await api.call("POST", "/api/keys", {"name": "nightly CI", "role": "REVIEWER",
                                                "expiresInDays": 30}, token=boss)
    assert made.status == 201, made.body
    key, key_id, prefix = (made.body["data"][k] for k in ("key", "id", "prefix"))

    created = await _activity(api, svc, boss, "key.create")
    assert len(created) == 1, created
    assert created[0]["outcome"] == "success"
    assert created[0]["actor"] == {"id": boss_id, "username": "boss"}
    assert created[0]["target"]["username"] == f"api-key:{key_id}"
    assert created[0]["detail"]["key"] == "nightly CI"
    assert created[0]["detail"]["keyRole"] == "REVIEWER"
    assert created[0]["detail"]["prefix"] == prefix
    assert "expires" in created[0]["detail"]

    assert (await api.call("GET", "/api/jobs", token=key)).status == 200
    gone = await api.call("DELETE", f"/api/keys/{key_id}", token=boss)
    assert gone.status == 200, gone.body
    revoked = await _activity(api, svc, boss, "key.revoke")
    assert [(r["actor"]["username"], r["target"]["username"], r["detail"]["key"])
            for r in revoked] == [("boss", f"api-key:{key_id}", "nightly CI")]

    # the script was not told: it keeps calling with the revoked key, on both faces
    for _ in range(3):
        docs = await api.call("GET", "/api/jobs", token=key)
        assert docs.status == 401 and docs.body["code"] == 40101
        users = await api.call("GET", "/api/users", token=key)
        assert users.status == 401
    used = [r for r in await _activity(api, svc, boss, "key.use") if r["outcome"] == "revoked"]
    assert len(used) == 1, used  # six refused requests, one record a minute
    assert used[0]["actor"]["username"] == f"api-key:{key_id}"
    assert used[0]["detail"]["key"] == "nightly CI"
    assert used[0]["address"]
    everything = json.dumps(await _activity(api, svc, boss, "key.use")
                            + created + revoked)
    assert key not in everything and key[len(prefix):] not in everything  # never the secret
    # another company's admin sees none of it
    for action in ("key.create", "key.revoke", "key.use"):
        assert await _activity(api, svc, olga, action) == []


async def test_an_unknown_key_is_recorded_nowhere(api, storage_services):
    svc = storage_services
    await add_user(svc, "ACME", "boss", role="ADMIN")
    boss = await login(api, "ACME", "boss")
    fake = "dsk_" + "A" * 43
    assert (await api.call("GET", "/api/jobs", token=fake)).status == 401
    assert await _activity(api, svc, boss, "key.use") == []


async def test_storage_changes_are_in_activity_without_their_secrets(api, storage_services, s3):
    svc = storage_services
    boss_id = await add_user(svc, "ACME", "boss", role="ADMIN")
    boss = await login(api, "ACME", "boss")
    form = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
            "bucket": "acme-docs"}
    r = await post_form(api, "/config/storage", form, token=boss)
    assert r.status == 200 and r.body["ok"] is True, r.body
    for _ in range(2):  # made, then changed
        r = await post_form(api, "/config/save_profile", {**form, "name": "archive"},
                            token=boss)
        assert r.body["ok"] is True, r.body
    r = await post_form(api, "/config/load_profile", {"name": "archive"}, token=boss)
    assert r.status == 200, r.body

    config = await _activity(api, svc, boss, "storage.config")
    assert [(c["detail"]["change"], c["detail"].get("bucket"), c["detail"].get("profile"))
            for c in config] == [("profile loaded", None, "archive"),
                                 ("configured", "acme-docs", None)]
    assert config[-1]["actor"] == {"id": boss_id, "username": "boss"}
    assert config[-1]["detail"]["endpoint"] == s3.endpoint
    profiles = await _activity(api, svc, boss, "storage.profile")
    assert [(p["detail"]["profile"], p["detail"]["change"]) for p in profiles] == [
        ("archive", "updated"), ("archive", "created")]
    trail = json.dumps(config + profiles)
    assert s3.handle.secret not in trail and s3.handle.access not in trail


async def test_replacing_the_link_map_is_in_activity_without_its_links(api, storage_services):
    svc = storage_services
    await add_user(svc, "ACME", "boss", role="ADMIN")
    boss = await login(api, "ACME", "boss")
    first = {"https://old.example/a": "https://new.example/secret-path-a"}
    second = {**first, "https://old.example/b": "https://new.example/secret-path-b"}
    for mapping in (first, second):
        r = await api.call("POST", "/config/linkmap", mapping, token=boss)
        assert r.status == 200 and r.body["ok"] is True, r.body
    changes = await _activity(api, svc, boss, "storage.linkmap")
    assert [(c["detail"]["before"], c["detail"]["entries"]) for c in changes] == [
        ("1", "2"), ("0", "1")]
    assert "secret-path" not in json.dumps(changes)
