"""Browser-facing guards of issue 20, over HTTP against the real app: the Host check under
``DOCS_AUTH=none`` (DNS rebinding), state-changing GETs, the Origin's scheme, and the link
map values passing the writers' link allow-list."""

from __future__ import annotations

import dataclasses
import io
import zipfile

import pytest

from store.storage_settings import SERVICE
from tests.conftest import docs_caller_company, post_form
from tornado_app.app import make_app
from tornado_app.callers import LOCAL_COMPANY
from tornado_app.clientaddr import forwarded_proto
from tornado_app.guards import same_origin


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


def with_settings(svc, **changes) -> None:
    svc.settings = dataclasses.replace(svc.settings, **changes)


def port_of(api) -> str:
    return api.client.get_url("/").split("/")[2].rsplit(":", 1)[1]


# ------------------------------------------------------------------ Host, DOCS_AUTH=none
async def test_single_user_mode_serves_loopback_host_names_only(api, storage_services):
    port = port_of(api)
    with_settings(storage_services, docs_auth="none")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", "127.5.6.7",
                 f"[::1]:{port}", "localhost"):
        assert (await api.call("GET", "/health", anon=True, headers={"Host": host})
                ).status == 200, host
        assert (await api.call("GET", "/config", anon=True,
                               headers={"Host": host})).status == 200, host
    for host in (f"attacker.test:{port}", "rebind.attacker.test", f"localhost.attacker.test:{port}",
                 f"127.0.0.1.nip.io:{port}", f"10.0.0.1:{port}", "[::ffff:7f00:1]", ""):
        r = await api.call("GET", "/config", anon=True, headers={"Host": host})
        assert r.status == 421, host
        assert r.body["code"] == "MISDIRECTED_REQUEST" and "DOCS_AUTH=none" in r.body["message"]
        assert (await post_form(api, "/md/convert", {"markdown_text": "# x", "target": "docx"},
                                anon=True, headers={"Host": host})).status == 421
    # names the operator lists are served as well
    with_settings(storage_services, public_hosts=("docs.example.com",))
    assert (await api.call("GET", "/config", anon=True,
                           headers={"Host": "docs.example.com"})).status == 200
    assert (await api.call("GET", "/config", anon=True,
                           headers={"Host": "127.0.0.1"})).status == 200
    assert (await api.call("GET", "/config", anon=True,
                           headers={"Host": "attacker.test"})).status == 421


async def test_with_caller_auth_any_host_is_served_unless_public_hosts_says(api,
                                                                            storage_services):
    assert (await api.call("GET", "/health", headers={"Host": "any.example"})).status == 200
    with_settings(storage_services, public_hosts=("docs.example.com",))
    r = await api.call("GET", "/health", headers={"Host": "any.example"})
    assert r.status == 421 and "PUBLIC_HOSTS" in r.body["message"]


# ------------------------------------------------------------------ state-changing GETs
async def test_load_profile_by_get_needs_a_credential_or_same_origin(api, storage_services):
    with_settings(storage_services, docs_auth="none")
    configs = storage_services.storage.configs
    await configs.save_profile(LOCAL_COMPANY, "p1", await configs.active_config(SERVICE))
    assert not await configs.has_own_config(LOCAL_COMPANY)
    # what a cross-site <img src> or link makes a browser send: refused, nothing changes
    for headers in ({}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "none"},
                    {"Sec-Fetch-Site": "cross-site"}):
        r = await api.call("GET", "/config/load_profile?name=p1", anon=True, headers=headers)
        assert r.status == 403 and r.body["ok"] is False, headers
        assert not await configs.has_own_config(LOCAL_COMPANY)
    r = await api.call("GET", "/config/load_profile?name=p1", anon=True)
    assert "Authorization" in r.body["error"] and "POST" in r.body["hint"]
    # the service's own page (a browser marks it same-origin)
    r = await api.call("GET", "/config/load_profile?name=p1", anon=True,
                       headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status == 200 and r.body["name"] == "p1"
    assert await configs.has_own_config(LOCAL_COMPANY)


async def test_load_profile_by_post_and_by_get_with_a_credential(api, storage_services):
    company = await docs_caller_company(storage_services)
    configs = storage_services.storage.configs
    await configs.save_profile(company, "p2", await configs.active_config(SERVICE))
    r = await api.call("GET", "/config/load_profile?name=p2")  # with the suite's API key
    assert r.status == 200 and r.body["ok"] is True
    r = await post_form(api, "/config/load_profile", {"name": "p2"})
    assert r.status == 200 and r.body == {**r.body, "ok": True, "name": "p2"}
    r = await post_form(api, "/config/load_profile", {"name": "nope"})
    assert r.status == 404
    # POST under DOCS_AUTH=none: the usual Origin rule (a form from another site is refused)
    with_settings(storage_services, docs_auth="none")
    await configs.save_profile(LOCAL_COMPANY, "p3", await configs.active_config(SERVICE))
    host = api.client.get_url("/").split("/")[2]
    assert (await post_form(api, "/config/load_profile", {"name": "p3"}, anon=True,
                            headers={"Origin": "http://evil.test"})).status == 403
    assert (await post_form(api, "/config/load_profile", {"name": "p3"}, anon=True)
            ).status == 403
    assert not await configs.has_own_config(LOCAL_COMPANY)
    assert (await post_form(api, "/config/load_profile", {"name": "p3"}, anon=True,
                            headers={"Origin": f"http://{host}"})).status == 200
    assert await configs.has_own_config(LOCAL_COMPANY)


# ------------------------------------------------------------------ Origin with its scheme
def test_same_origin_compares_the_scheme() -> None:
    assert same_origin("http://127.0.0.1:8080", "127.0.0.1:8080", "http")
    assert not same_origin("https://127.0.0.1:8080", "127.0.0.1:8080", "http")
    assert not same_origin("http://127.0.0.1:8080", "127.0.0.1:8080", "https")
    assert same_origin("https://docs.example.com", "docs.example.com:443", "https")
    assert not same_origin("http://docs.example.com", "docs.example.com:443", "https")


def test_forwarded_proto_only_from_trusted_proxies() -> None:
    import ipaddress

    nets = (ipaddress.ip_network("10.0.0.0/8"),)
    assert forwarded_proto("10.1.2.3", "https", nets) == "https"
    assert forwarded_proto("10.1.2.3", "http, https", nets) == "https"  # the trusted peer's
    assert forwarded_proto("10.1.2.3", "gopher", nets) is None
    assert forwarded_proto("192.0.2.1", "https", nets) is None
    assert forwarded_proto("10.1.2.3", "https", ()) is None


async def test_origin_with_another_scheme_is_refused(api, storage_services):
    host = api.client.get_url("/").split("/")[2]
    body = {"map": {}}

    async def post(origin: str, **headers: str) -> int:
        return (await api.call("POST", "/config/linkmap", body,
                               headers={"Origin": origin, **headers})).status

    assert await post(f"http://{host}") == 200
    assert await post(f"https://{host}") == 403
    # a client cannot claim https itself
    assert await post(f"https://{host}", **{"X-Forwarded-Proto": "https"}) == 403
    # behind a trusted TLS proxy the scheme is the proxy's word
    with_settings(storage_services, trusted_proxies=("127.0.0.1/32",))
    assert await post(f"https://{host}", **{"X-Forwarded-Proto": "https"}) == 200
    assert await post(f"http://{host}", **{"X-Forwarded-Proto": "https"}) == 403
    assert await post(f"http://{host}") == 200
    # the same in the v2 shape
    r = await post_form(api, "/md/convert", {"markdown_text": "# s", "target": "docx"},
                        headers={"Origin": f"https://{host}"})
    assert r.status == 403 and r.body["code"] == 40301


# ------------------------------------------------------------------ link map values
@pytest.mark.parametrize("value", [
    "javascript:alert(1)", " JaVaScRiPt:alert(1)", "java\tscript:alert(1)",
    "jav&#x61;script:alert(1)", "vbscript:msgbox(1)", "data:text/html,<script>x</script>",
    "data:image/png;base64,iVBORw0KGgo=", "file:///etc/passwd"])
async def test_link_map_refuses_values_outside_the_link_allow_list(api, value):
    r = await api.call("POST", "/config/linkmap", {"map": {"ok.png": "https://cdn.example/ok",
                                                          "a.png": value}})
    assert r.status == 400 and r.body["ok"] is False
    assert "'a.png'" in r.body["error"] and "not an allowed link" in r.body["error"]
    assert "https" in r.body["hint"]
    assert (await api.call("GET", "/config/linkmap")).body["map"] == {}  # nothing stored


async def test_link_map_values_are_filtered_at_use_time(api, storage_services):
    """A map stored before the check (or straight into the database) cannot put a script
    link into a stored document: its unsafe entries are not used."""
    company = await docs_caller_company(storage_services)
    await storage_services.storage.linkmap.replace(company, {
        "a.png": "javascript:alert(1)", "b.png": "https://cdn.example/b.png",
        "c.html": "jav&#x61;script:alert(2)"})
    got = await api.call("GET", "/config/linkmap")
    assert got.body["map"] == {"b.png": "https://cdn.example/b.png"}
    assert (await api.call("GET", "/config")).body["linkmap_size"] == 1
    doc = b"![a](a.png) ![b](b.png) [c](c.html)\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("doc.md", doc)
    r = await post_form(api, "/api/upload-archive", {"prefix": "lmf"},
                        {"file": ("a.zip", buf.getvalue())})
    assert r.body["code"] == 0, r.body
    entry = r.body["data"]["files"][0]
    assert {"from": "b.png", "to": "https://cdn.example/b.png"} in entry["mappings"]
    assert not any("script" in m["to"] for m in entry["mappings"])
    store = await storage_services.storage.store(company)
    keys = [o.object_name for o in store.client.list_objects(
        store.config.bucket, prefix=f"{store.config.prefix}/lmf/", recursive=True)]
    md_keys = [k for k in keys if k.endswith(".md")]
    assert md_keys
    stored = await storage_services.storage.io(
        lambda: store.client.get_object(store.config.bucket, md_keys[0]).read())
    assert b"script" not in stored and b"https://cdn.example/b.png" in stored
