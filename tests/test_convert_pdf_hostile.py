"""Hostile PDFs through ``POST /api/convert``: each ends with its text or with 50401 within
the time limit, never with a 500 or a dropped connection, and the service answers
``/health`` afterwards.

The service runs on its own one-worker pool with a short time limit, so a PDF that is too
slow for it ends in 50401 (its worker is killed and replaced) instead of holding the suite.
"""

from __future__ import annotations

import time

import pytest

from render_pool.runtime.pool import RenderPool
from tests import pdf_fixtures
from tests.conftest import post_form
from tornado_app.app import make_app

JOB_TIMEOUT = 10.0  # seconds a conversion may run in this module's pool
SLACK = 15.0  # start of a fresh worker after a kill, upload and answer

# name -> (PDF, texts the Markdown must hold once each when the conversion succeeds)
HOSTILE = {
    "page of 200,000 characters": (pdf_fixtures.dense_pdf(200_000), []),
    "tagged table of 10,000 cells": (pdf_fixtures.tagged_table_pdf(100, 100), ["9999"]),
    "structure tree with a cycle": (pdf_fixtures.tagged_pdf("cycle"),
                                    ["Annual Summary", "Orphan text stays readable."]),
    "structure tree 10,000 levels deep": (pdf_fixtures.tagged_pdf("deep"),
                                          ["Annual Summary", "Orphan text stays readable."]),
    "marked-content ids that point nowhere": (
        pdf_fixtures.tagged_pdf("dangling"), ["Annual Summary", "Orphan text stays readable."]),
}


@pytest.fixture(scope="module")
def short_pool():
    pool = RenderPool(1, queue_limit=4, job_timeout=JOB_TIMEOUT, memory_limit_mb=2000)
    yield pool
    pool.close(wait=False)


@pytest.fixture
def app(services, short_pool):
    services.pool = short_pool
    return make_app(services)


async def test_hostile_pdfs_end_with_text_or_time_limit(api):
    outcomes = {}
    for name, (pdf, texts) in HOSTILE.items():
        t0 = time.monotonic()
        reply = await post_form(api, "/api/convert", {"export": "markdown"},
                                {"file": ("hostile.pdf", pdf)})
        elapsed = time.monotonic() - t0
        assert reply.status == 200, (name, reply.status, reply.body)
        code = reply.body["code"]
        assert code in (0, 50401), (name, reply.body)
        assert elapsed < JOB_TIMEOUT + SLACK, (name, elapsed)
        if code == 0:
            content = reply.body["data"]["content"]
            for text in texts:
                assert content.count(text) == 1, (name, text)
            if name.startswith("page of"):
                assert content.count("lorem") > 4000
        else:
            assert reply.body["data"] is None and reply.body["msg"]
        outcomes[name] = code
    health = await api.call("GET", "/health")
    assert health.status == 200, health.body
    # the small trees are fast everywhere: a time limit there would be a hang, not load
    assert outcomes["structure tree with a cycle"] == 0
    assert outcomes["marked-content ids that point nowhere"] == 0
