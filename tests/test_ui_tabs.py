"""One session across the tabs of a browser (issue 35, item 3): signed in once, a screen
opened in a new tab is signed in too (the session cookie), a sign-out in one tab signs the
other out at its next request, and a batch job sent elsewhere is listed by its archive's
name. Same harness as ``tests/test_ui_e2e.py`` (its server, browser and helpers)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests import test_ui_e2e as e2e
from tests.archive_fixtures import tgz_of
from tests.conftest import multipart
from tests.test_ui_e2e import DESKTOP, http, sign_in

pytestmark = [*e2e.pytestmark, pytest.mark.slow]
base_url, browser = e2e.base_url, e2e.browser


def _tab(context: Any, problems: list[str]) -> Any:
    pg = context.new_page()
    pg.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    return pg


def test_a_new_tab_is_signed_in_and_sign_out_ends_every_tab(browser, base_url):
    context = browser.new_context(viewport=DESKTOP, base_url=base_url)
    context.set_default_timeout(15000)
    problems: list[str] = []
    try:
        first = _tab(context, problems)
        sign_in(first, "admin")
        # the session is a cookie no script can read
        (cookie,) = [c for c in context.cookies() if c["name"] == "docservice_session"]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert first.evaluate("document.cookie").find("docservice_session") < 0

        second = _tab(context, problems)  # a new tab, at a screen of the app
        second.goto("/ui/#/users")
        second.get_by_role("heading", name="Users", level=1).wait_for()
        expect(second.locator("#who-text")).to_contain_text("Ada Admin")
        expect(second.locator("#view")).not_to_contain_text("Administrators only")

        first.get_by_role("button", name="Sign out").click()
        first.locator("#view").get_by_text("You are signed out.").wait_for()
        # the other tab: its next request finds no session, and it asks to sign in
        second.goto("/ui/#/activity")
        expect(second.get_by_label("Company code")).to_be_visible()
        assert "#/signin" in second.url
        status, _ = http(base_url, "GET", "/api/auth/me", anon=True,
                         headers={"Cookie": f"docservice_session={cookie['value']}"})
        assert status == 401  # the session itself is gone, not only this browser's copy
    finally:
        context.close()
    assert not problems, problems


def test_a_batch_job_keeps_its_archive_name_in_another_tab(browser, base_url, s3):
    body, ctype = multipart({"endpoint": s3.endpoint, "access": s3.handle.access,
                             "secret": s3.handle.secret, "bucket": "tabs",
                             "create_if_missing": "true"})
    status, made = http(base_url, "POST", "/config/storage/test", body,
                        {"Content-Type": ctype})
    assert status == 200 and made["ok"], made
    status, saved = http(base_url, "POST", "/config/storage", body, {"Content-Type": ctype})
    assert status == 200 and saved["ok"], saved
    # a job sent from somewhere else (a phone, another tab, a script)
    body, ctype = multipart({"async": "true"},
                            {"file": ("handbook 2025.tgz", tgz_of({"h/a.md": b"# A\n"}))})
    status, sent = http(base_url, "POST", "/api/upload-archive", body, {"Content-Type": ctype})
    assert status == 200 and sent["code"] == 0, sent
    context = browser.new_context(viewport=DESKTOP, base_url=base_url)
    context.set_default_timeout(15000)
    try:
        pg = context.new_page()
        sign_in(pg, "admin")
        pg.goto("/ui/#/batches")
        row = pg.locator(f'tr[data-job-id="{sent["data"]["job_id"]}"]')
        expect(row).to_contain_text("handbook 2025.tgz")
    finally:
        context.close()
