"""One Chromium per worker process, kept warm and recycled, for printing HTML to PDF.

Why this shape: launching Chromium costs about 0.6 s, a warm browser
prints a small document in well under that, and Chromium stays flat in memory over many renders.
So each pool worker keeps one browser (Playwright sync API, Debian ``chromium`` through
``executable_path``, never a downloaded browser) and one browser context, and opens a fresh page
per job. The context runs with JavaScript disabled and aborts every network request except
``data:`` URLs, so a document cannot run scripts or make the service fetch anything.

The browser is restarted after ``max_jobs`` renders, when its process tree's resident memory
(psutil) passes ``max_rss_mb``, or when it crashed. A job that meets a dead browser is retried
once on a fresh one; if that one dies too the job fails with :class:`ConversionFailed`. Each render
has a time limit: Playwright's own timeouts cover waiting for a page's load, and a watchdog thread
kills the browser when a render runs past the limit (printing, and the DevTools calls, have no
timeout of their own).

A page that cannot fetch anything (:func:`loads_nothing`: text, so a small PDF) is two calls
to the driver: its HTML written without waiting for the load event (:func:`_write`) and one
DevTools ``Page.printToPDF`` that returns the PDF (:func:`_print`). Any other page is
``set_content`` until ``load`` and ``page.pdf``, which reads a big PDF from a stream.

Use it from one thread per process (pool workers are single threaded); a lock serialises callers.
Limits come from ``CHROMIUM_MAX_JOBS``, ``CHROMIUM_MAX_RSS_MB``, ``PDF_RENDER_TIMEOUT`` (seconds)
or :func:`configure`.
"""

from __future__ import annotations

import atexit
import base64
import logging
import os
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from render_pool.errors import ConversionFailed, ConversionTimeout
from render_pool.runtime import memlimit
from render_pool.runtime.procfs import descendants, name, rss_kb

log = logging.getLogger(__name__)

# Flags checked on this kind of machine: without the
# background-networking flags Chromium keeps trying to reach the network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]


RenderTimeout = ConversionTimeout  # the render ran past its time limit (50401)


@dataclass
class Limits:
    """When to recycle the browser and how long one render may take."""

    max_jobs: int = 200
    max_rss_mb: int = 2048
    timeout_s: float = 60.0
    # A page is reused for this many jobs (1: a new page per job). Opening a page costs about
    # as much as printing a short document; with JavaScript off and the network blocked, a
    # page holds nothing from one job that the next job's set_content does not replace.
    page_reuse_jobs: int = 50
    executable: str = ""  # the configured Chromium; "" looks on PATH


class _Holder:
    """Module state: the Playwright driver, the browser and its context, for one process."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every handle: the state of a process that has started nothing yet."""
        self.pid = os.getpid()
        self.playwright: Any = None
        self.browser: Any = None
        self.context: Any = None
        self.jobs = 0
        self.page: Any = None
        self.page_jobs = 0
        self.page_timeout_s: float | None = None  # the page's default timeout, as last set
        self.page_session: Any = None  # the page's DevTools session, once it printed
        self.page_frame = ""  # the id of the page's main frame (DevTools)
        self.launches = 0
        self.launched_at = 0.0  # time.monotonic() of the last launch
        self.atexit_registered = False


limits = Limits()
_state = _Holder()
_lock = threading.RLock()


def configure(
    *, max_jobs: int | None = None, max_rss_mb: int | None = None, timeout_s: float | None = None,
    page_reuse_jobs: int | None = None, executable: str | None = None,
) -> Limits:
    """Change the recycling and time limits (and the Chromium executable) of this process's
    browser; returns the limits. The service calls it in every pool worker with its settings."""
    if max_jobs is not None:
        limits.max_jobs = max_jobs
    if max_rss_mb is not None:
        limits.max_rss_mb = max_rss_mb
    if timeout_s is not None:
        limits.timeout_s = timeout_s
    if page_reuse_jobs is not None:
        limits.page_reuse_jobs = max(1, page_reuse_jobs)
    if executable is not None:
        limits.executable = executable
    return limits


def find_chromium(configured: str | None = None) -> str | None:
    """The one Chromium lookup: the configured path (``CHROMIUM_PATH``, given by the caller,
    or set with :func:`configure`), else ``chromium`` or ``chromium-browser`` on PATH; None
    when there is none (callers that can go on without it ask this)."""
    return (configured or limits.executable or shutil.which("chromium")
            or shutil.which("chromium-browser"))


def chromium_path() -> str:
    """Chromium executable (:func:`find_chromium`); a clear error if none."""
    path = find_chromium()
    if not path:
        raise ConversionFailed(
            "Chromium not found: install the Debian package 'chromium' or set CHROMIUM_PATH"
        )
    return path


# ------------------------------------------------------------------ processes
def browser_pids(max_age: float = 0.0) -> list[int]:
    """Pids of the Chromium processes this process started (its descendants): tests, metrics.

    ``max_age``: a walk of this process's tree at most that many seconds old will do (see
    :func:`render_pool.runtime.procfs.descendants`); 0, the default, walks it afresh."""
    return sorted(pid for pid in descendants(os.getpid(), max_age)
                  if "chrom" in name(pid).lower())


def browser_memory_mb(max_age: float = 0.0) -> float:
    """RSS of this process's Chromium tree in MB (shared pages counted per process: a bound);
    ``max_age`` as for :func:`browser_pids` (the sizes are always read afresh)."""
    return sum(rss_kb(pid) for pid in browser_pids(max_age)) / 1024


# How old a walk of the process tree the after-job memory check may reuse (seconds). Why:
# the walk reads /proc/PID/task/TID/children of every thread of the driver and of Chromium
# (hundreds of reads, 4-6 ms of each warm print on a busy host). The sizes are still read
# afresh every job; only a renderer process started within this time is counted a little
# later.
_MEMORY_WALK_AGE = 1.0


def _kill_tree() -> None:
    """SIGKILL every Chromium process of ours (used by the watchdog and after a crash)."""
    for pid in browser_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ------------------------------------------------------------------ lifecycle
def _block_network(route: Any) -> None:
    """Route handler: only ``data:`` URLs may load; everything else is aborted."""
    if route.request.url.startswith("data:"):
        route.continue_()
    else:
        route.abort()


def _start_driver() -> Any:
    """The Playwright driver, started outside the worker's address-space limit: Node and
    the Chromium it launches reserve far more virtual memory than they use, and keep the
    limits they were started with (Chromium is bounded by its resident size instead)."""
    from playwright.sync_api import sync_playwright

    with memlimit.lifted():
        return sync_playwright().start()


def _launch() -> None:
    """Start the Playwright driver (once) and a browser with its locked-down context."""
    if _state.playwright is None:
        _state.playwright = _start_driver()
    try:
        browser = _state.playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
    except ConversionFailed:
        raise
    except Exception:
        # The driver itself may be gone; start it again once before giving up.
        _stop_driver()
        _state.playwright = _start_driver()
        browser = _state.playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
    context = browser.new_context(java_script_enabled=False, service_workers="block")
    context.route("**/*", _block_network)
    _state.browser, _state.context, _state.jobs = browser, context, 0
    _state.launches += 1
    _state.launched_at = time.monotonic()
    if not _state.atexit_registered:
        atexit.register(close_browser)
        _state.atexit_registered = True
    log.info("chromium started (pids %s)", browser_pids())


def _close_browser_only() -> None:
    """Close (or, if it does not answer, kill) the browser; keep the Playwright driver."""
    browser, _state.browser, _state.context = _state.browser, None, None
    _state.page = None
    if browser is not None:
        try:
            browser.close()
        except Exception:  # already dead or disconnected
            log.debug("browser close failed", exc_info=True)
    _kill_tree()


def _stop_driver() -> None:
    pw, _state.playwright = _state.playwright, None
    if pw is not None:
        try:
            pw.stop()
        except Exception:
            log.debug("playwright stop failed", exc_info=True)


def browser_launches() -> int:
    """How many times this process launched Chromium (restarts are launches after the first)."""
    return _state.launches if _state.pid == os.getpid() else 0


def close_browser() -> None:
    """Close this process's browser and Playwright driver (idempotent; registered at exit)."""
    with _lock:
        if _state.pid != os.getpid():
            return
        _close_browser_only()
        _stop_driver()


def _ensure_browser() -> None:
    """Make sure a live browser exists in *this* process (a forked child starts its own)."""
    if _state.pid != os.getpid():
        # Inherited from a parent by fork: those handles belong to the parent. Forget them.
        _state.reset()
    if _state.browser is not None and not _state.browser.is_connected():
        log.warning("chromium disconnected; restarting")
        _close_browser_only()
    if _state.browser is None:
        _launch()


def _maybe_recycle() -> None:
    """Restart the browser after too many jobs or when its memory passes the bound."""
    if _state.browser is None:
        return
    if _state.jobs >= limits.max_jobs:
        log.info("chromium recycled after %d jobs", _state.jobs)
        _close_browser_only()
        return
    # a walk from before this browser's launch would miss its processes: never reuse one
    mem = browser_memory_mb(min(_MEMORY_WALK_AGE, time.monotonic() - _state.launched_at))
    if mem > limits.max_rss_mb:
        log.info("chromium recycled at %.0f MB (bound %d MB)", mem, limits.max_rss_mb)
        _close_browser_only()


# ------------------------------------------------------------------ rendering
def _first_line(exc: Exception) -> str:
    """First line of an error (Playwright appends whole launch logs) for a caller-safe message."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _browser_died(exc: Exception) -> bool:
    """Whether a Playwright error means the browser (not just this document) failed."""
    if type(exc).__name__ == "TargetClosedError" or "has been closed" in str(exc):
        return True
    return _state.browser is None or not _state.browser.is_connected()


class _Watchdog:
    """One thread per process that kills the browser when a render runs past its limit:
    each render arms it and disarms it. Why not a ``threading.Timer`` per render: that
    started a thread per render, and ``Thread.start`` waits until the new thread runs, up
    to 13 ms of a 100 ms render on a busy host."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._fired: threading.Event | None = None
        self._pid = 0  # the process whose thread this is (a forked child starts its own)

    def arm(self, seconds: float, fired: threading.Event) -> None:
        """Kill the browser and set ``fired`` unless :meth:`disarm` comes within ``seconds``."""
        with self._cond:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="chromium-watchdog",
                                 daemon=True).start()
            self._deadline, self._fired = time.monotonic() + seconds, fired
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline, self._fired = None, None
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._deadline is None or self._deadline > time.monotonic():
                    left = None if self._deadline is None else self._deadline - time.monotonic()
                    self._cond.wait(left)
                fired, self._deadline, self._fired = self._fired, None, None
            if fired is not None:
                fired.set()
                _kill_tree()


_watchdog = _Watchdog()


# What in a page can start a fetch (an image, a frame, a font, a style sheet, a media file):
# a CSS function or rule that loads one, a backslash (a CSS escape can spell any of these), an
# element that loads a URL, or a legacy ``background``/``poster`` attribute (all looked for
# in the lower-cased HTML). Words and patterns with a literal start: a single case-blind
# pattern of all of them took 1.5 ms on 16 kB of HTML, these take about 0.05 ms.
_FETCH_WORDS = ("url(", "src(", "image(", "image-set(", "@import", "@font-face", "\\")
_FETCH_MARKUP = (
    re.compile(r"<(?:img|image|svg|video|audio|source|track|picture|input|object|embed|iframe|"
               r"frame|link|script|use|feimage)\b"),
    re.compile(r"background\s*="),
    re.compile(r"poster\s*="),
)


def loads_nothing(html: str) -> bool:
    """Whether a page cannot fetch anything (see :data:`_FETCH_WORDS`): then it is complete
    once its HTML is parsed, and printing need not wait for its load event.

    Why: waiting for ``load`` costs a few milliseconds of every print (the event travels from
    the renderer through the browser and the Playwright driver) although such a page has
    nothing left to load; a page that may fetch something (an inline ``data:`` image or font)
    still waits, so the print never misses it. When unsure, this says False."""
    text = html.lower()
    if any(word in text for word in _FETCH_WORDS):
        return False
    return not any(pattern.search(text) for pattern in _FETCH_MARKUP)


# Playwright's ``page.pdf`` as one DevTools call. Why: Playwright asks Chromium to print into a
# stream and then reads and closes that stream (three round trips between its driver and the
# browser, about 3 ms of every print); Chromium can return the PDF with the print instead.
# The options are turned into Chromium's the way Playwright 1.x turns them (its paper sizes
# in inches and its pixels per unit, the same arithmetic), so the page is the same; options
# outside this set, or values it does not parse, go through ``page.pdf`` itself.
_PAPER_IN = {
    "letter": (8.5, 11.0), "legal": (8.5, 14.0), "tabloid": (11.0, 17.0), "ledger": (17.0, 11.0),
    "a0": (33.1, 46.8), "a1": (23.4, 33.1), "a2": (16.54, 23.4), "a3": (11.7, 16.54),
    "a4": (8.27, 11.7), "a5": (5.83, 8.27), "a6": (4.13, 5.83),
}
_PX_PER_UNIT = {"px": 1.0, "in": 96.0, "cm": 37.8, "mm": 3.78}
_LENGTH = re.compile(r"([0-9]+(?:\.[0-9]+)?)(px|in|cm|mm)?", re.I)
# page.pdf option -> (Chromium's name, Playwright's default, the type it must have here)
_PRINT_FLAGS: dict[str, tuple[str, Any, type]] = {
    "landscape": ("landscape", False, bool),
    "display_header_footer": ("displayHeaderFooter", False, bool),
    "header_template": ("headerTemplate", "", str),
    "footer_template": ("footerTemplate", "", str),
    "print_background": ("printBackground", False, bool),
    "page_ranges": ("pageRanges", "", str),
    "prefer_css_page_size": ("preferCSSPageSize", False, bool),
    "tagged": ("generateTaggedPDF", False, bool),
    "outline": ("generateDocumentOutline", False, bool),
}


class _NotHandled(Exception):
    """An option :func:`_print_params` leaves to ``page.pdf``."""


def _inches(value: object) -> float:
    """A length option in inches as Playwright reads it ("20mm", "8.27in", "600px", "600");
    0 when absent."""
    if value is None:
        return 0.0
    match = _LENGTH.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise _NotHandled(value)
    unit = (match.group(2) or "px").lower()
    return float(match.group(1)) * _PX_PER_UNIT[unit] / 96


def _print_params(options: dict[str, Any]) -> dict[str, Any]:
    """Chromium's ``Page.printToPDF`` parameters for ``page.pdf`` keyword arguments, as
    Playwright builds them; raises :class:`_NotHandled` for anything else."""
    params: dict[str, Any] = {"transferMode": "ReturnAsBase64"}
    for key, (cdp_name, default, kind) in _PRINT_FLAGS.items():
        value = options.get(key, default)
        if type(value) is not kind:
            raise _NotHandled(key)
        params[cdp_name] = value
    scale = options.get("scale", 1)
    if type(scale) not in (int, float):
        raise _NotHandled("scale")
    if set(options) - set(_PRINT_FLAGS) - {"scale", "format", "width", "height", "margin"}:
        raise _NotHandled(options)
    if options.get("format") is not None:
        size = _PAPER_IN.get(str(options["format"]).lower())
        if size is None:
            raise _NotHandled("format")  # page.pdf reports the unknown paper
        width, height = size
    else:  # Playwright: a missing or zero length keeps Letter's
        width = _inches(options.get("width")) or 8.5
        height = _inches(options.get("height")) or 11.0
    margin = options.get("margin") or {}
    if not isinstance(margin, dict) or set(margin) - {"top", "bottom", "left", "right"}:
        raise _NotHandled("margin")
    params.update(scale=scale, paperWidth=width, paperHeight=height,
                  marginTop=_inches(margin.get("top")), marginBottom=_inches(margin.get("bottom")),
                  marginLeft=_inches(margin.get("left")), marginRight=_inches(margin.get("right")))
    return params


def _devtools(page: Any) -> Any:
    """The page's own DevTools session, opened on its first use (once per page)."""
    if _state.page_session is None:
        _state.page_session = page.context.new_cdp_session(page)
        tree = _state.page_session.send("Page.getFrameTree")
        _state.page_frame = tree["frameTree"]["frame"]["id"]
    return _state.page_session


def _write(page: Any, html: str) -> None:
    """Replace the page's document by ``html`` and parse it: ``set_content`` without waiting
    for the load event, as one DevTools call (Chromium opens, writes and closes the
    document, as Playwright's ``set_content`` does from a script). Only for a page that
    loads nothing (:func:`loads_nothing`): nothing is left to wait for once it returns."""
    _devtools(page).send("Page.setDocumentContent", {"frameId": _state.page_frame, "html": html})


def _print(page: Any, pdf_options: dict[str, Any]) -> bytes:
    """Print the page: one ``Page.printToPDF`` on the page's DevTools session, or
    ``page.pdf`` for options :func:`_print_params` does not take."""
    try:
        params = _print_params(pdf_options)
    except _NotHandled:
        data: bytes = page.pdf(**pdf_options)
        return data
    return base64.b64decode(_devtools(page).send("Page.printToPDF", params)["data"])


def _render_once(html: str, pdf_options: dict[str, Any], timeout_s: float) -> bytes:
    """One attempt: new page, load the HTML, print; a watchdog enforces the time limit."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    fired = threading.Event()
    if _state.page is None or _state.page.is_closed():
        _state.page, _state.page_jobs = _state.context.new_page(), 0
        _state.page_timeout_s, _state.page_session = None, None
    page = _state.page
    _state.page_jobs += 1
    done = False
    _watchdog.arm(timeout_s, fired)
    try:
        if loads_nothing(html):  # text only: a small PDF, returned with the print
            _write(page, html)
            data = _print(page, pdf_options)
        else:  # images may make a big PDF: Playwright reads it from a stream
            if _state.page_timeout_s != timeout_s:  # a message to the driver on a change only
                page.set_default_timeout(timeout_s * 1000)
                _state.page_timeout_s = timeout_s
            page.set_content(html, wait_until="load")
            data = page.pdf(**pdf_options)
        done = True
        return data
    except PlaywrightTimeout as exc:
        raise RenderTimeout(f"PDF rendering timed out after {timeout_s:g} s") from exc
    except Exception as exc:
        if fired.is_set():
            raise RenderTimeout(f"PDF rendering timed out after {timeout_s:g} s") from exc
        raise
    finally:
        _watchdog.disarm()
        if not done or _state.page_jobs >= max(1, limits.page_reuse_jobs):
            _state.page = None
            _close_page(page, wait=not done)


def _close_page(page: Any, *, wait: bool) -> None:
    """Close a page; ``wait=False`` only asks Chromium to close it (Playwright's
    ``run_before_unload``: the page runs its unload handlers, of which it has none with
    JavaScript off, and is gone a moment later) instead of waiting 20-60 ms for the target
    to be destroyed on the job's path. A failed page is closed and waited for."""
    try:
        page.close(run_before_unload=not wait)
    except Exception:
        log.debug("page close failed", exc_info=True)


def render_pdf(html: str, *, pdf_options: dict[str, Any], timeout_s: float | None = None) -> bytes:
    """Print a complete HTML document to PDF bytes with this process's warm Chromium.

    ``pdf_options`` are Playwright ``page.pdf`` keyword arguments. Raises ``RenderTimeout``
    (a ``ConversionFailed``) past the time limit and ``ConversionFailed`` when Chromium cannot
    start or dies twice on the job.
    """
    from playwright.sync_api import Error as PlaywrightError

    limit = timeout_s if timeout_s is not None else limits.timeout_s
    with _lock:
        for attempt in (1, 2):
            try:
                _ensure_browser()
            except ConversionFailed:
                raise
            except Exception as exc:
                _close_browser_only()
                what = "crashed and could not be restarted" if attempt == 2 else "could not start"
                raise ConversionFailed(f"Chromium {what}: {_first_line(exc)}") from exc
            try:
                _state.jobs += 1
                return _render_once(html, pdf_options, limit)
            except RenderTimeout:
                _close_browser_only()
                raise
            except PlaywrightError as exc:
                if not _browser_died(exc):
                    raise ConversionFailed(f"PDF rendering failed: {_first_line(exc)}") from exc
                _close_browser_only()
                if attempt == 2:
                    raise ConversionFailed(
                        "Chromium crashed while rendering the PDF (also on a fresh browser)"
                    ) from exc
                log.warning("chromium died during a render; retrying on a fresh browser")
            finally:
                _maybe_recycle()
    raise AssertionError("unreachable")
