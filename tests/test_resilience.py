"""A dependency going away mid-run: a clear 503, no crash, recovery when it returns."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import PASSWORD, Api, add_user, login
from tornado_app.app import make_app
from tornado_app.embedded.servers import start_redis
from tornado_app.services import open_services


@pytest.fixture
def own_redis(tmp_path):
    child = start_redis(tmp_path / "r", persistent=False)
    yield tmp_path / "r", child
    child.stop()


@pytest.fixture
def app(io_loop, settings, own_redis, mongo_server):
    _, child = own_redis
    svc = io_loop.run_sync(lambda: open_services(settings, mongo_url=mongo_server.url,
                                                 redis_url=child.url))
    application = make_app(svc)
    application.settings["test_redis"] = own_redis
    yield application
    io_loop.run_sync(svc.close)


async def test_redis_away_gives_503_then_recovers(app, http_server_client):
    api = Api(http_server_client)
    svc = app.settings["services"]
    directory, child = app.settings["test_redis"]
    await add_user(svc, "ACME", "olga")
    token = await login(api, "ACME", "olga")
    child.stop()
    r = await api.call("GET", "/api/auth/me", token=token)
    assert r.status == 503 and r.body["code"] == "SERVICE_UNAVAILABLE"
    assert "Traceback" not in str(r.body)
    r = await api.call("POST", "/api/auth/login",
                       {"companyCode": "ACME", "username": "olga", "password": PASSWORD})
    assert r.status == 503
    assert (await api.call("GET", "/health")).status == 200
    restarted = start_redis(directory, persistent=False)
    try:
        # the old session died with the non-persistent Redis; logging in again works
        new_token = await login(api, "ACME", "olga")
        assert (await api.call("GET", "/api/auth/me", token=new_token)).status == 200
    finally:
        restarted.stop()


async def test_shutdown_wait_wakes_when_the_last_request_ends():
    import asyncio

    from tornado_app.http import InFlight

    inflight = InFlight()
    assert await inflight.wait_idle(0.01) is True  # nothing in flight
    inflight.started()
    inflight.started()
    assert await inflight.wait_idle(0.05) is False  # still busy when the grace ends
    waiter = asyncio.ensure_future(inflight.wait_idle(5))
    inflight.ended()
    # loop turns, not time: a wake-up by that first ended() (the waiter's wait_for and its
    # inner wait) would have completed the waiter within these turns
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiter.done()
    inflight.ended()
    assert await waiter is True and inflight.count == 0


async def test_audit_store_down_never_changes_an_answer(app, http_server_client):
    """The audit trail writes to a MongoDB that is not there: every request answers exactly
    as it does with the audit trail working, and the lost records are counted."""
    from motor.motor_asyncio import AsyncIOMotorClient

    from tornado_app.embedded.servers import free_port

    api = Api(http_server_client)
    svc = app.settings["services"]
    await add_user(svc, "ACME", "boss", role="ADMIN")
    uid = await add_user(svc, "ACME", "pia")
    dead = AsyncIOMotorClient(f"mongodb://127.0.0.1:{free_port()}",
                              serverSelectionTimeoutMS=200, connectTimeoutMS=200)
    svc.audit.db = dead["gone"]
    try:
        admin = await login(api, "ACME", "boss")
        bad = await api.call("POST", "/api/auth/login", {"companyCode": "ACME",
                                                         "username": "pia", "password": "x" * 9})
        assert bad.status == 401 and bad.body["code"] == "USER_NOT_FOUND"
        for method, path, body in [
            ("PUT", f"/api/users/{uid}", {"realName": "Pia P"}),
            ("PUT", f"/api/users/{uid}/role", {"role": "REVIEWER"}),
            ("PUT", f"/api/users/{uid}/password", {"password": "a fresh password"}),
            ("PUT", f"/api/users/{uid}/status", {"status": "DISABLED"}),
        ]:
            r = await api.call(method, path, body, token=admin)
            assert (r.status, r.body) == (200, {"code": "SUCCESS", "data": None}), path
        r = await api.call("POST", "/api/auth/logout", token=admin)
        assert r.status == 200
        await svc.audit.flush(10)
        svc.settings = dataclasses.replace(svc.settings, docs_api_token="operator-token")
        metrics = (await api.call("GET", "/metrics", token="operator-token")).raw.decode()
        line = next(x for x in metrics.splitlines()
                    if x.startswith('audit_records_dropped_total{reason="store_error"}'))
        assert float(line.rsplit(" ", 1)[1]) >= 6
    finally:
        dead.close()
