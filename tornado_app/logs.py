"""Logs with the request id of the request being served: JSON lines for machines (when
stderr is not a terminal), short coloured lines for people (when it is); ``LOG_FORMAT``
(``json`` or ``console``) overrides the choice. Secrets never reach either form."""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import sys
import time
from typing import Any

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_STANDARD = set(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
_NOT_EXTRA = _STANDARD | {"request_id"}
_SECRET_WORDS = ("password", "secret", "token", "authorization", "passwordhash")
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # what json.dumps would build per line


@functools.lru_cache(maxsize=1024)
def _secret_name(key: str) -> bool:
    """An extra field whose name suggests a secret (its value is logged as ``****``). The
    names are the code's own (``extra=`` keys), so the answers are kept: one line of the
    access log would otherwise test each of its fields against every word again."""
    lowered = key.lower()
    return any(word in lowered for word in _SECRET_WORDS)


@functools.lru_cache(maxsize=8)
def _utc_second(second: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of a Unix second (the lines of one second share it)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and extras.

    Extra fields whose name suggests a secret are replaced by ``"****"``.
    """

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": f"{_utc_second(int(record.created))}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        for key, value in vars(record).items():
            if key in _NOT_EXTRA:
                continue
            if _secret_name(key):
                value = "****"
            out[key] = value if isinstance(value, (int, float, bool, type(None))) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return _ENCODER.encode(out)


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in vars(record).items():
        if key in _NOT_EXTRA:
            continue
        out[key] = "****" if _secret_name(key) else value
    return out


_COLOURS = {"DEBUG": "\033[2m", "INFO": "\033[32m", "WARNING": "\033[33m",
            "ERROR": "\033[31m", "CRITICAL": "\033[1;31m"}
_RESET, _DIM = "\033[0m", "\033[2m"


class ConsoleFormatter(logging.Formatter):
    """One short line per record for a person at a terminal: ``12:00:01 INFO message
    key=value``; access lines read ``GET /api/auth/me 200 1.3ms``. Colours when
    ``colour`` (a terminal)."""

    def __init__(self, colour: bool = True) -> None:
        super().__init__()
        self.colour = colour

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        extras = _extras(record)
        if record.name == "tornado_app.access" and "path" in extras:
            text = (f"{extras.pop('method', '')} {extras.pop('path', '')} "
                    f"{extras.pop('status', '')} {extras.pop('duration_ms', '')}ms")
            extras.pop("request_id", None)
        else:
            text = record.getMessage()
        tail = " ".join(f"{k}={v}" for k, v in extras.items())
        level = f"{record.levelname:<5}"
        if self.colour:
            level = f"{_COLOURS.get(record.levelname, '')}{level}{_RESET}"
            tail = f"{_DIM}{tail}{_RESET}" if tail else ""
        line = f"{stamp} {level} {text}" + (f" {tail}" if tail else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def pick_format(setting: str, stream: Any) -> str:
    """``json`` or ``console``: the setting when given, else by whether ``stream`` is a
    terminal."""
    if setting in ("json", "console"):
        return setting
    isatty = getattr(stream, "isatty", None)
    return "console" if isatty is not None and isatty() else "json"


def setup_logging(level: str = "INFO", log_format: str = "auto") -> None:
    """Send every logger to stderr at ``level``, as JSON lines or console lines."""
    handler = logging.StreamHandler(sys.stderr)
    if pick_format(log_format, sys.stderr) == "console":
        handler.setFormatter(ConsoleFormatter(colour=sys.stderr.isatty()))
    else:
        handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # tornado.access is replaced by our own access log (see tornado_app.http.log_request)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)
