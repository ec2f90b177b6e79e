"""Optional caller auth for the conversion service (``DOCS_API_TOKEN``)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import add_user, login, post_form
from tests.docx_fixtures import build_feature_docx
from tornado_app.app import make_app

TOKEN = "docs-token-for-tests-0123456789"


@pytest.fixture
def app(docs_services):
    docs_services.settings = dataclasses.replace(docs_services.settings, docs_api_token=TOKEN)
    return make_app(docs_services)


async def test_docs_endpoints_need_the_token_or_a_session(api, docs_services):
    files = {"file": ("f.docx", build_feature_docx())}
    refused = await post_form(api, "/api/convert", {}, files)
    assert refused.status == 401 and refused.body["code"] == 40101
    wrong = await post_form(api, "/api/convert", {}, files,
                            headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status == 401
    ok = await post_form(api, "/api/convert", {}, files,
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status == 200 and ok.body["code"] == 0
    await add_user(docs_services, "ACME", "tess")
    session = await login(api, "ACME", "tess")
    ok = await post_form(api, "/api/convert", {}, files,
                         headers={"Authorization": f"Bearer {session}"})
    assert ok.body["code"] == 0
    plain = await api.call("GET", "/config/profiles")
    assert plain.status == 401 and plain.body["ok"] is False
    assert (await api.call("GET", "/md/themes")).status == 401
    assert (await api.call("GET", "/health")).status == 200
    assert (await api.call("GET", "/ui/")).status == 200
    assert TOKEN not in (await api.call("GET", "/metrics")).raw.decode()
