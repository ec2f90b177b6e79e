"""The links the service answers for stored objects and writes into stored documents, one
decision for ``save=true`` results and for batches (``STORAGE_LINKS``):

- ``service`` (default): ``{PUBLIC_BASE_URL}/proxy/object/{company}/{token}/{key}``, this
  service's own download address. The token (``store.link_keys``) is a signature of that one
  object of that company; it never expires, opens after a restart and on any replica, and
  names no storage host (the built-in storage's loopback port stays private).
- ``presigned``: the storage's own links, as before: the presigned one (valid
  ``PRESIGN_EXPIRY_SECONDS``, the answer says until when in ``storage_link_expires_at``)
  written into documents unless the bucket is public-read.
- ``direct``: the bucket's plain links, only while the company's storage has ``public_read``
  and an anonymous read of a test object really succeeds; otherwise ``service`` links with a
  warning, so a private bucket never gets links that answer AccessDenied.

Neither storage kind names a loopback storage address unless the service itself is reached on
loopback: a storage at ``127.0.0.1:<port>`` (the built-in one, or ``S3_ENDPOINT`` on the same
machine without a public address) opens for nobody elsewhere, so its links are ``service``
links then, with a warning saying why.

A :class:`LinkMaker` is made once per request or batch (:func:`link_maker`, on the event
loop) and then used anywhere, storage threads included: it does no I/O.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from store.link_keys import TOKEN_CHARS, link_token, token_matches
from store.objects import ObjectStore
from store.storage_errors import StorageError
from store.storage_io import StorageIO
from tornado_app import request_base
from tornado_app.services import Services

log = logging.getLogger(__name__)

ROUTE_PREFIX = "/proxy/object"
ROUTE = rf"{ROUTE_PREFIX}/([A-Za-z0-9_-]{{1,64}})/([A-Za-z0-9_-]+)/(.+)"
FALLBACK_BASE = "http://127.0.0.1:8080"  # `serve`'s default address
PUBLIC_CHECK_SECONDS = 300.0  # a verified public bucket is checked again after this
_now = time.time  # the clock of `storage_link_expires_at` (tests move it)
_public_checked: dict[tuple[Any, ...], tuple[float, bool]] = {}


@dataclass(frozen=True)
class LinkMaker:
    """Makes the links of one company's objects in one store, of the kind in use."""

    kind: str  # "service", "presigned" or "direct": the kind really made
    store: ObjectStore
    company_id: str
    base: str  # scheme://host[/path] of this service, no trailing slash
    secret: bytes
    warnings: tuple[str, ...] = ()

    def service_url(self, key: str) -> str:
        """The service's own durable link of ``key`` (a key of this company's prefix)."""
        prefix = self.store.config.prefix + "/"
        if not key.startswith(prefix):
            raise ValueError(f"object key {key!r} is not the company's")
        token = link_token(self.secret, self.store.config.bucket, key)
        rel = quote(key[len(prefix):], safe="/")
        return f"{self.base}{ROUTE_PREFIX}/{self.company_id}/{token}/{rel}"

    def for_documents(self, key: str) -> str:
        """The link of ``key`` written into stored documents."""
        if self.kind == "service":
            return self.service_url(key)
        if self.kind == "direct" or self.store.config.public_read:
            return self.store.direct_url(key)
        return self.store.presigned_url(key)

    def pair(self, key: str) -> dict[str, Any]:
        """The answer's fields for a stored object: ``storage_url``,
        ``storage_presigned_url`` (both the durable link with ``service``, both the plain one
        with ``direct``), ``storage_link_kind`` and ``storage_link_expires_at`` (ISO time the
        presigned link stops opening, or None: the links do not expire)."""
        if self.kind == "service":
            url = self.service_url(key)
            return {"storage_url": url, "storage_presigned_url": url,
                    "storage_link_kind": "service", "storage_link_expires_at": None}
        if self.kind == "direct":
            url = self.store.direct_url(key)
            return {"storage_url": url, "storage_presigned_url": url,
                    "storage_link_kind": "direct", "storage_link_expires_at": None}
        until = datetime.fromtimestamp(_now() + self.store.expiry.total_seconds(), UTC)
        return {"storage_url": self.store.direct_url(key),
                "storage_presigned_url": self.store.presigned_url(key),
                "storage_link_kind": "presigned",
                "storage_link_expires_at": until.isoformat(timespec="seconds")}


def service_base(svc: Services) -> str:
    """Where clients reach this service: ``PUBLIC_BASE_URL``, else the address of the request
    in hand (or the one this process last served), else ``serve``'s default address."""
    configured = svc.settings.public_base_url  # checked when the settings are read
    return (configured or request_base.current() or FALLBACK_BASE).rstrip("/")


async def _public_read_verified(svc: Services, store: ObjectStore) -> bool:
    """True when the store's direct links open anonymously (checked with a test object,
    remembered for :data:`PUBLIC_CHECK_SECONDS`)."""
    if not store.config.public_read:
        return False
    config_id = tuple(sorted(store.config.to_dict().items()))
    seen = _public_checked.get(config_id)
    if seen is not None and time.monotonic() - seen[0] < PUBLIC_CHECK_SECONDS:
        return seen[1]
    checked = await _storage(svc).io(store.verify_public_read)
    ok = bool(checked.get("ok"))
    _public_checked[config_id] = (time.monotonic(), ok)
    return ok


def _on_loopback(address: str) -> bool:
    """True when ``address`` (``scheme://host[:port]...`` or ``host[:port]``) names this
    machine only: a loopback IP or ``localhost``."""
    host = urlsplit(address if "//" in address else f"//{address}").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def link_maker(svc: Services, company_id: str, store: ObjectStore) -> LinkMaker:
    """The link maker of ``company_id``'s ``store`` for the kind ``STORAGE_LINKS`` names
    (``presigned`` and ``direct`` fall back to ``service`` when the storage's address is
    loopback and the service's is not; ``direct`` also when the bucket is not verified
    public)."""
    secret = await _storage(svc).link_keys.get(company_id, create=True)
    assert secret is not None  # made when missing
    maker = LinkMaker(svc.settings.storage_links, store, company_id, service_base(svc), secret)
    storage_address = store.config.public or store.config.endpoint
    if (maker.kind != "service" and _on_loopback(storage_address)
            and not _on_loopback(maker.base)):
        warning = (f"{maker.kind} links were not used: the storage is reached at a loopback "
                   "address, which nobody on another machine can open; the links go through "
                   "this service instead")
        log.warning("storage links on loopback refused", extra={"company": company_id})
        return replace(maker, kind="service", warnings=(warning,))
    if maker.kind == "direct" and not await _public_read_verified(svc, store):
        warning = ("direct links were not used: the bucket does not allow anonymous reads "
                   "(an anonymous read of a test object failed, or public_read is off); the "
                   "links go through this service instead")
        log.warning("direct links refused", extra={"company": company_id})
        maker = replace(maker, kind="service", warnings=(warning,))
    return maker


async def linked_key(svc: Services, company_id: str, token: str, rel: str) -> str | None:
    """The object key a service link names (``rel``: the part after the company's prefix),
    or None when ``token`` is not that object's, of that company, in the company's current
    storage (the link then answers exactly like a missing object)."""
    storage = _storage(svc)
    secret = (await storage.link_keys.get(company_id, create=False)
              if len(token) == TOKEN_CHARS else None)
    if secret is None:
        return None
    try:
        store = await storage.store(company_id)
    except StorageError:
        return None
    key = f"{store.config.prefix}/{rel}"
    return key if token_matches(secret, store.config.bucket, key, token) else None


def _storage(svc: Services) -> StorageIO:
    """The storage layer (a caller of this module has checked there is one)."""
    if svc.storage is None:
        raise StorageError("storage not configured", "configure it at /config/storage")
    return svc.storage
