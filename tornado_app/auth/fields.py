"""Type-checked extraction of request fields, so no operator object reaches a query."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from store.users import ROLES, STATUSES
from tornado_app.api_errors import ApiError, validation_error

_USERNAME_EXTRA = set("_.@-")
_UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _storable(value: str, name: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise validation_error(f"{name} contains characters that cannot be stored") from exc
    if "\x00" in value:
        raise validation_error(f"{name} contains a NUL character")
    return value


def storable(value: str, name: str) -> str:
    """``value`` unchanged, or 400 when it holds NUL or lone surrogates."""
    return _storable(value, name)


def string_field(
    body: dict[str, Any], name: str, *, required: bool = True, default: str = "",
    max_len: int = 256,
) -> str:
    """A string field: absent -> default (or 400 when required); any other type -> 400."""
    if name not in body or body[name] is None:
        if required:
            raise validation_error(f"{name} is required")
        return default
    value = body[name]
    if type(value) is not str:
        raise validation_error(f"{name} must be a string")
    if len(value) > max_len:
        raise validation_error(f"{name} is longer than {max_len} characters")
    return _storable(value, name)


def normalise_username(value: str) -> str:
    """NFC form, so visually equal names are one name."""
    return unicodedata.normalize("NFC", value)


def check_username(value: str) -> str:
    """3-64 characters of letters, digits and ``_ . @ -``."""
    name = normalise_username(value)
    if not 3 <= len(name) <= 64 or not all(c.isalnum() or c in _USERNAME_EXTRA for c in name):
        raise validation_error(
            "username must be 3-64 characters of letters, digits, '_', '.', '@' or '-'")
    return name


def check_password(value: str) -> str:
    if not 8 <= len(value) <= 128:
        raise validation_error("password must be 8-128 characters")
    return value


def check_role(value: str) -> str:
    if value not in ROLES:
        raise ApiError(400, "INVALID_ROLE", f"role must be one of {', '.join(ROLES)}")
    return value


def check_status(value: str) -> str:
    if value not in STATUSES:
        raise validation_error(f"status must be one of {', '.join(STATUSES)}")
    return value


def check_real_name(value: str) -> str:
    value = value.strip()
    if len(value) > 100:
        raise validation_error("realName is longer than 100 characters")
    return value


def is_canonical_uuid(token: str) -> bool:
    """Tokens are lowercase canonical UUID4 strings; anything else is refused unseen."""
    return bool(_UUID_RE.match(token))


def positive_int(raw: str | None, name: str, default: int) -> int:
    """A query parameter that must be an integer >= 1."""
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9 or int(raw) < 1:
        raise validation_error(f"{name} must be an integer >= 1")
    return int(raw)
