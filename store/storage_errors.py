"""Failures of object storage calls, as messages and hints safe to show a caller."""

from __future__ import annotations

import urllib3
from minio.error import InvalidResponseError, S3Error

API_PORT = 9000
CONSOLE_PORT = 9001
CONSOLE_MARKER = "S3 API Requests must be made to API port"
CONSOLE_HINT = (
    "this address looks like the MinIO web console, not the S3 API; "
    f"use the API port (usually {API_PORT}), e.g. host:{API_PORT}"
)


class StorageConfigError(ValueError):
    """A storage configuration is invalid; ``error`` and ``hint`` are safe to show a caller."""

    def __init__(self, error: str, hint: str = "") -> None:
        super().__init__(f"{error} ({hint})" if hint else error)
        self.error = error
        self.hint = hint


class StorageError(Exception):
    """An object storage operation failed (service code 50201); ``message`` is safe to show."""

    code = 50201

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def error_text(exc: BaseException) -> str:
    if isinstance(exc, S3Error):
        return f"{exc.code}: {exc.message}"
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def error_hint(exc: BaseException) -> str:
    text = str(exc)
    if CONSOLE_MARKER.lower() in text.lower() or (
        isinstance(exc, InvalidResponseError) and "html" in text.lower()
    ):
        return CONSOLE_HINT
    if isinstance(exc, S3Error):
        if exc.code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"):
            return "check the access key and secret (and that they may use this bucket)"
        if exc.code == "RequestTimeTooSkewed":
            return "the clocks of this service and the storage differ too much: sync them (NTP)"
        if exc.code == "NoSuchBucket":
            return "the bucket does not exist: create it or set create_if_missing=true"
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return (f"cannot reach the storage: check host, port (the S3 API port, usually "
                f"{API_PORT}) and the secure (TLS) setting")
    return ""
