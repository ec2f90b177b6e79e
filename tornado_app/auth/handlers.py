"""HTTP handlers of the annotation backend: parse, authorise, call the service, envelope."""

from __future__ import annotations

from typing import Any

from tornado_app.auth import service
from tornado_app.auth.fields import (
    check_password,
    check_real_name,
    check_role,
    check_status,
    check_username,
    normalise_username,
    positive_int,
    string_field,
)
from tornado_app.http import ApiError, BaseHandler, validation_error


class AuthApiHandler(BaseHandler):
    """Annotation-envelope handler: ``{"code":"SUCCESS","data":...}``."""

    def success(self, data: Any = None, status: int = 200) -> None:
        self.write_json(status, {"code": "SUCCESS", "data": data})

    async def principal(self, role: str | None = None) -> service.Principal:
        from tornado_app.callers import auth_principal  # a session or a company API key

        p = await auth_principal(self.services, self.request.headers.get("Authorization"))
        if role:
            service.require_role(p, role)
        return p

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
            address=self.request.remote_ip or "-",
        )
        self.success(data)


class LogoutHandler(AuthApiHandler):
    async def post(self) -> None:
        principal = await self.principal()
        if principal.key_id:
            raise ApiError(403, "FORBIDDEN", "an API key is revoked with DELETE /api/keys/{id}")
        await service.logout(self.services, principal)
        self.success(None)


class MeHandler(AuthApiHandler):
    async def get(self) -> None:
        principal = await self.principal()
        if principal.key_id:
            from tornado_app.keys import key_me

            self.success(await key_me(self.services, principal))
            return
        self.success(await service.me(self.services, principal))


class UsersHandler(AuthApiHandler):
    def _single_query(self, name: str) -> str | None:
        values = self.request.query_arguments.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise validation_error(f"{name} may be given once")
        try:
            return values[0].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise validation_error(f"{name} is not valid UTF-8") from exc

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
            real_name=real_name, role=role,
        )
        self.success(data, status=201)


class UserHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        real_name = check_real_name(string_field(self.json_body(), "realName", max_len=100))
        await service.rename_user(self.services, principal, user_id, real_name)
        self.success(None)


class UserStatusHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        status = check_status(string_field(self.json_body(), "status", max_len=16))
        await service.set_status(self.services, principal, user_id, status)
        self.success(None)


class UserRoleHandler(AuthApiHandler):
    async def put(self, raw_id: str) -> None:
        principal = await self.principal("ADMIN")
        user_id = self.user_id(raw_id)
        role = check_role(string_field(self.json_body(), "role", max_len=32))
        await service.set_role(self.services, principal, user_id, role)
        self.success(None)


ROUTES: list[tuple[str, type]] = [
    (r"/api/auth/login", LoginHandler),
    (r"/api/auth/logout", LogoutHandler),
    (r"/api/auth/me", MeHandler),
    (r"/api/users", UsersHandler),
    (r"/api/users/([^/]+)", UserHandler),
    (r"/api/users/([^/]+)/status", UserStatusHandler),
    (r"/api/users/([^/]+)/role", UserRoleHandler),
]
