"""Who is calling: one identity model for both faces of the service.

A caller of the conversion face is a session (the same Bearer token as the auth face,
validated the same way, so a disabled user or a changed role applies at the next request),
a company API key (``dsk_...``, working while the user who made it is active, with the
lower of its own role and that user's current role), the operator token
(``DOCS_API_TOKEN``, service to service) or, with ``DOCS_AUTH=none`` on a loopback-only
service, the single local user. The auth face accepts sessions and API keys
(:func:`auth_principal`).

Contract with the tenancy work: ``DocsHandler.caller`` is set in ``prepare()`` before any
handler code runs; ``company_id`` is the tenant handlers pass to services and stores.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store import api_keys
from tornado_app import key_audit
from tornado_app.api_errors import ApiError
from tornado_app.auth.fields import is_canonical_uuid
from tornado_app.auth.service import UNAUTHORIZED, Principal, authenticate, authenticate_token

if TYPE_CHECKING:
    from tornado_app.services import Services

ROLES = ("ADMIN", "REVIEWER", "ANNOTATOR")
_RANK = {"ADMIN": 3, "REVIEWER": 2, "ANNOTATOR": 1}  # anything else ranks below them all
OPERATOR_COMPANY = "_operator"
LOCAL_COMPANY = "_local"

NO_CALLER = ApiError(401, "UNAUTHORIZED",
                     "sign in or send Authorization: Bearer <session token or API key>")


@dataclass(frozen=True)
class Caller:
    """The caller of one docs request, as the handlers and services see it."""

    kind: str  # "session" | "api_key" | "operator" (DOCS_API_TOKEN) | "local" (DOCS_AUTH=none)
    company_id: str  # str(company id) for session/api_key; "_operator" / "_local" otherwise
    role: str  # "ADMIN" | "REVIEWER" | "ANNOTATOR"; operator and local act as ADMIN
    user_id: str | None = None
    key_id: str | None = None
    username: str = ""  # a session's user, as the audit trail names them

    @property
    def is_admin(self) -> bool:
        return self.role == "ADMIN"


def bearer_value(header: str | None) -> str:
    """The credential of an ``Authorization: Bearer ...`` header ('' when there is none)."""
    scheme, _, value = (header or "").strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def _is_operator(svc: Services, value: str) -> bool:
    expected = svc.settings.docs_api_token
    return bool(expected) and hmac.compare_digest(value.encode("utf-8", "replace"),
                                                  expected.encode("utf-8"))


def lower_role(a: str, b: str) -> str:
    """The lower of two roles (ADMIN > REVIEWER > ANNOTATOR; an unknown one is lowest)."""
    return a if _RANK.get(a, 0) <= _RANK.get(b, 0) else b


@dataclass(frozen=True)
class Maker:
    """A key's maker as of this request (from the per-user cache)."""

    user_id: int
    role: str  # '' when the user or the company is gone
    status: str  # "ACTIVE" | "DISABLED" | '' when gone

    @property
    def active(self) -> bool:
        return self.status == "ACTIVE"


@dataclass(frozen=True)
class LiveKey:
    """A key that works now and the role it acts with: the lower of its own role and its
    maker's current role (its own role when it has no maker)."""

    key: api_keys.ApiKey
    role: str


async def maker_of(svc: Services, key: api_keys.ApiKey) -> Maker | None:
    """The key's maker's current role and status (None: a key without a maker). Read like a
    session's user: from the per-user profile cache (one Redis round trip, the same one that
    reads the status), refilled from MongoDB on a miss; a disable or a role change evicts the
    entry, so either applies at the key's very next request."""
    if key.created_by is None:  # made by the command line or a seed: nobody to check
        return None
    info = await svc.sessions.cached_user(key.created_by, key.company_id)
    if info.role:
        svc.profiles.refresh_ahead(svc.db, info)
        return Maker(key.created_by, info.role, info.status)
    profile = await svc.profiles.load(svc.db, info)
    if profile is None:
        return Maker(key.created_by, "", "")
    return Maker(key.created_by, profile.role, profile.status)


async def owner_active(svc: Services, key: api_keys.ApiKey) -> bool:
    """True unless the key's owner is disabled or gone (:func:`maker_of`)."""
    maker = await maker_of(svc, key)
    return maker is None or maker.active


async def live_key(svc: Services, value: str, address: str = "") -> LiveKey:
    """The key ``value`` if it works now (known, not expired, its maker active; 401
    otherwise) with the role it acts with now. Records its use; a refusal for the maker, a
    use below the key's own role and a revoked key's use also go to the audit trail
    (``tornado_app.key_audit``)."""
    key = await api_keys.find_by_secret(svc.db, value, record=False)
    if key is None:
        await key_audit.revoked_use(svc, value, address)
        raise ApiError(401, "UNAUTHORIZED", "unknown, revoked or expired API key")
    maker = await maker_of(svc, key)
    if maker is not None and not maker.active:
        await key_audit.notice(svc, key, "owner_disabled", address=address,
                               detail={"makerStatus": maker.status or "GONE"})
        raise ApiError(401, "UNAUTHORIZED", "the user who made this API key is disabled; "
                                            "the key works again once they are enabled")
    role = key.role if maker is None else lower_role(key.role, maker.role)
    if maker is not None and role != key.role:
        await key_audit.notice(svc, key, "role_capped", address=address,
                               detail={"makerRole": maker.role, "role": role})
    await api_keys.record_use(svc.db, key)
    return LiveKey(key, role)


async def identify(svc: Services, header: str | None, address: str = "") -> Caller:
    """Resolve the caller of a docs request from its Authorization header; 401 otherwise.
    ``address`` (the client's) goes to the audit records of API keys."""
    if svc.settings.docs_auth == "none":
        return Caller("local", LOCAL_COMPANY, "ADMIN")
    value = bearer_value(header)
    if not value:
        raise NO_CALLER
    if _is_operator(svc, value):
        return Caller("operator", OPERATOR_COMPANY, "ADMIN")
    if value.startswith(api_keys.KEY_PREFIX):
        live = await live_key(svc, value, address)
        return Caller("api_key", str(live.key.company_id), live.role, key_id=live.key.id)
    try:
        principal = await authenticate(svc, header)
    except ApiError as exc:
        if exc.status == 401:
            raise NO_CALLER from exc
        raise
    return Caller("session", str(principal.company_id), principal.role,
                  user_id=str(principal.user_id), username=principal.username)


def require_admin(caller: Caller) -> None:
    """403 unless the caller acts as ADMIN."""
    if not caller.is_admin:
        raise ApiError(403, "FORBIDDEN", "this action needs role ADMIN")


async def auth_principal(svc: Services, header: str | None, address: str = "") -> Any:
    """The principal of an auth-face request: a session, or an API key acting in its company
    with the role :func:`live_key` gives it (``user_id`` 0, ``key_id`` set)."""
    value = bearer_value(header)
    if value.startswith(api_keys.KEY_PREFIX):
        live = await live_key(svc, value, address)
        return Principal("", 0, live.key.company_id, live.role, key_id=live.key.id)
    # what authenticate(svc, header) would take from the header: the Bearer value, when it
    # is a session token's shape (anything else is refused unseen)
    if not is_canonical_uuid(value):
        raise UNAUTHORIZED
    return await authenticate_token(svc, value)


def is_loopback_host(host: str) -> bool:
    """True for addresses that only this machine can reach (``localhost``, 127/8, ::1)."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen_address(settings: Any, host: str) -> None:
    """Refuse to start with ``DOCS_AUTH=none`` unless the service listens on loopback only."""
    if settings.docs_auth == "none" and not is_loopback_host(host):
        raise ValueError(
            f"DOCS_AUTH=none turns caller auth off and is for a single user on this machine "
            f"only: listen on 127.0.0.1 or ::1 (--host), not {host or 'all addresses'!r}")
