"""The Markdown editor's preview in the browser app is the service's own reading and HTML
(``POST /md/preview``) in a sandboxed frame: typed Markdown shows the service's table and
heading, requests wait for a pause in typing, a failed request leaves the last good preview
with one line saying so, and nothing in a preview can run or reach the app. Same harness as
``tests/test_ui_e2e.py`` (its fixtures and helpers)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import test_ui_e2e as e2e
from tests.test_md_preview import writer_body
from tests.test_ui_e2e import shot, sign_in

pytestmark = [*e2e.pytestmark, pytest.mark.slow]
base_url, browser, page = e2e.base_url, e2e.browser, e2e.page

TABLE = "# Quarterly figures\n\n| Quarter | Sales |\n|:--|--:|\n| Q1 | 10 |\n| Q2 | 12 |\n"


def open_editor(page: Any) -> Any:
    sign_in(page)
    page.goto("/ui/#/markdown")
    editor = page.get_by_label("Markdown text")
    editor.wait_for()
    return editor


def test_typed_markdown_is_previewed_by_the_service(page):
    editor = open_editor(page)
    previews: list[str] = []
    page.on("request", lambda r: previews.append(r.post_data or "")
            if r.url.endswith("/md/preview") else None)
    editor.fill("")
    editor.press_sequentially(TABLE, delay=15)
    frame = page.locator("iframe.md-preview")
    assert frame.get_attribute("sandbox") == ""
    preview = page.frame_locator("iframe.md-preview")
    preview.locator("h1", has_text="Quarterly figures").wait_for()
    assert preview.locator("td", has_text="12").count() == 1
    assert preview.locator("th", has_text="Sales").count() == 1
    # exactly the HTML the service's writer makes of this Markdown, not a browser parser's
    assert writer_body(TABLE) in frame.get_attribute("srcdoc")
    # ~70 keystrokes, 15 ms apart: the requests wait for a 300 ms pause
    assert 1 <= len(previews) <= 3, len(previews)
    assert json.loads(previews[-1]) == {"markdown": TABLE}
    shot(page, "95-markdown-service-preview")


def test_failed_preview_keeps_the_last_good_one_and_says_so(page):
    editor = open_editor(page)
    editor.fill("# First heading\n")
    preview = page.frame_locator("iframe.md-preview")
    preview.locator("h1", has_text="First heading").wait_for()
    page.route("**/md/preview", lambda route: route.fulfill(
        status=200, content_type="application/json",
        body=json.dumps({"code": 50301, "msg": "render queue is full", "data": None})))
    editor.fill("# Second heading\n")
    status = page.locator(".preview-status")
    status.get_by_text("Preview not updated").wait_for()
    assert "busy" in status.inner_text().lower()
    assert preview.locator("h1", has_text="First heading").count() == 1
    page.unroute("**/md/preview")
    editor.fill("# Third heading\n")
    preview.locator("h1", has_text="Third heading").wait_for()
    assert status.inner_text() == ""


def test_hostile_markdown_cannot_run_or_reach_the_app(page):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    editor = open_editor(page)
    editor.fill("# Safe heading\n\n<script>parent.pwned = 1; alert('script')</script>\n\n"
                '<img src="x" onerror="parent.pwned = 2; alert(\'onerror\')">\n\n'
                "[click me](javascript:parent.pwned=3)\n")
    preview = page.frame_locator("iframe.md-preview")
    preview.locator("h1", has_text="Safe heading").wait_for()
    clickable = preview.get_by_text("click me")
    if clickable.count():
        clickable.click()
    page.wait_for_timeout(300)
    assert page.evaluate("window.pwned") is None and dialogs == []


def _blocked(failure: str | None) -> bool:
    """A request the browser's policy stopped (Playwright says ``csp`` or
    ``net::ERR_BLOCKED_BY_...``), as against one that went out and failed."""
    text = (failure or "").lower()
    return text == "csp" or "blocked" in text


def test_the_preview_frame_runs_nothing_even_if_the_html_had_script(page):
    """The frame is the guarantee, not only the service's sanitiser: HTML with script put
    straight into the app's preview frame neither runs nor reaches the page nor the network."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # the remote image reached the network if it loaded or failed other than by a block (port 9
    # on loopback refuses); Chromium may announce a request its policy then blocks
    beacons: list[str] = []
    page.on("requestfinished", lambda r: beacons.append(r.url) if "beacon" in r.url else None)
    page.on("requestfailed", lambda r: beacons.append(f"{r.url} {r.failure}")
            if "beacon" in r.url and not _blocked(r.failure) else None)
    sign_in(page)
    page.evaluate("""async () => {
        const { previewFrame, showInFrame } = await import('/ui/js/preview.js');
        const frame = previewFrame('hostile test', 'md-preview hostile');
        document.querySelector('#view').prepend(frame);
        showInFrame(frame, '<h1>Shown</h1><script>parent.pwned = 1; alert(1)</scr' + 'ipt>'
          + '<img src="data:," onerror="parent.pwned = 2; alert(2)">'
          + '<a id="go" href="javascript:parent.pwned=3">go</a>'
          + '<img src="http://127.0.0.1:9/beacon.png">');
    }""")
    hostile = page.frame_locator("iframe.hostile")
    hostile.locator("h1", has_text="Shown").wait_for(state="attached")
    hostile.locator("#go").dispatch_event("click")
    page.wait_for_timeout(300)
    assert page.evaluate("window.pwned") is None and dialogs == [] and beacons == []
    assert page.locator("iframe.hostile").get_attribute("sandbox") == ""
    # the frame's document is of another origin than the app: the page cannot reach into it
    assert page.evaluate("document.querySelector('iframe.hostile').contentDocument") is None
    # the browser said it blocked the script and the remote image: expected here, not a fault
    blocked = [p for p in page.problems if "blocked" in p.lower()]
    assert any("sandboxed" in p for p in blocked), page.problems
    page.problems[:] = [p for p in page.problems if p not in blocked]
