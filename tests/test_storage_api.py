"""Storage configuration, archives, folders, link map, proxy and ``save=true`` over HTTP,
against a real SeaweedFS S3 server driven through the MinIO SDK."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import tarfile

import pytest

from store.storage_settings import SERVICE
from tests.archive_fixtures import tgz_of, zip_of
from tests.conftest import DOCS_CALLER_COMPANY, docs_caller_company, post_form
from tests.docx_fixtures import build_feature_docx
from tests.local_http import download
from tests.pdf_fixtures import tiny_png
from tests.waiting import eventually
from tornado_app.app import make_app


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


PNG = tiny_png()
DATA_URI = "data:image/png;base64," + base64.b64encode(PNG).decode()
ARCHIVE = {
    "docs/guide.md": (
        "# Guide\n\n![logo](../img/logo%20one.png \"Logo\")\n\n![cjk](img/图.png)\n\n"
        "[next](other.md#part) and [site](https://example.com/x.png)\n\n"
        "`![not me](img/x.png)`\n\n```\n![nor me](img/x.png)\n```\n\n![gone](missing.png)\n"
        "[ref]: <../img/logo one.png>\n"
    ).encode(),
    "docs/other.md": b"# Other\n\nSee [guide](guide.md).\n",
    "docs/img/图.png": PNG + b"\0other",
    "img/logo one.png": PNG,
    "page.html": (f'<html><body><h1>Page</h1><img src="img/logo one.png">'
                  f'<img src="{DATA_URI}"><a href="docs/guide.md">g</a></body></html>').encode(),
}


def _ok(reply):
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


async def test_upload_archive_uploads_assets_and_rewrites_links(api):
    data = _ok(await post_form(api, "/api/upload-archive", {"prefix": "proj"},
                               {"file": ("site.zip", zip_of(ARCHIVE))}))
    assert data["count"] == 3
    entries = {e["source"]: e for e in data["files"]}
    guide = entries["docs/guide.md"]
    assert guide["asset_fail"] == 1, guide["failed"]
    assert guide["asset_ok"] >= 2
    froms = {m["from"]: m["to"] for m in guide["mappings"]}
    assert set(froms) >= {"../img/logo%20one.png", "img/图.png", "other.md#part"}
    status, body = download(guide["storage_presigned_url"])
    assert status == 200
    text = body.decode()
    assert "`![not me](img/x.png)`" in text and "![nor me](img/x.png)" in text
    assert "https://example.com/x.png" in text and "](missing.png)" in text
    logo_url = froms["../img/logo%20one.png"]
    assert f"]({logo_url} \"Logo\")" in text
    assert download(logo_url) == (200, PNG)
    assert "/proj/" in guide["storage_url"]
    assert download(guide["storage_url"])[0] == 403  # private bucket: direct link refused
    html_entry = entries["page.html"]
    assert html_entry["storage_url"].endswith("/proj/page.md")
    page = download(html_entry["storage_presigned_url"])[1].decode()
    assert "# Page" in page and "data:image" not in page and "](img/" not in page
    assert html_entry["asset_ok"] >= 2


async def test_same_asset_is_stored_once(api, storage_services):
    await post_form(api, "/api/upload-archive", {"prefix": "once"},
                    {"file": ("a.zip", zip_of(ARCHIVE))})
    store = await storage_services.storage.store(
        await docs_caller_company(storage_services))
    keys = [o.object_name for o in store.client.list_objects(
        store.config.bucket, prefix=f"{store.config.prefix}/once/", recursive=True)]
    assets = sorted(k.rsplit("/", 1)[-1] for k in keys if "/assets/" in k)
    # the logo is referenced three times and stored once; the data-URI image is uploaded too
    assert assets == ["inline.png", "logo one.png", "图.png"], keys


@pytest.mark.parametrize("name,build,code", [
    ("slip.zip", lambda: zip_of({"../../evil.md": b"x"}), 40004),
    ("abs.zip", lambda: zip_of({"/etc/evil.md": b"x"}), 40004),
    ("notes.zip", lambda: b"this is not an archive", 40002),
])
async def test_hostile_archives_refused(api, name, build, code):
    reply = await post_form(api, "/api/upload-archive", {}, {"file": (name, build())})
    assert reply.body["code"] == code, reply.body


async def test_tar_symlink_refused(api):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("link.md")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
    reply = await post_form(api, "/api/upload-archive", {}, {"file": ("l.tar.gz", buf.getvalue())})
    assert reply.body["code"] == 40004


async def test_stage_then_process_with_version_and_job_polling(api, job_consumer):
    staged = _ok(await post_form(api, "/api/archive/stage", {},
                                 {"file": ("site.tgz", tgz_of({"a.md": b"![i](i.png)",
                                                             "i.png": PNG}))}))
    assert staged["name"] == "site.tgz" and staged["size"] > 0 and len(staged["id"]) == 32
    done = _ok(await post_form(api, "/api/archive/process",
                               {"id": staged["id"], "prefix": "rel", "versionId": "v2"}))
    assert done["files"][0]["storage_url"].endswith("/rel/v2/a.md")
    job = _ok(await post_form(api, "/api/archive/process", {"id": staged["id"], "async": "true"}))
    async def ended() -> dict:
        state = _ok(await api.call("GET", job["status_url"]))
        return state if state["state"] not in ("queued", "running") else {}

    state = await eventually(ended, timeout=10, what="the job ended")
    assert state["state"] == "done" and state["done"] == state["total"] == 1
    assert state["result"]["files"][0]["asset_ok"] == 1
    missing = await post_form(api, "/api/archive/process", {"id": "0" * 32})
    assert missing.body["code"] == 40401
    assert (await api.call("GET", "/api/jobs/" + "f" * 32)).body["code"] == 40401


async def test_link_map_rewrites_without_upload(api, storage_services):
    reply = await api.call("POST", "/config/linkmap",
                           {"map": {"img/logo.png": "https://cdn.example.com/logo.png"}})
    assert reply.status == 200 and reply.body == {"ok": True, "count": 1}
    got = await api.call("GET", "/config/linkmap")
    assert got.body["map"] == {"img/logo.png": "https://cdn.example.com/logo.png"}
    data = _ok(await post_form(api, "/api/upload-archive", {"prefix": "lm"}, {
        "file": ("a.zip", zip_of({"a.md": b"![l](img/logo.png)", "img/logo.png": PNG}))}))
    entry = data["files"][0]
    assert entry["mappings"] == [{"from": "img/logo.png", "to": "https://cdn.example.com/logo.png"}]
    store = await storage_services.storage.store(
        await docs_caller_company(storage_services))
    keys = [o.object_name for o in store.client.list_objects(
        store.config.bucket, prefix=f"{store.config.prefix}/lm/", recursive=True)]
    assert keys == [f"{store.config.prefix}/lm/a.md"]
    for bad in ([1, 2], {"a": 1}, {"map": {"a": {"$ne": 1}}}):
        r = await api.call("POST", "/config/linkmap", bad)
        assert r.status == 400 and r.body["ok"] is False


async def test_storage_config_console_rejection_and_masking(api, s3):
    base = {"access": s3.handle.access, "secret": s3.handle.secret, "bucket": "cfgtest"}
    for endpoint in ("127.0.0.1:9001", f"http://{s3.endpoint}/minio", f"{s3.endpoint}/browser"):
        r = await post_form(api, "/config/storage", {**base, "endpoint": endpoint})
        assert r.status == 400 and r.body["ok"] is False and "9000" in r.body["hint"]
        r = await post_form(api, "/config/storage/test", {**base, "endpoint": endpoint})
        assert r.status == 400 and r.body["ok"] is False
    r = await post_form(api, "/config/storage/test",
                        {**base, "endpoint": s3.endpoint, "create_if_missing": "true"})
    assert r.body["ok"] and r.body["connected"] and r.body["created"] and r.body["bucket_exists"]
    r = await post_form(api, "/config/storage", {**base, "endpoint": f"http://{s3.endpoint}/"})
    assert r.status == 200 and r.body["ok"] is True
    snapshot = await api.call("GET", "/config")
    assert snapshot.body["storage"]["bucket"] == "cfgtest"
    assert s3.handle.secret not in json.dumps(snapshot.body)
    # posting the masked secret back keeps the stored one
    masked = snapshot.body["storage"]["secret"]
    r = await post_form(api, "/config/storage", {**base, "secret": masked,
                                                 "endpoint": s3.endpoint, "prefix": "p"})
    assert r.status == 200
    r = await post_form(api, "/config/storage/test", {**base, "secret": masked,
                                                      "endpoint": s3.endpoint})
    assert r.body["connected"] is True


async def test_profiles_and_time_check(api, s3):
    r = await post_form(api, "/config/save_profile", {"name": "primary"})
    assert r.body["ok"] is True
    other = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
             "bucket": "second", "name": "secondary"}
    assert (await post_form(api, "/config/save_profile", other)).body["ok"] is True
    names = [p["name"] for p in (await api.call("GET", "/config/profiles")).body["profiles"]]
    assert names == ["primary", "secondary"]
    r = await api.call("GET", "/config/load_profile?name=secondary")
    assert r.status == 200 and r.body["storage"]["bucket"] == "second"
    assert (await api.call("GET", "/config")).body["storage"]["bucket"] == "second"
    r = await api.call("GET", "/config/load_profile?name=nope")
    assert r.status == 404 and r.body["ok"] is False
    r = await api.call("GET", "/config/load_profile?name=../x")
    assert r.status == 400
    t = await api.call("GET", "/system/time/check")
    assert t.body["ok"] is True and abs(t.body["diff_sec"]) < 5 and "server_time" in t.body
    t = await api.call("GET", f"/system/time/check?endpoint={s3.endpoint}&secure=false")
    assert t.body["ok"] is True


async def test_proxy_download_only_for_configured_storage(api, storage_services):
    data = _ok(await post_form(api, "/api/convert", {"save": "true", "filename": "feat"},
                               {"file": ("f.docx", build_feature_docx())}))
    stored = download(data["storage_presigned_url"])[1].decode()
    assert stored.startswith("# Introduction")
    image_links = [w for w in stored.split("(") if "/assets/" in w]
    assert image_links and "data:image" not in stored
    r = await post_form(api, "/proxy/download", {"url": data["storage_url"]})
    assert r.status == 200 and r.raw.decode().startswith("# Introduction")
    assert r.headers["Content-Type"].startswith("text/markdown")
    for url in ("http://example.com/docservice/x", "http://127.0.0.1:1/bucket/key",
                "file:///etc/passwd"):
        r = await post_form(api, "/proxy/download", {"url": url})
        assert r.status == 403 and r.body["ok"] is False
    r = await post_form(api, "/proxy/download", {"url": data["storage_url"] + "-missing"})
    assert r.status == 404


async def test_md_convert_save(api):
    data = _ok(await post_form(api, "/md/convert", {"markdown_text": "# Saved", "target": "docx",
                                                    "save": "true", "filename": "报告"}))
    assert "%E6%8A%A5%E5%91%8A.docx" in data["storage_url"]
    status, body = download(data["storage_presigned_url"])
    assert status == 200 and body[:2] == b"PK"


async def test_convert_folder_under_roots_only(api, storage_services, tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    (root / "book" / "a.md").write_text("![i](i.png)\n")
    (root / "book" / "i.png").write_bytes(PNG)
    (tmp_path / "outside").mkdir()
    monkeypatch.setattr(storage_services, "settings", dataclasses.replace(
        storage_services.settings, company_folder_roots={DOCS_CALLER_COMPANY: (root,)}))
    r = await post_form(api, "/md/convert-folder", {"folder_path": str(root / "book")})
    assert r.status == 200 and r.body["ok"] is True and r.body["count"] == 1
    assert r.body["files"][0]["asset_ok"] == 1
    for path in (str(tmp_path / "outside"), str(root / "book" / ".." / ".." / "outside"), "/etc",
                 "relative/path"):
        r = await post_form(api, "/md/convert-folder", {"folder_path": path})
        assert r.status in (400, 404) and r.body["ok"] is False, path


async def test_storage_failure_reports_clearly(api, storage_services, s3):
    from store.storage_config import StorageConfig

    broken = StorageConfig.from_form({"endpoint": s3.endpoint, "access": s3.handle.access,
                                      "secret": "wrong-secret-value", "bucket": "nope"})
    await storage_services.storage.configs.set_active(SERVICE, broken)
    reply = await post_form(api, "/api/upload-archive", {},
                            {"file": ("a.zip", zip_of({"a.md": b"# a", "b.md": b"# b"}))})
    assert reply.body["code"] == 50201 and "storage failed after 0 of 2" in reply.body["msg"]
    assert reply.body["data"]["files"] == []
    reply = await post_form(api, "/api/convert", {"save": "true"},
                            {"file": ("f.docx", build_feature_docx())})
    assert reply.body["code"] == 50201


async def test_staged_archives_expire(api, storage_services):
    from store.staging import purge_expired

    staged = _ok(await post_form(api, "/api/archive/stage", {},
                                 {"file": ("s.zip", zip_of({"a.md": b"# a"}))}))
    store = await storage_services.storage.store(
        await docs_caller_company(storage_services))
    names = [o.object_name for o in store.client.list_objects(
        store.config.bucket, prefix=f"{store.config.prefix}/_staging/", recursive=True)]
    assert names == [f"{store.config.prefix}/_staging/{staged['id']}"]
    assert purge_expired(store) == 0  # fresh: kept
    assert purge_expired(store, max_age_seconds=-1) == 1  # past its lifetime: removed
    reply = await post_form(api, "/api/archive/process", {"id": staged["id"]})
    assert reply.body["code"] == 40401


async def test_malformed_forms_and_keys_are_refused_not_crashed(api, s3):
    # a multipart body tornado cannot parse, and a multipart type without a boundary
    bad = b'--x\r\nContent-Disposition: form-data; name=""\r\n\r\nv\r\n--x--\r\n'
    for ctype in ("multipart/form-data; boundary=x", "multipart/form-data"):
        r = await api.call("POST", "/api/convert", raw=bad, headers={"Content-Type": ctype})
        assert r.status == 200 and r.body["code"] == 40001, r.body
        r = await api.call("POST", "/config/linkmap", raw=bad, headers={"Content-Type": ctype})
        assert r.status == 400 and r.body["ok"] is False
    for key in (".", "a/../b", "a//b"):
        r = await post_form(api, "/proxy/download", {"key": key})
        assert r.status == 400 and r.body["error"] == "bad object key"
    r = await post_form(api, "/api/upload-archive", {"prefix": "a\x01b"},
                        {"file": ("a.zip", zip_of({"a.md": b"# a"}))})
    assert r.body["code"] == 40001
    r = await post_form(api, "/config/storage/test", {
        "endpoint": s3.endpoint, "access": "a", "secret": "b", "bucket": "bkt", "region": "蠁"})
    assert r.status == 400 and "region" in r.body["error"]
    r = await api.call("POST", "/config/linkmap", {"map": {"a\u0000b": "https://x/y"}})
    assert r.status == 400 and r.body["ok"] is False
