"""The browser's after-job memory check reuses a recent walk of the process tree (issue 34:
no per-request work that was just done), but never one made before the browser it measures
was launched, so the recycling bound still sees every Chromium process."""

from __future__ import annotations

import time

import pytest

from render_pool.runtime import browser, procfs
from render_pool.runtime.browser import find_chromium

pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium"),
              pytest.mark.slow]  # Chromium


def render(html: str) -> bytes:
    return browser.render_pdf(html, pdf_options={"format": "A4"})


@pytest.fixture(autouse=True)
def _limits_and_close():
    saved = (browser.limits.max_jobs, browser.limits.max_rss_mb)
    yield
    browser.configure(max_jobs=saved[0], max_rss_mb=saved[1])
    browser.close_browser()


@pytest.fixture()
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Roots of every real walk of a process tree from now on."""
    seen: list[int] = []
    real = procfs._walk

    def counting(root: int) -> list[int]:
        seen.append(root)
        return real(root)

    monkeypatch.setattr(procfs, "_walk", counting)
    return seen


def test_back_to_back_jobs_do_not_walk_the_tree_each_time(walks):
    render("<p>warm up</p>")
    walks.clear()
    for i in range(3):
        render(f"<p>job {i}</p>")
    assert len(walks) <= 1  # at most one walk per second, not one per job


def test_a_walk_from_before_the_launch_is_not_reused(monkeypatch):
    asked: list[tuple[float, float]] = []  # (max_age asked, seconds since the launch)
    real = browser.descendants

    def recording(root: int, max_age: float = 0.0) -> list[int]:
        asked.append((max_age, time.monotonic() - browser._state.launched_at))
        return real(root, max_age)

    browser.close_browser()
    monkeypatch.setattr(browser, "descendants", recording)
    render("<p>launches a browser</p>")
    render("<p>second job</p>")
    assert asked and all(age <= since for age, since in asked)
    assert any(age > 0 for age, _since in asked)  # a recent walk may serve the second check
    browser.configure(max_rss_mb=1)
    render("<p>over the bound</p>")
    assert browser.browser_pids() == []  # the bound still sees the browser
