"""The HTTP layer's shared concerns, each in one place: request ids, body parsing and
limits, the two response envelopes, error mapping and the access log.

Handlers stay thin: parse, authorise, call a service function, write the envelope.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import sys
import time
from collections.abc import Awaitable
from http.client import responses as HTTP_REASONS
from typing import TYPE_CHECKING, Any

import tornado
import tornado.web
from pymongo.errors import PyMongoError
from redis.exceptions import RedisError
from tornado import httputil
from tornado.http1connection import HTTP1Connection

from tornado_app.api_errors import ApiError, validation_error
from tornado_app.body_rate import BodyRateWatch, declared_length, has_body
from tornado_app.clientaddr import client_address, forwarded_proto
from tornado_app.guards import ORIGIN_REFUSED, add_cors_headers, origin_refused
from tornado_app.logs import request_id_var

if TYPE_CHECKING:
    from tornado_app.services import Services

log = logging.getLogger("tornado_app.http")
access_log = logging.getLogger("tornado_app.access")

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_JSON_TYPE = "application/json; charset=utf-8"
# what json.dumps(..., ensure_ascii=False) would make anew for every response
_ENCODER = json.JSONEncoder(ensure_ascii=False)
MAX_JSON_DEPTH = 32  # no request body of the API nests deeper; a guard, not a tunable
_JSON_STRING_RE = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_BRACKETS_RE = re.compile(rb"[\[\]{}]")


class JsonTooDeep(ValueError):
    """A JSON text nests arrays/objects deeper than :data:`MAX_JSON_DEPTH`."""


def load_json(raw: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth`` before parsing (a
    deeply nested text would otherwise end in a RecursionError, an internal error).

    Raises :class:`JsonTooDeep` or ``ValueError`` (not JSON, not UTF-8)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth = 0
    for bracket in _JSON_BRACKETS_RE.findall(_JSON_STRING_RE.sub(b'""', data)):
        depth += 1 if bracket in b"[{" else -1
        if depth > max_depth:
            raise JsonTooDeep(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError("JSON text is not UTF-8") from exc


_SERVER = f"TornadoServer/{tornado.version}"
_HTML_TYPE = "text/html; charset=UTF-8"
_OK_REASON = HTTP_REASONS[200]  # what tornado.httputil.responses holds


@functools.lru_cache(maxsize=4)
def http_date(second: int) -> str:
    """The ``Date`` header of a Unix second, as Tornado formats it (the responses of one
    second share it: formatting it costs more than the rest of the default headers)."""
    return httputil.format_timestamp(second)


def new_request_id() -> str:
    """A random request id: 32 hex digits of a version 4 UUID (``uuid.uuid4().hex``), made
    straight from 16 random bytes with the version and variant bits set as ``uuid`` sets them."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


class InFlight:
    """Requests being served, so a graceful shutdown can wait for them."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def started(self) -> None:
        """One more request is being served."""
        self.count += 1
        self._idle.clear()

    def ended(self) -> None:
        """A request ended; the last one wakes :meth:`wait_idle`."""
        self.count -= 1
        if self.count <= 0:
            self._idle.set()

    async def wait_idle(self, timeout: float) -> bool:
        """True once no request is in flight; False when ``timeout`` passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            pass
        return self.count == 0


@tornado.web.stream_request_body
class BaseHandler(tornado.web.RequestHandler):
    """Request id, JSON parsing with limits, error mapping; subclasses pick the envelope.

    Bodies are streamed: each handler's :meth:`body_limit` is set on the connection before
    a byte of the body is read, so a too-large body is refused, never buffered."""

    _counted = False
    request_id = ""  # the caller's X-Request-Id when well formed, else a new one

    def initialize(self, **kwargs: Any) -> None:
        self.services: Services = self.application.settings["services"]
        networks = self.services.settings.trusted_networks
        if networks:  # X-Forwarded-* count only from a trusted proxy (TRUSTED_PROXIES)
            proto = forwarded_proto(self.request.remote_ip or "",
                                    self.request.headers.get("X-Forwarded-Proto"), networks)
            if proto:  # the scheme the Origin check compares with
                self.request.protocol = proto
            self.request.remote_ip = client_address(
                self.request.remote_ip or "", self.request.headers.get("X-Forwarded-For"),
                networks)
        self._inflight: InFlight | None = self.application.settings.get("inflight")
        if self._inflight is not None:
            self._inflight.started()
            self._counted = True
        self._body: list[bytes] = []
        connection = self.request.connection
        assert isinstance(connection, HTTP1Connection)  # what tornado's HTTPServer hands out
        connection.set_max_body_size(self.body_limit())
        self._body_watch: BodyRateWatch | None = None
        self._watch_body_rate()

    def data_received(self, chunk: bytes) -> None:
        self._body.append(chunk)  # bounded: the connection stops at body_limit()

    def _watch_body_rate(self) -> None:
        """Hold the body to ``MIN_UPLOAD_BYTES_PER_SECOND`` after the grace period (see
        ``tornado_app.body_rate``); every chunk counts, whichever ``data_received`` a
        subclass has."""
        settings = self.services.settings
        headers = self.request.headers
        if settings.min_upload_bytes_per_second <= 0 or not has_body(headers):
            return
        body_future = getattr(self.request, "_body_future", None)  # Tornado: body complete
        watch = BodyRateWatch(
            min_rate=settings.min_upload_bytes_per_second,
            grace=settings.upload_rate_grace_seconds, declared=declared_length(headers),
            complete=lambda: body_future is not None and body_future.done(),
            on_slow=self._body_too_slow)
        self._body_watch = watch
        handler_received = self.data_received

        def counted(chunk: bytes) -> Any:
            watch.add(len(chunk))
            return handler_received(chunk)

        # wraps the subclass's own data_received (an instance attribute shadows the method)
        self.data_received = counted  # type: ignore[method-assign]  # per instance, on purpose

    def _body_too_slow(self, rate: float) -> None:
        """The body fell below the minimum rate: answer 408 (in this handler's shape) and
        let the connection close (its body is never read to the end)."""
        if self._finished:
            return
        minimum = self.services.settings.min_upload_bytes_per_second
        log.info("request body too slow", extra={"rate": round(rate, 1), "minimum": minimum,
                                                  "path": self.request.path})
        error = ApiError(408, "REQUEST_TIMEOUT",
                         f"the request body arrived too slowly ({rate:.0f} bytes/s; at least "
                         f"{minimum} bytes/s are needed: MIN_UPLOAD_BYTES_PER_SECOND)")
        self.send_error(408, exc_info=(ApiError, error, None))

    def _stop_watch(self) -> None:
        if self._body_watch is not None:
            self._body_watch.stop()
            self._body_watch = None

    def _uncount(self) -> None:
        self._stop_watch()
        if self._counted and self._inflight is not None:
            self._inflight.ended()
            self._counted = False

    def on_finish(self) -> None:
        self._uncount()

    def on_connection_close(self) -> None:
        self._uncount()
        super().on_connection_close()

    def clear(self) -> None:
        """Tornado's ``RequestHandler.clear`` (6.6.1, pinned), the ``Date`` header taken from
        :func:`http_date`: the same headers in the same order (tests/test_request_cost_paths.py
        holds the order), then :meth:`set_default_headers`."""
        self._headers = httputil.HTTPHeaders({
            "Server": _SERVER, "Content-Type": _HTML_TYPE,
            "Date": http_date(int(time.time())),
        })
        self.set_default_headers()
        self._write_buffer: list[bytes] = []
        self._status_code = 200
        self._reason = _OK_REASON

    def set_default_headers(self) -> None:
        # Made once per request: Tornado calls this again from send_error() -> clear(), and a
        # new id there would give an error response another id than the log lines before it.
        if not self.request_id:
            incoming = self.request.headers.get("X-Request-Id")
            self.request_id = (incoming if incoming and _REQUEST_ID_RE.match(incoming)
                               else new_request_id())
        request_id_var.set(self.request_id)
        # set_header() less its check of each value: these are safe by construction (the id
        # is letters, digits and ._- only)
        headers = self._headers
        headers["X-Request-Id"] = self.request_id
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Cache-Control"] = "no-store"
        services = self.application.settings.get("services")
        if services is not None and services.settings.allowed_origins:
            add_cors_headers(self, services.settings)

    # ------------------------------------------------------------ body parsing
    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object; 400 for anything else, 413 when too big."""
        body = b"".join(self._body)
        if len(body) > self.body_limit():
            raise ApiError(413, "PAYLOAD_TOO_LARGE",
                           f"request body is larger than {self.body_limit()} bytes")
        if not body.strip():
            raise validation_error("request body must be a JSON object")
        try:
            data = load_json(body)
        except JsonTooDeep as exc:
            raise validation_error(str(exc)) from exc
        except ValueError as exc:
            raise validation_error("request body is not valid JSON") from exc
        if not isinstance(data, dict):
            raise validation_error("request body must be a JSON object")
        return data

    def prepare(self) -> Awaitable[None] | None:
        """Origin and declared body size checked before any handler code. Typed as Tornado
        types it, so a subclass may make ``prepare`` a coroutine (the docs face does)."""
        self.check_origin()
        if self.request.method not in _BODY_METHODS:
            return None
        length = self.request.headers.get("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.body_limit():
            raise ApiError(413, "PAYLOAD_TOO_LARGE",
                           f"request body is larger than {self.body_limit()} bytes")
        return None

    def check_origin(self) -> None:
        """403 for a state-changing request from another site (see ``tornado_app.guards``)."""
        services = self.application.settings.get("services")
        if services is not None and origin_refused(self.request, services.settings):
            raise ApiError(403, "FORBIDDEN", ORIGIN_REFUSED)

    def body_limit(self) -> int:
        """The largest body this route reads (the JSON limit unless a route says more)."""
        return self.services.settings.max_json_body_bytes

    # ------------------------------------------------------------ responses
    def write_json(self, status: int, payload: dict[str, Any]) -> None:
        self.set_status(status)
        self._headers["Content-Type"] = _JSON_TYPE  # set_header() less its check of a constant
        self.finish(_ENCODER.encode(payload))

    def write_failure(self, status: int, code: str, message: str) -> None:
        """Write a failure in this handler's envelope (annotation style by default)."""
        self.write_json(status, {"code": code, "message": message})

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            for name, value in exc.headers.items():
                self.set_header(name, value)
            if exc.details:  # annotation envelope only (login's attemptsLeft/retryAfter)
                self.write_json(exc.status, {"code": exc.code, "message": exc.message,
                                             **exc.details})
                return
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
    """Access log: one JSON line per request, no query string (it may hold secrets).

    The record is made as ``Logger.log`` makes it, less the search of the stack for the
    caller (``findCaller``): the caller is this function, so its file, line and name are
    given as they are."""
    request = handler.request
    status = handler.get_status()
    seconds = request.request_time()
    services = handler.application.settings.get("services")
    if services is not None:
        services.metrics.observe_request(type(handler).__name__, request.method or "-",
                                         status, seconds)
    level = logging.INFO if status < 500 else logging.ERROR
    if not access_log.isEnabledFor(level):
        return
    extra = {
        "request_id": getattr(handler, "request_id", "-"),
        "method": request.method,
        "path": request.path,
        "status": status,
        "duration_ms": round(1000.0 * seconds, 2),
        "remote": request.remote_ip,
    }
    access_log.handle(access_log.makeRecord(
        access_log.name, level, _THIS_FILE, sys._getframe().f_lineno, "request", (), None,
        "log_request", extra))


_THIS_FILE = log_request.__code__.co_filename  # what findCaller would name
