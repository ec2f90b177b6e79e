"""The HTTP layer's shared concerns, each in one place: request ids, body parsing and
limits, the two response envelopes, error mapping and the access log.

Handlers stay thin: parse, authorise, call a service function, write the envelope.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

import tornado.web
from pymongo.errors import PyMongoError
from redis.exceptions import RedisError

from tornado_app.clientaddr import client_address
from tornado_app.logs import request_id_var

log = logging.getLogger("tornado_app.http")
access_log = logging.getLogger("tornado_app.access")

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class ApiError(Exception):
    """A failure with an HTTP status and an error code for the annotation envelope."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def validation_error(message: str) -> ApiError:
    return ApiError(400, "VALIDATION_ERROR", message)


class InFlight:
    """Requests being served, so a graceful shutdown can wait for them."""

    def __init__(self) -> None:
        self.count = 0

    async def wait_idle(self, timeout: float) -> bool:
        """True once no request is in flight; False when ``timeout`` passed first."""
        import asyncio

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.count > 0 and loop.time() < deadline:
            await asyncio.sleep(0.05)
        return self.count == 0


class BaseHandler(tornado.web.RequestHandler):
    """Request id, JSON parsing with limits, error mapping; subclasses pick the envelope."""

    max_json_bytes = 64 * 1024
    _counted = False

    def initialize(self, **kwargs: Any) -> None:
        self.services = self.application.settings["services"]
        networks = self.services.settings.trusted_networks
        if networks:  # X-Forwarded-For counts only from a trusted proxy (TRUSTED_PROXIES)
            self.request.remote_ip = client_address(
                self.request.remote_ip or "", self.request.headers.get("X-Forwarded-For"),
                networks)
        self._inflight: InFlight | None = self.application.settings.get("inflight")
        if self._inflight is not None:
            self._inflight.count += 1
            self._counted = True

    def _uncount(self) -> None:
        if self._counted and self._inflight is not None:
            self._inflight.count -= 1
            self._counted = False

    def on_finish(self) -> None:
        self._uncount()

    def on_connection_close(self) -> None:
        self._uncount()
        super().on_connection_close()

    def set_default_headers(self) -> None:
        incoming = self.request.headers.get("X-Request-Id", "")
        self.request_id = incoming if _REQUEST_ID_RE.match(incoming) else uuid.uuid4().hex
        request_id_var.set(self.request_id)
        self.set_header("X-Request-Id", self.request_id)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", "no-store")
        services = self.application.settings.get("services")
        if services is not None:
            from tornado_app.guards import add_cors_headers

            add_cors_headers(self, services.settings)

    # ------------------------------------------------------------ body parsing
    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object; 400 for anything else, 413 when too big."""
        body = self.request.body or b""
        if len(body) > self.max_json_bytes:
            raise ApiError(413, "PAYLOAD_TOO_LARGE",
                           f"request body is larger than {self.max_json_bytes} bytes")
        if not body.strip():
            raise validation_error("request body must be a JSON object")
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise validation_error("request body is not valid JSON") from exc
        if not isinstance(data, dict):
            raise validation_error("request body must be a JSON object")
        return data

    def prepare(self) -> None:
        self.check_origin()
        length = self.request.headers.get("Content-Length")
        if (
            self.request.method in {"POST", "PUT", "PATCH"}
            and length is not None
            and length.isdigit()
            and int(length) > self.body_limit()
        ):
            raise ApiError(413, "PAYLOAD_TOO_LARGE",
                           f"request body is larger than {self.body_limit()} bytes")

    def check_origin(self) -> None:
        """403 for a state-changing request from another site (see ``tornado_app.guards``)."""
        from tornado_app.guards import ORIGIN_REFUSED, origin_refused

        services = self.application.settings.get("services")
        if services is not None and origin_refused(self.request, services.settings):
            raise ApiError(403, "FORBIDDEN", ORIGIN_REFUSED)

    def body_limit(self) -> int:
        return self.max_json_bytes

    # ------------------------------------------------------------ responses
    def write_json(self, status: int, payload: dict[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(payload, ensure_ascii=False))

    def write_failure(self, status: int, code: str, message: str) -> None:
        """Write a failure in this handler's envelope (annotation style by default)."""
        self.write_json(status, {"code": code, "message": message})

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            for name, value in exc.headers.items():
                self.set_header(name, value)
            self.write_failure(exc.status, exc.code, exc.message)
            return
        if isinstance(exc, RedisError):
            self.write_failure(503, "SERVICE_UNAVAILABLE", "session store unavailable; retry")
            return
        if isinstance(exc, PyMongoError):
            self.write_failure(503, "SERVICE_UNAVAILABLE", "database unavailable; retry")
            return
        if isinstance(exc, tornado.web.HTTPError):
            code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE"}.get(
                status_code, "BAD_REQUEST" if status_code < 500 else "INTERNAL_ERROR")
            self.write_failure(status_code, code, exc.log_message or self._reason)
            return
        self.write_failure(500, "INTERNAL_ERROR", "internal error")

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, ApiError):
            return
        if isinstance(value, (RedisError, PyMongoError)):
            log.warning("dependency unavailable: %s", type(value).__name__)
            return
        if isinstance(value, tornado.web.HTTPError) and value.status_code < 500:
            return
        super().log_exception(typ, value, tb)


class NotFoundHandler(BaseHandler):
    """Unknown paths answer a JSON 404 rather than Tornado's HTML page."""

    def prepare(self) -> None:
        raise ApiError(404, "NOT_FOUND", "no such endpoint")


def log_request(handler: tornado.web.RequestHandler) -> None:
    """Access log: one JSON line per request, no query string (it may hold secrets)."""
    status = handler.get_status()
    seconds = handler.request.request_time()
    services = handler.application.settings.get("services")
    if services is not None:
        services.metrics.observe_request(type(handler).__name__, handler.request.method or "-",
                                         status, seconds)
    level = logging.INFO if status < 500 else logging.ERROR
    access_log.log(
        level, "request",
        extra={
            "request_id": getattr(handler, "request_id", "-"),
            "method": handler.request.method,
            "path": handler.request.path,
            "status": status,
            "duration_ms": round(1000.0 * seconds, 2),
            "remote": handler.request.remote_ip,
        },
    )
