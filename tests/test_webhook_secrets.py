"""Per-company webhook signing secrets over HTTP, with a real job consumer and a real receiver
on loopback: a ``callback_url`` is refused (40001) while the company has no secret; an ADMIN
makes one (shown once), ``GET`` only says that it exists; deliveries are signed with the
job's company's secret; a rotation replaces it at once; ``WEBHOOK_SECRET`` signs only the
operator token's jobs."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from typing import Any

import pytest
import tornado.httpserver
import tornado.web

from tests.conftest import add_user, login, post_form
from tests.waiting import eventually
from tornado_app.app import make_app
from tornado_app.embedded.servers import free_port

pytestmark = pytest.mark.timeout(120)
OPERATOR = "operator-token-for-webhook-secrets"
OPERATOR_SECRET = "the operator's own webhook secret"


class _Hook(tornado.web.RequestHandler):
    def initialize(self, seen: list[dict[str, Any]]) -> None:
        self.seen = seen

    def post(self) -> None:
        self.seen.append({"headers": dict(self.request.headers), "body": self.request.body})


@pytest.fixture
def app(storage_services):
    storage_services.settings = dataclasses.replace(
        storage_services.settings, docs_api_token=OPERATOR, webhook_secret=OPERATOR_SECRET)
    return make_app(storage_services)


@pytest.fixture
def receiver():
    seen: list[dict[str, Any]] = []
    port = free_port()
    server = tornado.httpserver.HTTPServer(
        tornado.web.Application([(r"/hook", _Hook, {"seen": seen})]))
    server.listen(port, "127.0.0.1")
    yield f"http://127.0.0.1:{port}/hook", seen
    server.stop()


def _signed_with(hit: dict[str, Any], secret: str) -> bool:
    stamp = hit["headers"]["X-Timestamp"]
    mac = hmac.new(secret.encode(), stamp.encode() + b"." + hit["body"], hashlib.sha256)
    return hmac.compare_digest(hit["headers"]["X-Signature"], "sha256=" + mac.hexdigest())


async def _job(api, token: str, url: str) -> Any:
    return await post_form(api, "/md/convert", {
        "async": "true", "target": "docx", "markdown_text": "# Hook\n", "callback_url": url},
        token=token)


async def _delivered(seen: list[dict[str, Any]], job_id: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return next((hit for hit in seen if json.loads(hit["body"])["id"] == job_id), None)

    return await eventually(found, 60, interval=0.05, what=f"a delivery of job {job_id}")


async def test_a_company_signs_its_webhooks_with_its_own_secret(api, storage_services,
                                                                job_consumer, receiver):
    url, seen = receiver
    await add_user(storage_services, "ACME", "ada", role="ADMIN")
    await add_user(storage_services, "ACME", "ann", role="ANNOTATOR")
    await add_user(storage_services, "BETA", "bob", role="ADMIN")
    ada, ann, bob = (await login(api, "ACME", "ada"), await login(api, "ACME", "ann"),
                     await login(api, "BETA", "bob"))

    # no secret yet: a callback_url is refused before any job exists
    state = await api.call("GET", "/api/webhook-secret", token=ada)
    assert state.body == {"code": 0, "msg": "ok", "data": {"exists": False, "createdAt": None}}
    refused = await _job(api, ada, url)
    assert refused.body["code"] == 40001 and "POST /api/webhook-secret" in refused.body["msg"]
    assert (await api.call("GET", "/api/jobs", token=ada)).body["data"]["total"] == 0

    # ADMIN only
    for method in ("GET", "POST"):
        low = await api.call(method, "/api/webhook-secret", token=ann,
                             raw=b"" if method == "POST" else None)
        assert low.status == 403 and low.body["code"] == 40301

    made = await api.call("POST", "/api/webhook-secret", token=ada, raw=b"")
    assert made.body["code"] == 0 and made.headers["Cache-Control"] == "no-store"
    first = made.body["data"]["secret"]
    assert first.startswith("whsec_") and len(first) >= 40 and made.body["data"]["rotated"] is False
    shown = await api.call("GET", "/api/webhook-secret", token=ada)
    assert shown.body["data"]["exists"] is True
    assert shown.body["data"]["createdAt"] == made.body["data"]["createdAt"]
    assert first not in json.dumps(shown.body)
    beta = (await api.call("POST", "/api/webhook-secret", token=bob, raw=b"")).body["data"]
    assert beta["secret"] != first

    job = await _job(api, ada, url)
    assert job.body["code"] == 0, job.body
    hit = await _delivered(seen, job.body["data"]["job_id"])
    assert _signed_with(hit, first) and not _signed_with(hit, beta["secret"])
    assert not _signed_with(hit, OPERATOR_SECRET) and not _signed_with(hit, "")

    # a rotation replaces the secret at once
    rotated = (await api.call("POST", "/api/webhook-secret", token=ada, raw=b"")).body["data"]
    assert rotated["rotated"] is True and rotated["secret"] != first
    job = await _job(api, ada, url)
    hit = await _delivered(seen, job.body["data"]["job_id"])
    assert _signed_with(hit, rotated["secret"]) and not _signed_with(hit, first)


async def test_webhook_secret_signs_only_the_operators_jobs(api, storage_services,
                                                             job_consumer, receiver):
    url, seen = receiver
    job = await _job(api, OPERATOR, url)
    assert job.body["code"] == 0, job.body
    hit = await _delivered(seen, job.body["data"]["job_id"])
    assert _signed_with(hit, OPERATOR_SECRET)
    # a company never falls back to it
    await add_user(storage_services, "ACME", "ada", role="ADMIN")
    refused = await _job(api, await login(api, "ACME", "ada"), url)
    assert refused.body["code"] == 40001
    # without WEBHOOK_SECRET the operator needs its own secret too
    storage_services.settings = dataclasses.replace(storage_services.settings,
                                                    webhook_secret="")
    assert (await _job(api, OPERATOR, url)).body["code"] == 40001
    own = (await api.call("POST", "/api/webhook-secret", token=OPERATOR, raw=b"")).body["data"]
    job = await _job(api, OPERATOR, url)
    hit = await _delivered(seen, job.body["data"]["job_id"])
    assert _signed_with(hit, own["secret"])
