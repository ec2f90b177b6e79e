"""The operator's storage secret is never lent to a company's other scope (issue 30, item 6):
with the built-in storage's endpoint and access key (both visible in its presigned links) and
no secret, a company cannot save, test or save as a profile a configuration with another
prefix, bucket or address; only exactly its default scope (``t/<company>/``) is accepted, and
nothing is ever written outside ``t/<company>/``. Over HTTP against the real SeaweedFS."""

from __future__ import annotations

import pytest

from store.objects import ObjectStore
from store.storage_config import (
    OPERATOR_REFUSED,
    StorageConfig,
    mask_secret,
    resolve_secret,
    secret_is_operators,
)
from store.storage_errors import StorageConfigError
from store.storage_settings import EMBEDDED_PROFILE, SERVICE
from tests.conftest import docs_caller_company, post_form
from tornado_app.app import make_app


@pytest.fixture
def app(storage_services):
    return make_app(storage_services)


def _operator_fields(config: StorageConfig, **changes: str) -> dict[str, str]:
    """What a company sees of the built-in storage (endpoint, access key and bucket, all in
    its presigned links), without the secret."""
    return {"endpoint": config.endpoint, "access": config.access, "bucket": config.bucket,
            "secret": "", **changes}


async def _keys(store: ObjectStore) -> list[str]:
    return [o.object_name for o in store.client.list_objects(
        store.config.bucket, recursive=True)]


def _refused(reply) -> None:
    assert 400 <= reply.status < 500, reply.body
    assert reply.body["ok"] is False and reply.body["error"] and reply.body["hint"], reply.body


@pytest.mark.parametrize("how", ["embedded profile", "saved copy"])
async def test_operator_secret_not_lent_to_another_prefix_or_bucket(api, storage_services, s3,
                                                                    how):
    storage = storage_services.storage
    operator = await storage.configs.active_config(SERVICE)
    assert operator is not None
    if how == "embedded profile":  # as serve does with the embedded SeaweedFS
        await storage.configs.save_profile(SERVICE, EMBEDDED_PROFILE, operator)
        loaded = await post_form(api, "/config/load_profile", {"name": EMBEDDED_PROFILE})
    else:  # the storage in use (the operator's) saved as the company's own profile
        assert (await post_form(api, "/config/save_profile", {"name": "mine"})).status == 200
        loaded = await post_form(api, "/config/load_profile", {"name": "mine"})
    assert loaded.status == 200 and loaded.body["storage"] == {"source": "operator"}

    for changes in ({"prefix": "elsewhere"}, {"bucket": "otherbucket"},
                    {"bucket": "otherbucket", "create_if_missing": "true"},
                    {"prefix": "elsewhere", "secret": mask_secret(operator.secret)},
                    {"prefix": "elsewhere", "public_read": "true"},
                    {"endpoint": f"localhost:{s3.port}"}):
        fields = _operator_fields(operator, **changes)
        for path in ("/config/storage", "/config/storage/test", "/config/save_profile"):
            _refused(await post_form(api, path, {**fields, "name": "stolen"}))
    assert not ObjectStore(s3.config("otherbucket")).bucket_exists()

    # exactly the default scope is the company's own already: accepted
    same = await post_form(api, "/config/storage", _operator_fields(operator))
    assert same.status == 200 and same.body["ok"] is True, same.body

    company = await docs_caller_company(storage_services)
    r = await post_form(api, "/api/convert", {"save": "true"},
                        {"file": ("p.html", b"<html><body><h1>Hi</h1></body></html>")})
    assert r.body["code"] == 0, r.body
    keys = await _keys(ObjectStore(operator))
    assert keys and all(k.startswith(f"t/{company}/") for k in keys), keys


async def test_operator_endpoint_without_a_secret_is_refused_with_nothing_to_keep(
        api, storage_services):
    operator = await storage_services.storage.configs.active_config(SERVICE)
    assert operator is not None
    for changes in ({"prefix": "elsewhere"}, {}, {"access": "someone"}):
        reply = await post_form(api, "/config/storage", _operator_fields(operator, **changes))
        _refused(reply)
        assert reply.body["error"] == OPERATOR_REFUSED
    assert not await storage_services.storage.configs.has_own_config(
        await docs_caller_company(storage_services))


def test_resolve_secret_decides_in_one_place():
    operator = StorageConfig.from_form({"endpoint": "s3.local:8333", "access": "OPKEY",
                                        "secret": "operator-secret-1234", "bucket": "docs"})
    company_own = StorageConfig.from_form({"endpoint": "minio.acme:9000", "access": "ACME",
                                           "secret": "acme-secret-123456", "bucket": "acme"})
    form = StorageConfig.from_form({"endpoint": "s3.local:8333", "access": "OPKEY",
                                    "bucket": "docs", "prefix": "other"},
                                   require_credentials=False)
    # a record written before the mark: the operator's by its endpoint, key and secret
    assert secret_is_operators(operator, [operator])
    for current in (None, operator):
        with pytest.raises(StorageConfigError):
            resolve_secret(form, current, [operator])
    same_scope = StorageConfig.from_form({"endpoint": "s3.local:8333", "access": "OPKEY",
                                          "bucket": "docs"}, require_credentials=False)
    kept = resolve_secret(same_scope, operator, [operator])
    assert kept.secret == operator.secret and kept.secret_from_operator is True
    # the company's own secret: kept for its own endpoint, key and bucket only
    moved = StorageConfig.from_form({**company_own.to_dict(), "secret": "", "prefix": "x"},
                                    require_credentials=False)
    own = dict(company_own.to_dict(), secret_from_operator=False)
    mine = StorageConfig.from_dict(own)
    assert resolve_secret(moved, mine, [operator]).secret == company_own.secret
    # a secret the company sends is its own, whatever it names
    sent = StorageConfig.from_form({**form.to_dict(), "secret": "typed-by-the-company"})
    assert resolve_secret(sent, None, [operator]).secret_from_operator is False
