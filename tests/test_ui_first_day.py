"""End-to-end tests of a new admin's first day in the browser app (issue 25): the sign-in
that warns before it pauses, company codes in any case, layout and accessibility (axe-core)
at desktop and phone sizes. Same harness as ``tests/test_ui_e2e.py`` (its fixtures and
helpers); screenshots in ``test-artifacts/ui/``."""

from __future__ import annotations

from typing import Any

from tests import test_ui_e2e as e2e
from tests.conftest import PASSWORD
from tests.test_ui_e2e import COMPANY, shot

pytestmark = e2e.pytestmark
# the same module-scoped server, browser and page fixtures as the main UI tests
base_url, browser, page = e2e.base_url, e2e.browser, e2e.page


def try_sign_in(page: Any, username: str, password: str, company: str = COMPANY) -> str:
    """Submit the sign-in form and return the text of the alert it shows."""
    page.get_by_label("Company code").fill(company)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    alert = page.locator("#signin-message")
    before = alert.inner_text()
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_function(
        "([el, before]) => el.textContent && el.textContent !== before && !document.querySelector('[aria-busy=true]')",
        arg=[alert.element_handle(), before])
    return alert.inner_text()


# ------------------------------------------------------------------------------ item 5
def test_sign_in_warns_before_it_pauses_and_speaks_in_minutes(page):
    page.goto("/ui/#/signin")
    texts = [try_sign_in(page, "noah", f"wrong password {i}") for i in range(5)]
    assert "attempt" not in texts[0] and "attempt" not in texts[1]  # no noise at first
    assert "2 attempts left" in texts[2] and "1 attempt left" in texts[3]
    assert "paused for 1 minute" in texts[4]
    shot(page, "80-signin-paused")
    # even the right password waits now; the wait is in minutes, not "887 seconds"
    text = try_sign_in(page, "noah", PASSWORD)
    assert "try again in 1 minute" in text and "second" not in text
    # the pause is for this account from this device: another user signs in
    page.get_by_label("Company code").fill(COMPANY)
    page.get_by_label("Username").fill("mei")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#topbar").wait_for(state="visible")


# ------------------------------------------------------------------------------ item 6
def test_company_code_in_any_case_signs_in(page):
    page.goto("/ui/#/signin")
    page.get_by_label("Company code").fill(COMPANY.lower())
    page.get_by_label("Username").fill("Rita")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#topbar").wait_for(state="visible")
    assert "ACME Ltd" in page.locator("#who-text").inner_text()
