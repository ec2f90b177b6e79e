"""Shared fixtures: real redis-server and SecantusDB started once per test session on
free loopback ports, and the real Tornado app driven over HTTP (pytest-tornasync)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing.process
import os
import subprocess
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis as redis_sync
import urllib3

from store.storage_settings import SERVICE
from tornado_app.app import make_app
from tornado_app.embedded.servers import Child, start_redis, start_secantus
from tornado_app.services import Services, open_services
from tornado_app.settings import Settings

# The suite's older tests read links as the storage's own (presigned and direct, on the S3
# host); tests/test_durable_links.py covers the default, the service's own links. Servers the
# tests start inherit this too.
os.environ.setdefault("STORAGE_LINKS", "presigned")

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"


def need_corpus() -> Path:
    """The shared corpus, or skip: a user's clone has no ../shared beside it."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    return CORPUS


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server answering every GET: its base URL and the paths requested, for
    tests that must fetch nothing (:func:`tests.local_http.counting_server`)."""
    from tests import local_http

    with local_http.counting_server() as served:
        yield served


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Child]:
    child = start_redis(tmp_path_factory.mktemp("redis"), persistent=False)
    yield child
    child.stop()


@pytest.fixture(scope="session")
def mongo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Child]:
    child = start_secantus(None, tmp_path_factory.mktemp("secantus-logs"))
    yield child
    child.stop()


@pytest.fixture
def settings() -> Settings:
    return Settings(mongo_db=f"t_{uuid.uuid4().hex[:12]}", allow_private_urls=True,
                    storage_links="presigned")


@pytest.fixture
def services(io_loop, settings, redis_server, mongo_server) -> Iterator[Services]:
    redis_sync.Redis.from_url(redis_server.url).flushdb()
    svc = io_loop.run_sync(lambda: open_services(
        settings, mongo_url=mongo_server.url, redis_url=redis_server.url))
    yield svc
    io_loop.run_sync(svc.close)


@pytest.fixture
def app(services):
    return make_app(services)


@dataclass
class Reply:
    status: int
    body: Any
    headers: Any
    raw: bytes = b""


AUTH_FACE_PATHS = ("/api/auth/", "/api/users", "/api/keys", "/api/setup", "/api/audit")
DOCS_CALLER_COMPANY = "DOCSCALLER"


class Api:
    """Small JSON client over the test server.

    Requests to the conversion face that name no credential (no ``token``, no
    ``Authorization`` header, not ``anon=True``) carry the test's docs caller: an ADMIN API
    key of company ``DOCSCALLER``, made on first use. This is the one place that lets the
    suite call docs endpoints as an authenticated caller; auth-face paths never get it."""

    def __init__(self, client: Any, services: Any = None) -> None:
        self.client = client
        self.services = services
        self._docs_key = ""

    async def docs_key(self) -> str:
        """The default docs caller's key (an ADMIN key of its own company)."""
        if not self._docs_key:
            from store import api_keys
            from tornado_app.seed import ensure_company

            company = await ensure_company(self.services, DOCS_CALLER_COMPANY, "Docs caller")
            _, self._docs_key = await api_keys.create_key(
                self.services.db, company_id=company.id, name="test suite", role="ADMIN",
                created_by=None, expires_at=None)
        return self._docs_key

    async def call(self, method: str, path: str, body: Any = None, *, token: str | None = None,
                   raw: bytes | str | None = None, headers: dict[str, str] | None = None,
                   anon: bool = False) -> Reply:
        hdrs = dict(headers or {})
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        elif (not anon and "Authorization" not in hdrs and self.services is not None
              and not path.startswith(AUTH_FACE_PATHS)):
            hdrs["Authorization"] = f"Bearer {await self.docs_key()}"
        data: bytes | str | None = raw
        if body is not None:
            data = json.dumps(body)
            hdrs.setdefault("Content-Type", "application/json")
        if data is None and method in ("POST", "PUT"):
            data = b""
        resp = await self.client.fetch(path, method=method, body=data, headers=hdrs,
                                       raise_error=False, request_timeout=60)
        raw_body = resp.body or b""
        parsed: Any = None
        if resp.headers.get("Content-Type", "").startswith(("application/json", "text/")):
            text = raw_body.decode("utf-8", "replace")
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = text
        return Reply(resp.code, parsed, resp.headers, raw_body)


async def docs_caller_company(svc: Services) -> str:
    """The company id of the suite's default docs caller (see :class:`Api`): the tenant whose
    objects the docs requests of a test store."""
    from tornado_app.seed import ensure_company

    return str((await ensure_company(svc, DOCS_CALLER_COMPANY, "Docs caller")).id)


@pytest.fixture
def api(http_server_client, app) -> Api:
    return Api(http_server_client, app.settings.get("services"))


PASSWORD = "correct horse battery"


async def add_user(svc: Services, company_code: str, username: str, *, role: str = "ANNOTATOR",
                   status: str = "ACTIVE", password: str = PASSWORD,
                   real_name: str = "") -> int:
    """Create (company and) user directly through the stores; returns the user id."""
    from store import users
    from tornado_app.seed import ensure_company, ensure_user

    company = await ensure_company(svc, company_code, f"{company_code} Ltd")
    await ensure_user(svc, company, {"username": username, "password": password, "role": role,
                                     "status": status, "realName": real_name})
    user = await users.find_by_username(svc.db, company.id, username)
    assert user is not None
    return user.id


async def login(api: Api, company: str, username: str, password: str = PASSWORD) -> str:
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": company, "username": username, "password": password})
    assert r.status == 200, r.body
    return r.body["data"]["token"]


@pytest.fixture(scope="session")
def render_pool():
    """One real process pool for the session (it is not bound to an event loop)."""
    from render_pool.runtime.pool import RenderPool

    pool = RenderPool(2, queue_limit=8, job_timeout=120, memory_limit_mb=2000)
    yield pool
    pool.close(wait=False)


@pytest.fixture
def docs_services(services, render_pool):
    services.pool = render_pool
    return services


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]] | None = None
              ) -> tuple[bytes, str]:
    """Encode a multipart/form-data body (urllib3's encoder); returns (body, content type)."""
    parts: list[tuple[str, object]] = list(fields.items())
    parts += [(name, (filename, data, "application/octet-stream"))
              for name, (filename, data) in (files or {}).items()]
    return urllib3.encode_multipart_formdata(parts)


async def post_form(api: Api, path: str, fields: dict[str, str],
                    files: dict[str, tuple[str, bytes]] | None = None, **kw: Any) -> Reply:
    body, ctype = multipart(fields, files)
    headers = {"Content-Type": ctype, **kw.pop("headers", {})}
    return await api.call("POST", path, raw=body, headers=headers, **kw)


@pytest.fixture(scope="session")
def s3():
    """A real SeaweedFS S3 server for the session (it checks signatures)."""
    from tests.s3_server import running_s3

    with running_s3() as server:
        yield server


@pytest.fixture
def storage_services(io_loop, docs_services, s3):
    """Docs services with storage on a fresh bucket of the session's S3 server."""
    from store.objects import ObjectStore
    from store.storage_io import StorageIO

    bucket = f"b{uuid.uuid4().hex[:16]}"
    config = s3.config(bucket)
    assert ObjectStore(config).test_connection(create_if_missing=True)["bucket_exists"]
    manager = StorageIO(docs_services.db)
    docs_services.storage = manager
    # the session's S3 server listens on loopback, which the address policy refuses unless
    # the operator lists it (STORAGE_ALLOWED_ENDPOINTS)
    docs_services.settings = dataclasses.replace(docs_services.settings,
                                                 storage_allowed_endpoints=(s3.endpoint,))
    io_loop.run_sync(lambda: manager.configs.set_active(SERVICE, config))
    yield docs_services
    manager.close()
    s3.drop_bucket(bucket)  # a bucket holds a volume of the session's server until dropped


@pytest.fixture
def job_consumer(io_loop, storage_services):
    """A job consumer on the test's services (``serve`` runs one), so ``async=true`` jobs run."""
    from tornado_app.documents.job_worker import JobWorker

    worker = JobWorker(storage_services)
    io_loop.add_callback(worker.start)
    yield worker
    io_loop.run_sync(lambda: worker.stop(5))


@pytest.fixture(scope="module", autouse=True)
def _no_browser_left_running() -> Iterator[None]:
    """Chromium in this process (Playwright's sync API, started by a test that prints a PDF
    in process) keeps an event loop marked running in this thread until it is closed: every
    later test on an asyncio loop would fail. Closed after each module that started it."""
    yield
    from render_pool.runtime import browser

    browser.close_browser()


# `just test-fast` runs `-m "not slow"`. A test is slow when it needs a real server, the render
# pool's processes, Chromium or any other process (LibreOffice, Tesseract, pandoc, pdftotext):
# classified here by fixture so new tests need no mark; tests that start processes themselves
# carry `pytest.mark.slow` (a module: `pytestmark = pytest.mark.slow`). The guard below holds
# the line: a test not marked slow that starts a process fails, naming the program. Cost and
# linearity checks on large inputs (seconds of CPU each) are marked slow too, so the fast set
# stays under a minute of CPU.
SLOW_FIXTURES = frozenset({
    "redis_server", "mongo_server", "render_pool", "s3",
    "office_set",  # tests/test_reader_office.py: converted by LibreOffice
})


def _fixture_closure(item: pytest.Item, names: Iterable[str], seen: set[str]) -> set[str]:
    """``names`` and every fixture they request, as resolved for ``item``."""
    manager = item.session._fixturemanager
    for name in names:
        if name not in seen:
            seen.add(name)
            defs = manager.getfixturedefs(name, item)
            if defs:
                _fixture_closure(item, defs[-1].argnames, seen)
    return seen


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "http_server" in names:  # pytest-tornasync asks for `app` at run time
            names = _fixture_closure(item, ["app"], names)
        if SLOW_FIXTURES & names:
            item.add_marker(pytest.mark.slow)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the current output (then review the diff)")


# The node id of the test now running when it is not marked slow (None otherwise): read by the
# process guard from any thread, so a module global rather than a context variable.
_fast_test: str | None = None
# What the guard refused during the running phase: a process started from another thread
# raises there, where nothing may report it, so the phase's report fails from this list.
_refused: list[str] = []
_popen_init = subprocess.Popen.__init__
_process_start = multiprocessing.process.BaseProcess.start


def _refuse_in_fast_test(program: str) -> None:
    """Fail the running fast test: it starts ``program``, so by the definition above it is
    slow (and would make `just test-fast` slow without anyone noticing)."""
    if _fast_test is not None:
        message = (f"{_fast_test} starts a process ({program}) but is not marked slow: add "
                   "`@pytest.mark.slow` (see SLOW_FIXTURES in tests/conftest.py)")
        _refused.append(message)
        pytest.fail(message, pytrace=False)


def _guarded_popen_init(self: subprocess.Popen, args: Any, *rest: Any, **kw: Any) -> None:
    # ``args`` is a program (text, bytes or a path) or a sequence whose first item is one
    program = args if isinstance(args, str | bytes | os.PathLike) else next(iter(args), "?")
    _refuse_in_fast_test(Path(os.fsdecode(program)).name)
    _popen_init(self, args, *rest, **kw)


def _guarded_process_start(self: multiprocessing.process.BaseProcess) -> None:
    _refuse_in_fast_test(f"multiprocessing {self.name}")
    _process_start(self)


subprocess.Popen.__init__ = _guarded_popen_init  # type: ignore[method-assign]
multiprocessing.process.BaseProcess.start = _guarded_process_start  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Arm the process guard around a fast test's setup, call and teardown."""
    global _fast_test
    _fast_test = None if item.get_closest_marker("slow") else item.nodeid
    _refused.clear()
    try:
        yield
    finally:
        _fast_test = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    """A phase in which the guard refused a process fails, also when the refusal was raised
    in another thread (and only printed there) or caught by the code under test."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if _refused and report.passed:
        report.outcome = "failed"
        report.longrepr = _refused[0]
    _refused.clear()
