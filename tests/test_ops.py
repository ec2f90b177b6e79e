"""Operations: Prometheus metrics and readiness."""

from __future__ import annotations

import dataclasses

import pytest

from store.storage_settings import SERVICE
from tests.conftest import PASSWORD, add_user, login, post_form
from tests.docx_fixtures import build_feature_docx
from tornado_app.app import make_app

OPERATOR = "operator-token-for-ops-tests"


@pytest.fixture
def app(storage_services):
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    docs_api_token=OPERATOR)
    return make_app(storage_services)


async def test_metrics_count_requests_logins_and_conversions(api, storage_services):
    await add_user(storage_services, "ACME", "mona")
    token = await login(api, "ACME", "mona")
    await api.call("GET", "/api/auth/me", token=token)
    await api.call("POST", "/api/auth/login",
                   {"companyCode": "ACME", "username": "mona", "password": "wrong password"})
    reply = await post_form(api, "/api/convert", {}, {"file": ("f.docx", build_feature_docx())})
    assert reply.body["code"] == 0
    await post_form(api, "/api/convert", {}, {"file": ("bad.docx", b"PK\x03\x04broken")})
    await post_form(api, "/md/convert", {"markdown_text": "# M", "target": "docx"})
    metrics = await api.call("GET", "/metrics", token=OPERATOR)
    assert metrics.status == 200 and metrics.headers["Content-Type"].startswith("text/plain")
    text = metrics.raw.decode()
    assert 'http_requests_total{method="GET",route="MeHandler",status="200"} 1.0' in text
    assert 'http_requests_total{method="POST",route="LoginHandler",status="401"} 1.0' in text
    assert "login_failures_total 1.0" in text
    assert 'conversions_total{format="markdown",kind="document",outcome="ok"} 1.0' in text
    assert 'conversions_total{format="markdown",kind="document",outcome="client_error"} 1.0' in text
    assert 'conversions_total{format="docx",kind="markdown",outcome="ok"} 1.0' in text
    assert "http_request_duration_seconds_bucket" in text
    assert "render_pool_busy_workers" in text and "render_pool_queue_depth" in text
    assert "browser_restarts_total" in text
    for secret in (token, PASSWORD, "mona", "ACME"):
        assert secret not in text


async def test_ready_reports_each_dependency(api, storage_services, s3):
    reply = await api.call("GET", "/ready", token=OPERATOR)
    assert reply.status == 200 and reply.body["status"] == "ok"
    assert set(reply.body["checks"]) == {"mongodb", "redis", "storage", "chromium"}
    assert all(c["ok"] for c in reply.body["checks"].values())
    from store.storage_config import StorageConfig

    await storage_services.storage.configs.set_active(SERVICE, StorageConfig.from_form({
        "endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
        "bucket": "does-not-exist"}))
    reply = await api.call("GET", "/ready", token=OPERATOR)
    assert reply.status == 503 and reply.body["status"] == "degraded"
    assert reply.body["checks"]["storage"]["ok"] is False
    assert reply.body["checks"]["redis"]["ok"] is True
    assert (await api.call("GET", "/health")).status == 200


async def test_ops_endpoints_need_the_operator_token_on_the_main_port(api, storage_services):
    for path in ("/metrics", "/ready"):
        assert (await api.call("GET", path, anon=True)).status == 401
        refused = await api.call("GET", path)  # a company ADMIN key is not the operator
        assert refused.status == 401 and "http_requests_total" not in refused.raw.decode()
    assert (await api.call("GET", "/health", anon=True)).status == 200
    # no operator token configured: the main port does not serve them at all
    storage_services.settings = dataclasses.replace(storage_services.settings, docs_api_token="")
    for path in ("/metrics", "/ready"):
        hidden = await api.call("GET", path, token=OPERATOR)
        assert hidden.status == 404 and hidden.body["code"] == "NOT_FOUND"
