"""The rendered tab of a Convert result never says "Rendering…" for ever: a preview request
(``POST /md/preview``) that the service never answers is given up at the app's time limit
(past the service's own job limit of 120 s), and a failed one (a proxy's 502) says so; either
way one line above the frame says why and a Try again button asks again, which then shows
the service's rendering. The browser's clock is Playwright's, moved on by the test, so no
test waits for the real limit. Same harness as ``tests/test_ui_e2e.py`` (its fixtures and
helpers)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import test_ui_e2e as e2e
from tests.docx_fixtures import build_feature_docx
from tests.test_ui_e2e import shot, sign_in
from tests.test_ui_first_day import axe_problems

pytestmark = [*e2e.pytestmark, pytest.mark.slow]
base_url, browser, page = e2e.base_url, e2e.browser, e2e.page

PREVIEW = "**/md/preview"
SANDBOX_BLOCK = ("Blocked script execution in 'about:srcdoc' because the document's frame is "
                 "sandboxed")
AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def _convert(page: Any) -> Any:
    """Sign in, convert the feature DOCX (its first heading is "Introduction") to Markdown;
    the result card."""
    sign_in(page)
    page.get_by_role("heading", name="Convert a document").wait_for()
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    page.get_by_role("button", name="Convert", exact=True).click()
    result = page.locator(".result-card")
    result.wait_for(timeout=60000)  # the conversion shares a busy machine's pool
    return result


def _wait_for_rendered_heading(page: Any) -> None:
    """The service's rendering of the document is in the frame. Looked for in the frame's
    document, not on screen: the frame is sandboxed (another origin, its own process), and a
    loaded Chromium now and then leaves such a frame's new document without layout for a
    long while (its heading there but "hidden": 8 of 94 tries here, under load)."""
    frame = page.locator(".result-card iframe.md-preview")
    frame.scroll_into_view_if_needed()
    page.frame_locator(".result-card iframe.md-preview").locator(
        "h1", has_text="Introduction").wait_for(state="attached", timeout=60000)
    assert "Rendering…" not in (frame.get_attribute("srcdoc") or "")


def test_an_unanswered_preview_ends_at_its_time_limit_and_try_again_renders(
        page: Any) -> None:
    page.clock.install()  # the page's timers run on a clock the test moves
    try:
        _unanswered_then_answered(page)
    finally:  # the clock's own script, which the sandboxed frame (rightly) does not run
        page.problems[:] = [p for p in page.problems if SANDBOX_BLOCK not in p]


def _unanswered_then_answered(page: Any) -> None:
    held: list[Any] = []

    def hold(route: Any) -> None:  # the request goes out and nothing answers it
        held.append(route)

    page.route(PREVIEW, hold)
    result = _convert(page)
    frame = result.locator("iframe.md-preview")
    status = result.locator(".preview-status")
    retry = result.get_by_role("button", name="Try again")
    for _ in range(100):  # the request is out
        if held:
            break
        page.wait_for_timeout(100)
    assert len(held) == 1, held
    expect(frame).to_have_attribute("srcdoc", re.compile("Rendering…"))
    # past the service's own job limit (120 s), the app still waits for its answer...
    page.clock.fast_forward("02:05")
    assert "Rendering…" in (frame.get_attribute("srcdoc") or "")
    assert status.inner_text() == "" and retry.is_hidden()
    # ...and a little later gives up, says so and offers to ask again
    page.clock.fast_forward("00:30")
    expect(status).to_have_text(re.compile(
        r"^Not rendered: The server did not answer within \d+ s\. "
        r"The Markdown source is in the next tab\.$"))
    expect(frame).not_to_have_attribute("srcdoc", re.compile("Rendering…"))
    expect(retry).to_be_visible()
    page.unroute(PREVIEW)
    retry.click()
    _wait_for_rendered_heading(page)
    expect(status).to_have_text("")
    expect(retry).to_be_hidden()


def test_a_failed_preview_says_so_and_try_again_renders(page: Any) -> None:
    assert AXE.exists(), "axe-core is missing: run `just setup` (npm ci --prefix tests/axe)"
    page.context.add_init_script(path=str(AXE))
    answers: list[int] = []

    def bad_gateway(route: Any) -> None:  # a proxy in front of a service that is down
        answers.append(502)
        route.fulfill(status=502, content_type="text/html",
                      body="<html><body><h1>502 Bad Gateway</h1></body></html>")

    page.route(PREVIEW, bad_gateway)
    result = _convert(page)
    frame = result.locator("iframe.md-preview")
    status = result.locator(".preview-status")
    retry = result.get_by_role("button", name="Try again")
    expect(status).to_have_text("Not rendered: The request failed (HTTP 502). "
                                "The Markdown source is in the next tab.")
    expect(frame).to_have_attribute("srcdoc", re.compile("Not rendered."))
    assert "Rendering…" not in (frame.get_attribute("srcdoc") or "")
    expect(retry).to_be_visible()
    assert answers == [502]
    # the message and its button: no critical or serious accessibility problem, and the
    # phone layout does not scroll sideways
    problems: list[str] = []
    for size in ({"width": 1366, "height": 900}, e2e.PHONE):
        page.set_viewport_size(size)
        problems += axe_problems(page, f"failed preview {size['width']}px")
    assert not problems, "\n".join(problems)
    page.set_viewport_size(e2e.DESKTOP)
    shot(page, "97-convert-preview-failed")
    # the service is back: Try again (by keyboard) renders, the line goes, and the keyboard
    # stays in the rendered tab's panel
    page.unroute(PREVIEW)
    retry.focus()
    page.keyboard.press("Enter")
    _wait_for_rendered_heading(page)
    expect(status).to_have_text("")
    expect(retry).to_be_hidden()
    assert page.evaluate("document.activeElement.getAttribute('role')") == "tabpanel"
    assert answers == [502]
