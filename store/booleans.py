"""The one rule for booleans given as text (form fields, query arguments, environment
variables): ``true/1/yes/on/y/t`` and ``false/0/no/off/n/f/""``; anything else is refused.
It lives in ``store`` (the lowest layer) so settings, the storage configuration and every
handler share it."""

from __future__ import annotations

from typing import Any

_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f", ""}


class NotABoolean(ValueError):
    """The text is neither a true nor a false word."""


def scalar(value: Any) -> Any:
    """Unwrap Tornado-style ``[b"..."]`` form values into one str (or keep bool/None)."""
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value


def parse_bool(value: Any, default: bool = False) -> bool:
    """Read a boolean (``true/false/1/0/on/off/yes/no``); None keeps ``default``.

    Raises :class:`NotABoolean` for any other text."""
    value = scalar(value)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise NotABoolean(f"not a boolean: {value!r}")
