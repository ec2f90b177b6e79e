"""End-to-end tests of a new admin's first day in the browser app (issue 25): the sign-in
that warns before it pauses, company codes in any case, layout and accessibility (axe-core)
at desktop and phone sizes. Same harness as ``tests/test_ui_e2e.py`` (its fixtures and
helpers); screenshots in ``test-artifacts/ui/``."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests import test_ui_e2e as e2e
from tests.conftest import PASSWORD
from tests.docx_fixtures import build_feature_docx
from tests.test_ui_e2e import COMPANY, PHONE, shot, sign_in

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


# ------------------------------------------------------------------------------ items 2, 9
def overlaps(page: Any, a: str, b: str) -> bool:
    return page.evaluate("""([a, b]) => {
        const r = document.querySelector(a).getBoundingClientRect();
        const s = document.querySelector(b).getBoundingClientRect();
        return r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom;
    }""", [a, b])


@pytest.mark.parametrize("width", [1300, 1366, 1440, 1920])
def test_every_tab_is_clickable_at_desktop_widths(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page)
    for name in ("Activity", "API keys", "Users", "Convert"):
        link = page.locator("#nav-list").get_by_role("link", name=name)
        link.click(timeout=3000)  # fails when the account name lies over the tab
        expect(link).to_have_attribute("aria-current", "page")
    assert not overlaps(page, '#nav-list a[data-route="activity"]', "#who")
    page.locator("#nav-list").get_by_role("link", name="Activity").click()
    page.get_by_role("heading", name="Activity", level=1).wait_for()
    if width == 1366:
        page.screenshot(path=str(e2e.ARTIFACTS / "81-topbar-1366.png"))


def test_phone_menu_shows_every_tab_and_the_current_one(page):
    page.set_viewport_size(PHONE)
    sign_in(page)
    nav = page.locator(".mainnav")
    # every tab in rows (issue 35, item 7): nothing hidden to scroll to, no fading edge
    assert nav.get_attribute("data-more") is None
    assert page.evaluate("getComputedStyle(document.querySelector('.mainnav')).maskImage") == "none"
    for route in ("keys", "activity", "storage", "convert"):
        page.goto(f"/ui/#/{route}")
        page.locator(f'#nav-list a[data-route="{route}"][aria-current="page"]').wait_for()
        inside = page.evaluate("""(route) => {
            const n = document.querySelector('.mainnav').getBoundingClientRect();
            const r = document.querySelector(`#nav-list a[data-route="${route}"]`).getBoundingClientRect();
            return r.left >= n.left - 1 && r.right <= n.right + 1;
        }""", route)
        assert inside, f"the current tab {route} is not scrolled into view"
        if route == "keys":
            assert nav.get_attribute("data-more") is None
            page.screenshot(path=str(e2e.ARTIFACTS / "82-phone-menu-keys.png"))


def test_result_heading_is_scrolled_into_view_after_convert_on_a_phone(page):
    page.set_viewport_size(PHONE)
    sign_in(page)
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    page.get_by_role("button", name="Convert", exact=True).click()
    heading = page.locator(".result-card h2.card-title")
    heading.wait_for()
    box = heading.bounding_box()
    bar = page.locator("#topbar").bounding_box()
    assert box is not None and bar is not None
    # just under the sticky top bar, in the top third of the screen, and focused
    assert bar["y"] + bar["height"] <= box["y"] <= PHONE["height"] / 3, (box, bar)
    assert heading.evaluate("el => el === document.activeElement")
    page.screenshot(path=str(e2e.ARTIFACTS / "83-phone-convert-result.png"))


# ------------------------------------------------------------------------------ item 10
AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def axe_problems(page: Any, where: str) -> list[str]:
    """Critical and serious axe-core violations on the page as it is now."""
    result = page.evaluate("""async () => {
        const r = await axe.run(document, { resultTypes: ['violations'] });
        return r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious')
            .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    }""")
    return [f"{where}: {p}" for p in result]


def check_both_sizes(page: Any, where: str, problems: list[str]) -> None:
    """axe-core at desktop (1366x900) and phone (390x844) size."""
    for name, size in (("desktop", {"width": 1366, "height": 900}), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(100)
        problems.extend(axe_problems(page, f"{where} ({name})"))
    page.set_viewport_size({"width": 1366, "height": 900})


def test_axe_finds_no_critical_or_serious_violation_on_any_screen_or_dialog(page):
    assert AXE.exists(), "axe-core is missing: run `just setup` (npm ci --prefix tests/axe)"
    page.context.add_init_script(path=str(AXE))  # injected by Playwright (CSP allows no inline)
    problems: list[str] = []
    page.goto("/ui/#/signin")
    page.get_by_role("heading", name="Sign in").wait_for()
    check_both_sizes(page, "signin", problems)
    page.goto("/ui/#/setup")
    page.locator("#view h1").first.wait_for()
    e2e.settle(page)
    check_both_sizes(page, "setup", problems)
    sign_in(page)
    headings = {"convert": "Convert a document", "markdown": None, "batches": None,
                "storage": None, "users": "Users", "keys": "API keys", "activity": "Activity"}
    for route, heading in headings.items():
        page.goto(f"/ui/#/{route}")
        page.locator(f'#nav-list a[data-route="{route}"][aria-current="page"]').wait_for()
        page.locator("#view h1").first.wait_for()
        if heading:
            page.get_by_role("heading", name=heading, level=1).wait_for()
        e2e.settle(page)
        check_both_sizes(page, route, problems)

    # the Convert result
    page.goto("/ui/#/convert")
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    page.get_by_role("button", name="Convert", exact=True).click()
    page.locator(".result-card").wait_for()
    check_both_sizes(page, "convert result", problems)

    def in_dialog(route: str, opener: Any, where: str) -> None:
        dlg = page.locator("dialog[open]")
        dlg.wait_for()
        check_both_sizes(page, where, problems)
        page.keyboard.press("Escape")
        dlg.wait_for(state="detached")

    page.goto("/ui/#/users")
    page.locator("tr[data-username=rita]").wait_for()
    page.get_by_role("button", name="New user").click()
    in_dialog("users", None, "new user dialog")
    page.locator("tr[data-username=rita] [data-action=rename]").click()
    in_dialog("users", None, "rename dialog")
    page.locator("tr[data-username=rita] [data-action=reset-password]").click()
    in_dialog("users", None, "reset password dialog")
    page.locator("tr[data-username=rita]").get_by_label("Role of Rita Reviewer").select_option(
        "ANNOTATOR")
    in_dialog("users", None, "role change question")
    page.locator("tr[data-username=rita] [data-action=status]").click()
    in_dialog("users", None, "disable question")
    page.locator("#change-password").click()
    in_dialog("users", None, "change password dialog")

    page.goto("/ui/#/keys")
    page.get_by_role("button", name="New key").click()
    page.locator("dialog[open]").get_by_label("Name").fill("axe check")
    page.locator("dialog[open]").get_by_role("button", name="Create key").click()
    page.locator("dialog[open]").get_by_text("Copy the key now").wait_for()
    in_dialog("keys", None, "new key dialog (secret shown)")
    page.locator("tr[data-key-name='axe check']").get_by_role("button", name=re.compile("Revoke")).click()
    dlg = page.locator("dialog[open]")
    dlg.wait_for()
    # the revoke dialog has inner padding like the others
    pad = dlg.evaluate("d => getComputedStyle(d.children[1]).paddingLeft")
    assert pad == "24px", pad
    shot(page, "84-revoke-dialog", full_page=False)
    in_dialog("keys", None, "revoke dialog")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------ item 8
def test_users_role_change_and_disable_ask_first_and_old_messages_go(page):
    sign_in(page)
    page.goto("/ui/#/users")
    noah = page.locator('tr[data-username="noah"]')
    noah.wait_for()
    role = noah.get_by_label("Role of Noah Annotator")
    # a role change asks first; Cancel changes nothing and puts the old value back
    role.select_option("ADMIN")
    ask = page.get_by_role("dialog", name="Make Noah Annotator Admin?")
    ask.wait_for()
    assert "manages users" in ask.inner_text()
    shot(page, "85-users-confirm-role", full_page=False)
    ask.get_by_role("button", name="Cancel").click()
    expect(role).to_have_value("ANNOTATOR")  # the dialog's close event puts it back
    expect(role).to_be_focused()
    assert e2e.http(page.url.split("/ui/")[0], "GET", "/api/users?role=ADMIN")[1]["data"][
        "total"] == 1
    # confirmed: it happens, and says so in the row
    role.select_option("REVIEWER")
    page.get_by_role("dialog", name="Make Noah Annotator Reviewer?").get_by_role(
        "button", name="Make Reviewer").click()
    page.locator("#view").get_by_text("Noah Annotator is now Reviewer.").wait_for()
    # Disable asks too; Escape keeps the account active
    noah.get_by_role("button", name="Disable Noah Annotator").click()
    page.get_by_role("dialog", name="Disable Noah Annotator?").wait_for()
    expect(page.get_by_role("dialog", name="Disable Noah Annotator?")).to_contain_text(
        "their API keys stop working")
    page.keyboard.press("Escape")
    assert noah.locator(".badge").inner_text() == "Active"
    # the next action clears the old success note
    assert page.locator("#view .row-ok").count() == 0
    noah.get_by_role("button", name="Disable Noah Annotator").click()
    page.get_by_role("dialog", name="Disable Noah Annotator?").get_by_role(
        "button", name="Disable").click()
    page.locator("#view").get_by_text("Noah Annotator is disabled.").wait_for()
    assert page.locator("#view .row-ok").count() == 1
    noah.get_by_role("button", name="Enable Noah Annotator").click()  # no question to enable
    page.locator("#view").get_by_text("Noah Annotator is enabled.").wait_for()
    assert page.locator("#view .row-ok").count() == 1


def test_new_user_password_can_be_generated_and_shown(page):
    sign_in(page)
    page.goto("/ui/#/users")
    page.get_by_role("button", name="New user").click()
    dlg = page.get_by_role("dialog", name="New user")
    pw = dlg.get_by_label("Initial password")
    assert pw.get_attribute("type") == "password"
    dlg.get_by_role("button", name="Generate password").click()
    generated = pw.input_value()
    assert len(generated) == 16 and pw.get_attribute("type") == "text"  # shown to hand over
    dlg.get_by_role("button", name="Hide password").click()
    assert pw.get_attribute("type") == "password"
    dlg.get_by_role("button", name="Show password").click()
    dlg.get_by_role("button", name="Generate password").click()
    assert pw.input_value() != generated
    generated = pw.input_value()
    shot(page, "86-users-new-generated", full_page=False)
    dlg.get_by_label("Username").fill("gen.user")
    dlg.get_by_role("button", name="Create user").click()
    page.locator("#view").get_by_text("User gen.user was created.").wait_for()
    # the reset dialog generates into both fields
    page.locator('tr[data-username="gen.user"]').get_by_role(
        "button", name="Reset password of gen.user").click()
    reset = page.get_by_role("dialog", name="Reset password of gen.user")
    reset.get_by_role("button", name="Generate password").click()
    first = reset.get_by_label("New password", exact=True).input_value()
    assert len(first) == 16 and reset.get_by_label("New password again").input_value() == first
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "gen.user", generated)


# ------------------------------------------------------------------------------ item 7
def test_markdown_options_are_kept_per_tab_and_the_next_pdf_has_them(page):
    import pypdfium2 as pdfium

    from tests.docx_fixtures import PNG_1PX

    sign_in(page)
    page.goto("/ui/#/markdown")
    page.get_by_label("Markdown text").fill("# Kept\n\nBody text.\n")
    page.get_by_label("Document name").fill("Kept Guide")
    page.get_by_label("Document version").fill("v9")
    page.get_by_label("Table of contents").check()
    page.get_by_label("Header text").fill("Kept header")
    page.get_by_label("Footer text").fill("Kept footer")
    page.get_by_label("Custom CSS").fill("h1 { color: #3346c8; }")
    page.get_by_label("Output name").fill("kept-guide")
    page.get_by_label("Style").select_option("github")
    page.get_by_label("or upload logo").set_input_files(
        {"name": "logo.png", "mimeType": "image/png", "buffer": PNG_1PX})
    page.wait_for_function(
        "() => (sessionStorage.getItem('docservice.md-options') || '').includes('logo.png')")
    # leave and come back (and reload): nothing is reset
    page.get_by_role("link", name="Convert").click()
    page.get_by_role("heading", name="Convert a document").wait_for()
    for again in (lambda: page.get_by_role("link", name="Markdown to PDF/DOCX").click(),
                  page.reload):
        again()
        page.get_by_label("Document name").wait_for()
        assert page.get_by_label("Document name").input_value() == "Kept Guide"
        assert page.get_by_label("Document version").input_value() == "v9"
        assert page.get_by_label("Table of contents").is_checked()
        assert page.get_by_label("Header text").input_value() == "Kept header"
        assert page.get_by_label("Footer text").input_value() == "Kept footer"
        assert page.get_by_label("Custom CSS").input_value() == "h1 { color: #3346c8; }"
        assert page.get_by_label("Output name").input_value() == "kept-guide"
        expect_value = page.get_by_label("Style")
        page.wait_for_function("() => document.querySelector('[name=css_name]').value === 'github'")
        assert expect_value.input_value() == "github"
        assert page.evaluate("document.querySelector('[name=logo_file]').files[0]?.name") == "logo.png"
    shot(page, "87-markdown-options-kept")
    # the next PDF comes out with cover, contents and furniture, not plain
    with page.expect_download(timeout=60000) as dl:
        page.get_by_role("button", name="Download PDF").click()
    assert dl.value.suggested_filename == "kept-guide.pdf"
    pdf = pdfium.PdfDocument(Path(dl.value.path()).read_bytes())
    text = "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    pages = len(pdf)
    pdf.close()
    assert pages >= 3  # cover, contents, body
    assert "Kept Guide" in text and "Kept header" in text and "Kept footer" in text
    # another browser tab starts with its own (default) options
    other = page.context.new_page()
    other.goto("/ui/#/markdown")  # signed in already: the session is the browser's
    other.get_by_label("Document name").wait_for()
    assert other.get_by_label("Document name").input_value() == ""
    other.close()


def test_markdown_preview_loads_no_remote_image(page):
    sign_in(page)
    page.goto("/ui/#/markdown")
    page.get_by_label("Markdown text").fill(
        "# Pictures\n\n![local](http://127.0.0.1:9/secret.png)\n\n"
        "![public](https://example.com/pic.png)\n")
    preview = page.frame_locator("iframe.md-preview")
    preview.locator("h1", has_text="Pictures").wait_for()
    notes = preview.locator(".placeholder")
    assert notes.count() == 2
    assert "127.0.0.1:9/secret.png" in notes.nth(0).inner_text()
    assert "not loaded in the preview" in notes.nth(1).inner_text()
    assert preview.locator("img").count() == 0


# ------------------------------------------------------------------------------ item 4
s3 = e2e.s3


def many_files_archive(n: int) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n):
            zf.writestr(f"docs/page{i}.md", f"# Page {i}\n\n![gone](img/missing{i}.png)\n")
    return buf.getvalue()


def test_batches_cancel_past_jobs_filter_and_export(page, base_url, request):
    import csv
    import io
    import json as jsonlib

    e2e.configure_storage(base_url, request.getfixturevalue("s3"))
    sign_in(page)
    page.goto("/ui/#/batches")
    page.get_by_role("heading", name="Batches", level=1).wait_for()
    zone = page.locator("input[type=file][name=file]")
    # a finished batch: results can be filtered and exported
    zone.set_input_files({"name": "guide.zip", "mimeType": "application/zip",
                          "buffer": e2e.make_archive()})
    page.get_by_role("button", name="Upload and process").click()
    results = page.get_by_role("region", name="Batch results")
    results.wait_for(timeout=60000)
    rows = results.locator("table.batch-table tbody tr")
    all_rows = rows.count()
    results.get_by_label("Failed only").check()
    assert 1 <= rows.count() < all_rows
    assert rows.locator(".badge-danger").count() == rows.count()
    with page.expect_download() as dl:
        results.get_by_role("button", name="Download CSV").click()
    assert dl.value.suggested_filename == "guide-results.csv"
    table = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text())))
    assert len(table) == all_rows and any(r["source"].endswith("index.md") for r in table)
    with page.expect_download() as dl:
        results.get_by_role("button", name="Download JSON").click()
    assert len(jsonlib.loads(Path(dl.value.path()).read_text())["files"]) == all_rows
    shot(page, "88-batches-results-tools")

    # leave and come back: the job is listed and its results open again
    page.goto("/ui/#/convert")
    page.goto("/ui/#/batches")
    jobs = page.locator("section[aria-labelledby=jobs-title]")
    done = jobs.locator("tr[data-state=done]", has_text="guide.zip")
    done.wait_for()
    done.get_by_role("button", name="Open results of guide.zip").click()
    page.get_by_role("region", name="Batch results").wait_for()
    assert page.get_by_role("region", name="Batch results").locator(
        "table.batch-table tbody tr").count() == all_rows

    # a long batch can be cancelled while it runs
    zone.set_input_files({"name": "big.zip", "mimeType": "application/zip",
                          "buffer": many_files_archive(800)})
    page.get_by_role("button", name="Upload and process").click()
    cancel = page.get_by_role("button", name="Cancel batch").first
    cancel.wait_for()
    cancel.click()
    page.locator("#view").get_by_text("Batch cancelled").wait_for(timeout=60000)
    jobs.locator("tr[data-state=cancelled]", has_text="big.zip").wait_for(timeout=15000)
    expect(page.get_by_role("button", name="Cancel batch").first).to_be_hidden()
    shot(page, "89-batches-jobs")


def test_batches_staged_id_survives_leaving_the_page(page, base_url, request):
    e2e.configure_storage(base_url, request.getfixturevalue("s3"))
    sign_in(page)
    page.goto("/ui/#/batches")
    page.get_by_role("radio", name="Stage now, process later").check()
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "later.zip", "mimeType": "application/zip", "buffer": e2e.make_archive()})
    page.get_by_role("button", name="Stage archive").click()
    page.locator("#view").get_by_text("Archive staged").wait_for()
    staged = page.get_by_label("Staged archive id").input_value()
    assert staged
    page.goto("/ui/#/convert")
    page.goto("/ui/#/batches")
    page.get_by_label("Staged archive id").wait_for()
    assert page.get_by_label("Staged archive id").input_value() == staged
    assert "later.zip" in page.locator(".staged-info").inner_text()


# ------------------------------------------------------------------------------ items 1, 3
@pytest.fixture(scope="module")
def builtin_url(redis_server, mongo_server, render_pool, s3):
    """The real app whose storage is the built-in one (service-wide, marked embedded), as
    ``serve`` sets it up with no configuration."""
    import asyncio
    import uuid

    from store.storage_settings import SERVICE
    from tornado_app.settings import Settings

    settings = Settings(mongo_db=f"ui_builtin_{uuid.uuid4().hex[:10]}",
                        storage_allowed_endpoints=("127.0.0.1",))
    server = e2e.ServerThread(settings, mongo_server.url, redis_server.url, render_pool)
    url = server.start()
    config = s3.config(f"builtin{uuid.uuid4().hex[:10]}")
    from store.objects import ObjectStore

    assert ObjectStore(config).test_connection(create_if_missing=True)["bucket_exists"]
    asyncio.run_coroutine_threadsafe(server.svc.storage.configs.set_active(
        SERVICE, config, embedded=True), server.loop).result(30)
    yield url
    server.stop()


def test_builtin_storage_is_labelled_and_tests_and_saves_without_keys(browser, builtin_url):
    context = browser.new_context(viewport=e2e.DESKTOP, base_url=builtin_url)
    context.set_default_timeout(15000)
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        sign_in(pg)
        pg.goto("/ui/#/storage")
        note = pg.locator(".built-in-note")
        note.get_by_text("Built-in storage").wait_for()
        assert "without entering keys" in note.inner_text()
        pg.get_by_role("button", name="Test connection").click()
        panel = pg.get_by_role("region", name="Connection test result")
        panel.wait_for()
        assert "Connection works" in panel.inner_text(), panel.inner_text()
        pg.get_by_label("Profile name").fill("builtin-copy")
        pg.get_by_role("button", name="Save as profile").click()
        pg.locator("#view").get_by_text("Saved the current settings as “builtin-copy”.").wait_for()
        shot(pg, "90-storage-builtin")
        # editing the form means "my own storage": the note says so, and keys are needed
        pg.get_by_label("Endpoint").fill("127.0.0.1:1")
        note.get_by_text("your changes replace it").wait_for()
        assert not problems, problems
    finally:
        context.close()


def test_public_read_is_verified_and_links_follow_it(page, base_url, request):
    """A public-read bucket, on an S3 server of its own (its policy opens the bucket to
    anonymous reads), is verified on save, and saved conversions link to it directly."""
    from tests.s3_server import running_s3

    module_s3 = request.getfixturevalue("s3")
    e2e.configure_storage(base_url, module_s3)  # the settings the form loads first
    with running_s3() as s3_server:
        try:
            _public_read_links(page, s3_server, module_s3)
        finally:  # back to the private module storage for the other tests
            e2e.configure_storage(base_url, module_s3)


def _answer_of(page, path: str, button: str) -> dict:
    """Click ``button`` and return the JSON answer of the POST to ``path`` it sends; when none
    comes within 90 s, fail with every thread's stack (where the service waits)."""
    import faulthandler
    import tempfile
    import time

    t0 = time.monotonic()
    try:
        with page.expect_response(lambda r: r.url.endswith(path) and r.request.method == "POST",
                                  timeout=90000) as info:
            page.get_by_role("button", name=button).click()
    except PlaywrightTimeoutError:
        with tempfile.TemporaryFile("w+") as fh:
            faulthandler.dump_traceback(fh, all_threads=True)
            fh.seek(0)
            stacks = fh.read()
        raise AssertionError(f"no answer to POST {path} in 90 s; threads:\n{stacks}") from None
    answer = info.value.json()
    print(f"POST {path}: {info.value.status} after {time.monotonic() - t0:.1f} s: {answer}")
    return answer


def test_storage_edits_made_while_the_settings_load_are_kept(page, base_url, request):
    """Typing into the storage form before the current settings arrive: the late answer
    fills the fields left alone and never overwrites what was typed (the public-read test
    above once failed in full runs this way, its endpoint replaced or its stale public
    address kept)."""
    from urllib.parse import urlparse

    module_s3 = request.getfixturevalue("s3")
    e2e.configure_storage(base_url, module_s3)
    sign_in(page)
    held: list[Any] = []
    def settings(url: str) -> bool:
        return urlparse(url).path == "/config"

    page.route(settings, lambda route: held.append(route))
    page.goto("/ui/#/storage")
    page.get_by_label("Endpoint").fill("127.0.0.1:9")
    page.get_by_label("Bucket", exact=True).fill("typed-while-loading")
    page.get_by_label("Public read").check()
    assert len(held) == 1  # the settings are still on their way
    held[0].continue_()
    page.unroute(settings)
    expect(page.get_by_label("Access key")).to_have_value(module_s3.handle.access)
    expect(page.get_by_label("Endpoint")).to_have_value("127.0.0.1:9")
    expect(page.get_by_label("Bucket", exact=True)).to_have_value("typed-while-loading")
    expect(page.get_by_label("Public read")).to_be_checked()
    # links follow the endpoint unless a public address was set: the field is left empty,
    # so a new endpoint does not keep the old host in links
    expect(page.get_by_label("Public address")).to_have_value("")


def _public_read_links(page, s3_server, module_s3) -> None:
    sign_in(page)
    page.goto("/ui/#/storage")
    expect(page.get_by_label("Endpoint")).to_have_value(module_s3.endpoint)  # loaded
    expect(page.get_by_label("Public address")).to_have_value("")  # it follows the endpoint
    page.get_by_label("Endpoint").fill(s3_server.endpoint)
    page.get_by_label("Access key").fill(s3_server.handle.access)
    page.get_by_label("Secret key").fill(s3_server.handle.secret)
    page.get_by_label("Bucket", exact=True).fill("ui-public-read")
    page.get_by_label("Create the bucket if it is missing").check()
    page.get_by_label("Public read").check()  # a bucket the test creates gets the policy
    tested = _answer_of(page, "/config/storage/test", "Test connection")
    result = page.get_by_role("region", name="Connection test result")
    expect(result).to_contain_text("Connection works", timeout=10000)
    saved = _answer_of(page, "/config/storage", "Save settings")
    assert saved.get("public_read_check", {}).get("ok") is True, (tested, saved)
    page.locator("#view").get_by_text("Public read works").wait_for(timeout=10000)
    assert "answered 200" in page.locator("#view .form-message").first.inner_text()
    shot(page, "91-storage-public-read")
    # a saved conversion on a public bucket: one lasting link (through this service, the
    # default STORAGE_LINKS) that opens for anyone
    page.goto("/ui/#/convert")
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    page.get_by_role("checkbox", name="Save to storage").check()
    page.get_by_role("button", name="Convert", exact=True).click()
    saved = page.get_by_role("region", name="Saved to storage")
    saved.locator("dt", has_text="Link").wait_for()
    terms = saved.locator("dt").all_inner_texts()
    assert len(terms) == 1 and terms[0].startswith("Link") and "Does not expire" in terms[0]
    direct = saved.locator("a.link-url").first.get_attribute("href")
    with urllib.request.urlopen(direct, timeout=10) as resp:  # anonymous, as a reader would
        assert b"# Introduction" in resp.read()
    shot(page, "92-convert-saved-public")
