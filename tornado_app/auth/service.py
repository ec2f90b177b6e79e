"""Auth and user-administration rules, free of HTTP: handlers call these functions.

Tenant isolation: every function takes the caller's ``company_id`` and never reaches a
user of another company; such a user answers exactly like a missing one.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import Any

from store import companies, users
from store.sessions import CompanyLock
from tornado_app.auth.fields import is_canonical_uuid
from tornado_app.auth.passwords import HasherBusy
from tornado_app.http import ApiError

UNAUTHORIZED = ApiError(401, "UNAUTHORIZED", "missing, invalid or expired session token")


@dataclass(frozen=True)
class Principal:
    """The caller behind a valid session, with role/status as of this request."""

    token: str
    user_id: int
    company_id: int
    role: str
    key_id: str | None = None  # set for a company API key (then user_id is 0, token '')


def token_from_header(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <uuid>`` header (scheme case-insensitive)."""
    if not header:
        raise UNAUTHORIZED
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not is_canonical_uuid(token):
        raise UNAUTHORIZED
    return token


async def authenticate(svc: Any, header: str | None) -> Principal:
    """Resolve the caller; role and status come from the permission cache or MongoDB."""
    token = token_from_header(header)
    info = await svc.sessions.lookup(token)
    if info is None:
        raise UNAUTHORIZED
    role, status = info.role, info.status
    if not role:
        user = await users.get_user(svc.db, info.company_id, info.user_id)
        if user is None:
            await svc.sessions.delete(token, info.user_id)
            raise UNAUTHORIZED
        role, status = user.role, user.status
        await svc.sessions.cache_permissions(user.id, info.perm_version, role, status)
    if status != "ACTIVE":
        raise UNAUTHORIZED
    return Principal(token, info.user_id, info.company_id, role)


def require_role(principal: Principal, role: str) -> None:
    if principal.role != role:
        raise ApiError(403, "FORBIDDEN", f"this action needs role {role}")


def _throttle_keys(company_code: str, username: str, address: str) -> tuple[str, str]:
    account = hashlib.sha256(f"{company_code}\x00{username}".encode()).hexdigest()[:32]
    return f"fail:a:{account}", f"fail:ip:{address}"


async def login(
    svc: Any, *, company_code: str, username: str, password: str, address: str
) -> dict[str, Any]:
    """Check the credentials and start a session. Wrong company, user or password all
    answer the same 401 after the same amount of work."""
    st = svc.settings
    account_key, address_key = _throttle_keys(company_code, username, address)
    for key, limit in ((account_key, st.account_failure_limit),
                       (address_key, st.address_failure_limit)):
        wait = await svc.throttle.blocked_for(key, limit)
        if wait:
            svc.metrics.logins_throttled.inc()
            raise ApiError(429, "RATE_LIMITED", "too many failed logins; try again later",
                           {"Retry-After": str(wait)})
    company = await companies.get_by_code(svc.db, company_code)
    user = await users.find_by_username(svc.db, company.id, username) if company else None
    try:
        ok = await svc.passwords.verify(user.password_hash if user else None, password)
    except HasherBusy as exc:
        raise ApiError(429, "RATE_LIMITED", "too many logins at once; try again shortly",
                       {"Retry-After": "1"}) from exc
    if not ok or user is None or company is None:
        await svc.throttle.record_failure(account_key, st.account_failure_window_seconds)
        await svc.throttle.record_failure(address_key, st.address_failure_window_seconds)
        svc.metrics.logins_failed.inc()
        raise ApiError(401, "USER_NOT_FOUND", "wrong username or password")
    if user.status != "ACTIVE":
        raise ApiError(403, "USER_DISABLED", "this account is disabled")
    await svc.throttle.reset(account_key)
    if svc.passwords.needs_rehash(user.password_hash):
        new_hash = await svc.passwords.hash(password)
        await users.update_fields(svc.db, company.id, user.id, {"passwordHash": new_hash})
    token = await svc.sessions.create(user.id, company.id)
    return {
        "token": token, "userId": user.id, "username": user.username, "role": user.role,
        "expiresIn": st.session_ttl_seconds,
    }


async def logout(svc: Any, principal: Principal) -> None:
    await svc.sessions.delete(principal.token, principal.user_id)


async def me(svc: Any, principal: Principal) -> dict[str, Any]:
    user, company = await asyncio.gather(
        users.get_user(svc.db, principal.company_id, principal.user_id),
        companies.get_by_id(svc.db, principal.company_id))
    if user is None or company is None:
        raise UNAUTHORIZED
    return {
        "id": user.id, "username": user.username, "realName": user.real_name,
        "role": user.role, "companyId": company.id, "companyName": company.name,
    }


async def list_users(
    svc: Any, principal: Principal, *, role: str | None, status: str | None, page: int,
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
    svc: Any, principal: Principal, *, username: str, password: str, real_name: str, role: str
) -> dict[str, Any]:
    try:
        password_hash = await svc.passwords.hash(password)
    except HasherBusy as exc:
        raise ApiError(429, "RATE_LIMITED", "busy; try again shortly",
                       {"Retry-After": "1"}) from exc
    try:
        user = await users.create_user(
            svc.db, company_id=principal.company_id, username=username,
            password_hash=password_hash, real_name=real_name, role=role)
    except users.UsernameExists as exc:
        raise ApiError(409, "USERNAME_EXISTS", "this username is taken") from exc
    return user.public()


async def _existing(svc: Any, principal: Principal, user_id: int) -> users.User:
    user = await users.get_user(svc.db, principal.company_id, user_id)
    if user is None:
        raise ApiError(404, "NOT_FOUND", "no such user")
    return user


async def rename_user(svc: Any, principal: Principal, user_id: int, real_name: str) -> None:
    if await users.update_fields(
        svc.db, principal.company_id, user_id, {"realName": real_name}
    ) is None:
        raise ApiError(404, "NOT_FOUND", "no such user")


async def _change_admin_state(
    svc: Any, principal: Principal, user_id: int, changes: dict[str, str]
) -> users.User:
    """Apply a role/status change under the company lock, refusing to remove the last
    active ADMIN; then evict the permission cache (MongoDB first, cache second)."""
    try:
        return await _apply_admin_change(svc, principal, user_id, changes)
    except TimeoutError as exc:  # another admin change of this company holds the lock
        raise ApiError(503, "SERVICE_UNAVAILABLE", "another change is in progress; retry",
                       {"Retry-After": "1"}) from exc


async def _apply_admin_change(
    svc: Any, principal: Principal, user_id: int, changes: dict[str, str]
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


async def set_status(svc: Any, principal: Principal, user_id: int, status: str) -> None:
    await _change_admin_state(svc, principal, user_id, {"status": status})
    if status == "DISABLED":
        await svc.sessions.delete_all_for_user(user_id)


async def set_role(svc: Any, principal: Principal, user_id: int, role: str) -> None:
    await _change_admin_state(svc, principal, user_id, {"role": role})
