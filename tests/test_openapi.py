"""The OpenAPI description (``openapi.json``): valid OpenAPI 3.1, in step with the route
table both ways, and true of the running service (schemathesis against the real app).

The schemathesis run drives the real app over HTTP: Tornado on a loopback port in a thread
with its own event loop, real Redis and SecantusDB, the session's render pool (Chromium)
and SeaweedFS S3 storage. Each operation gets ``FUZZ_EXAMPLES`` generated examples per
phase (default 5 in the suite, deterministic; ``just fuzz`` runs 100, random, adds the
coverage phase and prints the figures), positive and negative, with an ADMIN session token
on every request. Checks: no 5xx, no v2 "internal error" (an exception the envelope hides
behind HTTP 200), every status documented, every body matching its schema, every content
type documented.

What the run changes so that it stays local and meaningful:
- every outgoing connection of this process is limited to loopback (a guard on
  ``getaddrinfo``/``connect``), and generated remote addresses (``source_url``,
  ``markdown_url``, ``cover_url``, ``logo_url``) and storage endpoints that pass validation
  are pointed at loopback servers: fuzzing never sends traffic elsewhere;
- ``POST /api/auth/logout`` gets a fresh session of its own (the ADMIN session stays valid);
- half the ``DELETE /api/keys/{id}`` requests name a key made for them (the rest: 404);
- a status or role change aimed at the ADMIN itself is aimed at another user instead;
- after an operation that replaces the active storage configuration, the working one is
  restored;
- positive examples get exactly one input of each exactly-one-of group, and some generated
  uploads, ids and folders are replaced by real ones (a DOCX, a zip, a staged archive id, a
  folder under ``FOLDER_ROOTS``) so that the conversions and batches really run;
- nothing else is held back: the malformed multipart bodies, odd storage regions, control
  characters in key prefixes, dot segments in proxy keys and unstorable link map entries the
  first runs found are refused with 4xx answers now, and the run keeps sending them.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import io
import ipaddress
import json
import os
import re
import socket
import threading
import types
import uuid
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import hypothesis
import jsonschema_rs
import pytest
import schemathesis
import tornado.httpserver
import tornado.httputil
import tornado.netutil
import tornado.routing
import tornado.web
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from store.storage_settings import SERVICE
from tests.local_http import LocalServer
from tornado_app.app import make_app
from tornado_app.openapi import description_bytes, openapi_routes
from tornado_app.services import Services
from tornado_app.settings import Settings

SPEC_PATH = Path(__file__).resolve().parents[1] / "openapi.json"
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES") or 0)
EXAMPLES = FUZZ_EXAMPLES or 5


@schemathesis.check
def no_masked_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """A v2 endpoint answers an unexpected exception with HTTP 200 and code 50001 "internal
    error" (its envelope keeps HTTP 200): that is a server error all the same."""
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return None
    if isinstance(body, dict) and body.get("code") == 50001 and body.get("msg") == \
            "internal error":
        raise AssertionError("v2 code 50001 'internal error': an unexpected exception")
    return None


CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance,
          content_type_conformance, no_masked_server_error]
# Mounted but not described: static files of the browser app (any file name under /ui/).
STATIC_EXCLUDED = (tornado.web.StaticFileHandler, tornado.web.RedirectHandler)
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")


# ----------------------------------------------------------------------- the document
@functools.cache
def _spec_text() -> str:
    return SPEC_PATH.read_text(encoding="utf-8")


def load_spec() -> dict[str, Any]:
    """A fresh copy of the description (callers may change it)."""
    return json.loads(_spec_text())


SPEC = load_spec()  # read-only, for the fuzz hooks


def test_description_is_valid_openapi_31() -> None:
    spec = load_spec()
    assert spec["openapi"].startswith("3.1")
    schema = schemathesis.openapi.from_dict(spec)
    schema.validate()  # the official OpenAPI 3.1 meta-schema
    operations = list(schema.get_all_operations())
    errors = [op.err() for op in operations if not isinstance(op, Ok)]
    assert errors == []  # every $ref resolves, every operation can be built
    assert len(operations) == sum(
        1 for item in spec["paths"].values() for m in item if m in METHODS)


def test_validator_rejects_a_broken_description() -> None:
    """The validity test above can fail: a description with a malformed operation is
    refused by the same loader."""
    spec = load_spec()
    broken = copy.deepcopy(spec)
    broken["paths"]["/health"]["get"]["responses"] = {"200": {"content": "nope"}}
    with pytest.raises(jsonschema_rs.ValidationError, match="health"):
        schemathesis.openapi.from_dict(broken).validate()


def test_every_failure_code_is_described() -> None:
    """Each error code of docs/api.md and DESIGN appears in the description's text (the
    reference in docs/api.md is generated from it)."""
    text = SPEC_PATH.read_text(encoding="utf-8")
    auth = ["VALIDATION_ERROR", "INVALID_ROLE", "USER_NOT_FOUND", "UNAUTHORIZED",
            "USER_DISABLED", "FORBIDDEN", "NOT_FOUND", "USERNAME_EXISTS", "LAST_ADMIN",
            "PAYLOAD_TOO_LARGE", "RATE_LIMITED", "SERVICE_UNAVAILABLE", "INTERNAL_ERROR",
            "WRONG_PASSWORD", "SETUP_TOKEN_INVALID"]
    docs = [40001, 40002, 40003, 40004, 40401, 41301, 42201, 50001, 50201, 50301, 50401]
    missing = [c for c in auth if f'"{c}"' not in text] + \
              [c for c in docs if not re.search(rf"\b{c}\b", text)]
    assert missing == []


def test_served_description_is_the_repository_file() -> None:
    assert json.loads(description_bytes()) == load_spec()


# ----------------------------------------------------------------------- routes both ways
def _template(pattern: str) -> str:
    """``/api/users/([^/]+)/role$`` and ``/api/users/{id}/role`` both become
    ``/api/users/{}/role``."""
    pattern = pattern.rstrip("$").replace("\\.", ".")
    pattern = re.sub(r"\((?:[^()]|\([^()]*\))*\)", "{}", pattern)
    return re.sub(r"\{[^}]*\}", "{}", pattern)


def mounted_routes(app: tornado.web.Application) -> dict[str, type]:
    """Every path rule of the app's routers (host rules included): template -> handler."""
    found: dict[str, type] = {}
    seen: set[int] = set()

    def walk(router: Any) -> None:
        if id(router) in seen:
            return
        seen.add(id(router))
        for rule in getattr(router, "rules", []):
            if isinstance(rule.target, tornado.routing.Router):
                walk(rule.target)
            elif isinstance(rule.matcher, tornado.routing.PathMatches):
                found[_template(rule.matcher.regex.pattern)] = rule.target

    walk(app.default_router)
    walk(app.wildcard_router)
    return found


def implemented_methods(handler: type) -> set[str]:
    return {m for m in METHODS
            if getattr(handler, m, None) is not getattr(tornado.web.RequestHandler, m)}


def build_app() -> tornado.web.Application:
    """The app as ``serve`` builds it (every route set), without opening services."""
    stub = types.SimpleNamespace(settings=Settings(), pool=None, storage=None)
    return make_app(stub)  # type: ignore[arg-type]  # a stub: no services are opened


def routed_handler(app: tornado.web.Application, path: str) -> type | None:
    """The handler class the app routes ``path`` to (``{param}`` filled with ``1``), or None
    when only the default 404 handler would answer."""
    uri = re.sub(r"\{[^}]*\}", "1", path)
    request = tornado.httputil.HTTPServerRequest(
        start_line=tornado.httputil.RequestStartLine("GET", uri, "HTTP/1.1"),
        headers=tornado.httputil.HTTPHeaders({"Host": "127.0.0.1"}))
    delegate = app.find_handler(request)
    handler = getattr(delegate, "handler_class", None)
    return None if handler is app.settings.get("default_handler_class") else handler


def test_every_mounted_route_is_described_and_every_described_route_is_mounted() -> None:
    spec = load_spec()
    described = {_template(p): {m for m in item if m in METHODS}
                 for p, item in spec["paths"].items()}
    app = build_app()
    mounted = mounted_routes(app)
    assert "/openapi.json" in mounted, \
        "app.py must mount tornado_app.openapi.openapi_routes() (GET /openapi.json)"
    served = {t: implemented_methods(h) for t, h in mounted.items()
              if not issubclass(h, STATIC_EXCLUDED)}
    assert sorted(set(served) - set(described)) == [], "mounted but not described"
    not_mounted = sorted(p for p in spec["paths"] if routed_handler(app, p) is None)
    assert not_mounted == [], "described but not mounted"
    wrong = {p: (sorted(served[p]), sorted(described[p]))
             for p in served if served[p] != described[p]}
    assert wrong == {}, "methods differ (mounted, described)"
    if any(issubclass(h, tornado.web.StaticFileHandler) for h in mounted.values()):
        assert "/ui/" in spec["paths"], "the browser app is mounted: describe GET /ui/"


def test_route_comparison_sees_a_missing_route() -> None:
    """The comparison above can fail: an extra mounted route shows up."""
    app = build_app()

    class Extra(tornado.web.RequestHandler):
        def get(self) -> None:
            self.finish()

    app.add_handlers(r".*", [(r"/api/extra/([0-9]+)", Extra)])
    assert mounted_routes(app)["/api/extra/{}"] is Extra
    assert routed_handler(app, "/api/extra/{n}") is Extra
    assert routed_handler(app, "/api/no-such-route") is None
    assert _template("/api/users/([^/]+)/status$") == _template("/api/users/{id}/status")


# ----------------------------------------------------------------------- network guard
def _loopback(host: Any) -> bool:
    if host is None:
        return True
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(scope="module")
def loopback_only() -> Iterator[None]:
    """While the service is fuzzed, this process connects to loopback addresses only (no
    DNS lookup of any other name either): a generated address can never leave the machine."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"fuzz run: {host!r} is not loopback")
        return real_getaddrinfo(host, *args, **kwargs)

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            raise ConnectionRefusedError(f"fuzz run: {address[0]} is not loopback")

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    with (mock.patch.object(socket, "getaddrinfo", getaddrinfo),
          mock.patch.object(socket.socket, "connect", connect),
          mock.patch.object(socket.socket, "connect_ex", connect_ex)):
        yield


# ----------------------------------------------------------------------- the live service
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2a7a5"
    "3c0000000049454e44ae426082")


def sample_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("docs/readme.md", "# Read me\n\n![logo](img/logo.png) [next](page.html)\n")
        zf.writestr("docs/page.html", "<h1>Page</h1><p><img src='img/logo.png'></p>")
        zf.writestr("docs/img/logo.png", PNG)
    return buf.getvalue()


@dataclass
class Live:
    """The running service and what the fuzz hooks need."""

    url: str
    loop: asyncio.AbstractEventLoop
    svc: Services
    token: str
    admin_id: int
    victim_id: int
    company_id: int
    storage_config: Any
    s3_endpoint: str
    remote: LocalServer
    folder: Path
    staged_id: str
    docx: bytes
    archive: bytes
    counts: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    def run(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def fresh_token(self) -> str:
        return self.run(self.svc.sessions.create(self.admin_id, self.company_id))

    def fresh_key_id(self) -> str:
        """The id of a new API key of the fuzz company (for a revoke that finds its key)."""
        from store import api_keys

        async def make() -> Any:
            async def create() -> Any:
                return await api_keys.create_key(self.svc.db, company_id=self.company_id,
                                                 name="fuzz", role="ANNOTATOR",
                                                 created_by=None, expires_at=None)
            try:
                return await create()
            except api_keys.TooManyKeys:  # generated creates filled the company: make room
                await self.svc.db.api_keys.delete_one({"companyId": self.company_id})
                return await create()

        key, _ = self.run(make())
        return key.id

    def restore_storage(self) -> None:
        self.run(self.svc.storage.configs.set_active(SERVICE, self.storage_config))


@pytest.fixture(scope="module")
def live(pytestconfig, loopback_only, redis_server, mongo_server, render_pool, s3, tmp_path_factory
         ) -> Iterator[Live]:
    from store import companies
    from store.objects import ObjectStore
    from store.storage_io import StorageIO
    from tests.conftest import add_user
    from tests.docx_fixtures import build_feature_docx
    from tornado_app.services import open_services

    folder = tmp_path_factory.mktemp("fuzz-folder")
    (folder / "img").mkdir()
    (folder / "img" / "logo.png").write_bytes(PNG)
    (folder / "guide.md").write_text("# Guide\n\n![logo](img/logo.png)\n", encoding="utf-8")
    settings = Settings(mongo_db=f"t_fuzz_{uuid.uuid4().hex[:12]}", allow_private_urls=True,
                        company_folder_roots={"FUZZ": (folder,)}, fetch_timeout_seconds=5.0,
                        storage_allowed_endpoints=(s3.endpoint,))
    bucket = f"fuzz{uuid.uuid4().hex[:12]}"
    config = s3.config(bucket)
    assert ObjectStore(config).test_connection(create_if_missing=True)["bucket_exists"]
    docx = build_feature_docx()
    remote = LocalServer({
        "/doc.docx": lambda h: _send(h, docx, "application/octet-stream"),
        "/readme.md": lambda h: _send(h, b"# Remote\n\n![img](http://127.0.0.1/none.png)\n",
                                      "text/markdown"),
        "/logo.png": lambda h: _send(h, PNG, "image/png"),
    })

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fuzz-server", daemon=True)
    thread.start()

    async def start() -> tuple[Any, ...]:
        svc = await open_services(settings, mongo_url=mongo_server.url,
                                  redis_url=redis_server.url)
        svc.pool = render_pool
        svc.storage = StorageIO(svc.db)
        await svc.storage.configs.set_active(SERVICE, config)
        admin_id = await add_user(svc, "FUZZ", "fuzzadmin", role="ADMIN")
        victim_id = await add_user(svc, "FUZZ", "victim", role="REVIEWER")
        company = await companies.get_by_code(svc.db, "FUZZ")
        token = await svc.sessions.create(admin_id, company.id)
        app = make_app(svc)
        if "/openapi.json" not in mounted_routes(app):  # until app.py mounts it
            app.add_handlers(r".*", openapi_routes())
        server = tornado.httpserver.HTTPServer(app, max_body_size=256 * 1024 * 1024)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server.add_sockets(sockets)
        return svc, server, token, admin_id, victim_id, company.id, sockets[0].getsockname()[1]

    svc, server, token, admin_id, victim_id, company_id, port = asyncio.run_coroutine_threadsafe(
        start(), loop).result(60)
    live = Live(url=f"http://127.0.0.1:{port}", loop=loop, svc=svc, token=token,
                admin_id=admin_id, victim_id=victim_id, company_id=company_id,
                storage_config=config, s3_endpoint=s3.endpoint, remote=remote, folder=folder,
                staged_id="", docx=docx, archive=sample_zip())
    live.staged_id = _stage(live)
    try:
        yield live
    finally:
        _report(live, pytestconfig)

        async def stop() -> None:
            server.stop()
            await server.close_all_connections()
            svc.pool = None  # the session's pool outlives this module
            svc.storage.close()
            await svc.close()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        remote.close()


def _send(handler: Any, body: bytes, ctype: str) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _stage(live: Live) -> str:
    import requests

    reply = requests.post(f"{live.url}/api/archive/stage",
                          files={"file": ("sample.zip", live.archive)}, timeout=30,
                          headers={"Authorization": f"Bearer {live.token}"})
    body = reply.json()
    assert body["code"] == 0, body
    return body["data"]["id"]


# ----------------------------------------------------------------------- fuzz adjustments
URL_FIELDS = ("source_url", "markdown_url", "cover_url", "logo_url")
ENDPOINT_FIELDS = ("endpoint", "public")
RESTORES_STORAGE = {("POST", "/config/storage"), ("GET", "/config/load_profile"),
                    ("POST", "/config/load_profile")}


def _pick(value: Any, n: int) -> int:
    """A stable choice from a generated value (so a replayed example is the same request)."""
    return hashlib.sha256(repr(value).encode()).digest()[0] % n


def _valid_endpoint(value: Any) -> bool:
    from store.storage_config import StorageConfigError, normalize_endpoint

    if not isinstance(value, str):
        return False
    try:
        normalize_endpoint(value)
    except StorageConfigError:
        return False
    return True


def adjust(case: Any, live: Live) -> dict[str, str]:
    """Keep the request local and the run meaningful; returns the headers to send."""
    headers = {"Authorization": f"Bearer {live.token}"}
    method, path = case.operation.method.upper(), case.operation.path
    if (method, path) == ("POST", "/api/auth/logout"):
        headers["Authorization"] = f"Bearer {live.fresh_token()}"
    params = case.path_parameters or {}
    if path.startswith("/api/users/{id}/") and str(params.get("id")) == str(live.admin_id):
        params["id"] = live.victim_id
    if (method, path) == ("DELETE", "/api/keys/{id}") and _pick(params.get("id"), 2):
        params["id"] = live.fresh_key_id()  # half the revokes find a real key of the company
    for container in (case.body, case.query):
        if not isinstance(container, dict):
            continue
        for name in URL_FIELDS:
            if name in container and container[name] not in (None, ""):
                target = {"source_url": "/doc.docx", "markdown_url": "/readme.md"}.get(
                    name, "/logo.png")
                choice = _pick(container[name], 3)
                container[name] = live.remote.url(target if choice else "/missing")
        for name in ENDPOINT_FIELDS:
            if _valid_endpoint(container.get(name)):
                container[name] = live.s3_endpoint if _pick(container[name], 4) else \
                    "127.0.0.1:9"  # a closed loopback port: the unreachable path
    body = case.body if isinstance(case.body, dict) else None
    if body is not None:
        # exactly-one-of groups: keep one given input (both given is the 40001 path, which
        # the negative examples still reach), so the conversions themselves run
        for group in (("file", "source_url"), ("md_file", "markdown_text", "markdown_url"),
                      ("cover_file", "cover_url"), ("logo_file", "logo_url")):
            given = [g for g in group if g in body and (
                g.endswith("file") or body[g] not in (None, ""))]  # an empty upload counts
            positive = case.meta is not None and not case.meta.generation.mode.is_negative
            if len(given) > 1 and positive:
                keep = given[_pick(body[given[0]], len(given))]
                for name in given:
                    if name != keep:
                        del body[name]
            elif not given and positive and group[0] == "file" and path == "/api/convert":
                body["file"] = live.docx
            elif not given and positive and group[0] == "md_file" and path == "/md/convert":
                body["markdown_text"] = "# Fuzz\n\nSome *text*, a [link](https://example.org).\n"
        if path == "/api/convert" and "file" in body and _pick(body["file"], 2):
            body["file"] = live.docx
        if path in ("/api/upload-archive", "/api/archive/stage") and "file" in body \
                and _pick(body["file"], 2):
            body["file"] = live.archive
        if path == "/api/archive/process" and _pick(body.get("id"), 2):
            body["id"] = live.staged_id
        if path == "/md/convert-folder" and str(body.get("folder_path", "")).startswith("/") \
                and _pick(body["folder_path"], 2):
            body["folder_path"] = str(live.folder)
    return headers


schema = schemathesis.openapi.from_path(SPEC_PATH)
schema.config.generation.update(
    max_examples=EXAMPLES, deterministic=not FUZZ_EXAMPLES, database="none", no_shrink=True)
schema.config.phases.update(
    phases=["examples", "coverage", "fuzzing"] if FUZZ_EXAMPLES else ["examples", "fuzzing"])
schema.config.update(request_timeout=180)


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES, deadline=None, database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_fuzz(case: Any, live: Live) -> None:
    operation = f"{case.operation.method.upper()} {case.operation.path}"
    label = operation if case.method.upper() == case.operation.method.upper() else \
        f"{operation} (as {case.method.upper()})"
    headers = adjust(case, live)
    try:
        response = case.call(base_url=live.url, headers=headers)
        live.counts[label][_outcome(response)] += 1
        case.validate_response(response, checks=CHECKS, headers=headers)
    finally:
        if (case.operation.method.upper(), case.operation.path) in RESTORES_STORAGE:
            live.restore_storage()


def _outcome(response: Any) -> str:
    """``200`` or, for a v2 envelope with a non-zero code, ``200/40001``."""
    status = str(response.status_code)
    if "json" in (response.headers.get("content-type") or [""])[0]:
        try:
            body = json.loads(response.content or b"null")
        except ValueError:
            return status
        if isinstance(body, dict) and isinstance(body.get("code"), int) and body["code"]:
            return f"{status}/{body['code']}"
    return status


def _report(live: Live, config: pytest.Config) -> None:
    """One line per operation (statuses seen) and the totals: the figures ``just fuzz``
    prints (also written to ``$FUZZ_REPORT`` when set)."""
    if not live.counts:
        return
    lines = [f"{label}: " + ", ".join(f"{st} x{n}" for st, n in sorted(c.items()))
             for label, c in sorted(live.counts.items())]
    operations = {label.split(" (as ", 1)[0] for label in live.counts}
    sent = sum(n for c in live.counts.values() for st, n in c.items() if st[0].isdigit())
    server_errors = sum(n for c in live.counts.values() for st, n in c.items()
                        if st[0] == "5")
    lines.append(f"fuzz: {len(operations)} operations, {sent} requests "
                 f"({EXAMPLES} generated examples per operation and phase), "
                 f"{server_errors} answered 5xx")
    text = "\n".join(lines)
    out = os.environ.get("FUZZ_REPORT")
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n" + text)
