"""HTTP handlers of the annotation backend: parse, authorise, call the service, envelope."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from store.audit import ACTIONS
from tornado_app import session_cookie
from tornado_app.api_errors import ApiError, validation_error
from tornado_app.auth import account, activity, service, setup
from tornado_app.auth.fields import (
    check_password,
    check_real_name,
    check_role,
    check_status,
    check_username,
    normalise_username,
    positive_int,
    storable,
    string_field,
)
from tornado_app.callers import auth_principal  # a session or a company API key
from tornado_app.http import BaseHandler


class AuthApiHandler(BaseHandler):
    """Annotation-envelope handler: ``{"code":"SUCCESS","data":...}``."""

    def success(self, data: Any = None, status: int = 200) -> None:
        self.write_json(status, {"code": "SUCCESS", "data": data})

    async def principal(self, role: str | None = None) -> service.Principal:
        """The caller: a session (Bearer header, or the browser app's session cookie:
        ``tornado_app.session_cookie``) or a company API key; 401 otherwise, 403 below ``role``."""
        p: service.Principal = await auth_principal(
            self.services, session_cookie.credential(self.request), self.address)
        if role:
            service.require_role(p, role)
        return p

    @property
    def address(self) -> str:
        """The client address (the peer, or what a trusted proxy reports)."""
        return self.request.remote_ip or "-"

    def _single_query(self, name: str) -> str | None:
        values = self.request.query_arguments.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise validation_error(f"{name} may be given once")
        try:
            return storable(values[0].decode("utf-8"), name)
        except UnicodeDecodeError as exc:
            raise validation_error(f"{name} is not valid UTF-8") from exc

    def user_id(self, raw: str) -> int:
        """Path ids that are not plain integers name no user: 404, like a missing one."""
        if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
            raise ApiError(404, "NOT_FOUND", "no such user")
        return int(raw)


class LoginHandler(AuthApiHandler):
    async def post(self) -> None:
        body = self.json_body()
        company_code = string_field(body, "companyCode", max_len=64)
        username = normalise_username(string_field(body, "username", max_len=64))
        password = string_field(body, "password", max_len=128)
        data = await service.login(
            self.services, company_code=company_code, username=username, password=password,
            address=self.address,
        )
        session_cookie.set_session_cookie(self, data["token"], data["expiresIn"])
        self.success(data)


class LogoutHandler(AuthApiHandler):
    """Ends the session (every tab signed in by its cookie with it) and clears the cookie,
    also when the session had already ended."""

    async def post(self) -> None:
        session_cookie.clear_session_cookie(self)  # kept on an error answer too
        principal = await self.principal()
        if principal.key_id:
            raise ApiError(403, "FORBIDDEN", "an API key is revoked with DELETE /api/keys/{id}")
        await service.logout(self.services, principal, self.address)
        self.success(None)


class MeHandler(AuthApiHandler):
    async def get(self) -> None:
        principal = await self.principal()
        if principal.key_id:
            self.success(await service.key_me(self.services, principal))
            return
        if principal.username:  # a session's principal carries its profile: no await
            self.success(service.own_profile(principal))
            return
        self.success(await service.me(self.services, principal))


class UsersHandler(AuthApiHandler):
    async def get(self) -> None:
        principal = await self.principal("ADMIN")
        page = positive_int(self._single_query("page"), "page", 1)
        page_size = positive_int(self._single_query("pageSize"), "pageSize", 20)
        role = self._single_query("role")
        status = self._single_query("status")
        data = await service.list_users(
            self.services, principal,
            role=check_role(role) if role is not None else None,
            status=check_status(status) if status is not None else None,
            page=page, page_size=page_size,
        )
        self.success(data)

    async def post(self) -> None:
        principal = await self.principal("ADMIN")
        body = self.json_body()
        username = check_username(string_field(body, "username", max_len=64))
        password = check_password(string_field(body, "password", max_len=128))
        real_name = check_real_name(string_field(body, "realName", required=False, max_len=100))
        role = check_role(string_field(body, "role", required=False, default="ANNOTATOR"))
        data = await service.create_user(
            self.services, principal, username=username, password=password,
            real_name=real_name, role=role, address=self.address,
        )
        self.success(data, status=201)


class UserHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        real_name = check_real_name(string_field(self.json_body(), "realName", max_len=100))
        await service.rename_user(self.services, principal, user_id, real_name, self.address)
        self.success(None)


class UserStatusHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        status = check_status(string_field(self.json_body(), "status", max_len=16))
        await service.set_status(self.services, principal, user_id, status, self.address)
        self.success(None)


class UserRoleHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        role = check_role(string_field(self.json_body(), "role", max_len=32))
        await service.set_role(self.services, principal, user_id, role, self.address)
        self.success(None)


class PasswordHandler(AuthApiHandler):
    """``PUT /api/auth/password``: change one's own password (the old one is checked with
    login's throttling); the other sessions end, this one stays."""

    async def put(self) -> None:
        principal = await self.principal()
        body = self.json_body()
        old = string_field(body, "oldPassword", max_len=128)
        new = check_password(string_field(body, "newPassword", max_len=128))
        await account.change_own(self.services, principal, old_password=old,
                                 new_password=new, address=self.address)
        self.success(None)


class UserPasswordHandler(AuthApiHandler):
    """``PUT /api/users/{id}/password`` (ADMIN): set a user's password; their sessions end."""

    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        password = check_password(string_field(self.json_body(), "password", max_len=128))
        await account.reset(self.services, principal, user_id, password=password,
                            address=self.address)
        self.success(None)


def _time_query(raw: str | None, name: str, *, end: bool) -> datetime | None:
    """An ISO 8601 date or date-time (UTC when no offset). A bare date as ``to`` means the
    end of that day."""
    if raw is None:
        return None
    try:
        value = datetime.fromisoformat(raw.strip())
    except ValueError as exc:
        raise validation_error(f"{name} must be an ISO 8601 date or date-time") from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if end and "T" not in raw and " " not in raw.strip():
        try:
            value += timedelta(days=1)
        except OverflowError:  # 9999-12-31: the end of time is late enough
            value = datetime.max.replace(tzinfo=UTC)
    return value


class AuditHandler(AuthApiHandler):
    """``GET /api/audit`` (ADMIN): the company's audit records, newest first, paged."""

    async def get(self) -> None:
        principal = await self.principal("ADMIN")
        page = positive_int(self._single_query("page"), "page", 1)
        page_size = positive_int(self._single_query("pageSize"), "pageSize", 20)
        action = self._single_query("action")
        if action is not None and action not in ACTIONS:
            raise validation_error(f"action must be one of {', '.join(ACTIONS)}")
        actor = self._single_query("actor")
        target = self._single_query("target")
        for name, value in (("actor", actor), ("target", target)):
            if value is not None and len(value) > 64:
                raise validation_error(f"{name} is longer than 64 characters")
        since = _time_query(self._single_query("from"), "from", end=False)
        until = _time_query(self._single_query("to"), "to", end=True)
        data = await activity.list_records(
            self.services, principal.company_id, page=page, page_size=page_size,
            action=action, actor=actor, target=target, since=since, until=until)
        self.success(data)


class SetupHandler(AuthApiHandler):
    """First run: ``GET /api/setup?token=`` says whether setup is pending and the token
    valid; ``POST /api/setup`` creates the first company and its ADMIN. Both 404 once a
    company exists."""

    async def get(self) -> None:
        token = self._single_query("token") or ""
        self.success(await setup.status(self.services, token[:200]))

    async def post(self) -> None:
        await setup.ensure_pending(self.services)
        body = self.json_body()
        token = string_field(body, "token", max_len=200)
        code = setup.check_company_code(string_field(body, "companyCode", max_len=64))
        name = setup.check_company_name(string_field(body, "companyName", max_len=100))
        username = check_username(string_field(body, "username", max_len=64))
        password = check_password(string_field(body, "password", max_len=128))
        real_name = check_real_name(string_field(body, "realName", required=False,
                                                 max_len=100))
        data = await setup.setup(
            self.services, token=token, company_code=code, company_name=name,
            username=username, password=password, real_name=real_name, address=self.address)
        session_cookie.set_session_cookie(self, data["token"], data["expiresIn"])
        self.success(data, status=201)


ROUTES: list[tuple[str, type]] = [
    (r"/api/auth/login", LoginHandler),
    (r"/api/auth/logout", LogoutHandler),
    (r"/api/auth/me", MeHandler),
    (r"/api/users", UsersHandler),
    (r"/api/users/([^/]+)", UserHandler),
    (r"/api/users/([^/]+)/status", UserStatusHandler),
    (r"/api/users/([^/]+)/role", UserRoleHandler),
    (r"/api/users/([^/]+)/password", UserPasswordHandler),
    (r"/api/auth/password", PasswordHandler),
    (r"/api/audit", AuditHandler),
    (r"/api/setup", SetupHandler),
]
