"""Storage configuration endpoints (plain JSON, no envelope): ``/config/storage``,
``/config/storage/test``, ``/system/time/check``, ``GET /config``, profiles, the link map,
and the download proxy. Failures use HTTP 4xx/5xx with ``{"ok":false,"error","hint"}``."""

from __future__ import annotations

import urllib.parse
from typing import Any

from render_pool.url_safety import is_safe_link
from store.clock import time_check
from store.storage_config import StorageConfig, normalize_endpoint, parse_bool
from store.storage_errors import StorageConfigError, StorageError
from store.storage_settings import EMBEDDED_PROFILE
from tornado_app.address_policy import EndpointRefused, check_endpoint, policy_from
from tornado_app.callers import require_admin
from tornado_app.documents.base import DocsError, UploadHandler
from tornado_app.documents.folder_roots import roots_for
from tornado_app.documents.storage_view import (
    OPERATOR_KINDS,
    is_operators,
    profile_views,
    storage_view,
)
from tornado_app.guards import STATE_CHANGING_GET_REFUSED, state_changing_get_refused
from tornado_app.http import JsonTooDeep, load_json

_STATUS = {40001: 400, 40002: 400, 40003: 400, 40004: 400, 40101: 401, 40401: 404,
           41301: 413, 42201: 400, 50201: 502, 50301: 503, 50401: 504}
MAX_LINKMAP_ENTRIES = 10_000
NO_SUCH_OBJECT = "no such object"


class PlainError(Exception):
    """A failure of a plain endpoint: HTTP ``status`` with ``error`` and ``hint``."""

    def __init__(self, status: int, error: str, hint: str = "") -> None:
        super().__init__(error)
        self.status, self.error, self.hint = status, error, hint


class PlainHandler(UploadHandler):
    """Form-reading handler that answers plain JSON objects."""

    def upload_limit(self) -> int:
        return 1024 * 1024

    def reply(self, payload: dict[str, Any], status: int = 200) -> None:
        self.write_json(status, payload)

    def write_failure(self, status: int, code: str, message: str) -> None:
        self.write_json(status, {"ok": False, "error": message, "hint": ""})

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self.set_retry_after(exc)
        if isinstance(exc, PlainError):
            self.write_json(exc.status, {"ok": False, "error": exc.error, "hint": exc.hint})
        elif isinstance(exc, StorageConfigError):
            self.write_json(400, {"ok": False, "error": exc.error, "hint": exc.hint})
        elif isinstance(exc, StorageError):
            self.write_json(502, {"ok": False, "error": exc.message, "hint": exc.hint})
        elif isinstance(exc, DocsError):
            self.write_json(_STATUS.get(exc.code, 400),
                            {"ok": False, "error": exc.msg, "hint": "", "code": exc.code})
        else:
            super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, (PlainError, StorageConfigError, StorageError, DocsError)):
            return
        super().log_exception(typ, value, tb)

    @property
    def storage(self) -> Any:
        if self.services.storage is None:
            raise PlainError(503, "storage is not available on this server")
        return self.services.storage

    async def check_endpoint(self, endpoint: str) -> None:
        """Apply the address policy to a storage endpoint the service will connect to."""
        st = self.services.settings
        policy = policy_from(st.storage_allowed_endpoints, st.storage_deny_private)
        try:
            await self.storage.io(check_endpoint, endpoint, policy,
                                  trusted=self.storage.trusted_endpoints)
        except EndpointRefused as exc:
            raise PlainError(400, f"endpoint refused: {exc.reason}",
                             "use a storage on a private or public address") from exc

    async def config_from_form(self, fields: dict[str, str]) -> StorageConfig:
        """A validated config from the form, allowed by the address policy. A blank or masked
        secret keeps the company's own stored one for the same endpoint, key and bucket (never
        the service-wide storage's secret, which a company does not own)."""
        configs = self.storage.configs
        current = (await configs.active_config(self.company_id)
                   if await configs.has_own_config(self.company_id) else None)
        has_secret = bool(fields.get("secret")) or current is not None
        config = StorageConfig.from_form(fields, require_credentials=not has_secret)
        config = config.keep_secret_from(current)
        config.validate()
        await self.check_endpoint(config.endpoint)
        return config


class StorageConfigHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = self.form()
        config = await self.config_from_form(fields)
        await self.storage.configs.set_active(self.company_id, config)
        answer: dict[str, Any] = {"ok": True, "storage": await storage_view(
            self.storage.configs, self.caller, self.company_id, config, active=False)}
        if config.public_read:  # say honestly whether direct links will open
            answer["public_read_check"] = await self.public_read_check(config)
        self.reply(answer)

    async def public_read_check(self, config: StorageConfig) -> dict[str, Any]:
        """Read a test object anonymously through its direct link (the public host goes
        through the address policy first, as the endpoint did)."""
        public = config.public or config.endpoint
        if public != config.endpoint:
            try:
                await self.check_endpoint(public)
            except PlainError as exc:
                return {"ok": False, "status": None, "url": "",
                        "error": f"not checked: public address refused ({exc.error})"}
        store = self.storage.store_for(config)
        return await self.storage.io(store.verify_public_read)


class StorageTestHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = self.form()
        create = parse_bool(fields.get("create_if_missing"), False)
        if fields.get("endpoint"):
            config = await self.config_from_form(fields)
        else:  # no fields: test the storage in use (the built-in one included), no keys needed
            config = await self.storage.configs.active_config(self.company_id)
            if config is None:
                raise PlainError(400, "storage not configured", "send the storage fields")
            if self.caller.kind not in OPERATOR_KINDS and await is_operators(
                    self.storage.configs, self.company_id, config, active=True):
                # the operator's storage: a tenant learns whether it works, nothing of it
                # (no bucket name in an error) and changes nothing (no bucket is created)
                store = self.storage.store_for(config)
                result = await self.storage.io(store.test_connection, False)
                self.reply({key: result[key] for key in ("ok", "connected", "bucket_exists")}
                           | {"source": "operator"})
                return
        store = self.storage.store_for(config)
        self.reply(await self.storage.io(store.test_connection, create))


class TimeCheckHandler(PlainHandler):
    async def get(self) -> None:
        endpoint = self.get_query_argument("endpoint", "") or self.get_query_argument("public", "")
        secure_raw = self.get_query_argument("secure", None)
        if endpoint:
            require_admin(self.caller)  # a custom endpoint probes the network: ADMIN only
        if not endpoint:
            config = await self.storage.configs.active_config(self.company_id)
            if config is None:
                raise PlainError(400, "storage not configured", "pass endpoint=host:port")
            endpoint, secure = config.endpoint, config.secure
        else:
            endpoint, secure = normalize_endpoint(endpoint, parse_bool(secure_raw, False))
        if secure_raw is not None:
            secure = parse_bool(secure_raw, secure)
        await self.check_endpoint(endpoint)
        self.reply(await self.storage.io(time_check, endpoint, secure))


class ConfigSnapshotHandler(PlainHandler):
    admin_methods = frozenset({"GET"})

    async def get(self) -> None:
        config = await self.storage.configs.active_config(self.company_id)
        st = self.services.settings
        self.reply({
            "ok": True,
            "storage": await storage_view(self.storage.configs, self.caller, self.company_id,
                                          config),
            "storage_embedded": await self.storage.configs.active_is_embedded(self.company_id),
            "profiles": [p["name"] for p in await self.storage.configs.profiles(self.company_id)],
            "linkmap_size": len(await self.storage.linkmap.get(self.company_id)),
            "limits": {"max_upload_bytes": st.max_upload_bytes,
                       "max_markdown_bytes": st.max_markdown_bytes,
                       "job_timeout_seconds": st.job_timeout_seconds},
            "folder_roots": [str(p) for p in await roots_for(self.services, self.company_id)],
        })


class ProfilesHandler(PlainHandler):
    admin_methods = frozenset({"GET"})

    async def get(self) -> None:
        self.reply({"ok": True, "profiles": await profile_views(
            self.storage.configs, self.caller, self.company_id)})


def _profile_name(raw: str | None) -> str:
    name = (raw or "").strip()
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise PlainError(400, "profile name must be 1-64 letters, digits, '-', '_' or '.'")
    return name


class SaveProfileHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = self.form()
        name = _profile_name(fields.get("name"))
        if fields.get("endpoint"):
            config = await self.config_from_form(fields)
        else:
            config = await self.storage.configs.active_config(self.company_id)
            if config is None:
                raise PlainError(400, "no storage configured to save",
                                 "send the storage fields or configure storage first")
        await self.storage.configs.save_profile(self.company_id, name, config)
        self.reply({"ok": True, "name": name, "storage": await storage_view(
            self.storage.configs, self.caller, self.company_id, config, active=False)})


class LoadProfileHandler(PlainHandler):
    """Makes a saved profile active: ``POST`` (form or query ``name``), or the older ``GET``
    (query ``name``), which changes state and so is refused without an ``Authorization``
    header or ``Sec-Fetch-Site: same-origin`` (a cross-site page can make a browser send a
    GET, and under ``DOCS_AUTH=none`` no credential would stop it)."""

    admin_methods = frozenset({"GET", "POST"})

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()  # the caller first: without one, 401 as everywhere
        if state_changing_get_refused(self.request):
            raise PlainError(403, STATE_CHANGING_GET_REFUSED,
                             "POST /config/load_profile from a script sending its credential")

    async def get(self) -> None:
        await self._load(self.get_query_argument("name", ""))

    async def post(self) -> None:
        fields, _ = self.form()
        await self._load(fields.get("name", ""))

    async def _load(self, raw_name: str) -> None:
        name = _profile_name(raw_name)
        config = await self.storage.configs.load_profile(self.company_id, name)
        if config is None:
            raise PlainError(404, f"no profile named {name!r}")
        await self.storage.configs.set_active(self.company_id, config,
                                              embedded=name == EMBEDDED_PROFILE)
        self.reply({"ok": True, "name": name, "storage": await storage_view(
            self.storage.configs, self.caller, self.company_id, config)})


def _storable(text: str) -> bool:
    """MongoDB stores UTF-8 text without NUL in keys; refuse what it cannot store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def _parse_linkmap(raw: Any) -> dict[str, str]:
    if isinstance(raw, dict) and isinstance(raw.get("map"), dict):
        raw = raw["map"]
    if not isinstance(raw, dict):
        raise PlainError(400, "link map must be a JSON object of original -> URL")
    if len(raw) > MAX_LINKMAP_ENTRIES:
        raise PlainError(413, f"link map has more than {MAX_LINKMAP_ENTRIES} entries")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(value, str) or not key or len(key) > 2048 or len(value) > 4096:
            raise PlainError(400, "every link map entry maps a non-empty string to a URL string")
        if not (_storable(key) and _storable(value)):
            raise PlainError(400, "link map entries may not hold NUL or unpaired surrogates")
        if not is_safe_link(value):
            raise PlainError(400, f"link map value of {key[:100]!r} is not an allowed link",
                             "use an http, https or mailto URL, or a relative reference")
        out[key] = value
    return out


class LinkMapHandler(PlainHandler):
    admin_methods = frozenset({"GET", "POST"})

    async def get(self) -> None:
        mapping = await self.storage.linkmap.get(self.company_id)
        self.reply({"ok": True, "count": len(mapping), "map": mapping})

    async def post(self) -> None:
        if self.request.headers.get("Content-Type", "").startswith("application/json"):
            try:
                raw = load_json(b"".join(self._chunks) or b"null")
            except JsonTooDeep as exc:
                raise PlainError(400, str(exc)) from exc
            except ValueError as exc:
                raise PlainError(400, "body is not valid JSON") from exc
            if self._over:
                raise PlainError(413, "link map is too large")
        else:
            fields, _ = self.form()
            text = fields.get("linkmap") or fields.get("map") or ""
            try:
                raw = load_json(text)
            except JsonTooDeep as exc:
                raise PlainError(400, str(exc)) from exc
            except ValueError as exc:
                raise PlainError(400, "linkmap field is not valid JSON") from exc
        mapping = _parse_linkmap(raw)
        await self.storage.linkmap.replace(self.company_id, mapping)
        self.reply({"ok": True, "count": len(mapping)})


class ProxyDownloadHandler(PlainHandler):
    """Streams one object of the caller's company in the configured storage, as an attachment
    (never rendered inline); any other host, bucket or company answers like a missing one."""

    async def post(self) -> None:
        fields, _ = self.form()
        store = await self.storage.store(self.company_id)
        key = (fields.get("key") or "").strip()
        url = (fields.get("url") or "").strip()
        if not key and url:
            key = store_key_from_url(store.config, url)
        if not key:
            raise PlainError(400, "send url (a link of the configured storage) or key")
        if any(p in ("", ".", "..") for p in key.split("/")) or any(
                ord(c) < 32 or ord(c) == 127 for c in key):
            raise PlainError(400, "bad object key")
        if not key.startswith(store.config.prefix + "/"):
            raise PlainError(404, NO_SUCH_OBJECT)  # another company's: the same as missing
        await self.check_endpoint(store.config.endpoint)
        try:
            stream = await self.storage.io(store.get_stream, key)
        except StorageError as exc:
            if "NoSuchKey" in exc.message or "not found" in exc.message.lower():
                raise PlainError(404, NO_SUCH_OBJECT) from exc
            raise PlainError(502, exc.message, exc.hint) from exc
        try:
            self.set_header("Content-Type", stream.content_type or "application/octet-stream")
            if stream.length is not None:
                self.set_header("Content-Length", str(stream.length))
            name = key.rsplit("/", 1)[-1]
            from tornado_app.documents.markdown import content_disposition

            self.set_header("Content-Disposition", content_disposition(name))
            iterator = stream.chunks()
            while True:
                chunk = await self.storage.io(next, iterator, None)
                if chunk is None:
                    break
                self.write(chunk)
                await self.flush()
        finally:
            stream.close()
        self.finish()


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
