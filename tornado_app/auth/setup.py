"""First run: the first company and its ADMIN, from a one-time setup token.

``serve`` with no company creates a token (``store.setup_tokens``) and prints the setup
address; ``POST /api/setup`` spends it. Once any company exists the endpoint answers 404
(the token is useless then), and every token is retired.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from store import companies, users
from store.audit import Who
from store.setup_tokens import SetupTokens
from tornado_app.api_errors import ApiError
from tornado_app.auth import activity, service

if TYPE_CHECKING:
    from tornado_app.services import Services

NOT_FOUND = ApiError(404, "NOT_FOUND", "setup is over: a company exists; sign in instead")
TOKEN_INVALID = ApiError(403, "SETUP_TOKEN_INVALID",
                         "this setup address is not valid (used, expired or mistyped); "
                         "restart the service for a new one, or run create-admin")
_CODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def check_company_code(value: str) -> str:
    if not _CODE_RE.match(value):
        raise ApiError(400, "VALIDATION_ERROR", "companyCode must be 1-64 letters, digits, "
                                                "'_', '.' or '-' (starting with a letter or "
                                                "digit)")
    return value


def check_company_name(value: str) -> str:
    value = value.strip()
    if not 1 <= len(value) <= 100:
        raise ApiError(400, "VALIDATION_ERROR", "companyName must be 1-100 characters")
    return value


def tokens(svc: Services) -> SetupTokens:
    return SetupTokens(svc.redis, svc.settings.setup_token_ttl_seconds)


async def first_run_token(svc: Services) -> str | None:
    """A fresh setup token when no company exists yet, else None."""
    if await companies.count(svc.db):
        return None
    return await tokens(svc).create()


async def ensure_pending(svc: Services) -> None:
    """404 once a company exists (whatever else the request holds)."""
    if await companies.count(svc.db):
        raise NOT_FOUND


async def status(svc: Services, token: str) -> dict[str, Any]:
    """``GET /api/setup``: 404 once a company exists; else whether ``token`` is valid."""
    if await companies.count(svc.db):
        raise NOT_FOUND
    valid = bool(_TOKEN_RE.match(token)) and await tokens(svc).valid(token)
    return {"pending": True, "tokenValid": valid}


async def create_first_admin(
    svc: Services, *, company_code: str, company_name: str, username: str, password: str,
    real_name: str,
) -> tuple[companies.Company, users.User]:
    """The company (reused when its code exists) and an ADMIN in it; used by the setup
    endpoint and by ``create-admin``. Raises ApiError for a taken or mixed-script name."""
    password_hash = await service.new_account_hash(svc, username, password)
    company = await companies.get_by_code(svc.db, company_code)
    if company is None:
        try:
            company = await companies.create_company(svc.db, company_code, company_name)
        except companies.CompanyExists:
            company = await companies.get_by_code(svc.db, company_code)
            assert company is not None
    try:
        user = await users.create_user(
            svc.db, company_id=company.id, username=username, password_hash=password_hash,
            real_name=real_name, role="ADMIN")
    except users.UsernameExists as exc:
        raise ApiError(409, "USERNAME_EXISTS", "this username is taken in that company") \
            from exc
    await tokens(svc).retire_all()
    return company, user


async def setup(svc: Services, *, token: str, company_code: str, company_name: str,
                username: str, password: str, real_name: str, address: str
                ) -> dict[str, Any]:
    """``POST /api/setup``: create the first company and its ADMIN, sign the ADMIN in."""
    store = tokens(svc)
    async with store.lock() as held:
        if await companies.count(svc.db):
            raise NOT_FOUND
        if not held:
            raise ApiError(503, "SERVICE_UNAVAILABLE", "a setup is in progress; retry",
                           {"Retry-After": "1"})
        if not _TOKEN_RE.match(token) or not await store.valid(token):
            raise TOKEN_INVALID
        company, user = await create_first_admin(
            svc, company_code=company_code, company_name=company_name, username=username,
            password=password, real_name=real_name)
    session = await svc.sessions.create(user.id, company.id)
    activity.record(svc, company_id=company.id, action="setup", outcome="success",
                    actor=Who(user.id, user.username), target=Who(user.id, user.username),
                    address=address)
    return {"token": session, "userId": user.id, "username": user.username,
            "role": user.role, "expiresIn": svc.settings.session_ttl_seconds,
            "companyId": company.id, "companyCode": company.code,
            "companyName": company.name}
