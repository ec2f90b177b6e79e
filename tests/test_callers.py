"""One identity model for both faces: anonymous callers, roles, the operator token, company
API keys, and the browser guards (Origin, Host, CORS), all over HTTP against the real app."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from store import api_keys, companies
from tests.conftest import add_user, login, post_form
from tests.docx_fixtures import build_feature_docx
from tornado_app.app import make_app
from tornado_app.callers import check_listen_address, is_loopback_host
from tornado_app.settings import Settings

OPERATOR = "operator-token-for-caller-tests"
V2_ENDPOINTS = [("POST", "/api/convert"), ("POST", "/md/convert"), ("GET", "/md/themes"),
                ("POST", "/api/upload-archive"), ("POST", "/api/archive/stage"),
                ("POST", "/api/archive/process"), ("GET", "/api/jobs/0123abcd")]
PLAIN_ENDPOINTS = [("GET", "/config"), ("POST", "/config/storage"),
                   ("POST", "/config/storage/test"), ("GET", "/config/profiles"),
                   ("POST", "/config/save_profile"), ("GET", "/config/load_profile?name=x"),
                   ("GET", "/config/linkmap"), ("POST", "/config/linkmap"),
                   ("GET", "/system/time/check"), ("POST", "/proxy/download"),
                   ("POST", "/md/convert-folder")]
ADMIN_ONLY = [("GET", "/config"), ("POST", "/config/storage"), ("POST", "/config/storage/test"),
              ("GET", "/config/profiles"), ("POST", "/config/save_profile"),
              ("GET", "/config/load_profile?name=x"), ("GET", "/config/linkmap"),
              ("POST", "/config/linkmap"), ("GET", "/system/time/check?endpoint=127.0.0.1:9")]


@pytest.fixture
def app(storage_services):
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    docs_api_token=OPERATOR)
    return make_app(storage_services)


def with_settings(svc, **changes) -> None:
    svc.settings = dataclasses.replace(svc.settings, **changes)


async def send(api, method: str, path: str, **kw):
    if method == "POST":
        return await post_form(api, path, {}, **kw)
    return await api.call(method, path, **kw)


async def test_anonymous_callers_get_401_on_every_docs_endpoint_and_nothing_else(api):
    for method, path in V2_ENDPOINTS:
        for headers in ({}, {"Authorization": "Bearer 9a0e0b7e-0000-4000-8000-000000000000"},
                        {"Authorization": "Bearer dsk_" + "A" * 43},
                        {"Authorization": "Basic YTpi"}):
            r = await send(api, method, path, anon=True, headers=headers)
            assert r.status == 401, (method, path, r.body)
            assert r.body == {"code": 40101, "msg": r.body["msg"], "data": None}
    for method, path in PLAIN_ENDPOINTS:
        r = await send(api, method, path, anon=True)
        assert r.status == 401, (method, path, r.body)
        assert r.body["ok"] is False and r.body["error"] and "hint" in r.body
    assert (await api.call("GET", "/health", anon=True)).status == 200
    assert (await api.call("GET", "/ui/", anon=True)).status == 200
    assert (await api.call("GET", "/openapi.json", anon=True)).status == 200


async def test_operator_token_is_a_caller_and_a_wrong_one_is_not(api):
    files = {"file": ("f.docx", build_feature_docx())}
    ok = await post_form(api, "/api/convert", {}, files,
                         headers={"Authorization": f"Bearer {OPERATOR}"})
    assert ok.status == 200 and ok.body["code"] == 0
    wrong = await post_form(api, "/api/convert", {}, files,
                            headers={"Authorization": f"Bearer {OPERATOR}x"})
    assert wrong.status == 401 and wrong.body["code"] == 40101
    # the operator token is not a session of the auth face
    assert (await api.call("GET", "/api/auth/me", token=OPERATOR)).status == 401


async def test_annotator_may_convert_but_not_configure_admin_may(api, storage_services):
    await add_user(storage_services, "ACME", "anna", role="ANNOTATOR")
    await add_user(storage_services, "ACME", "adam", role="ADMIN")
    annotator, admin = await login(api, "ACME", "anna"), await login(api, "ACME", "adam")
    converted = await post_form(api, "/md/convert", {"markdown_text": "# A", "target": "docx"},
                                token=annotator)
    assert converted.status == 200 and converted.body is None  # the file itself
    for method, path in ADMIN_ONLY:
        r = await send(api, method, path, token=annotator)
        assert r.status == 403, (method, path, r.body)
        assert r.body["ok"] is False and "ADMIN" in r.body["error"]
    # the clock check of the configured storage is open to every caller
    assert (await api.call("GET", "/system/time/check", token=annotator)).status == 200
    snapshot = await api.call("GET", "/config", token=admin)
    assert snapshot.status == 200 and snapshot.body["ok"] is True
    saved = await post_form(api, "/config/save_profile", {"name": "kept"}, token=admin)
    assert saved.status == 200 and saved.body["ok"] is True


async def test_disabled_user_and_changed_role_apply_at_the_next_docs_request(api,
                                                                             storage_services):
    admin_id = await add_user(storage_services, "ACME", "root", role="ADMIN")
    user_id = await add_user(storage_services, "ACME", "dora", role="ADMIN")
    admin, token = await login(api, "ACME", "root"), await login(api, "ACME", "dora")
    assert (await api.call("GET", "/config/profiles", token=token)).status == 200
    demoted = await api.call("PUT", f"/api/users/{user_id}/role", {"role": "REVIEWER"},
                             token=admin)
    assert demoted.status == 200, demoted.body
    assert (await api.call("GET", "/config/profiles", token=token)).status == 403
    assert (await api.call("GET", "/md/themes", token=token)).status == 200
    disabled = await api.call("PUT", f"/api/users/{user_id}/status", {"status": "DISABLED"},
                              token=admin)
    assert disabled.status == 200
    refused = await api.call("GET", "/md/themes", token=token)
    assert refused.status == 401 and refused.body["code"] == 40101
    assert admin_id != user_id


async def _company_id(svc, code: str) -> int:
    company = await companies.get_by_code(svc.db, code)
    assert company is not None
    return company.id


async def test_api_keys_create_list_use_and_revoke(api, storage_services):
    await add_user(storage_services, "ACME", "kim", role="ADMIN")
    await add_user(storage_services, "ACME", "ann", role="ANNOTATOR")
    admin, annotator = await login(api, "ACME", "kim"), await login(api, "ACME", "ann")
    made = await api.call("POST", "/api/keys", {"name": "CI pipeline", "role": "ANNOTATOR",
                                                "expiresInDays": 30}, token=admin)
    assert made.status == 201, made.body
    data = made.body["data"]
    secret = data["key"]
    assert secret.startswith("dsk_") and len(secret) == 4 + 43
    assert data["prefix"] == secret[:12] and data["role"] == "ANNOTATOR"
    assert data["expiresAt"] and data["lastUsedAt"] is None
    # only a hash is stored
    stored = await storage_services.db.api_keys.find_one({"_id": data["id"]})
    assert secret not in str(stored) and stored["hash"] == api_keys.hash_key(secret)

    # the key works on the docs face with its role's rights
    files = {"file": ("f.docx", build_feature_docx())}
    ok = await post_form(api, "/api/convert", {}, files, token=secret)
    assert ok.body["code"] == 0
    assert (await api.call("GET", "/config", token=secret)).status == 403
    # and on the auth face: me answers for the key; user admin needs an ADMIN key
    me = await api.call("GET", "/api/auth/me", token=secret)
    assert me.status == 200 and me.body["data"]["role"] == "ANNOTATOR"
    assert me.body["data"]["id"] is None and me.body["data"]["apiKey"]["name"] == "CI pipeline"
    assert (await api.call("GET", "/api/users", token=secret)).status == 403
    assert (await api.call("POST", "/api/auth/logout", token=secret)).status == 403

    listed = await api.call("GET", "/api/keys", token=admin)
    assert listed.status == 200
    (item,) = listed.body["data"]["items"]
    assert item["name"] == "CI pipeline" and "key" not in item and secret not in str(listed.body)
    assert item["lastUsedAt"] is not None  # the conversion above used it

    # keys are ADMIN business
    assert (await api.call("GET", "/api/keys", token=annotator)).status == 403
    assert (await api.call("POST", "/api/keys", {"name": "x"}, token=annotator)).status == 403
    assert (await api.call("GET", "/api/keys", anon=True)).status == 401

    revoked = await api.call("DELETE", f"/api/keys/{data['id']}", token=admin)
    assert revoked.status == 200
    gone = await post_form(api, "/api/convert", {}, files, token=secret)
    assert gone.status == 401 and gone.body["code"] == 40101
    assert (await api.call("GET", "/api/auth/me", token=secret)).status == 401
    again = await api.call("DELETE", f"/api/keys/{data['id']}", token=admin)
    assert again.status == 404 and again.body["code"] == "NOT_FOUND"


async def test_admin_key_administers_users_and_other_companies_keys_are_404(api,
                                                                            storage_services):
    await add_user(storage_services, "ACME", "boss", role="ADMIN")
    await add_user(storage_services, "OTHER", "rival", role="ADMIN")
    boss, rival = await login(api, "ACME", "boss"), await login(api, "OTHER", "rival")
    key = (await api.call("POST", "/api/keys", {"name": "ops", "role": "ADMIN"},
                          token=boss)).body["data"]
    users = await api.call("GET", "/api/users", token=key["key"])
    assert users.status == 200 and [u["username"] for u in users.body["data"]["items"]] == ["boss"]
    created = await api.call("POST", "/api/users", {"username": "bot-made", "password":
                                                    "long enough pw", "role": "ANNOTATOR"},
                             token=key["key"])
    assert created.status == 201
    assert (await api.call("GET", "/config", token=key["key"])).status == 200
    # another company sees nothing of it and cannot revoke it
    assert (await api.call("GET", "/api/keys", token=rival)).body["data"]["items"] == []
    stolen = await api.call("DELETE", f"/api/keys/{key['id']}", token=rival)
    assert stolen.status == 404 and stolen.body["code"] == "NOT_FOUND"
    assert (await api.call("GET", "/md/themes", token=key["key"])).status == 200
    for bad in ("nope", "../x", "0" * 32):
        assert (await api.call("DELETE", f"/api/keys/{bad}", token=boss)).status == 404


async def test_expired_key_is_refused_and_bad_input_is_400(api, storage_services):
    await add_user(storage_services, "ACME", "eve", role="ADMIN")
    admin = await login(api, "ACME", "eve")
    company_id = await _company_id(storage_services, "ACME")
    _, secret = await api_keys.create_key(
        storage_services.db, company_id=company_id, name="old", role="ADMIN", created_by=None,
        expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1))
    r = await api.call("GET", "/md/themes", token=secret)
    assert r.status == 401 and r.body["code"] == 40101
    assert (await api.call("GET", "/api/users", token=secret)).status == 401
    for body in ({}, {"name": ""}, {"name": {"$ne": None}}, {"name": "x\x07"},
                 {"name": "x", "expiresInDays": 0}, {"name": "x", "expiresInDays": "7"},
                 {"name": "x", "expiresInDays": True}, {"name": "x" * 65}):
        r = await api.call("POST", "/api/keys", body, token=admin)
        assert r.status == 400 and r.body["code"] == "VALIDATION_ERROR", body
    r = await api.call("POST", "/api/keys", {"name": "x", "role": "root"}, token=admin)
    assert r.status == 400 and r.body["code"] == "INVALID_ROLE"


async def test_origin_checks_on_state_changing_requests(api, storage_services):
    form = {"markdown_text": "# O", "target": "docx"}
    host = api.client.get_url("/").split("/")[2]
    foreign = await post_form(api, "/md/convert", form, headers={"Origin": "http://evil.test"})
    assert foreign.status == 403 and foreign.body["code"] == 40301  # in the v2 shape
    plain = await api.call("POST", "/config/linkmap", {"map": {}},
                           headers={"Origin": "http://evil.test"})
    assert plain.status == 403 and plain.body["ok"] is False  # in the plain shape
    same = await post_form(api, "/md/convert", form, headers={"Origin": f"http://{host}"})
    assert same.status == 200
    assert "Access-Control-Allow-Origin" not in same.headers  # no CORS unless configured
    # the auth face too (a login from another site's page)
    login_body = {"companyCode": "A", "username": "bob", "password": "12345678"}
    r = await api.call("POST", "/api/auth/login", login_body, headers={"Origin": "null"})
    assert r.status == 403 and r.body["code"] == "FORBIDDEN"
    # a browser's cross-site GET of a docs endpoint
    r = await api.call("GET", "/config", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status == 403
    assert (await api.call("GET", "/config", headers={"Sec-Fetch-Site": "same-origin"})
            ).status == 200

    with_settings(storage_services, allowed_origins=("https://app.example.com",))
    allowed = await post_form(api, "/md/convert", form,
                              headers={"Origin": "https://app.example.com"})
    assert allowed.status == 200
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    pre = await api.call("OPTIONS", "/md/convert", headers={
        "Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"})
    assert pre.status == 204 and "Authorization" in pre.headers["Access-Control-Allow-Headers"]
    pre = await api.call("OPTIONS", "/md/convert", headers={
        "Origin": "http://evil.test", "Access-Control-Request-Method": "POST"})
    assert pre.status == 403 and "Access-Control-Allow-Origin" not in pre.headers
    assert (await post_form(api, "/md/convert", form, headers={"Origin": "http://evil.test"})
            ).status == 403


async def test_single_user_mode_refuses_forms_without_origin(api, storage_services):
    with_settings(storage_services, docs_auth="none")
    form = {"markdown_text": "# S", "target": "docx"}
    host = api.client.get_url("/").split("/")[2]
    assert (await post_form(api, "/md/convert", form, anon=True)).status == 403
    assert (await post_form(api, "/md/convert", form, anon=True,
                            headers={"Origin": f"http://{host}"})).status == 200
    assert (await api.call("GET", "/config", anon=True)).status == 200  # the local user


async def test_public_hosts_refuse_other_host_headers(api, storage_services):
    host = api.client.get_url("/").split("/")[2]
    with_settings(storage_services, public_hosts=("docs.example.com", host))
    assert (await api.call("GET", "/health", anon=True)).status == 200
    for bad in ("attacker.test", "docs.example.com.attacker.test", "127.0.0.2"):
        r = await api.call("GET", "/health", headers={"Host": bad})
        assert r.status == 421 and r.body["code"] == "MISDIRECTED_REQUEST", bad
        assert (await api.call("GET", "/ui/", headers={"Host": bad})).status == 421
    ok = await api.call("GET", "/health", headers={"Host": "docs.example.com:443"})
    assert ok.status == 200


def test_single_user_mode_listens_on_loopback_only():
    local = Settings(docs_auth="none")
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.5", "[::1]"):
        assert is_loopback_host(host)
        check_listen_address(local, host)
    for host in ("0.0.0.0", "", "::", "192.168.1.4", "::ffff:127.0.0.1x", "example.com"):
        with pytest.raises(ValueError, match="DOCS_AUTH=none"):
            check_listen_address(local, host)
    check_listen_address(Settings(), "0.0.0.0")  # with caller auth any address is fine
    with pytest.raises(SystemExit):
        Settings.from_env({"DOCS_AUTH": "off"})
