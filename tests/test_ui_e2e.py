"""End-to-end tests of the browser app at ``/ui/``: Playwright (sync API) driving Debian's
chromium against the real service (real Redis, SecantusDB and render pool) on loopback.

Every test saves screenshots at 1280x800 and 390x844 to ``test-artifacts/ui/`` and checks
that the phone layout never scrolls sideways. Screens whose endpoints this server does not
mount yet skip (they start running when the endpoints land).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from render_pool.runtime.browser import find_chromium
from tests.conftest import PASSWORD, add_user
from tests.docx_fixtures import PNG_1PX, build_feature_docx
from tornado_app.app import make_app
from tornado_app.services import open_services
from tornado_app.settings import Settings
from tornado_app.ui import CONTENT_SECURITY_POLICY, default_static_dir, ui_routes

CHROMIUM = find_chromium() or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium (apt install chromium)"),
    pytest.mark.timeout(120),
]

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "ui"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
COMPANY = "ACME"


# ------------------------------------------------------------------------------ the service
class ServerThread:
    """The real Tornado app (auth + docs + UI) on its own event loop in a thread."""

    def __init__(self, settings: Settings, mongo_url: str, redis_url: str, pool: Any) -> None:
        self.settings, self.mongo_url, self.redis_url, self.pool = settings, mongo_url, redis_url, pool
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self.worker: Any = None  # the job consumer, when the app runs the docs face
        self.thread = threading.Thread(target=self._run, name="ui-e2e-server", daemon=True)

    async def _setup(self) -> None:
        from tornado.httpserver import HTTPServer
        from tornado.netutil import bind_sockets

        svc = await open_services(self.settings, mongo_url=self.mongo_url, redis_url=self.redis_url)
        svc.pool = self.pool
        from tornado_app.documents.setup import open_storage

        await open_storage(svc, None)  # storage manager, nothing configured yet
        admin_id = await add_user(svc, COMPANY, "admin", role="ADMIN", real_name="Ada Admin")
        from store import companies

        company = await companies.get_by_code(svc.db, COMPANY)
        assert company is not None
        self.admin_token = await svc.sessions.create(admin_id, company.id)  # for http()
        for name, role, real in [("rita", "REVIEWER", "Rita Reviewer"),
                                 ("noah", "ANNOTATOR", "Noah Annotator"),
                                 ("mei", "ANNOTATOR", "Mei Chen")]:
            await add_user(svc, COMPANY, name, role=role, real_name=real)
        await add_user(svc, COMPANY, "olga", role="ANNOTATOR", status="DISABLED",
                       real_name="Olga Former")
        app = make_app(svc)
        app.add_handlers(r".*", ui_routes(default_static_dir()))
        from tornado_app.documents.job_worker import JobWorker

        self.worker = JobWorker(svc)  # async batches run as jobs, as in ``serve``
        self.worker.start()
        sockets = bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.http = HTTPServer(app)
        self.http.add_sockets(sockets)
        self.svc = svc

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._setup())
        except BaseException as exc:
            self.error = exc
            self.ready.set()
            return
        self.ready.set()
        self.loop.run_forever()
        if self.worker is not None:
            self.loop.run_until_complete(self.worker.stop(5))
        self.http.stop()
        self.svc.pool = None  # the session's pool is closed by its own fixture
        self.loop.run_until_complete(self.svc.close())
        self.loop.close()

    def start(self) -> str:
        self.thread.start()
        self.ready.wait(60)
        if self.error:
            raise self.error
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.loop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture(scope="module")
def base_url(redis_server, mongo_server, render_pool) -> Iterator[str]:
    import redis as redis_sync

    redis_sync.Redis.from_url(redis_server.url).flushdb()
    settings = Settings(mongo_db=f"ui_{uuid.uuid4().hex[:10]}", allow_private_urls=True,
                        storage_allowed_endpoints=("127.0.0.1",))  # the loopback test S3
    server = ServerThread(settings, mongo_server.url, redis_server.url, render_pool)
    url = server.start()
    ADMIN_TOKENS[url] = server.admin_token
    yield url
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
    yield b
    b.close()
    pw.stop()


@pytest.fixture
def page(browser, base_url) -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True, base_url=base_url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    context.set_default_timeout(15000)
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    pg.on("console", lambda msg: problems.append(f"console: {msg.text}")
          if msg.type == "error" and "Failed to load resource" not in msg.text else None)
    pg.problems = problems
    track_api_calls(pg)
    yield pg
    if os.environ.get("UI_DEBUG_SHOTS"):
        pg.screenshot(path=str(ARTIFACTS / "debug-last.png"), full_page=True)
    context.close()
    assert not problems, problems  # no script errors, no CSP violations


# ------------------------------------------------------------------------------ helpers
def _is_api_call(request: Any, page: Any) -> bool:
    """A fetch of the app's own page, not a job's event stream (open while the job runs)."""
    return (request.resource_type in ("fetch", "xhr") and request.frame == page.main_frame
            and not request.url.split("?", 1)[0].endswith("/events"))


def track_api_calls(page: Any) -> None:
    """Count the page's API calls in flight (see :func:`settle`)."""
    page.api_calls = set()
    page.api_calls_changed = 0.0

    def started(request: Any) -> None:
        if _is_api_call(request, page):
            page.api_calls.add(request)
            page.api_calls_changed = time.monotonic()

    def ended(request: Any) -> None:
        if request in page.api_calls:
            page.api_calls.discard(request)
            page.api_calls_changed = time.monotonic()

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)


def settle(page: Any, quiet: float = 0.5, timeout: float = 15.0) -> None:
    """Wait until every API call the app made has answered and none has started for
    ``quiet`` seconds: what a screen asks for on opening has come back and been drawn.

    Playwright's "networkidle" is about frames, not the app: once a child frame commits a
    new document (the preview frame's ``srcdoc`` set anew), the page is not idle again until
    Playwright has seen that frame go idle, and a frame it never sees go idle holds every
    later wait back (a page whose frame's new document keeps a request open shows it). The
    phone-screenful test of tests/test_ui_polish.py timed out so, right after the Markdown
    screen, in a full run on 2026-11-29; the preview frame runs out of process and was seen
    left unlaid-out on a busy machine before."""
    deadline = time.monotonic() + timeout
    while page.api_calls or time.monotonic() - page.api_calls_changed < quiet:
        if time.monotonic() > deadline:
            urls = sorted(r.url for r in page.api_calls)
            raise AssertionError(f"API calls still in flight after {timeout} s: {urls}")
        page.wait_for_timeout(50)  # lets Playwright deliver the request events


ADMIN_TOKENS: dict[str, str] = {}  # base URL -> a session of ACME's admin, for http()


def http(base_url: str, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None, anon: bool = False) -> tuple[int, Any]:
    """A plain HTTP call from the test (not the browser), as ACME's admin unless ``anon``."""
    headers = dict(headers or {})
    if not anon and base_url in ADMIN_TOKENS:
        headers.setdefault("Authorization", f"Bearer {ADMIN_TOKENS[base_url]}")
    req = urllib.request.Request(base_url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw


def endpoint_missing(base_url: str, path: str, method: str = "GET") -> bool:
    """True when the server does not mount ``path`` (a bare 404, not a domain answer)."""
    status, body = http(base_url, method, path, b"" if method == "POST" else None)
    return status == 404 and (not isinstance(body, dict) or body.get("message") == "no such endpoint"
                              or ("ok" not in body and "code" not in body))


def shot(page: Any, name: str, *, full_page: bool = True) -> None:
    """Screenshots at desktop and phone size; the phone layout must not scroll sideways.
    ``full_page=False`` for modal dialogs (their backdrop covers the viewport only)."""
    page.mouse.move(0, 0)  # no hover effects in the pictures
    page.evaluate("window.scrollTo(0, 0)")  # a sticky header would be drawn mid-page otherwise
    page.wait_for_timeout(120)
    page.screenshot(path=str(ARTIFACTS / f"{name}-desktop.png"), full_page=full_page)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(150)
    page.screenshot(path=str(ARTIFACTS / f"{name}-phone.png"), full_page=full_page)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    page.set_viewport_size(DESKTOP)
    assert overflow <= 1, f"{name}: the phone layout scrolls sideways by {overflow}px"


def sign_in(page: Any, username: str = "admin", password: str = PASSWORD) -> None:
    page.goto("/ui/#/signin")
    page.get_by_label("Company code").fill(COMPANY)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#topbar").wait_for(state="visible")


def focus_is_visible(page: Any) -> bool:
    return page.evaluate("""() => {
        const s = getComputedStyle(document.activeElement);
        return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    }""")


def field_error(page: Any, label: str) -> Any:
    """The error text element tied (aria-describedby) to the field labelled ``label``."""
    control = page.get_by_label(label, exact=True)
    ids = (control.get_attribute("aria-describedby") or "").split()
    err = [i for i in ids if i.endswith("-error")]
    assert err, f"{label} has no error slot"
    return page.locator(f"#{err[0]}")


# ------------------------------------------------------------------------------ shell + sign in
def test_static_files_have_csp(base_url):
    status, _ = http(base_url, "GET", "/ui/app.js")
    assert status == 200
    req = urllib.request.Request(base_url + "/ui/")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
        assert b'<script type="module" src="app.js">' in resp.read()
    with urllib.request.urlopen(base_url + "/ui/js/api.js", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/javascript")
    assert http(base_url, "GET", "/ui/../tornado_app/settings.py")[0] in (403, 404)
    # /ui redirects to /ui/
    opener = urllib.request.build_opener(type("NoRedirect", (urllib.request.HTTPRedirectHandler,),
                                              {"redirect_request": lambda *a, **k: None}))
    with pytest.raises(urllib.error.HTTPError) as info:
        opener.open(base_url + "/ui", timeout=10)
    assert info.value.code in (301, 302) and info.value.headers["Location"] == "/ui/"


def test_sign_in_by_keyboard_with_errors(page):
    page.goto("/ui")
    assert page.url.endswith("/ui/#/signin")
    company = page.get_by_label("Company code")
    assert company.evaluate("el => el === document.activeElement")  # focus starts in the form
    # empty form: each field says what is missing, focus goes to the first
    page.keyboard.press("Enter")
    assert field_error(page, "Company code").inner_text() == "Enter your company code."
    assert field_error(page, "Password").inner_text() == "Enter your password."
    assert company.get_attribute("aria-invalid") == "true"
    page.keyboard.type(COMPANY)
    page.keyboard.press("Tab")
    assert focus_is_visible(page)
    page.keyboard.type("admin")
    page.keyboard.press("Tab")
    page.keyboard.type("wrong password!")
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "company code, username or password is not right" in alert.inner_text()
    shot(page, "01-signin-error")
    # the password is selected for retyping
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.locator("#topbar").wait_for(state="visible")
    assert page.url.endswith("#/convert")
    who = page.locator("#who-text").inner_text()
    assert "Ada Admin" in who and "ADMIN" in who and "ACME Ltd" in who
    assert page.get_by_role("link", name="Users").is_visible()
    # after a navigation the page heading has the focus (screen readers hear where they are)
    assert page.evaluate("document.activeElement.textContent") == "Convert a document"
    # on a fresh load the skip link is the first stop and lands on the content
    page.reload()
    page.get_by_role("heading", name="Convert a document").wait_for()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    assert focus_is_visible(page)
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_sign_in_page_looks_right_and_sign_out(page):
    page.goto("/ui/")
    shot(page, "00-signin")
    sign_in(page, "rita")
    # a REVIEWER sees no Users entry and the admin screen refuses politely
    assert not page.get_by_role("link", name="Users").is_visible()
    page.goto("/ui/#/users")
    assert page.locator("#view").get_by_text("Administrators only").is_visible()
    page.get_by_role("button", name="Sign out").click()
    page.locator("#view").get_by_text("You are signed out.").wait_for()
    assert page.evaluate("sessionStorage.getItem('docservice.token')") is None
    assert not page.locator("#topbar").is_visible()


def test_disabled_account_error(page):
    page.goto("/ui/")
    page.get_by_label("Company code").fill(COMPANY)
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("alert").wait_for()
    assert "account is disabled" in page.get_by_role("alert").inner_text()


# ------------------------------------------------------------------------------ users
def test_users_admin_flow(page):
    sign_in(page)
    page.get_by_role("link", name="Users").click()
    page.get_by_role("heading", name="Users", level=1).wait_for()
    rows = page.locator("tbody tr[data-username]")
    rows.first.wait_for()
    assert {"admin", "rita", "noah", "mei", "olga"} <= set(rows.evaluate_all(
        "rs => rs.map(r => r.dataset.username)"))
    assert "5 users" in page.locator(".pager-summary").inner_text()

    # create by keyboard: the dialog opens with focus on the first field
    page.get_by_role("button", name="New user").focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="New user")
    dialog.wait_for()
    page.keyboard.type("sam.lee")
    page.keyboard.press("Tab")
    page.keyboard.type("sam-password-1")
    page.keyboard.press("Tab")  # Show password
    page.keyboard.press("Tab")  # Generate password
    page.keyboard.press("Tab")
    page.keyboard.type("Sam Lee")
    page.keyboard.press("Tab")
    page.keyboard.press("End")  # last role: Annotator
    page.keyboard.press("Tab")  # Cancel
    page.keyboard.press("Tab")  # Create user
    assert page.evaluate("document.activeElement.textContent") == "Create user"
    assert focus_is_visible(page)
    page.keyboard.press("Enter")
    page.locator("#view").get_by_text("User sam.lee was created.").wait_for()
    sam = page.locator('tr[data-username="sam.lee"]')
    assert "Sam Lee" in sam.inner_text() and sam.get_by_label("Role of Sam Lee").input_value() == "ANNOTATOR"

    # rename
    sam.get_by_role("button", name="Rename Sam Lee").click()
    rename = page.get_by_role("dialog", name="Rename sam.lee")
    rename.get_by_label("Real name").fill("Samuel Lee")
    rename.get_by_role("button", name="Save name").click()
    page.locator("#view").get_by_text("sam.lee is now called Samuel Lee.").wait_for()
    # change role
    sam.get_by_label("Role of Samuel Lee").select_option("REVIEWER")
    page.get_by_role("dialog", name="Make Samuel Lee Reviewer?").get_by_role(
        "button", name="Make Reviewer").click()
    page.locator("#view").get_by_text("Samuel Lee is now Reviewer.").wait_for()
    # disable
    sam.get_by_role("button", name="Disable Samuel Lee").click()
    page.get_by_role("dialog", name="Disable Samuel Lee?").get_by_role(
        "button", name="Disable").click()
    page.locator("#view").get_by_text("Samuel Lee is disabled.").wait_for()
    assert sam.locator(".badge").inner_text() == "Disabled"
    assert sam.get_by_role("button", name="Enable Samuel Lee").is_visible()

    # filter: only disabled accounts
    page.get_by_label("Status").select_option("DISABLED")
    expect(page.locator(".pager-summary")).to_contain_text("of 2 users")
    assert set(rows.evaluate_all("rs => rs.map(r => r.dataset.username)")) == {"olga", "sam.lee"}
    shot(page, "10-users-filtered")
    page.get_by_label("Status").select_option("")
    expect(page.locator(".pager-summary")).to_contain_text("of 6 users")
    shot(page, "11-users")

    # error next to the field: a username that is taken
    page.get_by_role("button", name="New user").click()
    dialog = page.get_by_role("dialog", name="New user")
    dialog.get_by_label("Username").fill("rita")
    dialog.get_by_label("Initial password").fill("another-pass-1")
    dialog.get_by_role("button", name="Create user").click()
    err = field_error(page, "Username")
    err.wait_for()
    assert err.inner_text() == "This username is already taken in your company."
    assert dialog.get_by_label("Username").evaluate("el => el === document.activeElement")
    shot(page, "12-users-create-error", full_page=False)
    page.keyboard.press("Escape")
    assert page.get_by_role("button", name="New user").evaluate("el => el === document.activeElement")

    # error next to the action: the last active admin cannot demote itself
    admin = page.locator('tr[data-username="admin"]')
    admin.get_by_label("Role of Ada Admin").select_option("ANNOTATOR")
    page.get_by_role("dialog", name="Make Ada Admin Annotator?").get_by_role(
        "button", name="Make Annotator").click()
    row_alert = page.locator(".row-error[role=alert]")
    row_alert.wait_for()
    assert "without an active ADMIN" in row_alert.inner_text()
    assert admin.get_by_label("Role of Ada Admin").input_value() == "ADMIN"  # reverted
    shot(page, "13-users-last-admin")


# ------------------------------------------------------------------------------ convert
def test_api_keys_flow(page, base_url):
    sign_in(page)
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("heading", name="API keys", level=1).wait_for()
    page.get_by_role("button", name="New key").click()
    dialog = page.get_by_role("dialog", name="New API key")
    # error path: a name is needed, said next to the field
    dialog.get_by_role("button", name="Create key").click()
    expect(field_error(page, "Name")).to_contain_text("name")
    page.get_by_label("Name", exact=True).fill("Nightly CI")
    page.get_by_label("Role", exact=True).select_option("REVIEWER")
    page.get_by_label("Expires", exact=True).select_option("30")
    dialog.get_by_role("button", name="Create key").click()
    shown = dialog.get_by_label(re.compile("Key \"Nightly CI\""))
    shown.wait_for()
    secret = shown.input_value()
    assert secret.startswith("dsk_") and "only time it is shown" in dialog.inner_text()
    shot(page, "14-keys-created", full_page=False)
    # the key works for a script, with its role's rights
    auth = {"Authorization": f"Bearer {secret}"}
    assert http(base_url, "GET", "/md/themes", headers=auth)[0] == 200
    assert http(base_url, "GET", "/config", headers=auth)[0] == 403
    dialog.get_by_role("button", name="Done").click()
    row = page.locator("tr[data-key-name='Nightly CI']")
    expect(row).to_contain_text(secret[:12])
    expect(row).to_contain_text("Reviewer")
    assert secret not in page.content()  # the list never shows the key
    shot(page, "15-keys")
    row.get_by_role("button", name="Revoke").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke key").click()
    expect(page.locator(".page-message")).to_contain_text("revoked")
    expect(row).to_have_count(0)
    assert http(base_url, "GET", "/md/themes", headers=auth)[0] == 401
    # another role sees no keys screen
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "rita")
    assert page.get_by_role("link", name="API keys").count() == 0
    page.goto("/ui/#/keys")
    page.locator("#view").get_by_text("Administrators only").wait_for()


def test_webhook_secret_is_made_shown_once_and_rotated(page):
    sign_in(page)
    page.get_by_role("link", name="API keys").click()
    section = page.get_by_role("region", name="Webhook secret")
    expect(section).to_contain_text("No secret yet")
    section.get_by_role("button", name="Create secret").click()
    dialog = page.get_by_role("dialog", name="Webhook secret")
    first = dialog.get_by_label("Secret").input_value()
    assert first.startswith("whsec_") and "only time it is shown" in dialog.inner_text()
    dialog.get_by_role("button", name="Done").click()
    expect(section).to_contain_text("A secret exists")
    assert first not in page.content()  # shown once
    section.get_by_role("button", name="Rotate secret").click()
    rotated = page.get_by_role("dialog", name="New webhook secret")
    second = rotated.get_by_label("Secret").input_value()
    assert second.startswith("whsec_") and second != first
    rotated.get_by_role("button", name="Done").click()


def test_convert_document_flow(page):
    sign_in(page)
    page.get_by_role("heading", name="Convert a document").wait_for()
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    assert "features.docx" in page.locator(".dz-chosen").inner_text()
    page.get_by_role("button", name="Convert", exact=True).click()
    result = page.locator(".result-card")
    result.wait_for()
    # rendered by the service (POST /md/preview) in a sandboxed frame
    assert result.locator("iframe.md-preview").get_attribute("sandbox") == ""
    rendered = page.frame_locator(".result-card iframe.md-preview")
    rendered.locator("h1", has_text="Introduction").wait_for()
    assert rendered.locator('a[href="https://example.com/page"]').count() == 1
    assert rendered.locator("img[src^='data:image/png']").count() >= 1
    shot(page, "20-convert-markdown")
    # tabs by keyboard: ArrowRight moves to the source view
    result.get_by_role("tab", name="Rendered").focus()
    page.keyboard.press("ArrowRight")
    source = result.get_by_role("tab", name="Markdown source")
    assert source.get_attribute("aria-selected") == "true"
    assert "# Introduction" in result.locator("pre.code-view").inner_text()
    # copy and download
    result.get_by_role("button", name="Copy").click()
    page.locator("#view").get_by_text("Copied to the clipboard.").wait_for()
    assert "# Introduction" in page.evaluate("navigator.clipboard.readText()")
    with page.expect_download() as dl:
        result.get_by_role("button", name="Download").click()
    assert dl.value.suggested_filename == "features.md"
    assert "# Introduction" in Path(dl.value.path()).read_text()

    # HTML: a sandboxed preview
    page.get_by_role("radio", name="HTML").check()
    page.get_by_role("button", name="Convert", exact=True).click()
    frame = page.locator("iframe.html-preview")
    frame.wait_for()
    assert frame.get_attribute("sandbox") == ""
    assert "<h1" in frame.get_attribute("srcdoc")
    assert page.frame_locator("iframe.html-preview").locator("h1", has_text="Introduction").count() == 1
    shot(page, "21-convert-html")
    # JSON: pretty-printed
    page.get_by_role("radio", name="JSON").check()
    page.get_by_role("button", name="Convert", exact=True).click()
    page.locator(".json-view .j-key").first.wait_for()
    assert '\n  "' in page.locator(".json-view").inner_text()
    shot(page, "22-convert-json")
    # chunks: a list of chunks with their heading path and size, beside the JSON
    page.get_by_role("radio", name="Chunks").check()
    page.get_by_role("button", name="Convert", exact=True).click()
    chunk = page.locator(".chunk-list .chunk").first
    chunk.wait_for()
    assert "Chunk 1 · " in chunk.locator(".chunk-meta").inner_text()
    assert "Introduction" in chunk.locator(".chunk-path").inner_text()
    assert "# Introduction" in chunk.locator(".chunk-text").inner_text()  # the chunk's Markdown
    assert page.get_by_role("tab", name="JSON").count() == 1


def test_convert_errors_and_keyboard(page, base_url):
    sign_in(page)
    page.get_by_role("heading", name="Convert a document").wait_for()
    # keyboard only: reach the Convert button with Tab and submit without a file
    page.get_by_role("radio", name="Upload a file").focus()
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Convert":
            break
    assert focus_is_visible(page)
    page.keyboard.press("Enter")
    err = page.locator("[data-field=file] .field-error")
    assert err.inner_text() == "Choose or drop a document first."
    assert page.evaluate("document.activeElement.name") == "file"
    # a file that is no document: the server's reason, in words, by the file field
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"just some text\n"})
    page.get_by_role("button", name="Convert", exact=True).click()
    expect(err).to_contain_text("Unsupported file type: only")
    assert "DOCX" in err.inner_text() and "PDF" in err.inner_text()
    shot(page, "23-convert-error")
    # save while no storage is set up: the reason sits by the "Save to storage" box
    status, snapshot = http(base_url, "GET", "/config")
    if status == 200 and snapshot.get("storage") is None:
        page.locator("input[type=file][name=file]").set_input_files(
            {"name": "f.docx", "mimeType": "application/octet-stream", "buffer": build_feature_docx()})
        page.get_by_role("checkbox", name="Save to storage").check()
        page.get_by_role("button", name="Convert", exact=True).click()
        save_err = page.locator("#convert-save-error")
        save_err.wait_for()
        assert "not configured" in save_err.inner_text() and "Storage screen" in save_err.inner_text()
        page.get_by_role("checkbox", name="Save to storage").uncheck()
    # an address mode with a refused scheme is caught before sending
    page.get_by_role("radio", name="From an address").check()
    page.get_by_label("Document address").fill("file:///etc/passwd")
    page.get_by_role("button", name="Convert", exact=True).click()
    assert "http://" in field_error(page, "Document address").inner_text()


# ------------------------------------------------------------------------------ markdown
def test_markdown_to_pdf_flow(page, base_url):
    if endpoint_missing(base_url, "/md/convert", "POST"):
        pytest.skip("/md/convert is not mounted on this server yet")
    sign_in(page)
    page.get_by_role("link", name="Markdown to PDF/DOCX").click()
    editor = page.get_by_label("Markdown text")
    editor.fill("# Field guide\n\nLive **preview** works.\n\n## Setup\n\n- one\n- two\n")
    preview = page.frame_locator("iframe.md-preview")
    preview.locator("h1", has_text="Field guide").wait_for()
    assert preview.locator("strong", has_text="preview").count() == 1
    page.get_by_label("Style").select_option("github")
    page.get_by_label("Document name").fill("Field guide")
    page.get_by_label("Document version").fill("v1.2")
    page.get_by_label("Product name").fill("Docservice")
    page.get_by_label("Copyright").fill("© 2025 Acme Ltd")
    page.get_by_label("Table of contents").check()
    page.get_by_label("Header text").fill("Acme — internal")
    page.get_by_label("Footer text").fill("Confidential")
    page.get_by_label("Custom CSS").fill("h1 { color: #3346c8; }")
    page.get_by_label("Output name").fill("field-guide")
    with page.expect_download(timeout=60000) as dl:
        page.get_by_role("button", name="Download PDF").click()
    assert dl.value.suggested_filename == "field-guide.pdf"
    assert Path(dl.value.path()).read_bytes().startswith(b"%PDF")
    page.locator("#view").get_by_text("Your file is ready").wait_for()
    shot(page, "30-markdown-pdf")
    # DOCX too
    page.get_by_role("radio", name="Word (DOCX)").check()
    assert page.get_by_label("Style").is_disabled()
    with page.expect_download(timeout=60000) as dl:
        page.get_by_role("button", name="Download DOCX").click()
    assert zipfile.is_zipfile(io.BytesIO(Path(dl.value.path()).read_bytes()))


def test_markdown_errors(page, base_url):
    if endpoint_missing(base_url, "/md/convert", "POST"):
        pytest.skip("/md/convert is not mounted on this server yet")
    sign_in(page)
    page.goto("/ui/#/markdown")
    # a cover address that is not http(s): the server refuses it, shown by that field
    page.get_by_label("Cover image address").fill("ftp://example.com/cover.png")
    page.get_by_role("button", name="Download PDF").click()
    err = field_error(page, "Cover image address")
    err.wait_for()
    assert "not allowed" in err.inner_text().lower() or "refused" in err.inner_text().lower()
    assert page.get_by_label("Cover image address").get_attribute("aria-invalid") == "true"
    shot(page, "31-markdown-error")
    # an empty editor is caught before sending
    page.get_by_label("Cover image address").fill("")
    page.get_by_label("Markdown text").fill("")
    page.get_by_role("button", name="Download PDF").click()
    assert field_error(page, "Markdown text").inner_text() == "Write or drop some Markdown first."


# ------------------------------------------------------------------------------ storage
@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    """A SeaweedFS S3 for the storage and batch screens (started only when they run)."""
    from tests.s3_server import running_s3

    with running_s3() as server:
        yield server


def configure_storage(base_url: str, s3: Any) -> None:
    """Point the service at the test S3 (creating the bucket) through the API."""
    from tests.conftest import multipart

    fields = {"endpoint": s3.endpoint, "access": s3.handle.access, "secret": s3.handle.secret,
              "bucket": "ui-e2e", "secure": "false"}
    body, ctype = multipart({**fields, "create_if_missing": "true"})
    http(base_url, "POST", "/config/storage/test", body, {"Content-Type": ctype})
    body, ctype = multipart(fields)
    status, answer = http(base_url, "POST", "/config/storage", body, {"Content-Type": ctype})
    assert status == 200 and answer.get("ok") is True, answer


def test_storage_settings_flow(page, base_url, request):
    if endpoint_missing(base_url, "/config"):
        pytest.skip("/config/* is not mounted on this server yet")
    s3 = request.getfixturevalue("s3")
    sign_in(page)
    page.get_by_role("link", name="Storage").click()
    page.get_by_role("heading", name="Storage", level=1).wait_for()
    endpoint = page.get_by_label("Endpoint")
    # error path: the console address is refused next to the field
    endpoint.fill("127.0.0.1:9001")
    page.get_by_label("Bucket", exact=True).fill("ui-e2e")
    page.get_by_role("button", name="Save settings").click()
    assert "web console" in field_error(page, "Endpoint").inner_text()
    assert endpoint.evaluate("el => el === document.activeElement")
    shot(page, "40-storage-console-error")
    # the real server: test, clock, save
    endpoint.fill(s3.endpoint)
    page.get_by_label("Access key").fill(s3.handle.access)
    page.get_by_label("Secret key").fill(s3.handle.secret)
    page.get_by_label("Create the bucket if it is missing").check()
    page.get_by_role("button", name="Test connection").click()
    panel = page.get_by_role("region", name="Connection test result")
    panel.wait_for()
    assert "Connected: yes" in panel.inner_text()
    assert "Bucket exists" in panel.inner_text()
    page.get_by_role("button", name="Check clock").click()
    clock = page.get_by_role("region", name="Clock check result")
    clock.wait_for()
    assert "Difference" in clock.inner_text()
    page.get_by_role("button", name="Save settings").click()
    page.locator("#view").get_by_text("Storage settings saved.").wait_for()
    # profiles
    page.get_by_label("Profile name").fill("local-e2e")
    page.get_by_role("button", name="Save as profile").click()
    page.locator("#view").get_by_text("Saved the current settings as “local-e2e”.").wait_for()
    page.get_by_label("Saved profiles").select_option("local-e2e")
    endpoint.fill("changed.example:9000")
    page.get_by_role("button", name="Load", exact=True).click()
    page.locator("#view").get_by_text("Profile “local-e2e” loaded").wait_for()
    assert endpoint.input_value() == s3.endpoint
    # link map
    page.locator(".map-from").last.fill("http://old.intranet/docs/")
    page.locator(".map-to").last.fill("https://docs.example.com/")
    page.get_by_role("button", name="Save link map").click()
    page.locator("#view").get_by_text(re.compile(r"Link map saved \(1 link\)")).wait_for()
    shot(page, "41-storage")


def test_save_to_storage_shows_both_links(page, base_url, request):
    if endpoint_missing(base_url, "/config/storage", "POST"):
        pytest.skip("/config/storage is not mounted on this server yet")
    configure_storage(base_url, request.getfixturevalue("s3"))
    sign_in(page)
    page.locator("input[type=file][name=file]").set_input_files(
        {"name": "features.docx", "mimeType": "application/octet-stream",
         "buffer": build_feature_docx()})
    page.get_by_role("checkbox", name="Save to storage").check()
    page.get_by_role("button", name="Convert", exact=True).click()
    saved = page.get_by_role("region", name="Saved to storage")
    saved.wait_for()
    links = saved.locator("a.link-url")
    links.first.wait_for()
    # by default one lasting link, through this service (STORAGE_LINKS=service), that opens
    # without signing in and names no storage port
    terms = saved.locator("dt").all_inner_texts()
    assert len(terms) == 1 and terms[0].startswith("Link") and "Does not expire" in terms[0]
    href = links.first.get_attribute("href") or ""
    assert href.startswith(base_url + "/proxy/object/"), href
    with urllib.request.urlopen(href, timeout=10) as resp:
        assert b"# Introduction" in resp.read()
    shot(page, "24-convert-saved")
    # Markdown to PDF, saved
    page.goto("/ui/#/markdown")
    page.get_by_role("button", name="Save to storage").click()
    saved = page.get_by_role("region", name="Saved to storage")
    saved.wait_for(timeout=60000)
    with urllib.request.urlopen(saved.locator("a.link-url").first.get_attribute("href"),
                                timeout=10) as resp:
        assert resp.read().startswith(b"%PDF")


# ------------------------------------------------------------------------------ batches
def make_archive(name_prefix: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{name_prefix}guide/index.md", "# Guide\n\n![logo](img/logo.png)\n\n[next](page.md)\n")
        zf.writestr(f"{name_prefix}guide/page.md", "# Page\n\n![missing](img/nothere.png)\n")
        zf.writestr(f"{name_prefix}guide/img/logo.png", PNG_1PX)
        zf.writestr(f"{name_prefix}guide/about.html",
                    "<html><body><h1>About</h1><img src='img/logo.png'></body></html>")
    return buf.getvalue()


def test_batches_flow(page, base_url, request):
    if endpoint_missing(base_url, "/api/upload-archive", "POST"):
        pytest.skip("/api/upload-archive is not mounted on this server yet")
    if not endpoint_missing(base_url, "/config/storage", "POST"):
        configure_storage(base_url, request.getfixturevalue("s3"))
    sign_in(page)
    page.get_by_role("link", name="Batches").click()
    page.get_by_role("heading", name="Batches", level=1).wait_for()
    zone = page.locator("input[type=file][name=file]")
    # error path: not an archive
    zone.set_input_files({"name": "broken.zip", "mimeType": "application/zip", "buffer": b"not a zip"})
    page.get_by_role("button", name="Upload and process").click()
    err = page.locator("[data-field=file] .field-error")
    err.wait_for()
    assert err.inner_text()
    shot(page, "50-batches-error")
    # the real thing
    zone.set_input_files({"name": "guide.zip", "mimeType": "application/zip", "buffer": make_archive()})
    page.get_by_label("Storage prefix").first.fill("e2e")
    page.get_by_role("button", name="Upload and process").click()
    results = page.get_by_role("region", name="Batch results")
    results.wait_for(timeout=60000)
    table = results.locator("table.batch-table")
    assert table.locator("tbody tr").count() >= 2
    assert "index.md" in table.inner_text()
    assert table.get_by_role("link", name=re.compile("^Open")).count() >= 1  # lasting links
    shot(page, "51-batches-results")
    # stage, then process
    page.get_by_role("radio", name="Stage now, process later").check()
    zone.set_input_files({"name": "guide2.zip", "mimeType": "application/zip",
                          "buffer": make_archive("v2/")})
    page.get_by_role("button", name="Stage archive").click()
    page.locator("#view").get_by_text("Archive staged").wait_for()
    assert page.get_by_label("Staged archive id").input_value()
    page.get_by_label("Version").fill("2025-06")
    page.get_by_role("button", name="Process staged archive").click()
    page.get_by_role("region", name="Batch results").wait_for(timeout=60000)


# ------------------------------------------------------------------------------ graceful 404
def test_missing_endpoints_say_not_available(page):
    """Screens whose endpoints this deployment lacks say so instead of failing."""
    missing = json.dumps({"code": "NOT_FOUND", "message": "no such endpoint"})
    for pattern in ("**/config", "**/config/**", "**/api/upload-archive", "**/api/archive/**"):
        page.route(pattern, lambda route: route.fulfill(status=404, body=missing,
                                                         content_type="application/json"))
    sign_in(page)
    page.goto("/ui/#/storage")
    page.locator("#view").get_by_text("Not available on this server").wait_for()
    assert "Storage configuration" in page.locator(".empty-state").inner_text()
    shot(page, "60-storage-unavailable")
    page.goto("/ui/#/batches")
    page.locator("#view").get_by_text("Not available on this server").wait_for()
    shot(page, "61-batches-unavailable")
