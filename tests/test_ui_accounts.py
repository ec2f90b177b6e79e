"""End-to-end tests of the account screens of the browser app: first-run setup, the change
password dialog, password reset in the users table and the Activity screen. Same harness
as ``tests/test_ui_e2e.py`` (its fixtures and helpers), screenshots at desktop and phone
sizes in ``test-artifacts/ui/``, no sideways scrolling on the phone."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import test_ui_e2e as e2e
from tests.conftest import PASSWORD
from tests.test_ui_e2e import DESKTOP, ServerThread, field_error, shot, sign_in
from tornado_app.settings import Settings

pytestmark = e2e.pytestmark
# the same module-scoped server, browser and page fixtures as the main UI tests
base_url, browser, page = e2e.base_url, e2e.browser, e2e.page


class EmptyServer(ServerThread):
    """The real app with no company at all: a first run."""

    async def _setup(self) -> None:
        from tornado.httpserver import HTTPServer
        from tornado.netutil import bind_sockets

        from tornado_app.app import make_app
        from tornado_app.services import open_services

        svc = await open_services(self.settings, mongo_url=self.mongo_url,
                                  redis_url=self.redis_url)
        app = make_app(svc, ("auth",))
        sockets = bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.http = HTTPServer(app)
        self.http.add_sockets(sockets)
        self.svc = svc

    def call(self, coro: Any) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)


@pytest.fixture
def empty_server(redis_server, mongo_server) -> Iterator[EmptyServer]:
    settings = Settings(mongo_db=f"ui_setup_{uuid.uuid4().hex[:10]}")
    server = EmptyServer(settings, mongo_server.url, redis_server.url, None)
    server.start()
    yield server
    server.stop()


def test_first_run_setup_creates_the_company_and_signs_in(browser, empty_server):
    from tornado_app.auth.setup import first_run_token

    base = f"http://127.0.0.1:{empty_server.port}"
    context = browser.new_context(viewport=DESKTOP, base_url=base)
    context.set_default_timeout(15000)
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        # the sign-in page of a fresh install says how to get in
        pg.goto("/")
        expect(pg).to_have_url(f"{base}/ui/#/signin")
        pg.get_by_text("No company yet").wait_for()
        shot(pg, "70-signin-first-run")

        token = empty_server.call(first_run_token(empty_server.svc))
        pg.goto(f"/ui/#/setup?token={token}")
        pg.get_by_role("heading", name="Set up docservice").wait_for()
        pg.get_by_label("Company code").wait_for()
        assert token not in pg.url  # the token leaves the address bar (and the history)
        pg.get_by_role("button", name="Create company and sign in").click()
        expect(field_error(pg, "Company code")).to_contain_text("Use 1 to 64")
        pg.get_by_label("Company code").fill("NEWCO")
        pg.get_by_label("Company name").fill("New Co")
        pg.get_by_label("Your username").fill("founder")
        pg.get_by_label("Your name").fill("Fay Founder")
        pg.get_by_label("Password", exact=True).fill("founder password")
        pg.get_by_label("Password again").fill("founder passwort")
        pg.get_by_role("button", name="Create company and sign in").click()
        expect(field_error(pg, "Password again")).to_have_text("The two passwords differ.")
        pg.get_by_label("Password again").fill("founder password")
        shot(pg, "71-setup")
        pg.get_by_role("button", name="Create company and sign in").click()
        pg.get_by_role("heading", name="Users", level=1).wait_for()
        pg.get_by_text("New Co is set up and you are its administrator").wait_for()
        expect(pg.locator("#who-text")).to_contain_text("Fay Founder")
        expect(pg.locator('tr[data-username="founder"]')).to_be_visible()
        shot(pg, "72-setup-done")

        # the same address again: setup is over
        pg.goto(f"/ui/#/setup?token={token}")
        pg.get_by_text("Setup is already done").wait_for()
        pg.get_by_role("button", name="Go to sign in").wait_for()
    finally:
        context.close()
    assert not problems, problems


def test_a_used_or_wrong_setup_address_says_so(browser, empty_server):
    base = f"http://127.0.0.1:{empty_server.port}"
    context = browser.new_context(viewport=DESKTOP, base_url=base)
    pg = context.new_page()
    try:
        pg.goto("/ui/#/setup?token=not-the-right-token-at-all")
        pg.get_by_text("This setup address is not valid").wait_for()
        shot(pg, "73-setup-invalid")
    finally:
        context.close()


def test_change_own_password_dialog(page):
    sign_in(page, "noah")
    page.get_by_role("button", name="Password").click()
    dialog = page.get_by_role("dialog", name="Change password")
    dialog.wait_for()
    assert dialog.get_by_label("Current password").evaluate("el => el === document.activeElement")
    dialog.get_by_label("Current password").fill("not my password")
    dialog.get_by_label("New password", exact=True).fill("noah new password")
    dialog.get_by_label("New password again").fill("noah new password")
    dialog.get_by_role("button", name="Change password").click()
    err = field_error(page, "Current password")
    expect(err).to_have_text("This is not your current password.")
    shot(page, "74-password-wrong", full_page=False)
    dialog.get_by_label("Current password").fill(PASSWORD)
    dialog.get_by_role("button", name="Change password").click()
    dialog.get_by_text("Your other sessions were signed out").wait_for()
    shot(page, "75-password-changed", full_page=False)
    dialog.get_by_role("button", name="Done").click()
    assert page.get_by_role("button", name="Password").evaluate(
        "el => el === document.activeElement")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "noah", "noah new password")
    expect(page.locator("#who-text")).to_contain_text("Noah")


def test_admin_resets_a_password_in_the_users_table(page):
    sign_in(page)
    page.get_by_role("link", name="Users").click()
    mei = page.locator('tr[data-username="mei"]')
    mei.wait_for()
    mei.get_by_role("button", name="Reset password of Mei Chen").click()
    dialog = page.get_by_role("dialog", name="Reset password of mei")
    dialog.get_by_label("New password", exact=True).fill("short")
    dialog.get_by_role("button", name="Set password").click()
    expect(field_error(page, "New password")).to_have_text(
        "The password needs 8 to 128 characters.")
    dialog.get_by_label("New password", exact=True).fill("mei reset password")
    dialog.get_by_label("New password again").fill("mei reset password")
    shot(page, "76-users-reset-password", full_page=False)
    dialog.get_by_role("button", name="Set password").click()
    page.locator("#view").get_by_text("The password of Mei Chen was reset").wait_for()
    assert mei.get_by_role("button", name="Reset password of Mei Chen").evaluate(
        "el => el === document.activeElement")
    shot(page, "77-users-after-reset")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "mei", "mei reset password")


def test_activity_screen_lists_filters_and_pages(page):
    sign_in(page, "rita")  # a sign-in of someone else, to find below
    assert not page.get_by_role("link", name="Activity").is_visible()  # ADMIN only
    page.get_by_role("button", name="Sign out").click()
    sign_in(page)
    page.get_by_role("link", name="Activity").click()
    page.get_by_role("heading", name="Activity", level=1).wait_for()
    rows = page.locator(".activity-table tbody tr[data-action]")
    rows.first.wait_for()
    assert rows.count() >= 3
    first = rows.first.inner_text()
    assert "Sign-in" in first and "127.0.0.1" in first and "OK" in first
    page.get_by_label("Action").select_option("login")
    expect(page.locator('.activity-table tbody tr[data-action]:not([data-action="login"])')
           ).to_have_count(0)
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.action)")) == {"login"}
    page.locator(".activity-table").get_by_role("button", name="rita").first.click()
    expect(page.get_by_label("By user")).to_have_value("rita")
    expect(rows.filter(has_not_text="rita")).to_have_count(0)
    assert rows.count() >= 1
    shot(page, "78-activity")
    page.get_by_label("From").fill("2999-01-01")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("No activity matches").wait_for()
