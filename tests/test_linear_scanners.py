"""Every pass the service makes over uploaded Markdown, HTML and CSS is linear in its input.

Why: these passes once rescanned the rest of the text for every unclosed construct
(``![](a (``, ``<script>``, ``<!--``, ``url(``...), so a few hundred kilobytes held a process
for minutes. Each adversarial generator is timed at ``n`` and ``8n`` repetitions in the same
run: a linear pass takes about 8 times as long, a quadratic one 64 times; the assertion allows
16. No absolute time is asserted.

What is timed is the CPU time of the test's own thread (``time.thread_time``), garbage
collection held off, the least of two runs: on a loaded machine other processes delay a run
but do not add to its CPU time, so the ratio stays near 8 where wall time gave 37 for a linear
pass (``<a `` at load average 13: a 3 ms run finished inside one time slice, its 8x twin was
preempted). Each base run takes milliseconds, far above the clock's resolution; a ratio at or
over 16 is measured again up to twice (cache misses from a neighbour can still spoil one), a
quadratic pass fails all three.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable

import pytest

from render_pool.batch import links
from render_pool.batch import plan as batch
from render_pool.batch.jobs import html_to_markdown
from render_pool.engine.markdown.limits import MarkdownLimits, check_cost, check_nesting
from render_pool.errors import CorruptDocument

FILES = ["doc.md", "doc.html", "a", "a.png", "x.css"]
MAPPING = {"a": "https://cdn.example/a", "a.png": "https://cdn.example/a.png"}


def every_pass(text: str) -> None:
    """What the batch pipeline and the Markdown checks run over one uploaded text."""
    links._all_markdown.cache_clear()  # each timed run scans afresh
    batch.plan_document("doc.md", text, FILES)
    batch.plan_document("doc.html", text, FILES)
    batch.plan_document("x.css", text, FILES, kind="css")
    links.rewrite_markdown(text, MAPPING)
    links.rewrite_html(text, MAPPING)
    links.rewrite_css(text, MAPPING)
    links.data_uri_images(text, markdown=True)
    links.data_uri_images(text)
    check_cost(text, MarkdownLimits(), raise_error=False)
    with contextlib.suppress(CorruptDocument):  # refusing is fine: only the time matters
        check_nesting(text)


# generator -> repetitions at n (8n is timed too); sized so 8n stays well under a second
GENERATORS: dict[str, tuple[Callable[[int], str], int]] = {
    "image title  ![](a (": (lambda n: "![](a (" * n, 500),
    "parentheses  ](((": (lambda n: "[a](" + "](((" * n, 8000),
    "style import <style>@import url(": (lambda n: "<style>@import url(" * n, 1500),
    "script       <script>": (lambda n: "<script>" * n, 2500),
    "script open  <script": (lambda n: "<script" * n, 6000),
    "comment      <!--": (lambda n: "<!--" * n, 10000),
    "cdata        <![CDATA[": (lambda n: "<![CDATA[" * n, 2500),
    "css url      url(": (lambda n: "url(" * n, 20000),
    "style attr   style=url(": (lambda n: '<a style="' + "url(" * n + '">', 4000),
    "css comment  /*": (lambda n: "/*" * n, 18000),
    "backticks    unclosed": (lambda n: "``a`" * n, 6000),
    "backticks    growing runs": (
        lambda n: "".join("`" * (k % 200 + 1) + "a" for k in range(n)), 400),
    "brackets     unclosed [": (lambda n: "[" * n, 9000),
    "brackets     [a](": (lambda n: "[a](" * n, 600),
    "definitions  [a]: b (": (lambda n: "[a]: b (\n" * n, 800),
    "link         [a](b": (lambda n: "[a](b" * n, 1000),
}


LIMIT = 16  # 8x the input: linear about 8, quadratic about 64


def _cpu_seconds(run: Callable[[], object]) -> float:
    """The least CPU time of this thread over two calls of ``run``, garbage collection off
    (a full collection of the test process's heap would land in one run at random)."""
    gc.disable()
    try:
        best = float("inf")
        for _ in range(2):
            start = time.thread_time()
            run()
            best = min(best, time.thread_time() - start)
        return best
    finally:
        gc.enable()


def _growth(small: Callable[[], object], large: Callable[[], object]) -> list[float]:
    """CPU time of ``large`` over that of ``small``, measured again (up to three times in all)
    while it is not under :data:`LIMIT`; the ratios measured."""
    small()  # warm caches and imports
    ratios: list[float] = []
    while len(ratios) < 3 and (not ratios or ratios[-1] >= LIMIT):
        ratios.append(_cpu_seconds(large) / max(_cpu_seconds(small), 1e-4))
    return ratios


@pytest.mark.parametrize("name", list(GENERATORS))
def test_scanners_are_linear(name: str) -> None:
    make, n = GENERATORS[name]
    small, large = make(n), make(8 * n)
    ratios = _growth(lambda: every_pass(small), lambda: every_pass(large))
    assert min(ratios) < LIMIT, f"{name}: 8x the input took {ratios}x the CPU time"


def test_wiki_links_among_many_files_of_one_name_are_linear() -> None:
    """``[[a]]`` n times among n files named ``a.md``: once a scan of every such file per
    link (n * n), now an index of path endings (linear in links plus files)."""

    def plan(n: int) -> Callable[[], object]:
        files = ["doc.md", *(f"d{i}/a.md" for i in range(n))]
        text = "".join(f"[[a]] [[d{i}/a]] " for i in range(n))
        return lambda: batch.plan_document("doc.md", text, files)

    ratios = _growth(plan(300), plan(2400))
    assert min(ratios) < LIMIT, f"8x the links and files took {ratios}x the CPU time"


# sizes past the processor's caches (about 1 MB and up): libxml2 parses an input of a few
# hundred kB from cache and 8 times that from memory, a step of 3-10x in time per byte that is
# no growth in the work done (measured: linear from 1 MB to 25 MB)
HTML_GENERATORS: dict[str, tuple[Callable[[int], str], int]] = {
    "unclosed tags <a ": (lambda n: "<a " * n, 400000),
    "unclosed attributes <a href=\"": (lambda n: '<a href="' * n, 100000),
    "comments <!--": (lambda n: "<!--" * n, 400000),
    "raw text <script>": (lambda n: "<script>" * n, 400000),
}


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
@pytest.mark.parametrize("name", list(HTML_GENERATORS))
def test_html_to_markdown_is_linear(name: str) -> None:
    """HTML of a batch becomes Markdown through a linear parser (Python's html.parser
    took 2 s for ``"<a " * 4000`` and 64 times that for 8 times the input)."""
    make, n = HTML_GENERATORS[name]
    small, large = make(n), make(8 * n)
    html_to_markdown(large)  # warm the allocator for the large text too
    ratios = _growth(lambda: html_to_markdown(small), lambda: html_to_markdown(large))
    assert min(ratios) < LIMIT, f"{name}: 8x the input took {ratios}x the CPU time"


def test_deeply_nested_html_is_refused_not_a_crash() -> None:
    with pytest.raises(CorruptDocument, match="deeper than 200 levels; the limit is 200"):
        html_to_markdown("<div>" * 5000 + "x")
    assert html_to_markdown("<div>" * 150 + "x") == "x\n"
