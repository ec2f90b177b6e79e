"""The failure every handler may raise: an HTTP status, an error code and a message, written
by the one error writer in :mod:`tornado_app.http` in the endpoint's own envelope.

A leaf module: services (auth, callers, throttling) raise these without importing the HTTP
layer that writes them.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A failure with an HTTP status and an error code for the annotation envelope."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.details = details or {}  # extra fields of the annotation failure body


def validation_error(message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", message)
