"""A page replaced after ``page_reuse_jobs`` jobs is only asked to close (issue 34: no waiting
on the close on the job's path), and such pages do not pile up in the browser."""

from __future__ import annotations

from typing import Any

import pypdfium2 as pdfium
import pytest

from render_pool.errors import ConversionFailed
from render_pool.runtime import browser
from render_pool.runtime.browser import find_chromium

pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium"),
              pytest.mark.slow]  # Chromium


def render(html: str) -> bytes:
    return browser.render_pdf(html, pdf_options={"format": "A4"})


@pytest.fixture(autouse=True)
def _close_at_end():
    yield
    browser.close_browser()


def _record_close(monkeypatch: pytest.MonkeyPatch, page: Any) -> list[dict[str, object]]:
    """The keyword arguments of every ``Page.close`` call from now on."""
    calls: list[dict[str, object]] = []
    real = type(page).close

    def recording(self: Any, **kw: object) -> None:
        calls.append(kw)
        real(self, **kw)

    monkeypatch.setattr(type(page), "close", recording)
    return calls


def test_replaced_pages_close_without_waiting_and_do_not_pile_up(monkeypatch):
    monkeypatch.setattr(browser.limits, "page_reuse_jobs", 2)
    browser.close_browser()
    render("<p>opens the first page</p>")
    calls = _record_close(monkeypatch, browser._state.page)
    asked: list[object] = []
    for i in range(8):
        page = browser._state.page
        data = render(f"<p>job {i}</p>")
        pdf = pdfium.PdfDocument(data)
        assert f"job {i}" in pdf[0].get_textpage().get_text_range()
        pdf.close()
        if page is not None and browser._state.page is None:
            asked.append(page)
    assert len(asked) == 4  # every second job replaced its page
    assert calls == [{"run_before_unload": True}] * 4  # asked to close, not waited for
    render("<p>pumps the driver's events</p>")
    context = browser._state.context
    assert all(page.is_closed() for page in asked)
    assert len(context.pages) <= 1


def test_a_failed_job_closes_its_page_and_waits(monkeypatch):
    render("<p>warm</p>")
    page = browser._state.page
    calls = _record_close(monkeypatch, page)
    with pytest.raises(ConversionFailed):
        browser.render_pdf("<p>bad options</p>", pdf_options={"format": "no such paper"})
    assert calls == [{"run_before_unload": False}] and page.is_closed()
    assert browser._state.page is None
