"""Company API keys over HTTP (annotation envelope, role ADMIN):

- ``POST /api/keys`` ``{name, role, expiresInDays?}``: 201 with the key itself, shown once;
  the key works only while the user who made it is active, and acts with the lower of its
  own role and that user's current role; it cannot be made with a role above the caller's;
- ``GET /api/keys``: the company's keys (name, prefix, role, maker, created, last used,
  expiry);
- ``DELETE /api/keys/{id}``: revoked at once on every replica (another company's id: 404).

Making and revoking a key go to the company's audit trail (``tornado_app.key_audit``), as
does a revoked key still being used.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from typing import Any

from store import api_keys, revoked_keys
from tornado_app import key_audit
from tornado_app.api_errors import ApiError, validation_error
from tornado_app.auth.fields import check_role, string_field
from tornado_app.auth.handlers import AuthApiHandler
from tornado_app.callers import lower_role

MAX_EXPIRY_DAYS = 3650  # the API's own bound on a key's expiresInDays (caller-chosen below it)


def key_name(body: dict[str, Any]) -> str:
    """1-64 printable characters (NFC), so the list shows what was meant."""
    name = unicodedata.normalize("NFC", string_field(body, "name", max_len=64)).strip()
    if not name:
        raise validation_error("name is required")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise validation_error("name may not hold control characters")
    return name


def expiry(body: dict[str, Any]) -> dt.datetime | None:
    """``expiresInDays`` (an integer 1-3650, or absent/null for a key that does not expire)
    as the moment the key stops working."""
    days = body.get("expiresInDays")
    if days is None:
        return None
    if type(days) is not int or not 1 <= days <= MAX_EXPIRY_DAYS:
        raise validation_error(f"expiresInDays must be an integer from 1 to {MAX_EXPIRY_DAYS}")
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).replace(microsecond=0)


async def owner_of(db: Any, principal: Any) -> int | None:
    """The user a new key belongs to: the signed-in user, or for a key made with an ADMIN
    key that key's owner (so disabling the user stops every key made on their behalf)."""
    if principal.key_id:
        parent = await api_keys.get_key(db, principal.company_id, principal.key_id)
        return parent.created_by if parent else None
    return principal.user_id or None


class KeysHandler(AuthApiHandler):
    async def get(self) -> None:
        principal = await self.principal("ADMIN")
        db = self.services.db
        items = await api_keys.list_keys(db, principal.company_id)
        names = await api_keys.maker_names(db, principal.company_id, items)
        self.success({"items": [{**k.public(), "createdBy": api_keys.maker_of(k, names)}
                                for k in items], "total": len(items)})

    async def post(self) -> None:
        principal = await self.principal("ADMIN")
        body = self.json_body()
        name = key_name(body)
        role = check_role(string_field(body, "role", required=False, default="ANNOTATOR"))
        expires_at = expiry(body)
        if lower_role(role, principal.role) != role:  # the caller's effective role caps it
            raise ApiError(403, "FORBIDDEN", f"a key cannot have a role above the caller's "
                                             f"({principal.role})")
        db = self.services.db
        try:
            key, secret = await api_keys.create_key(
                db, company_id=principal.company_id, name=name, role=role,
                created_by=await owner_of(db, principal), expires_at=expires_at)
        except api_keys.TooManyKeys as exc:
            raise ApiError(409, "KEY_LIMIT", f"a company may hold at most "
                           f"{api_keys.MAX_KEYS_PER_COMPANY} keys; revoke unused ones") from exc
        key_audit.created(self.services, key, principal.who(), self.address)
        names = await api_keys.maker_names(db, principal.company_id, [key])
        self.success({**key.public(), "createdBy": api_keys.maker_of(key, names),
                      "key": secret}, status=201)


class KeyHandler(AuthApiHandler):
    async def delete(self, key_id: str) -> None:
        principal = await self.principal("ADMIN")
        gone = None
        if len(key_id) == 32 and key_id.isascii() and key_id.isalnum():
            gone = await revoked_keys.revoke(self.services.db, principal.company_id, key_id)
        if gone is None:
            raise ApiError(404, "NOT_FOUND", "no such API key")
        key_audit.revoked(self.services, gone, principal.who(), self.address)
        self.success(None)


ROUTES: list[tuple[str, type]] = [
    (r"/api/keys", KeysHandler),
    (r"/api/keys/([^/]+)", KeyHandler),
]
