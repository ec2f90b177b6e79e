"""Log formats: JSON lines for machines, short lines for people, never a secret."""

from __future__ import annotations

import io
import json
import logging

from tornado_app.logs import ConsoleFormatter, JsonFormatter, pick_format
from tornado_app.settings import Settings


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _record(name: str, msg: str, **extra: object) -> logging.LogRecord:
    record = logging.makeLogRecord({"name": name, "msg": msg, "levelname": "INFO",
                                    "levelno": logging.INFO})
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def test_format_follows_the_terminal_unless_set():
    assert pick_format("auto", io.StringIO()) == "json"
    assert pick_format("auto", Tty()) == "console"
    assert pick_format("json", Tty()) == "json"
    assert pick_format("console", io.StringIO()) == "console"
    assert Settings.from_env({"LOG_FORMAT": "Console"}).log_format == "console"
    try:
        Settings.from_env({"LOG_FORMAT": "xml"})
    except SystemExit as exc:
        assert "LOG_FORMAT" in str(exc)
    else:
        raise AssertionError("LOG_FORMAT=xml was accepted")


def test_console_lines_are_short_and_mask_secrets():
    access = _record("tornado_app.access", "request", method="GET", path="/api/auth/me",
                     status=200, duration_ms=1.5, remote="127.0.0.1", request_id="r1")
    line = ConsoleFormatter(colour=False).format(access)
    assert line.endswith("INFO  GET /api/auth/me 200 1.5ms remote=127.0.0.1")
    secret = _record("x", "login", password="hunter22", token="tok-3141")
    for formatter in (ConsoleFormatter(colour=True), JsonFormatter()):
        text = formatter.format(secret)
        assert "hunter22" not in text and "tok-3141" not in text
    assert json.loads(JsonFormatter().format(secret))["password"] == "****"
    assert "\033[32m" in ConsoleFormatter(colour=True).format(secret)
