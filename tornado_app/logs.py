"""Structured JSON logs with the request id of the request being served."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from typing import Any

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_STANDARD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
_SECRET_WORDS = ("password", "secret", "token", "authorization", "passwordhash")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and extras.

    Extra fields whose name suggests a secret are replaced by ``"****"``.
    """

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        for key, value in vars(record).items():
            if key in _STANDARD or key == "request_id":
                continue
            if any(w in key.lower() for w in _SECRET_WORDS):
                value = "****"
            out[key] = value if isinstance(value, (int, float, bool, type(None))) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def setup_logging(level: str = "INFO") -> None:
    """Send every logger to stderr as JSON lines at ``level``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # tornado.access is replaced by our own access log (see tornado_app.http.log_request)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)
