"""Storage settings that cannot be turned against the host, over HTTP against the real servers:
a kept secret only for the same endpoint, key and bucket; the address policy on every endpoint
the service connects to (probed with loopback addresses only); the connection test never opens
a bucket; downloads as attachments; archive assets without active content types."""

from __future__ import annotations

import io
import urllib.error
import urllib.request
import zipfile

from tests.conftest import docs_caller_company, post_form

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
       b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
       b"\x00\x00\x00\x00IEND\xaeB`\x82")


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), b""


def _own(s3, bucket: str) -> dict[str, str]:
    return {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
            "bucket": bucket}


async def test_kept_secret_only_for_the_same_endpoint_key_and_bucket(api, storage_services, s3):
    first = _own(s3, "keepsecret")
    assert (await post_form(api, "/config/storage/test", {**first, "create_if_missing": "true"})
            ).body["ok"] is True
    assert (await post_form(api, "/config/storage", first)).body["ok"] is True
    masked = (await api.call("GET", "/config")).body["storage"]["secret"]
    # the same endpoint, key and bucket: the masked secret keeps the stored one
    same = {**first, "secret": masked, "prefix": "moved"}
    r = await post_form(api, "/config/storage", same)
    assert r.status == 200 and r.body["storage"]["prefix"] == "moved"
    # another bucket, endpoint or key without the secret: refused, nothing changed
    for change in ({"bucket": "elsewhere"}, {"endpoint": f"localhost:{s3.port}"},
                   {"access": "someone-else"}):
        for secret in ("", masked):
            r = await post_form(api, "/config/storage", {**first, **change, "secret": secret})
            assert r.status == 400 and "secret is required" in r.body["error"], (change, r.body)
    assert (await api.call("GET", "/config")).body["storage"]["bucket"] == "keepsecret"


async def test_loopback_and_mapped_endpoints_refused_everywhere(api, storage_services, s3):
    refused_endpoints = [f"127.0.0.2:{s3.port}", f"[::ffff:127.0.0.1]:{s3.port}",
                         f"[::1]:{s3.port}", f"localhost:{s3.port}"]
    for endpoint in refused_endpoints:
        fields = {**_own(s3, "policytest"), "endpoint": endpoint}
        for path in ("/config/storage", "/config/storage/test", "/config/save_profile"):
            r = await post_form(api, path, {**fields, "name": "p"})
            assert r.status == 400 and r.body["ok"] is False, (path, endpoint, r.body)
            assert "STORAGE_ALLOWED_ENDPOINTS" in r.body["error"]
        r = await api.call("GET", f"/system/time/check?endpoint={endpoint}")
        assert r.status == 400 and "endpoint refused" in r.body["error"], r.body
    # the listed endpoint (the test S3, as an operator would list it) passes
    r = await api.call("GET", f"/system/time/check?endpoint={s3.endpoint}")
    assert r.status == 200 and r.body["ok"] is True


async def test_connection_test_never_opens_an_existing_bucket(api, storage_services, s3):
    store = await storage_services.storage.store(
        await docs_caller_company(storage_services))
    links = store.put_bytes(f"{store.config.prefix}/private.txt", b"private", "text/plain")
    assert _get(links.storage_url)[0] == 403
    fields = {**_own(s3, store.config.bucket), "public_read": "true"}
    r = await post_form(api, "/config/storage/test", fields)
    assert r.status == 200 and r.body["ok"] is True
    assert _get(links.storage_url)[0] == 403  # still private
    r = await post_form(api, "/config/storage/test", {**fields, "create_if_missing": "true"})
    assert r.body["ok"] is True and r.body["created"] is False
    assert _get(links.storage_url)[0] == 403


async def test_archive_assets_never_served_as_active_content(api, storage_services):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("doc.md", "![p](p.png) [s](s.shtml) [v](v.svg) [t](t.txt) [x](x.pdf) "
                             "[j](j.js) [h](h.xhtml)\n")
        z.writestr("p.png", PNG)
        z.writestr("s.shtml", "<script>alert(1)</script>")
        z.writestr("h.xhtml", "<html><script>alert(1)</script></html>")
        z.writestr("v.svg", '<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>')
        z.writestr("t.txt", "text")
        z.writestr("x.pdf", "%PDF-1.4")
        z.writestr("j.js", "alert(1)")
    r = await post_form(api, "/api/upload-archive", {},
                        {"file": ("a.zip", archive.getvalue())})
    assert r.body["code"] == 0, r.body
    mapped = {m["from"]: m["to"] for m in r.body["data"]["files"][0]["mappings"]}
    seen = {}
    for name, url in mapped.items():
        status, headers, _ = _get(url)
        assert status == 200, name
        seen[name] = (headers["Content-Type"], headers.get("Content-Disposition", ""))
    assert seen["p.png"] == ("image/png", "")
    assert seen["t.txt"][0].startswith("text/plain") and seen["t.txt"][1] == ""
    assert seen["x.pdf"] == ("application/pdf", "")
    for active in ("s.shtml", "h.xhtml", "j.js", "v.svg"):  # attachments named as uploaded
        assert seen[active][0] == "application/octet-stream", (active, seen)
        assert seen[active][1].startswith(f'attachment; filename="{active}"'), (active, seen)
