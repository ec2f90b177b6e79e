"""Every pass the service makes over uploaded Markdown, HTML and CSS is linear in its input.

Why: these passes once rescanned the rest of the text for every unclosed construct
(``![](a (``, ``<script>``, ``<!--``, ``url(``...), so a few hundred kilobytes held a process
for minutes. Each adversarial generator is timed at ``n`` and ``8n`` repetitions in the same
run (best of three): a linear pass takes about 8 times as long, a quadratic one 64 times; the
assertion allows 16 (measured up to three times on a busy machine). No absolute time is
asserted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest

from render_pool import batch, links
from render_pool.errors import CorruptDocument
from render_pool.html_markdown import html_to_markdown
from render_pool.markdown_limits import MarkdownLimits, check_cost, check_nesting

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


def _best_of_3(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        every_pass(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("name", list(GENERATORS))
def test_scanners_are_linear(name: str) -> None:
    make, n = GENERATORS[name]
    small, large = make(n), make(8 * n)
    _best_of_3(small)  # warm caches and imports
    ratios = []
    for _ in range(3):  # a busy machine can spoil one measurement; quadratic fails all three
        ratios.append(_best_of_3(large) / max(_best_of_3(small), 1e-4))
        if ratios[-1] < 16:
            break
    assert min(ratios) < 16, f"{name}: 8x the input took {ratios}x the time"


def test_wiki_links_among_many_files_of_one_name_are_linear() -> None:
    """``[[a]]`` n times among n files named ``a.md``: once a scan of every such file per
    link (n * n), now an index of path endings (linear in links plus files)."""

    def plan(n: int) -> float:
        files = ["doc.md", *(f"d{i}/a.md" for i in range(n))]
        text = "".join(f"[[a]] [[d{i}/a]] " for i in range(n))
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            batch.plan_document("doc.md", text, files)
            best = min(best, time.perf_counter() - start)
        return best

    plan(100)
    ratios = []
    for _ in range(3):  # a busy machine can spoil one measurement; quadratic fails all three
        ratios.append(plan(2400) / plan(300))
        if ratios[-1] < 16:
            break
    assert min(ratios) < 16, f"8x the links and files took {ratios}x the time"


# sizes past the processor's caches (about 1 MB and up): libxml2 parses an input of a few
# hundred kB from cache and 8 times that from memory, a step of 3-10x in time per byte that is
# no growth in the work done (measured: linear from 1 MB to 25 MB)
HTML_GENERATORS: dict[str, tuple[Callable[[int], str], int]] = {
    "unclosed tags <a ": (lambda n: "<a " * n, 400000),
    "unclosed attributes <a href=\"": (lambda n: '<a href="' * n, 100000),
    "comments <!--": (lambda n: "<!--" * n, 400000),
    "raw text <script>": (lambda n: "<script>" * n, 400000),
}


@pytest.mark.parametrize("name", list(HTML_GENERATORS))
def test_html_to_markdown_is_linear(name: str) -> None:
    """HTML of a batch becomes Markdown through a linear parser (Python's html.parser
    took 2 s for ``"<a " * 4000`` and 64 times that for 8 times the input)."""
    make, n = HTML_GENERATORS[name]

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            html_to_markdown(text)
            times.append(time.perf_counter() - start)
        return min(times)

    best(make(n)), best(make(8 * n))  # warm the parser and the allocator
    ratios = []
    for _ in range(3):
        ratios.append(best(make(8 * n)) / max(best(make(n)), 1e-3))
        if ratios[-1] < 16:
            break
    assert min(ratios) < 16, f"{name}: 8x the input took {ratios}x the time"


def test_deeply_nested_html_is_refused_not_a_crash() -> None:
    with pytest.raises(CorruptDocument, match="deeper than 200 levels; the limit is 200"):
        html_to_markdown("<div>" * 5000 + "x")
    assert html_to_markdown("<div>" * 150 + "x") == "x\n"
