"""The fixed cost of every request (issue 34, item 2), cut without a change a caller sees:

- a path that names one route exactly is found by a dictionary look-up, and reaches the
  very rule (handler, arguments) the walk down the route table reaches;
- the commands in flight on the shared Redis connection share one timer, and each still
  gets its whole timeout;
- the access log record, the request id, the response headers and the metrics are what
  they were.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import tornado.web
from redis.exceptions import TimeoutError as RedisTimeoutError
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine, format_timestamp
from tornado.routing import PathMatches

from store.redis_pipe import RedisPipe
from tests.test_redis_pipe import fake_redis
from tornado_app.app import make_app
from tornado_app.guards import GuardedApplication, exact_routes, literal_path
from tornado_app.http import BaseHandler, http_date, log_request, new_request_id
from tornado_app.logs import JsonFormatter
from tornado_app.metrics import Metrics
from tornado_app.settings import Settings


def _services() -> SimpleNamespace:
    return SimpleNamespace(settings=Settings(), metrics=Metrics())


def _request(path: str, method: str = "GET") -> HTTPServerRequest:
    return HTTPServerRequest(start_line=RequestStartLine(method, path, "HTTP/1.1"),
                             headers=HTTPHeaders({"Host": "localhost"}))


def _found(app: tornado.web.Application, path: str, *, walk: bool = False) -> tuple[Any, ...]:
    """(handler class, its arguments, path arguments) of the route ``path`` reaches: through
    the application, or (``walk``) through Tornado's own walk down the table."""
    find = tornado.web.Application.find_handler if walk else type(app).find_handler
    delegate = find(app, _request(path))
    return (delegate.handler_class, delegate.handler_kwargs, delegate.path_args,
            delegate.path_kwargs)


class Early(BaseHandler):
    def get(self, *args: str) -> None:
        self.write_json(200, {"route": "early", "args": list(args)})


class Late(BaseHandler):
    def get(self) -> None:
        self.write_json(200, {"route": "late"})


def test_literal_path_is_the_one_path_a_plain_pattern_matches() -> None:
    assert literal_path("/api/auth/me$") == "/api/auth/me"
    assert literal_path("/api/auth/me") == "/api/auth/me"
    assert literal_path(r"/x\.y$") == "/x.y"
    assert literal_path(r"/a\-b\$") == "/a-b$"
    for pattern in ("/openapi.json$", r"/a/([^/]+)$", r"/a\d$", "^/a$", "/a|/b", "/a?",
                    "/ui/(.*)$", "/a\\"):
        assert literal_path(pattern) is None, pattern


def test_an_exact_path_is_found_without_trying_the_routes_before_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = GuardedApplication([(r"/health", Early), (r"/api/users/([^/]+)", Early),
                              (r"/api/auth/me", Late)], services=_services())
    assert _found(app, "/health")[0] is Early  # the first request makes the dictionary
    tried: list[str] = []
    for rule in app.wildcard_router.rules[:2]:
        matcher: Any = rule.matcher
        match = matcher.match

        def counted(request: Any, match: Any = match, pattern: str = matcher.regex.pattern
                    ) -> Any:
            tried.append(pattern)
            return match(request)

        monkeypatch.setattr(rule.matcher, "match", counted)
    assert _found(app, "/api/auth/me")[0] is Late
    assert tried == []  # the table walk tries /health$ and /api/users/([^/]+)$ first


def test_every_path_reaches_the_rule_the_table_walk_reaches() -> None:
    routes: list[Any] = [(r"/a/([^/]+)", Early), (r"/a/b", Late), (r"/a/b/c", Late), (r"/x\.y", Late),
              (r"/x.z", Late), (r"/r", tornado.web.RedirectHandler, {"url": "/x.y"}),
              (r"/a/b/c", Early), (r"/plain", Late)]
    app = GuardedApplication(routes, services=_services(),
                             default_handler_class=tornado.web.ErrorHandler,
                             default_handler_args={"status_code": 404})
    table = exact_routes(app.wildcard_router.rules)
    assert set(table) == {"/a/b/c", "/x.y", "/r", "/plain"}  # /a/b: the group route first
    assert table["/a/b/c"].target is Late  # the first of two rules of one path
    for path in ("/a/b", "/a/b/c", "/x.y", "/x.z", "/xQz", "/r", "/plain", "/plain/",
                 "/plain?", "/nowhere", "/a/b/c/d", "/PLAIN"):
        assert _found(app, path) == _found(app, path, walk=True), path


def test_the_service_routes_are_found_as_the_table_walk_finds_them() -> None:
    app = make_app(_services())  # type: ignore[arg-type]
    paths = ["/health", "/api/auth/me", "/api/auth/login", "/api/users", "/api/users/7",
             "/api/users/me/role", "/api/convert", "/openapi.json", "/ui", "/ui/", "/",
             "/api/jobs/abc123", "/api/keys", "/api/keys/x", "/md/convert", "/nothing"]
    for rule in app.wildcard_router.rules:
        path = literal_path(cast(PathMatches, rule.matcher).regex.pattern)
        if path is not None:
            paths.append(path)
    for path in paths:
        assert _found(app, path) == _found(app, path, walk=True), path
    assert exact_routes(app.wildcard_router.rules)["/api/auth/me"].target.__name__ == (
        "MeHandler")


def test_routes_added_later_are_found() -> None:
    app = GuardedApplication([(r"/one", Early)], services=_services(),
                             default_handler_class=tornado.web.ErrorHandler,
                             default_handler_args={"status_code": 404})
    assert _found(app, "/one")[0] is Early and _found(app, "/two")[0] is tornado.web.ErrorHandler
    app.wildcard_router.add_rules([(r"/two", Late)])
    assert _found(app, "/two")[0] is Late
    app.add_handlers(r"other\.example", [(r"/one", Late)])  # host rules come first
    assert _found(app, "/one") == _found(app, "/one", walk=True)


async def test_commands_in_flight_share_one_timer(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    socket = tmp_path / "redis.sock"
    pipe = RedisPipe(str(socket), timeout=5)
    loop = asyncio.get_running_loop()
    timers: list[Any] = []
    for name in ("call_at", "call_later"):
        original = getattr(loop, name)

        def counted(when: float, callback: Any, *args: Any, original: Any = original,
                    **kwargs: Any) -> Any:
            if getattr(callback, "__self__", None) is pipe:
                timers.append(callback)
            return original(when, callback, *args, **kwargs)

        monkeypatch.setattr(loop, name, counted)
    async with fake_redis(socket, lambda command: b":1\r\n"):
        assert await pipe.call("PING") == 1
        assert await asyncio.gather(*(pipe.call("GET", f"k{i}") for i in range(20))) == [1] * 20
    pipe.close()
    assert len(timers) <= 1  # one timer per command: 21


async def test_a_later_command_still_gets_its_whole_timeout(tmp_path: Path) -> None:
    socket = tmp_path / "redis.sock"

    def answer(command: list[str]) -> bytes | None:
        return None if command[0] == "HANG" else b":1\r\n"

    pipe = RedisPipe(str(socket), timeout=2.0)
    async with fake_redis(socket, answer):
        assert await pipe.call("GET", "k") == 1  # the timer is set for this one's due time
        await asyncio.sleep(1.2)
        hang = asyncio.ensure_future(pipe.call("HANG"))
        await asyncio.sleep(1.2)  # past the first command's due time, before this one's
        assert not hang.done()
        with pytest.raises(RedisTimeoutError):
            await hang
    pipe.close()


class Hello(BaseHandler):
    def get(self) -> None:
        self.write_json(200, {"greeting": "grüß dich", "n": 1})


@pytest.fixture
def app() -> tornado.web.Application:
    return tornado.web.Application([(r"/hello", Hello)], services=_services(),
                                   log_function=log_request)


async def test_the_response_headers_body_and_access_line_are_as_before(
        http_server_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tornado_app.access")
    caplog.handler.setFormatter(JsonFormatter())
    response = await http_server_client.fetch("/hello")
    assert response.body == '{"greeting": "grüß dich", "n": 1}'.encode()
    request_id = response.headers["X-Request-Id"]
    parsed = uuid.UUID(hex=request_id)
    assert parsed.hex == request_id and parsed.version == 4
    assert parsed.variant == uuid.RFC_4122
    for name, value in (("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store"),
                        ("Content-Type", "application/json; charset=utf-8"),
                        ("Server", f"TornadoServer/{tornado.version}")):
        assert response.headers.get_list(name) == [value]
    names = [name for name, _ in response.headers.get_all()]
    assert names == ["Server", "Content-Type", "Date", "X-Request-Id", "X-Content-Type-Options",
                     "Cache-Control", "Etag", "Content-Length", "Connection"], names
    records = [r for r in caplog.records if r.name == "tornado_app.access"]
    assert len(records) == 1
    record = records[0]
    assert (record.funcName, Path(record.pathname).name) == ("log_request", "http.py")
    first = log_request.__code__.co_firstlineno
    assert first < record.lineno < first + 40
    line = json.loads(caplog.text.strip().splitlines()[-1])
    assert line["msg"] == "request" and line["request_id"] == request_id
    assert {k: line[k] for k in ("method", "path", "status", "remote")} == {
        "method": "GET", "path": "/hello", "status": 200, "remote": "127.0.0.1"}
    assert set(line) == {"ts", "level", "logger", "msg", "request_id", "method", "path",
                         "status", "duration_ms", "remote"}


def test_the_date_header_is_tornados() -> None:
    for second in (0, 1_359_312_200, 1_764_000_000, 4_102_444_799):
        assert http_date(second) == format_timestamp(second)


def test_request_ids_are_version_4_uuids() -> None:
    ids = {new_request_id() for _ in range(2000)}
    assert len(ids) == 2000
    for value in ids:
        parsed = uuid.UUID(hex=value)
        assert parsed.hex == value and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_request_metrics_count_as_before() -> None:
    metrics = Metrics()
    for i in range(30):
        metrics.observe_request("Hello", f"MADE{i}", 405, 0.002)
        metrics.observe_request("Hello", "GET", 200, 0.02)
    metrics.observe_request("Hello", "GET", 500, 3.0)
    text = metrics.render(None).decode()
    assert 'http_requests_total{method="OTHER",route="Hello",status="405"} 30.0' in text
    assert 'http_requests_total{method="GET",route="Hello",status="200"} 30.0' in text
    assert 'http_requests_total{method="GET",route="Hello",status="500"} 1.0' in text
    assert 'http_request_duration_seconds_count{route="Hello"} 61.0' in text
    assert 'http_request_duration_seconds_bucket{le="0.005",route="Hello"} 30.0' in text
    assert 'http_request_duration_seconds_bucket{le="0.025",route="Hello"} 60.0' in text
