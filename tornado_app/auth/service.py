"""Auth and user-administration rules, free of HTTP: handlers call these functions.

Tenant isolation: every function takes the caller's ``company_id`` and never reaches a
user of another company; such a user answers exactly like a missing one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store import api_keys, companies, users
from store.audit import Who
from store.sessions import CompanyLock, Profile
from store.usernames import mixed_scripts
from tornado_app.api_errors import ApiError
from tornado_app.auth import activity, throttling
from tornado_app.auth.fields import is_canonical_uuid
from tornado_app.auth.passwords import HasherBusy

if TYPE_CHECKING:
    from tornado_app.services import Services

UNAUTHORIZED = ApiError(401, "UNAUTHORIZED", "missing, invalid or expired session token")


@dataclass(frozen=True)
class Principal:
    """The caller behind a valid session, with role/status and profile as of this request."""

    token: str
    user_id: int
    company_id: int
    role: str
    username: str = ""
    real_name: str = ""
    company_name: str = ""
    key_id: str | None = None  # set for a company API key (then user_id is 0, token '')

    def who(self) -> Who:
        """The actor as the audit trail records it (an API key by its id)."""
        if self.key_id:
            return Who(None, f"api-key:{self.key_id}")
        return Who(self.user_id, self.username)


def token_from_header(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <uuid>`` header (scheme case-insensitive)."""
    if not header:
        raise UNAUTHORIZED
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not is_canonical_uuid(token):
        raise UNAUTHORIZED
    return token


async def authenticate(svc: Services, header: str | None) -> Principal:
    """Resolve the caller. Warm: one Redis round trip (session, cached role, status and
    profile, and their versions), no MongoDB read. Cold: the user and the company are read
    from MongoDB and cached, unless a change evicted them meanwhile (one read per user at a
    time; an entry near its end is renewed in the background: ``auth.profiles``)."""
    return await authenticate_token(svc, token_from_header(header))


async def authenticate_token(svc: Services, token: str) -> Principal:
    """:func:`authenticate` for a token already taken from its header (a canonical UUID)."""
    info = await svc.sessions.lookup(token)
    if info is None:
        raise UNAUTHORIZED
    if info.role and info.username:  # warm: the principal straight from the cached profile
        svc.profiles.refresh_ahead(svc.db, info)
        if info.status != "ACTIVE":
            raise UNAUTHORIZED
        return Principal(token, info.user_id, info.company_id, info.role, info.username,
                         info.real_name, info.company_name)
    profile: Profile | None = await svc.profiles.load(svc.db, info)
    if profile is None:  # the user or the company is gone
        await svc.sessions.delete(token, info.user_id)
        raise UNAUTHORIZED
    if profile.status != "ACTIVE":
        raise UNAUTHORIZED
    return Principal(token, info.user_id, info.company_id, profile.role, profile.username,
                     profile.real_name, profile.company_name)


def require_role(principal: Principal, role: str) -> None:
    if principal.role != role:
        raise ApiError(403, "FORBIDDEN", f"this action needs role {role}")


def _busy(exc: HasherBusy) -> ApiError:
    return ApiError(429, "RATE_LIMITED", "too many logins at once; try again shortly",
                    {"Retry-After": "1"})


async def login(
    svc: Services, *, company_code: str, username: str, password: str, address: str
) -> dict[str, Any]:
    """Check the credentials and start a session. Wrong company, user or password all
    answer the same 401 after the same amount of work."""
    keys = throttling.keys_for(company_code, username, address)
    company = user = None

    def audit(outcome: str) -> None:
        who = Who(user.id, user.username) if user else Who(None, username)
        activity.record(svc, company_id=company.id if company else None, action="login",
                        outcome=outcome, actor=who, target=who, address=address)

    try:
        await throttling.check(svc, keys)
    except ApiError:
        company = await companies.get_by_code(svc.db, company_code)
        audit("throttled")
        raise
    company = await companies.get_by_code(svc.db, company_code)
    user = await users.find_by_username(svc.db, company.id, username) if company else None
    try:
        ok = await svc.passwords.verify(user.password_hash if user else None, password)
    except HasherBusy as exc:
        raise _busy(exc) from exc
    if not ok or user is None or company is None:
        failure = await throttling.failed(svc, keys)
        audit("wrong_password")
        raise ApiError(401, "USER_NOT_FOUND", "wrong username or password",
                       details=failure.details())
    if user.status != "ACTIVE":
        audit("disabled")
        raise ApiError(403, "USER_DISABLED", "this account is disabled")
    await throttling.succeeded(svc, keys)
    if svc.passwords.needs_rehash(user.password_hash):
        new_hash = await svc.passwords.hash(password)
        await users.update_fields(svc.db, company.id, user.id, {"passwordHash": new_hash})
    token = await svc.sessions.create(user.id, company.id)
    audit("success")
    return {
        "token": token, "userId": user.id, "username": user.username, "role": user.role,
        "expiresIn": svc.settings.session_ttl_seconds,
    }


async def logout(svc: Services, principal: Principal, address: str = "") -> None:
    await svc.sessions.delete(principal.token, principal.user_id)
    activity.record(svc, company_id=principal.company_id, action="logout", outcome="success",
                    actor=principal.who(), target=principal.who(), address=address)


def own_profile(principal: Principal) -> dict[str, Any]:
    """What ``me`` answers for a principal that carries its profile (``username`` set)."""
    return {
        "id": principal.user_id, "username": principal.username,
        "realName": principal.real_name, "role": principal.role,
        "companyId": principal.company_id, "companyName": principal.company_name,
    }


async def me(svc: Services, principal: Principal) -> dict[str, Any]:
    """The caller's profile, straight from the principal (the per-user cache)."""
    if not principal.username:  # a principal built without a profile: read it
        user, company = await asyncio.gather(
            users.get_user(svc.db, principal.company_id, principal.user_id),
            companies.get_by_id(svc.db, principal.company_id))
        if user is None or company is None:
            raise UNAUTHORIZED
        return {"id": user.id, "username": user.username, "realName": user.real_name,
                "role": user.role, "companyId": company.id, "companyName": company.name}
    return own_profile(principal)


async def list_users(
    svc: Services, principal: Principal, *, role: str | None, status: str | None, page: int,
    page_size: int,
) -> dict[str, Any]:
    page_size = min(page_size, 100)
    items, total = await users.list_users(
        svc.db, principal.company_id, role=role, status=status, page=page, page_size=page_size)
    return {
        "items": [
            {k: u.public()[k] for k in ("id", "username", "realName", "role", "status")}
            for u in items
        ],
        "total": total, "page": page, "pageSize": page_size,
    }


async def create_user(
    svc: Services, principal: Principal, *, username: str, password: str, real_name: str,
    role: str, address: str = "",
) -> dict[str, Any]:
    """Create a user of the caller's company. A name that looks like a taken one (same
    canonical key: ``Admin``, fullwidth or Cyrillic look-alikes) is 409 ``USERNAME_EXISTS``;
    a name mixing writing systems is 400 even when nothing looks like it yet."""
    def audit(outcome: str, user_id: int | None = None) -> None:
        activity.record(svc, company_id=principal.company_id, action="user.create",
                        outcome=outcome, actor=principal.who(), target=Who(user_id, username),
                        address=address, detail={"role": role})

    if await users.find_by_username(svc.db, principal.company_id, username):
        audit("username_exists")
        raise ApiError(409, "USERNAME_EXISTS", "this username (or one that looks like it) "
                                               "is taken")
    password_hash = await new_account_hash(svc, username, password)
    try:
        user = await users.create_user(
            svc.db, company_id=principal.company_id, username=username,
            password_hash=password_hash, real_name=real_name, role=role)
    except users.UsernameExists as exc:
        audit("username_exists")
        raise ApiError(409, "USERNAME_EXISTS", "this username (or one that looks like it) "
                                               "is taken") from exc
    audit("success", user.id)
    return user.public()


async def _existing(svc: Services, principal: Principal, user_id: int) -> users.User:
    user = await users.get_user(svc.db, principal.company_id, user_id)
    if user is None:
        raise ApiError(404, "NOT_FOUND", "no such user")
    return user


async def rename_user(svc: Services, principal: Principal, user_id: int, real_name: str,
                      address: str = "") -> None:
    updated = await users.update_fields(
        svc.db, principal.company_id, user_id, {"realName": real_name})
    if updated is None:
        raise ApiError(404, "NOT_FOUND", "no such user")
    await svc.sessions.evict_permissions(user_id)
    activity.record(svc, company_id=principal.company_id, action="user.rename",
                    outcome="success", actor=principal.who(),
                    target=Who(user_id, updated.username), address=address)


async def _change_admin_state(
    svc: Services, principal: Principal, user_id: int, changes: dict[str, str], address: str = ""
) -> users.User:
    """Apply a role/status change under the company lock, refusing to remove the last
    active ADMIN; then evict the permission cache (MongoDB first, cache second)."""
    action = "user.role" if "role" in changes else "user.status"
    target = Who(user_id, "")
    try:
        target = Who(user_id, (await _existing(svc, principal, user_id)).username)
        updated = await _apply_admin_change(svc, principal, user_id, changes)
    except TimeoutError as exc:  # another admin change of this company holds the lock
        raise ApiError(503, "SERVICE_UNAVAILABLE", "another change is in progress; retry",
                       {"Retry-After": "1"}) from exc
    except ApiError as exc:
        if exc.status != 404:  # another company's user stays invisible, even here
            activity.record(svc, company_id=principal.company_id, action=action,
                            outcome=exc.code.lower(), actor=principal.who(), target=target,
                            address=address, detail=changes)
        raise
    activity.record(svc, company_id=principal.company_id, action=action, outcome="success",
                    actor=principal.who(), target=target, address=address, detail=changes)
    return updated


async def _apply_admin_change(
    svc: Services, principal: Principal, user_id: int, changes: dict[str, str]
) -> users.User:
    async with CompanyLock(svc.redis, principal.company_id):
        user = await _existing(svc, principal, user_id)
        after_role = changes.get("role", user.role)
        after_status = changes.get("status", user.status)
        loses_admin = user.role == "ADMIN" and user.status == "ACTIVE" and not (
            after_role == "ADMIN" and after_status == "ACTIVE")
        if loses_admin and await users.count_active_admins(svc.db, principal.company_id) <= 1:
            raise ApiError(409, "LAST_ADMIN", "the company must keep at least one active ADMIN")
        updated = await users.update_fields(svc.db, principal.company_id, user_id, changes)
        if updated is None:
            raise ApiError(404, "NOT_FOUND", "no such user")
    await svc.sessions.evict_permissions(user_id)
    return updated


async def set_status(svc: Services, principal: Principal, user_id: int, status: str,
                     address: str = "") -> None:
    await _change_admin_state(svc, principal, user_id, {"status": status}, address)
    if status == "DISABLED":
        await svc.sessions.delete_all_for_user(user_id)


async def set_role(svc: Services, principal: Principal, user_id: int, role: str,
                   address: str = "") -> None:
    await _change_admin_state(svc, principal, user_id, {"role": role}, address)


async def rename_company(svc: Services, company_id: int, name: str) -> None:
    """A new display name; every cached profile of the company is a miss at once."""
    if await companies.rename(svc.db, company_id, name) is None:
        raise ApiError(404, "NOT_FOUND", "no such company")
    await svc.sessions.evict_company(company_id)


async def key_me(svc: Services, principal: Principal) -> dict[str, Any]:
    """``GET /api/auth/me`` for an API key: the key's company and the role it acts with now
    (the lower of its own and its maker's current role; ``apiKey.role`` is its own), no
    user."""
    key, company = await asyncio.gather(
        api_keys.get_key(svc.db, principal.company_id, principal.key_id or ""),
        companies.get_by_id(svc.db, principal.company_id))
    if key is None or company is None:
        raise ApiError(401, "UNAUTHORIZED", "unknown, revoked or expired API key")
    return {
        "id": None, "username": None, "realName": key.name, "role": principal.role,
        "companyId": company.id, "companyName": company.name,
        "apiKey": {"id": key.id, "name": key.name, "prefix": key.prefix, "role": key.role},
    }


async def new_account_hash(svc: Services, username: str, password: str) -> str:
    """The password hash of an account about to be created, after the checks every new
    username passes (one writing system). 400 for a mixed-script name, 429 when the hashing
    pool is saturated."""
    if mixed_scripts(username):
        raise ApiError(400, "VALIDATION_ERROR",
                       "username mixes writing systems (for example Latin and Cyrillic)")
    try:
        return await svc.passwords.hash(password)
    except HasherBusy as exc:
        raise ApiError(429, "RATE_LIMITED", "busy; try again shortly",
                       {"Retry-After": "1"}) from exc
