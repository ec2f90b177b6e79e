"""Tenants never see the operator's storage details: ``GET /config`` (and the profile and
storage replies) show a company on the operator's storage only ``{"source": "operator"}`` -
no endpoint, bucket, access key or secret fragment - also after it loads or saves a copy of
an operator configuration; a company's own storage keeps the masked view; the operator token
sees its own storage masked. Over HTTP against the real app and a real SeaweedFS."""

from __future__ import annotations

import dataclasses
import json

import pytest

from store.storage_settings import SERVICE
from tests.conftest import add_user, login, post_form
from tornado_app.app import make_app

OPERATOR = "operator-token-for-config-view"


@pytest.fixture
def app(storage_services):
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    docs_api_token=OPERATOR)
    return make_app(storage_services)


def _leaks(body: object, s3, bucket: str) -> list[str]:
    """The operator's storage details found in an answer."""
    text = json.dumps(body)
    found = [name for name, value in (("access key", s3.handle.access),
                                      ("secret tail", "****" + s3.handle.secret[-2:]),
                                      ("endpoint", s3.endpoint), ("bucket", bucket))
             if value in text]
    return found


async def test_a_tenant_sees_only_that_the_operators_storage_is_in_use(api, storage_services,
                                                                       s3):
    operator_bucket = (await storage_services.storage.configs.active_config(SERVICE)).bucket
    await add_user(storage_services, "ACME", "ada", role="ADMIN")
    admin = await login(api, "ACME", "ada")

    snapshot = await api.call("GET", "/config", token=admin)
    assert snapshot.status == 200 and snapshot.body["ok"] is True
    assert snapshot.body["storage"] == {"source": "operator"}
    assert _leaks(snapshot.body, s3, operator_bucket) == []

    # the operator sees its own storage, masked
    mine = (await api.call("GET", "/config", token=OPERATOR)).body["storage"]
    assert mine["source"] == "operator" and mine["access"] == s3.handle.access
    assert mine["bucket"] == operator_bucket and mine["secret"] == "****" + s3.handle.secret[-2:]

    # a copy of an operator configuration stays the operator's: saving the active one as a
    # profile, loading it back, and posting it again with the secret left blank
    saved = await post_form(api, "/config/save_profile", {"name": "copy"}, token=admin)
    assert saved.status == 200 and saved.body["storage"] == {"source": "operator"}
    loaded = await api.call("GET", "/config/load_profile?name=copy", token=admin)
    assert loaded.status == 200 and loaded.body["storage"] == {"source": "operator"}
    assert (await api.call("GET", "/config", token=admin)).body["storage"] == {
        "source": "operator"}
    again = await post_form(api, "/config/storage", {
        "endpoint": s3.endpoint, "access": s3.handle.access, "bucket": operator_bucket},
        token=admin)
    assert again.status == 200 and again.body["storage"] == {"source": "operator"}
    # ... but its secret is not lent to another prefix (tests/test_operator_storage_secret.py)
    moved = await post_form(api, "/config/storage", {
        "endpoint": s3.endpoint, "access": s3.handle.access, "bucket": operator_bucket,
        "prefix": "moved"}, token=admin)
    assert moved.status == 400 and moved.body["ok"] is False
    for body in (saved.body, loaded.body, again.body, moved.body):
        assert _leaks(body, s3, operator_bucket) == []

    # a service-wide profile loaded by name (the embedded storage is one)
    configs = storage_services.storage.configs
    await configs.save_profile(SERVICE, "ops", await configs.active_config(SERVICE))
    loaded = await api.call("GET", "/config/load_profile?name=ops", token=admin)
    assert loaded.status == 200 and loaded.body["storage"] == {"source": "operator"}

    # the profile list names the operator's profiles (service-wide, or a copy) and no more
    listed = await api.call("GET", "/config/profiles", token=admin)
    assert listed.status == 200
    assert {"name": "copy", "source": "operator"} in listed.body["profiles"]
    assert {"name": "ops", "source": "operator"} in listed.body["profiles"]
    assert _leaks(listed.body, s3, operator_bucket) == []


async def test_a_companys_own_storage_keeps_the_masked_view(api, storage_services, s3):
    await add_user(storage_services, "ACME", "ada", role="ADMIN")
    admin = await login(api, "ACME", "ada")
    own = {"endpoint": s3.endpoint, "access": "tenant-access-key", "bucket": "tenant-own",
           "secret": "tenant-secret-value-xy"}
    made = await post_form(api, "/config/storage", own, token=admin)
    assert made.status == 200, made.body
    assert made.body["storage"]["source"] == "company"
    storage = (await api.call("GET", "/config", token=admin)).body["storage"]
    assert storage["source"] == "company" and storage["access"] == "tenant-access-key"
    assert storage["bucket"] == "tenant-own" and storage["secret"] == "****xy"
    assert storage["secret_set"] is True and "tenant-secret-value-xy" not in json.dumps(storage)
