"""Base handlers of the conversion service: the v2 envelope, optional caller auth,
streamed multipart uploads with a size limit, and error-code mapping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TypeVar

import tornado.httputil
import tornado.web

from render_pool.errors import ConversionError
from store.booleans import NotABoolean, parse_bool
from store.storage_errors import StorageError
from tornado_app import request_base
from tornado_app.api_errors import ApiError
from tornado_app.callers import Caller
from tornado_app.documents.fetch import FetchFailed, FetchRefused
from tornado_app.http import BaseHandler
from tornado_app.multipart import MultipartError, boundary_of
from tornado_app.upload_spool import FieldTooLarge, MultipartBody

_T = TypeVar("_T")


class DocsError(Exception):
    """A failure carrying a v2 numeric code (HTTP stays 200)."""

    def __init__(self, code: int, msg: str, *, retry_after: int | None = None) -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.retry_after = retry_after  # seconds, sent as ``Retry-After`` (50301)


def docs_error_for(exc: BaseException) -> DocsError | None:
    """The v2 error for a known failure, or None for an unexpected one."""
    if isinstance(exc, DocsError):
        return exc
    if isinstance(exc, ConversionError):
        return DocsError(exc.code, exc.message, retry_after=getattr(exc, "retry_after", None))
    if isinstance(exc, StorageError):
        return DocsError(exc.code, exc.message)
    if isinstance(exc, FetchRefused):
        return DocsError(42201, f"remote address refused: {exc}")
    if isinstance(exc, FetchFailed):
        if exc.too_large:
            return DocsError(41301, str(exc))
        return DocsError(50401 if exc.timed_out else 40003, str(exc))
    return None


def outcome_of(code: int) -> str:
    """Metric label for a v2 code: ok, client_error, busy, timeout or server_error."""
    if code == 0:
        return "ok"
    if code == 50301:
        return "busy"
    if code == 50401:
        return "timeout"
    return "client_error" if code < 50000 else "server_error"


class DocsHandler(BaseHandler):
    """Conversion-service handler: ``{"code":0,"msg":"ok","data":...}``; failures keep
    HTTP 200 with a non-zero code, except where the spec gives plain shapes."""

    conversion: tuple[str, str] | None = None  # (kind, format) once a conversion is known
    caller: Caller  # set by prepare() before any handler code runs
    admin_methods: frozenset[str] = frozenset()  # HTTP methods that need role ADMIN
    result_code = 0

    def success(self, data: Any) -> None:
        self.write_json(200, {"code": 0, "msg": "ok", "data": data})

    def write_json(self, status: int, payload: dict[str, Any]) -> None:
        code = payload.get("code")
        if isinstance(code, int):
            self.result_code = code
        elif status >= 400:
            self.result_code = 50001 if status >= 500 else 40001
        super().write_json(status, payload)

    def on_finish(self) -> None:
        super().on_finish()
        if self.conversion is not None:
            kind, fmt = self.conversion
            self.services.metrics.conversions.labels(kind, fmt,
                                                     outcome_of(self.result_code)).inc()

    def write_failure(self, status: int, code: str, message: str) -> None:
        numeric = {401: 40101, 403: 40301, 404: 40401, 405: 40501, 413: 41301, 429: 42901,
                   503: 50301}.get(status, 40001 if status < 500 else 50001)
        if status in (401, 403, 404, 405, 503):
            self.set_status(status)
            self.set_header("Content-Type", "application/json; charset=utf-8")
            self.finish(json.dumps({"code": numeric, "msg": message, "data": None}))
            return
        self.write_json(200, {"code": numeric, "msg": message, "data": None})

    def set_retry_after(self, exc: BaseException | None) -> None:
        """``Retry-After`` for a failure that says when to try again (a full queue)."""
        mapped = docs_error_for(exc) if exc is not None else None
        if mapped is not None and mapped.retry_after:
            self.set_header("Retry-After", str(mapped.retry_after))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        self.set_retry_after(exc)
        mapped = docs_error_for(exc) if exc is not None else None
        if mapped is not None:
            self.write_json(200, {"code": mapped.code, "msg": mapped.msg, "data": None})
            return
        super().write_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if value is not None and docs_error_for(value) is not None:
            return
        super().log_exception(typ, value, tb)

    async def prepare(self) -> None:
        await self.check_caller()

    async def check_caller(self) -> None:
        """Set ``self.caller`` (the one place the docs face authenticates, before any
        handler code): 401 without a caller, 403 when the method needs ADMIN or a browser
        sends the request from a site that is not allowed."""
        from tornado_app.callers import identify, require_admin
        from tornado_app.guards import cross_site_refused
        from tornado_app.session_cookie import credential as session_credential

        self.check_origin()
        if cross_site_refused(self.request, self.services.settings):
            raise ApiError(403, "FORBIDDEN", "cross-site request refused")
        self.caller = await identify(self.services, session_credential(self.request),
                                     self.request.remote_ip or "")
        request_base.remember(self.request)  # links to this service: where it was reached
        if self.request.method in self.admin_methods:
            require_admin(self.caller)

    @property
    def company_id(self) -> str:
        """The caller's company: the tenant every store call of this request is scoped to."""
        return self.caller.company_id


@tornado.web.stream_request_body
class UploadHandler(DocsHandler):
    """Multipart/form uploads read as a stream: a multipart body is parsed as it arrives and
    its parts spooled (``tornado_app.upload_spool``: memory, then files under
    ``DATA_DIR/tmp``), so the event loop only copies chunks; past the limit nothing more is
    kept, and the request answers 41301 (the body is drained, never buffered). Another body
    (url-encoded, or the JSON of ``/config/linkmap``) is kept in ``_chunks``."""

    _upload: MultipartBody | None = None

    def upload_limit(self) -> int:
        """The largest upload this route keeps (41301 past it)."""
        return self.services.settings.max_upload_bytes

    def field_limit(self) -> int:
        """The largest form field without a file name this route keeps (41301 past it)."""
        return min(self.upload_limit(), MAX_FIELD_BYTES)

    def body_limit(self) -> int:
        """Past the upload limit the body is drained (never kept) up to this, so the caller
        reads a 41301 answer instead of a reset connection."""
        return max(self.upload_limit() * 8, 1 << 30)

    async def prepare(self) -> None:
        await self.check_caller()
        self._chunks: list[bytes] = []
        self._received = 0
        self._over = False
        self._boundary_error = ""
        declared = self.request.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.upload_limit():
            if self.request.headers.get("Expect", "").strip().lower() == "100-continue":
                raise self._too_large()  # answered before the client sends its body
            self._over = True
            return
        content_type = self.request.headers.get("Content-Type", "")
        if content_type.startswith("multipart/form-data"):
            try:
                boundary = boundary_of(content_type)
            except MultipartError as exc:
                self._boundary_error = str(exc)
                return
            if boundary:
                self._upload = MultipartBody(boundary, self.services.settings.data_dir / "tmp",
                                             self.field_limit())

    def data_received(self, chunk: bytes) -> None:
        if self._finished or self._over:
            return  # answered already (a 408), or drained past the limit
        self._received += len(chunk)
        if self._received > self.upload_limit():
            self._over = True
            self._chunks.clear()
            self._discard_upload()
        elif self._upload is not None:
            self._upload.feed(chunk)
        elif not self.request.headers.get("Content-Type", "").startswith("multipart/"):
            self._chunks.append(chunk)

    def _too_large(self) -> DocsError:
        return DocsError(41301, f"upload is larger than {self.upload_limit()} bytes")

    def _discard_upload(self) -> None:
        if self._upload is not None:
            self._upload.discard()

    def on_finish(self) -> None:
        self._discard_upload()
        super().on_finish()

    def on_connection_close(self) -> None:
        self._discard_upload()
        super().on_connection_close()

    async def form(self) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
        """Parsed fields and files (``name -> (filename, bytes)``), once the body is in; the
        spooled parts are read, and large fields decoded, in a worker thread."""
        if self._over:
            raise self._too_large()
        args: dict[str, list[bytes]] = {}
        uploads: dict[str, tuple[str, bytes]] = {}
        content_type = self.request.headers.get("Content-Type", "")
        if self._received:
            if not content_type.startswith(("multipart/form-data",
                                            "application/x-www-form-urlencoded")):
                raise DocsError(40001, "send the fields as multipart/form-data")
            if self._boundary_error:
                raise DocsError(40001, f"malformed form body: {self._boundary_error}")
            if self._upload is not None:
                args, uploads = await self._multipart_parts()
            elif content_type.startswith("multipart/form-data"):
                raise DocsError(40001, "multipart/form-data needs a boundary")
            else:
                body = b"".join(self._chunks)
                self._chunks = []
                args = await _off_loop(len(body), _parse_urlencoded, content_type, body)
        for name, values in self.request.query_arguments.items():
            args.setdefault(name, values)
        size = sum(len(v) for values in args.values() for v in values)
        return await _off_loop(size, _decode_fields, args), uploads

    async def _multipart_parts(self
                               ) -> tuple[dict[str, list[bytes]], dict[str, tuple[str, bytes]]]:
        assert self._upload is not None
        try:
            return await self._upload.parts()
        except FieldTooLarge as exc:
            raise DocsError(41301, str(exc)) from exc
        except MultipartError as exc:
            raise DocsError(40001, f"malformed form body: {exc}") from exc
        except OSError as exc:
            raise DocsError(50001, "the upload could not be stored; try again") from exc


MAX_FIELD_BYTES = 1 << 20  # a form field without a file name, unless a route says more
_ON_LOOP_BYTES = 64 * 1024  # form work on less than this stays on the event loop


async def _off_loop(size: int, fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` at once for a small input, else in a worker thread."""
    if size < _ON_LOOP_BYTES:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


def _parse_urlencoded(content_type: str, body: bytes) -> dict[str, list[bytes]]:
    args: dict[str, list[bytes]] = {}
    try:
        tornado.httputil.parse_body_arguments(content_type, body, args, {})
    except tornado.httputil.HTTPInputError as exc:
        raise DocsError(40001, f"malformed form body: {exc}") from exc
    return args


def _decode_fields(args: dict[str, list[bytes]]) -> dict[str, str]:
    """The last value of each field as text: 40001 for one that is not UTF-8 or has a NUL."""
    fields: dict[str, str] = {}
    for name, values in args.items():
        try:
            fields[name] = values[-1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocsError(40001, f"field {name} is not valid UTF-8") from exc
        if "\x00" in fields[name]:
            raise DocsError(40001, f"field {name} contains a NUL character")
    return fields


def bool_field(fields: dict[str, str], name: str, default: bool = False) -> bool:
    """A form boolean (the one rule of ``store.booleans``); anything else is 40001."""
    try:
        return parse_bool(fields.get(name), default)
    except NotABoolean as exc:
        raise DocsError(40001, f"{name} must be true or false") from exc


def choice_field(fields: dict[str, str], name: str, allowed: tuple[str, ...] | list[str],
                 default: str) -> str:
    """A field limited to ``allowed`` values; others are 40002 (unsupported value)."""
    value = (fields.get(name) or default).strip()
    if value not in allowed:
        raise DocsError(40002, f"unsupported {name} {value!r}; use one of {', '.join(allowed)}")
    return value
