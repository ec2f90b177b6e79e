"""The plain-JSON face of the conversion service: the storage configuration endpoints
(:mod:`tornado_app.documents.storage`) and ``/md/convert-folder`` answer plain objects, not
the v2 envelope. Failures use HTTP 4xx/5xx with ``{"ok":false,"error","hint"}``."""

from __future__ import annotations

from typing import Any

from store.storage_errors import StorageConfigError, StorageError
from tornado_app.documents.base import DocsError, UploadHandler

# HTTP status of a v2 code raised under a plain endpoint (a DocsError from shared code)
_STATUS = {40001: 400, 40002: 400, 40003: 400, 40004: 400, 40101: 401, 40401: 404,
           41301: 413, 42201: 400, 50201: 502, 50301: 503, 50401: 504}


class PlainError(Exception):
    """A failure of a plain endpoint: HTTP ``status`` with ``error`` and ``hint``."""

    def __init__(self, status: int, error: str, hint: str = "") -> None:
        super().__init__(error)
        self.status, self.error, self.hint = status, error, hint


class PlainHandler(UploadHandler):
    """Form-reading handler that answers plain JSON objects."""

    def upload_limit(self) -> int:
        return 1024 * 1024

    def reply(self, payload: dict[str, Any], status: int = 200) -> None:
        self.write_json(status, payload)

    def write_failure(self, status: int, code: str, message: str) -> None:
        self.write_json(status, {"ok": False, "error": message, "hint": ""})

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self.set_retry_after(exc)
        if isinstance(exc, PlainError):
            self.write_json(exc.status, {"ok": False, "error": exc.error, "hint": exc.hint})
        elif isinstance(exc, StorageConfigError):
            self.write_json(400, {"ok": False, "error": exc.error, "hint": exc.hint})
        elif isinstance(exc, StorageError):
            self.write_json(502, {"ok": False, "error": exc.message, "hint": exc.hint})
        elif isinstance(exc, DocsError):
            self.write_json(_STATUS.get(exc.code, 400),
                            {"ok": False, "error": exc.msg, "hint": "", "code": exc.code})
        else:
            super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, (PlainError, StorageConfigError, StorageError, DocsError)):
            return
        super().log_exception(typ, value, tb)
