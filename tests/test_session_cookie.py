"""One session for every tab of the browser app (issue 35, item 3): a login also sets an
HttpOnly, SameSite=Strict cookie holding the session (Secure, under the ``__Host-`` name, over
HTTPS); a request with only the cookie is signed in on both faces; sign-out ends the session
for the cookie and the bearer token alike; a change sent with the cookie needs the app's
``X-Requested-With`` header and no other origin; bearer tokens and API keys work as before.
Over HTTP against the real app on real Redis and SecantusDB."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http.cookies import SimpleCookie

from tests.conftest import add_user

APP = {"X-Requested-With": "docservice"}
LOGIN = {"companyCode": "ACME", "username": "boss", "password": "correct horse battery"}


def _set_cookies(reply) -> dict[str, str]:
    """The Set-Cookie headers of an answer, by cookie name (the whole header each)."""
    found = {}
    for header in reply.headers.get_list("Set-Cookie"):
        found[header.split("=", 1)[0]] = header
    return found


def _attributes(header: str) -> dict[str, str]:
    parsed = SimpleCookie()
    parsed.load(header)
    (morsel,) = parsed.values()
    return {k.lower(): str(v) for k, v in morsel.items() if v} | {"value": morsel.value}


async def _sign_in(api, svc) -> tuple[str, str]:
    """Log in as ACME's ADMIN: (the body's token, the cookie's value)."""
    await add_user(svc, "ACME", "boss", role="ADMIN")
    r = await api.call("POST", "/api/auth/login", LOGIN)
    assert r.status == 200, r.body
    cookie = _set_cookies(r)["docservice_session"]
    return r.body["data"]["token"], _attributes(cookie)["value"]


def _cookie(value: str, name: str = "docservice_session") -> dict[str, str]:
    return {"Cookie": f"{name}={value}"}


async def test_login_sets_a_session_cookie_a_script_cannot_read(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    r = await api.call("POST", "/api/auth/login", LOGIN)
    assert r.status == 200
    attrs = _attributes(_set_cookies(r)["docservice_session"])
    assert attrs["value"] == r.body["data"]["token"]  # the same session as the bearer token
    assert attrs["httponly"] == "True" and attrs["samesite"] == "Strict"
    assert attrs["path"] == "/" and attrs["max-age"] == str(r.body["data"]["expiresIn"])
    assert "secure" not in attrs  # served over plain HTTP here (a browser would drop it)


async def test_over_https_the_cookie_is_secure_with_the_host_prefix(api, services):
    await add_user(services, "ACME", "boss", role="ADMIN")
    services.settings = dataclasses.replace(services.settings,
                                            trusted_proxies=("127.0.0.1/32",))
    r = await api.call("POST", "/api/auth/login", LOGIN, headers={"X-Forwarded-Proto": "https"})
    assert r.status == 200
    cookies = _set_cookies(r)
    assert list(cookies) == ["__Host-docservice_session"]
    attrs = _attributes(cookies["__Host-docservice_session"])
    assert attrs["secure"] == "True" and attrs["path"] == "/" and "domain" not in attrs
    me = await api.call("GET", "/api/auth/me", headers={
        "X-Forwarded-Proto": "https", **_cookie(attrs["value"], "__Host-docservice_session")})
    assert me.status == 200 and me.body["data"]["username"] == "boss"


async def test_a_request_with_only_the_cookie_is_signed_in_on_both_faces(api, docs_services):
    _, value = await _sign_in(api, docs_services)
    me = await api.call("GET", "/api/auth/me", headers=_cookie(value))
    assert me.status == 200 and me.body["data"]["username"] == "boss"
    jobs = await api.call("GET", "/api/jobs", headers=_cookie(value), anon=True)
    assert jobs.status == 200 and jobs.body["code"] == 0, jobs.body
    # a change from the app (its header, its own origin) works
    host = api.client.get_url("/").split("/")[2]
    made = await api.call("POST", "/api/keys", {"name": "from the app"},
                          headers={**_cookie(value), **APP, "Origin": f"http://{host}"})
    assert made.status == 201, made.body
    # a cookie that is no session is no caller
    assert (await api.call("GET", "/api/auth/me", headers=_cookie("not-a-uuid"))).status == 401


async def test_a_change_sent_with_the_cookie_from_elsewhere_is_refused(api, docs_services):
    _, value = await _sign_in(api, docs_services)
    docs_services.settings = dataclasses.replace(
        docs_services.settings, allowed_origins=("https://partner.example",))
    attempts = {
        "no app header (a plain form post)": _cookie(value),
        "another site": {**_cookie(value), **APP, "Origin": "https://evil.example"},
        "an allowed origin (for its own credentials only)": {
            **_cookie(value), **APP, "Origin": "https://partner.example"},
    }
    for why, headers in attempts.items():
        r = await api.call("POST", "/api/keys", {"name": "planted"}, headers=headers)
        assert r.status == 403, (why, r.body)
        docs = await api.call("POST", "/api/jobs/" + "0" * 32 + "/cancel", headers=headers,
                              anon=True)
        assert docs.status == 403, (why, docs.body)
    # nothing was made; reading with the cookie needs no header
    keys = await api.call("GET", "/api/keys", headers=_cookie(value))
    assert keys.status == 200 and keys.body["data"]["items"] == []


async def test_sign_out_ends_the_session_for_the_cookie_and_the_token(api, docs_services):
    token, value = await _sign_in(api, docs_services)
    out = await api.call("POST", "/api/auth/logout", headers={**_cookie(value), **APP})
    assert out.status == 200, out.body
    cleared = _attributes(_set_cookies(out)["docservice_session"])
    assert cleared["value"] == ""
    assert parsedate_to_datetime(cleared["expires"]) < datetime.now(UTC)  # the browser drops it
    assert (await api.call("GET", "/api/auth/me", headers=_cookie(value))).status == 401
    assert (await api.call("GET", "/api/auth/me", token=token)).status == 401  # every tab
    jobs = await api.call("GET", "/api/jobs", headers=_cookie(value), anon=True)
    assert jobs.status == 401


async def test_bearer_tokens_work_as_before(api, docs_services):
    token, value = await _sign_in(api, docs_services)
    # no cookie, no app header: a script's change with its token
    made = await api.call("POST", "/api/keys", {"name": "CI"}, token=token)
    assert made.status == 201
    key = made.body["data"]["key"]
    assert (await api.call("GET", "/api/jobs", token=key)).status == 200
    # the header wins over a cookie: a wrong token is refused although the cookie is good
    wrong = await api.call("GET", "/api/auth/me", headers={
        "Authorization": "Bearer 00000000-0000-4000-8000-000000000000", **_cookie(value)})
    assert wrong.status == 401
    # logging out with the token ends the cookie's session too (they are one session)
    assert (await api.call("POST", "/api/auth/logout", token=token)).status == 200
    assert (await api.call("GET", "/api/auth/me", headers=_cookie(value))).status == 401


async def test_a_jobs_file_name_travels_with_the_job(api, storage_services):
    """Another tab or device lists a batch job by its archive's name, not "archive 00736a55":
    the name is part of the job's record."""
    from tests.archive_fixtures import tgz_of
    from tests.conftest import post_form

    _, value = await _sign_in(api, storage_services)
    archive = tgz_of({"docs/page.md": b"# Page\n"})
    sent = await post_form(api, "/api/upload-archive", {"async": "true"},
                           {"file": ("manuals 2025.tgz", archive)},
                           headers={**_cookie(value), **APP}, anon=True)
    assert sent.status == 200 and sent.body["code"] == 0, sent.body
    job_id = sent.body["data"]["job_id"]
    # the other tab: no memory of what it sent, only the session
    listed = await api.call("GET", "/api/jobs", headers=_cookie(value), anon=True)
    (job,) = [j for j in listed.body["data"]["items"] if j["id"] == job_id]
    assert job["name"] == "manuals 2025.tgz"
    one = await api.call("GET", f"/api/jobs/{job_id}", headers=_cookie(value), anon=True)
    assert one.body["data"]["name"] == "manuals 2025.tgz"
