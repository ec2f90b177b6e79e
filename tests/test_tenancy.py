"""Tenants on the docs face, over HTTP against the real servers: each company's storage
configuration, profiles, link map, staged archives, jobs and stored objects are its own; another
company's id or key answers like a missing one; saved results sit at unguessable keys."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from tests.archive_fixtures import zip_of
from tests.conftest import add_user, login, post_form
from tests.docx_fixtures import build_feature_docx
from tests.waiting import eventually
from tornado_app.seed import ensure_company

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
       b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
       b"\x00\x00\x00\x00IEND\xaeB`\x82")


def _ok(reply):
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


@pytest.fixture
def tenants(io_loop, storage_services, api):
    """Two companies with an ADMIN each: {"A": (company id, token), "B": (...)}."""
    async def make() -> dict[str, tuple[str, str]]:
        out = {}
        for code in ("ACME", "GLOBEX"):
            company = await ensure_company(storage_services, code, f"{code} Ltd")
            await add_user(storage_services, code, "boss", role="ADMIN")
            out[code] = (str(company.id), await login(api, code, "boss"))
        return out

    made = io_loop.run_sync(make)
    return made["ACME"], made["GLOBEX"]


def _key_of(url: str) -> str:
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    return path.split("/", 2)[2]  # /bucket/key


async def test_saved_results_are_the_companys_own_and_unguessable(api, tenants):
    (a_id, a), (b_id, b) = tenants
    files = {"file": ("f.docx", build_feature_docx())}
    first = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "report"},
                                files, token=a))
    second = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "report"},
                                 files, token=a))
    key = _key_of(first["storage_url"])
    assert re.fullmatch(rf"t/{a_id}/converted/[0-9a-f]{{32}}/report\.md", key), key
    assert _key_of(second["storage_url"]) != key  # same name: no overwrite
    mine = await post_form(api, "/proxy/download", {"url": first["storage_url"]}, token=a)
    assert mine.status == 200 and mine.raw.decode().startswith("# Introduction")
    assert mine.headers["Content-Disposition"].startswith("attachment")
    assert mine.headers["X-Content-Type-Options"] == "nosniff"
    # the other company: by URL and by key, the same answer as a missing object
    for fields in ({"url": first["storage_url"]}, {"key": key}):
        theirs = await post_form(api, "/proxy/download", fields, token=b)
        assert theirs.status == 404 and theirs.body == {"ok": False, "error": "no such object",
                                                         "hint": ""}
    missing = await post_form(api, "/proxy/download", {"key": f"t/{b_id}/converted/x/no.md"},
                              token=b)
    assert missing.status == 404 and missing.body == theirs.body
    rendered = _ok(await post_form(api, "/md/convert", {"markdown_text": "# R", "target": "docx",
                                                        "save": "true"}, token=b))
    assert re.fullmatch(rf"t/{b_id}/rendered/[0-9a-f]{{32}}/document\.docx",
                        _key_of(rendered["storage_url"]))


async def test_staged_archives_and_jobs_belong_to_their_company(api, tenants, job_consumer):
    (_, a), (_, b) = tenants
    archive = {"file": ("s.zip", zip_of({"a.md": b"![i](i.png)", "i.png": PNG}))}
    staged = _ok(await post_form(api, "/api/archive/stage", {}, archive, token=a))
    other = await post_form(api, "/api/archive/process", {"id": staged["id"]}, token=b)
    assert other.body["code"] == 40401
    job = _ok(await post_form(api, "/api/archive/process", {"id": staged["id"], "async": "true"},
                              token=a))
    assert (await api.call("GET", job["status_url"], token=b)).body["code"] == 40401
    async def ended() -> dict:
        state = _ok(await api.call("GET", job["status_url"], token=a))
        return state if state["state"] not in ("queued", "running") else {}

    state = await eventually(ended, timeout=10, what="the job ended")
    assert state["state"] == "done"
    assert "/t/" in state["result"]["files"][0]["storage_url"]


async def test_link_map_profiles_and_storage_are_per_company(api, tenants, s3):
    (_, a), (_, b) = tenants
    r = await api.call("POST", "/config/linkmap", {"map": {"x.png": "https://cdn.example/x"}},
                       token=a)
    assert r.body == {"ok": True, "count": 1}
    assert (await api.call("GET", "/config/linkmap", token=b)).body["map"] == {}
    assert (await api.call("GET", "/config/linkmap", token=a)).body["count"] == 1

    shared = (await api.call("GET", "/config", token=b)).body["storage"]
    assert shared == {"source": "operator"}  # the operator's storage: no details
    own = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
           "bucket": "acme-own"}
    assert (await post_form(api, "/config/storage/test", {**own, "create_if_missing": "true"},
                            token=a)).body["ok"] is True
    assert (await post_form(api, "/config/storage", own, token=a)).body["ok"] is True
    assert (await api.call("GET", "/config", token=a)).body["storage"]["bucket"] == "acme-own"
    assert (await api.call("GET", "/config", token=b)).body["storage"] == shared
    saved = _ok(await post_form(api, "/api/convert", {"save": "true"},
                                {"file": ("f.docx", build_feature_docx())}, token=a))
    assert "/acme-own/" in saved["storage_url"]

    assert (await post_form(api, "/config/save_profile", {"name": "mine"}, token=a)).body["ok"]
    names_b = [p["name"] for p in (await api.call("GET", "/config/profiles", token=b))
               .body["profiles"]]
    assert "mine" not in names_b
    assert (await api.call("GET", "/config/load_profile?name=mine", token=b)).status == 404
    assert (await api.call("GET", "/config/load_profile?name=mine", token=a)).status == 200
