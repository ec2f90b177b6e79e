"""The per-process Chromium holder: reuse, lock-down (no JS, no network), recovery and limits."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import pypdfium2 as pdfium
import pytest

from render_pool.errors import ConversionFailed
from render_pool.runtime import browser
from render_pool.runtime.browser import find_chromium
from tests.processes import still_alive

pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium"),
              pytest.mark.slow]  # Chromium


def pdf_text(data: bytes) -> str:
    pdf = pdfium.PdfDocument(data)
    try:
        return "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    finally:
        pdf.close()


def render(html: str, **kw) -> bytes:
    return browser.render_pdf(html, pdf_options={"format": "A4"}, **kw)


@pytest.fixture(autouse=True)
def _default_limits():
    saved = (browser.limits.max_jobs, browser.limits.max_rss_mb, browser.limits.timeout_s)
    yield
    browser.configure(max_jobs=saved[0], max_rss_mb=saved[1], timeout_s=saved[2])


@pytest.fixture(scope="module", autouse=True)
def _close_at_end():
    yield
    browser.close_browser()


def big_html(paragraphs: int = 2500) -> str:
    return "".join(f"<p>{'word ' * 150}{i}</p>" for i in range(paragraphs))


def test_renders_and_reuses_one_browser():
    first = render("<h1>Hello</h1><p>first document</p>")
    pids = browser.browser_pids()
    second = render("<p>second document</p>")
    assert first.startswith(b"%PDF-") and "first document" in pdf_text(first)
    assert "second document" in pdf_text(second)
    assert pids, "a Chromium process should be running"
    # the browser process itself (lowest pid, started first) survives between jobs
    assert min(pids) in browser.browser_pids()


def test_reused_page_keeps_nothing_from_the_previous_job(monkeypatch):
    monkeypatch.setattr(browser.limits, "page_reuse_jobs", 3)
    browser.close_browser()  # start from a fresh page count
    render("<style>p { display: none }</style><title>Old</title><p>secret one</p>"
           "<h1>first heading</h1>")
    page = browser._state.page
    assert page is not None  # kept for the next job
    second = pdf_text(render("<p>plain second</p>"))
    assert browser._state.page is page
    assert "plain second" in second and "first heading" not in second
    render("<p>third</p>")
    assert browser._state.page is None  # replaced after page_reuse_jobs jobs


def test_javascript_is_disabled():
    data = render(
        "<p id=t>static text</p><script>document.getElementById('t').textContent="
        "'SCRIPT-RAN'; document.write('WRITTEN-BY-SCRIPT')</script>"
        "<noscript>NOSCRIPT-SHOWN</noscript>"
    )
    text = pdf_text(data)
    assert "static text" in text
    assert "SCRIPT-RAN" not in text and "WRITTEN-BY-SCRIPT" not in text
    assert "NOSCRIPT-SHOWN" in text  # browsers show <noscript> only when scripting is off


def test_no_network_requests_leave_the_page(counting_server):
    base, hits = counting_server
    html = (
        f'<link rel="stylesheet" href="{base}/style.css">'
        f"<style>@import url('{base}/import.css'); body {{ background: url('{base}/bg.png') }}"
        f"@font-face {{ font-family: X; src: url('{base}/font.woff') }} p {{ font-family: X }}"
        f"</style><p>offline page</p><img src=\"{base}/x.png\">"
        f'<iframe src="{base}/frame.html"></iframe><object data="{base}/obj"></object>'
        f'<img src="http://127.0.0.1:1/x.png"><iframe src="file:///etc/hostname"></iframe>'
    )
    text = pdf_text(render(html))
    assert "offline page" in text
    assert "REMOTE-CONTENT" not in text
    hostname = open("/etc/hostname").read().strip()
    if hostname:
        assert hostname not in text
    assert hits == []


def test_data_urls_still_load():
    png = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    )
    data = render(f'<img style="width:200px;height:200px" src="data:image/png;base64,{png}">')
    pdf = pdfium.PdfDocument(data)
    kinds = [obj.type for obj in pdf[0].get_objects()]
    assert pdfium.raw.FPDF_PAGEOBJ_IMAGE in kinds


def test_browser_killed_between_jobs_restarts_transparently():
    render("<p>warm up</p>")
    old = browser.browser_pids()
    assert old, "no Chromium process to kill"
    for pid in old:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # a child that died with the browser killed before it
    assert not still_alive(old), "the killed Chromium processes are still there"
    data = render("<p>after a crash</p>")
    assert "after a crash" in pdf_text(data)
    assert not set(old) & set(browser.browser_pids())


def test_browser_killed_mid_render_fails_clearly_then_recovers():
    render("<p>warm up</p>")
    stop = threading.Event()

    def killer():  # keeps killing every Chromium of ours, including the retry's fresh one
        while not stop.is_set():
            for pid in browser.browser_pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.03)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        with pytest.raises(ConversionFailed) as info:
            render(big_html())
    finally:
        stop.set()
        thread.join()
    assert info.value.code == 50001
    assert "Chromium" in info.value.message
    assert "\n" not in info.value.message  # no launch log dumped on the caller
    assert "next job" in pdf_text(render("<p>next job</p>"))


def test_time_limit_raises_timeout_and_next_job_works():
    render("<p>warm up</p>")
    started = time.monotonic()
    with pytest.raises(browser.RenderTimeout) as info:
        render(big_html(4000), timeout_s=0.3)
    assert time.monotonic() - started < 10
    assert info.value.code == 50401 and isinstance(info.value, ConversionFailed)
    assert "ok again" in pdf_text(render("<p>ok again</p>"))


def test_recycled_after_max_jobs():
    browser.configure(max_jobs=2)
    browser.close_browser()
    render("<p>1</p>")
    first = min(browser.browser_pids())
    render("<p>2</p>")  # second job reaches the limit: the browser is closed after it
    assert browser.browser_pids() == []
    render("<p>3</p>")
    assert min(browser.browser_pids()) != first


def test_recycled_when_memory_passes_bound():
    render("<p>warm</p>")
    assert browser.browser_memory_mb() > 1
    browser.configure(max_rss_mb=1)
    render("<p>over the bound</p>")
    assert browser.browser_pids() == []


def test_close_browser_leaves_no_process():
    render("<p>x</p>")
    assert browser.browser_pids()
    browser.close_browser()
    assert browser.browser_pids() == []
    browser.close_browser()  # idempotent


def _worker_job(text: str) -> tuple[int, str]:
    data = browser.render_pdf(f"<p>{text}</p>", pdf_options={})
    return os.getpid(), pdf_text(data)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_works_in_a_process_pool_worker(method):
    render("<p>parent has a browser too</p>")  # a forked child must not reuse it
    with ProcessPoolExecutor(1, mp_context=mp.get_context(method)) as pool:
        results = [pool.submit(_worker_job, f"from worker {i}").result(timeout=120)
                   for i in range(2)]
    assert results[0][0] != os.getpid()
    assert "from worker 0" in results[0][1] and "from worker 1" in results[1][1]
    assert "parent still fine" in pdf_text(render("<p>parent still fine</p>"))
