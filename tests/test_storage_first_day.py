"""Storage on a new admin's first day (issue 25, items 1 and 3), over HTTP against the real
servers: the storage in use is tested without re-entering keys (the built-in one included),
and "public read" is verified on saving by a real anonymous read of a test object."""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.conftest import post_form


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


async def test_the_storage_in_use_is_tested_without_its_keys(api, storage_services):
    r = await post_form(api, "/config/storage/test", {})
    assert r.status == 200, r.body
    assert r.body["ok"] is True and r.body["connected"] is True and r.body["bucket_exists"]
    # the built-in storage is the operator's: the answer says only whether it works, and
    # asking to create its bucket changes nothing there
    assert r.body == {"ok": True, "connected": True, "bucket_exists": True,
                      "source": "operator"}
    r = await post_form(api, "/config/storage/test", {"create_if_missing": "true"})
    assert r.body["source"] == "operator" and "created" not in r.body
    # with fields, the fields are tested (keys required as before for a new endpoint)
    r = await post_form(api, "/config/storage/test", {"endpoint": "127.0.0.1:1", "bucket": "x"})
    assert r.status == 400 and r.body["ok"] is False


async def test_saving_public_read_is_verified_by_an_anonymous_read(api, storage_services, s3):
    import uuid

    bucket = f"pub{uuid.uuid4().hex[:12]}"
    own = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
           "bucket": bucket, "public_read": "true"}
    # a bucket the test creates with public_read gets the public-read policy
    assert (await post_form(api, "/config/storage/test",
                            {**own, "create_if_missing": "true"})).body["ok"] is True
    r = await post_form(api, "/config/storage", own)
    assert r.status == 200, r.body
    check = r.body["public_read_check"]
    assert check["ok"] is True and check["status"] == 200 and check["error"] is None
    assert bucket in check["url"]
    assert _status(check["url"]) in (403, 404)  # the test object is removed afterwards
    # without public_read there is nothing to check
    private = {k: v for k, v in own.items() if k != "public_read"}
    assert "public_read_check" not in (await post_form(api, "/config/storage", private)).body


async def test_public_read_on_a_private_bucket_is_reported_not_claimed(api, storage_services,
                                                                      s3):
    """Ticking "public read" on a private bucket changes no policy: the answer says that
    direct links will not open instead of claiming success."""
    import uuid

    bucket = f"priv{uuid.uuid4().hex[:12]}"
    own = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
           "bucket": bucket}
    assert (await post_form(api, "/config/storage/test",
                            {**own, "create_if_missing": "true"})).body["ok"] is True
    r = await post_form(api, "/config/storage", {**own, "public_read": "true"})
    check = r.body["public_read_check"]
    assert check["ok"] is False and check["status"] == 403
    assert "presigned" in check["error"] and "does not allow public reads" in check["error"]


def test_presign_lifetime_is_a_setting_up_to_seven_days():
    from tornado_app.settings import Settings

    assert Settings.from_env({}).presign_expiry_seconds == 86400
    assert Settings.from_env({"PRESIGN_EXPIRY_SECONDS": "604800"}).presign_expiry_seconds == 604800
    assert Settings.from_env({"PRESIGN_EXPIRY_SECONDS": "9999999"}).presign_expiry_seconds == 604800
    assert Settings.from_env({"PRESIGN_EXPIRY_SECONDS": "1"}).presign_expiry_seconds == 60


async def test_saved_files_get_presigned_links_of_the_configured_lifetime(api, storage_services):
    from datetime import timedelta

    from tests.conftest import docs_caller_company

    storage_services.storage.presign_expiry = timedelta(days=7)
    storage_services.storage._stores.clear()  # stores are cached per configuration
    r = await post_form(api, "/md/convert", {"markdown_text": "# Week\n", "target": "pdf",
                                             "save": "true"})
    assert r.body["code"] == 0, r.body
    link = r.body["data"]["storage_presigned_url"]
    assert "X-Amz-Expires=604800" in link
    assert _status(link) == 200  # signed right: the storage accepts it
    store = await storage_services.storage.store(await docs_caller_company(storage_services))
    assert store.expiry == timedelta(days=7)
