"""What the storage endpoints do, apart from HTTP: a configuration from a form (checked
against the address policy), the test of a storage, the time check, the ``GET /config``
snapshot, saving and loading profiles, and opening an object for the download proxy.

Each function takes the services and the caller's company; failures are
:class:`~tornado_app.documents.plain.PlainError` (or the store's own errors), which the plain
handlers answer as ``{"ok":false,"error","hint"}``."""

from __future__ import annotations

import urllib.parse
from dataclasses import replace
from typing import Any

from store.clock import time_check
from store.object_keys import tenant_prefix
from store.objects import ObjectStream
from store.storage_config import (
    StorageConfig,
    normalize_endpoint,
    parse_bool,
    resolve_secret,
    secret_is_operators,
)
from store.storage_errors import StorageError
from store.storage_io import StorageIO
from store.storage_settings import EMBEDDED_PROFILE
from tornado_app import storage_audit
from tornado_app.address_policy import EndpointRefused, check_endpoint, policy_from
from tornado_app.callers import Caller
from tornado_app.documents.folder_roots import roots_for
from tornado_app.documents.plain import PlainError
from tornado_app.documents.storage.storage_view import (
    OPERATOR_KINDS,
    is_operators,
    operator_configs,
    profile_views,
    storage_view,
)
from tornado_app.services import Services

NO_SUCH_OBJECT = "no such object"


def storage_of(svc: Services) -> StorageIO:
    """The storage layer, or 503 on a server that runs without one."""
    if svc.storage is None:
        raise PlainError(503, "storage is not available on this server")
    return svc.storage


async def check_storage_endpoint(svc: Services, endpoint: str) -> None:
    """Apply the address policy to a storage endpoint the service will connect to."""
    storage = storage_of(svc)
    st = svc.settings
    policy = policy_from(st.storage_allowed_endpoints, st.storage_deny_private)
    try:
        await storage.io(check_endpoint, endpoint, policy, trusted=storage.trusted_endpoints)
    except EndpointRefused as exc:
        raise PlainError(400, f"endpoint refused: {exc.reason}",
                         "use a storage on a private or public address") from exc


async def config_from_form(svc: Services, company_id: str, fields: dict[str, str]
                           ) -> StorageConfig:
    """A validated config from the form, allowed by the address policy, with the secret
    :func:`store.storage_config.resolve_secret` allows (one decision for saving, testing
    and saving as a profile): a blank or masked secret keeps the company's own stored one
    for the same endpoint, key and bucket, and the operator's secret (a loaded copy of the
    built-in storage) only for exactly the company's default scope; the service-wide
    storage's secret is never filled in for another prefix, bucket or address."""
    configs = storage_of(svc).configs
    current = (await configs.active_config(company_id)
               if await configs.has_own_config(company_id) else None)
    if current is not None and current.secret_from_operator is None \
            and await configs.active_is_embedded(company_id):
        current = replace(current, secret_from_operator=True)  # loaded before it was marked
    config = StorageConfig.from_form(fields, require_credentials=False)
    config = resolve_secret(config, current, await operator_configs(configs))
    config.validate()
    await check_storage_endpoint(svc, config.endpoint)
    return config


async def _marked(svc: Services, config: StorageConfig) -> StorageConfig:
    """``config`` (a copy the service makes for a company: a loaded profile, the storage in
    use saved as one) with ``secret_from_operator`` set, so that its secret is never lent
    to another scope later (:func:`store.storage_config.resolve_secret`)."""
    operators = await operator_configs(storage_of(svc).configs)
    return replace(config, secret_from_operator=secret_is_operators(config, operators))


async def configure_storage(svc: Services, caller: Caller, company_id: str,
                            fields: dict[str, str], address: str = "") -> dict[str, Any]:
    """``POST /config/storage``: make the form's storage the company's active one (recorded
    in Activity). With ``public_read`` the answer says honestly whether direct links will
    open."""
    config = await config_from_form(svc, company_id, fields)
    storage = storage_of(svc)
    await storage.configs.set_active(company_id, config)
    storage_audit.record(svc, caller, "storage.config",
                         {"change": "configured", **storage_audit.where(config)}, address)
    answer: dict[str, Any] = {"ok": True, "storage": await storage_view(
        storage.configs, caller, company_id, config, active=False)}
    if config.public_read:
        answer["public_read_check"] = await public_read_check(svc, company_id, config)
    return answer


async def public_read_check(svc: Services, company_id: str, config: StorageConfig
                            ) -> dict[str, Any]:
    """Read a test object anonymously through its direct link (the public host goes
    through the address policy first, as the endpoint did); the object is written under the
    company's own prefix, as everything a company stores."""
    public = config.public or config.endpoint
    if public != config.endpoint:
        try:
            await check_storage_endpoint(svc, public)
        except PlainError as exc:
            return {"ok": False, "status": None, "url": "",
                    "error": f"not checked: public address refused ({exc.error})"}
    storage = storage_of(svc)
    store = storage.store_for(replace(config, prefix=tenant_prefix(config.prefix, company_id)))
    return await storage.io(store.verify_public_read)  # its test object: the company's prefix


async def test_storage(svc: Services, caller: Caller, company_id: str,
                       fields: dict[str, str]) -> dict[str, Any]:
    """``POST /config/storage/test``: the form's storage, or with no endpoint the one in use
    (the built-in one included, no keys needed). Of the operator's storage a tenant learns
    whether it works and nothing of it (no bucket name in an error), and nothing is created
    there."""
    create = parse_bool(fields.get("create_if_missing"), False)
    storage = storage_of(svc)
    if fields.get("endpoint"):
        config = await config_from_form(svc, company_id, fields)
    else:
        found = await storage.configs.active_config(company_id)
        if found is None:
            raise PlainError(400, "storage not configured", "send the storage fields")
        config = found
        if caller.kind not in OPERATOR_KINDS and await is_operators(
                storage.configs, company_id, config, active=True):
            result = await storage.io(storage.store_for(config).test_connection, False)
            return ({key: result[key] for key in ("ok", "connected", "bucket_exists")}
                    | {"source": "operator"})
    store = storage.store_for(config)
    return await storage.io(store.test_connection, create)


async def check_time(svc: Services, company_id: str, endpoint: str, secure_raw: str | None
                     ) -> dict[str, Any]:
    """``/system/time/check``: this server's clock against a storage's (``endpoint``, or the
    company's storage in use when it is empty)."""
    if not endpoint:
        config = await storage_of(svc).configs.active_config(company_id)
        if config is None:
            raise PlainError(400, "storage not configured", "pass endpoint=host:port")
        endpoint, secure = config.endpoint, config.secure
    else:
        endpoint, secure = normalize_endpoint(endpoint, parse_bool(secure_raw, False))
    if secure_raw is not None:
        secure = parse_bool(secure_raw, secure)
    await check_storage_endpoint(svc, endpoint)
    return await storage_of(svc).io(time_check, endpoint, secure)


async def config_snapshot(svc: Services, caller: Caller, company_id: str) -> dict[str, Any]:
    """``GET /config``: the company's storage (as the caller may see it), profiles, link map
    size, limits and folder roots."""
    configs = storage_of(svc).configs
    config = await configs.active_config(company_id)
    st = svc.settings
    return {
        "ok": True,
        "storage": await storage_view(configs, caller, company_id, config),
        "storage_embedded": await configs.active_is_embedded(company_id),
        "profiles": [p["name"] for p in await configs.profiles(company_id)],
        "linkmap_size": len(await storage_of(svc).linkmap.get(company_id)),
        "limits": {"max_upload_bytes": st.max_upload_bytes,
                   "max_markdown_bytes": st.max_markdown_bytes,
                   "job_timeout_seconds": st.job_timeout_seconds},
        "folder_roots": [str(p) for p in await roots_for(svc, company_id)],
    }


async def list_profiles(svc: Services, caller: Caller, company_id: str) -> dict[str, Any]:
    """``GET /config/profiles``: the profiles the company may load, as the caller may see
    them."""
    return {"ok": True, "profiles": await profile_views(
        storage_of(svc).configs, caller, company_id)}


async def save_profile(svc: Services, caller: Caller, company_id: str, name: str,
                       fields: dict[str, str], address: str = "") -> dict[str, Any]:
    """``POST /config/save_profile``: the form's storage, or the one in use, saved as
    ``name`` (recorded in Activity: created or updated)."""
    configs = storage_of(svc).configs
    typed = bool(fields.get("endpoint"))
    if fields.get("endpoint"):
        config = await config_from_form(svc, company_id, fields)
    else:
        found = await configs.active_config(company_id)
        if found is None:
            raise PlainError(400, "no storage configured to save",
                             "send the storage fields or configure storage first")
        config = await _marked(svc, found)
    existed = await configs.has_own_profile(company_id, name)
    await configs.save_profile(company_id, name, config)
    storage_audit.record(svc, caller, "storage.profile", {
        "profile": name, "change": "updated" if existed else "created",
        **(storage_audit.where(config) if typed else {})}, address)
    return {"ok": True, "name": name, "storage": await storage_view(
        configs, caller, company_id, config, active=False)}


async def load_profile(svc: Services, caller: Caller, company_id: str, name: str,
                       address: str = "") -> dict[str, Any]:
    """``/config/load_profile``: make the saved profile ``name`` the active storage
    (recorded in Activity)."""
    configs = storage_of(svc).configs
    config = await configs.load_profile(company_id, name)
    if config is None:
        raise PlainError(404, f"no profile named {name!r}")
    config = await _marked(svc, config)
    await configs.set_active(company_id, config, embedded=name == EMBEDDED_PROFILE)
    storage_audit.record(svc, caller, "storage.config",
                         {"change": "profile loaded", "profile": name}, address)
    return {"ok": True, "name": name, "storage": await storage_view(
        configs, caller, company_id, config)}


def store_key_from_url(config: StorageConfig, url: str) -> str:
    """The object key of a storage link, or PlainError when the URL is not one of ours
    (only the configured endpoint/public host and bucket: no open proxy)."""
    parts = urllib.parse.urlsplit(url)
    hosts = {config.endpoint.lower(), (config.public or config.endpoint).lower()}
    if parts.scheme not in ("http", "https") or parts.netloc.lower() not in hosts:
        raise PlainError(403, "only links of the configured storage can be downloaded")
    path = urllib.parse.unquote(parts.path)
    prefix = f"/{config.bucket}/"
    if not path.startswith(prefix) or len(path) == len(prefix):
        raise PlainError(403, "the link is not in the configured bucket")
    key = path[len(prefix):]
    if any(p in ("", ".", "..") for p in key.split("/")):
        raise PlainError(400, "bad object key")
    return key


async def open_object(svc: Services, company_id: str, key: str, url: str
                      ) -> tuple[str, ObjectStream]:
    """The object ``key`` (or the one a link ``url`` of the configured storage names) of
    the company's storage, opened for streaming: ``(key, stream)``, the caller closes the
    stream. Another host, bucket or company answers like a missing object."""
    storage = storage_of(svc)
    store = await storage.store(company_id)
    if not key and url:
        key = store_key_from_url(store.config, url)
    if not key:
        raise PlainError(400, "send url (a link of the configured storage) or key")
    if any(p in ("", ".", "..") for p in key.split("/")) or any(
            ord(c) < 32 or ord(c) == 127 for c in key):
        raise PlainError(400, "bad object key")
    if not key.startswith(store.config.prefix + "/"):
        raise PlainError(404, NO_SUCH_OBJECT)  # another company's: the same as missing
    await check_storage_endpoint(svc, store.config.endpoint)
    try:
        return key, await storage.io(store.get_stream, key)
    except StorageError as exc:
        if "NoSuchKey" in exc.message or "not found" in exc.message.lower():
            raise PlainError(404, NO_SUCH_OBJECT) from exc
        raise PlainError(502, exc.message, exc.hint) from exc
