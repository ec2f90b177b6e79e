"""Presigned links only where the operator chose them, with their lifetime in view, and direct
links only on a bucket that allows public reads (issue 35, item 1), in a batch's results: a
service run with ``STORAGE_LINKS=presigned`` on a private bucket. Before, each row offered a
"Presigned" link without saying until when it opens and a "Direct" link that the private
bucket answers with AccessDenied. Same harness as ``tests/test_ui_e2e.py`` (its browser,
page, S3 server and helpers), on a server of this module's own settings."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests import test_ui_e2e as e2e
from tests.test_ui_e2e import configure_storage, make_archive, shot, sign_in
from tornado_app.settings import Settings

pytestmark = [*e2e.pytestmark, pytest.mark.slow]
browser, page, s3 = e2e.browser, e2e.page, e2e.s3


@pytest.fixture(scope="module")
def base_url(redis_server: Any, mongo_server: Any, render_pool: Any) -> Iterator[str]:
    """The real app, as ``tests/test_ui_e2e.py`` runs it, with presigned links chosen."""
    settings = Settings(
        mongo_db=f"ui_{uuid.uuid4().hex[:10]}",
        allow_private_urls=True,
        storage_allowed_endpoints=("127.0.0.1",),
        storage_links="presigned",
    )
    server = e2e.ServerThread(settings, mongo_server.url, redis_server.url, render_pool)
    url = server.start()
    e2e.ADMIN_TOKENS[url] = server.admin_token
    yield url
    server.stop()


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_batch_rows_show_the_presigned_lifetime_and_no_direct_link_on_a_private_bucket(
    page: Any, base_url: str, s3: Any
) -> None:
    configure_storage(base_url, s3)  # a private bucket
    sign_in(page)
    page.goto("/ui/#/batches")
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "guide.zip", "mimeType": "application/zip", "buffer": make_archive()}
    )
    page.get_by_role("button", name="Upload and process").click()
    results = page.get_by_role("region", name="Batch results")
    results.wait_for(timeout=60000)
    row = results.locator("table.batch-table tbody tr", has_text="guide/index.md")
    presigned = row.get_by_role("link", name=re.compile("^Presigned"))
    presigned.wait_for()
    e2e.settle(page)  # what the app asks about the bucket has come back
    # the lifetime in words a person reads: "until" a date
    said = presigned.inner_text()
    assert re.search(r"until .*\b20\d\d\b", said), said
    assert _status(presigned.get_attribute("href") or "") == 200
    # the only other link a row could have opens nothing here: it is not offered
    links = row.get_by_role("link").all_inner_texts()
    assert not any(text.startswith("Direct") for text in links), links
    direct = [
        a
        for a in row.locator("a").evaluate_all("as => as.map((a) => a.href)")
        if "X-Amz-Signature" not in a
    ]
    assert all(_status(url) == 200 for url in direct), direct
    shot(page, "99-batches-presigned")
