"""Passwords people can change: their own (knowing the old one) and, for an ADMIN, those
of the company's users. New hashes use the current argon2 parameters; the cached profile
is evicted and sessions end: all the user's other sessions on a change (the current one
stays), every session of the user on a reset."""

from __future__ import annotations

from typing import TYPE_CHECKING

from store import companies, users
from store.audit import Who
from tornado_app.api_errors import ApiError
from tornado_app.auth import activity, throttling
from tornado_app.auth.passwords import HasherBusy
from tornado_app.auth.service import UNAUTHORIZED, Principal

if TYPE_CHECKING:
    from tornado_app.services import Services


async def _hash(svc: Services, password: str) -> str:
    try:
        return await svc.passwords.hash(password)
    except HasherBusy as exc:
        raise ApiError(429, "RATE_LIMITED", "busy; try again shortly",
                       {"Retry-After": "1"}) from exc


async def change_own(svc: Services, principal: Principal, *, old_password: str,
                     new_password: str, address: str) -> None:
    """``PUT /api/auth/password``: the old password is checked with login's throttling
    (same counters: guesses here and at login add up)."""
    user = await users.get_user(svc.db, principal.company_id, principal.user_id)
    company = await companies.get_by_id(svc.db, principal.company_id)
    if user is None or company is None:
        raise UNAUTHORIZED
    keys = throttling.keys_for(company.code, user.username, address)

    def audit(outcome: str) -> None:
        activity.record(svc, company_id=company.id, action="password.change", outcome=outcome,
                        actor=principal.who(), target=principal.who(), address=address)

    try:
        await throttling.check(svc, keys)
    except ApiError:
        audit("throttled")
        raise
    try:
        ok = await svc.passwords.verify(user.password_hash, old_password)
    except HasherBusy as exc:
        raise ApiError(429, "RATE_LIMITED", "busy; try again shortly",
                       {"Retry-After": "1"}) from exc
    if not ok:
        failure = await throttling.failed(svc, keys)
        audit("wrong_password")
        raise ApiError(400, "WRONG_PASSWORD", "the current password is not right",
                       details=failure.details())
    await throttling.succeeded(svc, keys)
    new_hash = await _hash(svc, new_password)
    if await users.set_password_hash(svc.db, company.id, user.id, new_hash) is None:
        raise UNAUTHORIZED
    await svc.sessions.evict_permissions(user.id)
    await svc.sessions.delete_all_for_user(user.id, keep=principal.token)
    audit("success")


async def reset(svc: Services, principal: Principal, user_id: int, *, password: str,
                address: str) -> None:
    """``PUT /api/users/{id}/password`` (ADMIN): every session of that user ends. Another
    company's user answers 404 like a missing one."""
    new_hash = await _hash(svc, password)
    updated = await users.set_password_hash(svc.db, principal.company_id, user_id, new_hash)
    if updated is None:
        raise ApiError(404, "NOT_FOUND", "no such user")
    await svc.sessions.evict_permissions(user_id)
    await svc.sessions.delete_all_for_user(user_id)
    activity.record(svc, company_id=principal.company_id, action="password.reset",
                    outcome="success", actor=principal.who(),
                    target=Who(user_id, updated.username), address=address)
