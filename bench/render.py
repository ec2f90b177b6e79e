"""Markdown rendering benchmark: ``POST /md/convert`` (PDF, DOCX) through the real service with
its warm per-worker Chromium, against a cold path measured in the same run (launch Playwright and
Chromium, print the same page, close: what md-to-pdf-style tools do per document), for a 3-page
and a 30-page document; then Chromium's memory over many renders.

The cold path prints exactly the HTML and ``page.pdf`` options the service's PDF writer builds
(captured from :func:`render_pool.engine.pdf.writer.write_pdf`), so both paths lay out the
same page.
The warm figures include HTTP, multipart parsing, the process pool and Markdown parsing; the
cold ones only the browser work, which favours the cold path.
"""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import psutil
from tornado.httpclient import AsyncHTTPClient

from bench import summary
from bench.common import AUTH_HEADER, SERVICE_ENV, machine, multipart, percentile, table
from render_pool.runtime.procfs import descendants
from tornado_app.embedded.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ documents
_WORDS = (
    "the service converts documents between formats while keeping headings lists tables and "
    "code intact so that a reader sees the same structure in every output and a writer never "
    "has to know which reader produced the model it serialises for the caller"
).split()


def _sentence(seed: int, words: int) -> str:
    picked = [_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(words)]
    return " ".join(picked).capitalize() + "."


def _paragraph(seed: int) -> str:
    return " ".join(_sentence(seed + i, 12 + (seed + i) % 9) for i in range(6))


def make_markdown(sections: int, title: str) -> str:
    """A synthetic report: per section a heading, paragraphs, a list; tables and code often.

    About 1.35 sections fill an A4 page with the default theme (checked by counting the pages of
    the printed PDF, which the tables report).
    """
    out = [f"# {title}", "", _paragraph(0), ""]
    for s in range(1, sections + 1):
        out += [f"## Section {s}: {_sentence(s, 4)[:-1]}", "", _paragraph(s), ""]
        out += [f"- **Item {s}.{i}**: {_sentence(s * 10 + i, 8)}" for i in range(1, 5)]
        out += ["   1. nested step with `inline code`", "   2. another nested step", ""]
        if s % 2 == 0:
            out += [f"### Figures for section {s}", "", "| name | count | share | note |",
                    "|---|---:|---:|---|"]
            out += [f"| row {r} | {r * s * 17} | {(r * 13 + s) % 100}% | {_sentence(r + s, 4)} |"
                    for r in range(1, 7)]
            out.append("")
        if s % 3 == 0:
            out += ["```python", f"def section_{s}(items: list[int]) -> int:",
                    '    """Sum the positive items."""', "    total = 0",
                    "    for item in items:", "        if item > 0:",
                    "            total += item", "    return total", "```", ""]
        out += [_paragraph(s * 3), ""]
    return "\n".join(out)


DOCUMENTS = {"3 pages": make_markdown(3, "Short report"),
             "30 pages": make_markdown(41, "Long report")}


def page_html(markdown: str) -> tuple[str, dict[str, Any]]:
    """The complete HTML page and ``page.pdf`` options the service's PDF writer prints.

    Runs the project's own reader and writer with the browser call replaced by a recorder, so
    the cold path prints exactly what the warm path prints.
    """
    from render_pool.engine.markdown.reader import read_markdown
    from render_pool.engine.options import WriterOptions
    from render_pool.engine.pdf.writer import write_pdf
    from render_pool.runtime import browser

    seen: dict[str, Any] = {}

    def record(html: str, *, pdf_options: dict[str, Any], timeout_s: float | None = None
               ) -> bytes:
        seen.update(html=html, pdf_options=pdf_options)
        return b""

    with mock.patch.object(browser, "render_pdf", record):
        write_pdf(read_markdown(markdown), WriterOptions(title="document"))
    return seen["html"], seen["pdf_options"]


# ------------------------------------------------------------------ measuring
@dataclass
class Result:
    """Latencies (s) of a fixed number of documents and the wall time they took."""

    latencies: list[float]
    seconds: float

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds

    def row(self, label: str, clients: int) -> list[object]:
        return [label, clients, len(self.latencies), f"{percentile(self.latencies, 50):.3f}",
                f"{percentile(self.latencies, 95):.3f}", f"{self.rate:.2f}"]


async def fixed(call: Callable[[], Awaitable[None]], *, count: int, clients: int) -> Result:
    """Run ``call`` ``count`` times from ``clients`` concurrent tasks; latencies and wall time."""
    latencies: list[float] = []
    left = count

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            t0 = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return Result(latencies, time.perf_counter() - t0)





class Service:
    """The real service (``serve --services docs``) in a subprocess, with a temp DATA_DIR."""

    def __init__(self, tmp: Path) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MONGO_", "REDIS_", "S3_", "DOCS_API_TOKEN"))}
        # Recycling after N jobs would hide growth in the memory figure: turn it off here
        # (the memory bound, CHROMIUM_MAX_RSS_MB, stays at its default).
        # this tree first; the caller's PYTHONPATH after it (packages installed beside the venv)
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env.update(DATA_DIR=str(tmp / "data"), LOG_LEVEL="WARNING", PYTHONPATH=path,
                   CHROMIUM_MAX_JOBS="1000000", **SERVICE_ENV)
        self.port = free_port()
        self.log = tmp / "service.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tornado_app", "serve", "--port", str(self.port),
             "--services", "docs"], env=env, cwd=ROOT, stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("service did not answer /health")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


async def convert(client: AsyncHTTPClient, base: str, markdown: str, target: str) -> bytes:
    """``POST /md/convert`` with the Markdown as ``md_file``; the file bytes (or an error)."""
    body, ctype = multipart({"target": target}, {"md_file": ("bench.md", markdown.encode())},
                            "text/markdown")
    resp = await client.fetch(f"{base}/md/convert", method="POST", body=body,
                              headers={"Content-Type": ctype, **AUTH_HEADER},
                              request_timeout=300)
    got = resp.headers.get("Content-Type", "")
    if got.startswith("application/json"):
        raise RuntimeError(f"/md/convert failed: {resp.body[:300]!r}")
    return resp.body


def pdf_pages(data: bytes) -> int:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(data)
    try:
        return len(pdf)
    finally:
        pdf.close()


# ------------------------------------------------------------------ cold path
async def cold_once(html: str, pdf_options: dict[str, Any], *, driver: Any = None) -> float:
    """Launch (Playwright driver unless given, and) Chromium, print one page, close; seconds."""
    from playwright.async_api import async_playwright

    from render_pool.runtime.browser import CHROMIUM_ARGS, chromium_path

    exe = chromium_path()
    t0 = time.perf_counter()
    manager = None
    if driver is None:
        manager = async_playwright()
        driver = await manager.start()
    try:
        browser = await driver.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        context = await browser.new_context(java_script_enabled=False)
        page = await context.new_page()
        await page.set_content(html, wait_until="load")
        await page.pdf(**pdf_options)
        await browser.close()
    finally:
        if manager is not None:
            await driver.stop()
    return time.perf_counter() - t0


# ------------------------------------------------------------------ breakdown
def breakdown(reps: int) -> dict[str, dict[str, list[float]]]:
    """Where a warm render's time goes, in this process (no HTTP, no pool): seconds per step.

    ``images``: the image-source scan the service runs before every render (a pool job of
    its own); ``html``: Markdown to the printable page (reader + writer, Python); ``new page``:
    print with :func:`render_pool.runtime.browser.render_pdf` (a warm browser, its page
    replaced every ``page_reuse_jobs`` documents: what the service does); ``reused page``:
    print on one page kept open across documents.
    Must run outside an asyncio loop (Playwright's sync API).
    """
    from playwright.sync_api import sync_playwright

    from render_pool.engine.markdown.reader import markdown_image_sources
    from render_pool.runtime import browser

    def timed(fn: Callable[[], object]) -> list[float]:
        fn()  # warm-up (the first print also launches the browser)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return times

    pages = {name: page_html(md) for name, md in DOCUMENTS.items()}
    out: dict[str, dict[str, list[float]]] = {name: {} for name in DOCUMENTS}
    try:
        for name, md in DOCUMENTS.items():
            html, opts = pages[name]
            out[name]["images"] = timed(functools.partial(markdown_image_sources, md))
            out[name]["html"] = timed(lambda md=md: page_html(md))
            out[name]["new page"] = timed(
                lambda h=html, o=opts: browser.render_pdf(h, pdf_options=o))
    finally:
        browser.close_browser()  # one sync Playwright driver per thread at a time
    with sync_playwright() as pw:
        own = pw.chromium.launch(executable_path=browser.chromium_path(),
                                 args=browser.CHROMIUM_ARGS)
        page = own.new_context(java_script_enabled=False).new_page()

        def reused(html: str, opts: dict[str, Any]) -> None:
            page.set_content(html, wait_until="load")
            page.pdf(**opts)

        for name, (html, opts) in pages.items():
            out[name]["reused page"] = timed(lambda h=html, o=opts: reused(h, o))
        own.close()
    return out


# ------------------------------------------------------------------ memory
def chromium_memory(service_pid: int) -> tuple[int, float, float]:
    """Chromium processes under the service: count, summed RSS (MB), summed PSS (MB).

    RSS counts shared pages once per process (an upper bound); PSS splits them (closer to
    what the machine really spends, but library pages are split with every other Chromium
    running on the machine, so PSS moves when those start or stop).
    """
    count, rss, pss = 0, 0, 0
    for pid in descendants(service_pid):
        try:
            proc = psutil.Process(pid)
            if "chrom" not in proc.name().lower():
                continue
            mem = proc.memory_full_info()  # rss, and pss from smaps_rollup
        except psutil.Error:
            continue
        count += 1
        rss += mem.rss
        pss += getattr(mem, "pss", 0)
    return count, rss / 2**20, pss / 2**20


# ------------------------------------------------------------------ the run
@dataclass
class Plan:
    warm_pdf: dict[str, int]
    warm_docx: dict[str, int]
    cold: dict[str, int]
    memory_renders: int


QUICK = Plan(warm_pdf={"3 pages": 6, "30 pages": 4}, warm_docx={"3 pages": 4, "30 pages": 2},
             cold={"3 pages": 3, "30 pages": 2}, memory_renders=50)
FULL = Plan(warm_pdf={"3 pages": 30, "30 pages": 12}, warm_docx={"3 pages": 30, "30 pages": 10},
            cold={"3 pages": 12, "30 pages": 6}, memory_renders=500)


async def _measure(svc: Service, plan: Plan, steps: dict[str, dict[str, list[float]]]) -> None:
    client = AsyncHTTPClient(max_clients=8)
    base = svc.base

    def call(name: str, target: str) -> Callable[[], Awaitable[None]]:
        async def one() -> None:
            await convert(client, base, DOCUMENTS[name], target)
        return one

    # Warm-up: the first render launches Chromium in each pool worker; two at once so both
    # workers get one; DOCX once each as well (imports python-docx).
    pages = {name: pdf_pages(await convert(client, base, md, "pdf"))
             for name, md in DOCUMENTS.items()}
    for target in ("pdf", "docx"):
        for name in DOCUMENTS:
            await fixed(call(name, target), count=2, clients=2)

    warm: dict[tuple[str, str, int], Result] = {}
    for target, counts in (("pdf", plan.warm_pdf), ("docx", plan.warm_docx)):
        for name, count in counts.items():
            for clients in (1, 2):
                warm[(target, name, clients)] = await fixed(
                    call(name, target), count=count, clients=clients)

    # Cold path in the same run, same HTML and print options.
    from playwright.async_api import async_playwright

    cold: dict[tuple[str, str, int], Result] = {}
    for name, count in plan.cold.items():
        html, opts = page_html(DOCUMENTS[name])
        await cold_once(html, opts)  # page cache warm for the binaries, not the browser

        async def fresh(html: str = html, opts: dict[str, Any] = opts) -> None:
            await cold_once(html, opts)

        cold[("fresh", name, 1)] = await fixed(fresh, count=count, clients=1)
        cold[("fresh", name, 2)] = await fixed(fresh, count=count, clients=2)
        async with async_playwright() as driver:
            async def launch(html: str = html, opts: dict[str, Any] = opts,
                             driver: Any = driver) -> None:
                await cold_once(html, opts, driver=driver)

            cold[("browser", name, 1)] = await fixed(launch, count=count, clients=1)

    # Memory over many renders (3-page PDF, 2 clients), recycling by job count off.
    _, rss0, pss0 = chromium_memory(svc.proc.pid)
    peak = rss0
    step = max(1, plan.memory_renders // 10)
    done = 0
    while done < plan.memory_renders:
        n = min(step, plan.memory_renders - done)
        await fixed(call("3 pages", "pdf"), count=n, clients=2)
        done += n
        peak = max(peak, chromium_memory(svc.proc.pid)[1])
    procs, rss1, pss1 = chromium_memory(svc.proc.pid)
    client.close()

    # ---------------------------------------------------------------- tables
    header = ["path", "clients", "docs", "p50 s", "p95 s", "docs/s"]
    for name in DOCUMENTS:
        rows = [warm[("pdf", name, c)].row("warm pool, HTTP", c) for c in (1, 2)]
        rows += [cold[("fresh", name, c)].row("cold: Playwright + Chromium per doc", c)
                 for c in (1, 2)]
        rows.append(cold[("browser", name, 1)].row("cold: Chromium per doc (driver kept)", 1))
        table(f"Markdown to PDF, {name} ({pages[name]} A4 pages printed; {machine()})",
              header, rows)

    ratio_rows = []
    for name in DOCUMENTS:
        w1, w2 = warm[("pdf", name, 1)], warm[("pdf", name, 2)]
        for label, c1, c2 in (
                ("Playwright + Chromium per doc", cold[("fresh", name, 1)],
                 cold[("fresh", name, 2)]),
                ("Chromium per doc (driver kept)", cold[("browser", name, 1)], None)):
            lat = percentile(w1.latencies, 50) / percentile(c1.latencies, 50)
            ratio_rows.append([name, label, f"{lat:.2f} (1/{1 / lat:.1f})",
                               f"{w1.rate / c1.rate:.1f}x",
                               f"{w2.rate / c2.rate:.1f}x" if c2 else "-",
                               "yes" if lat <= 1 / 6 else "no"])
    kept = cold[("browser", "3 pages", 1)].latencies
    summary.record("3", "Markdown to PDF warm/cold p50, 3 pages (cold: Chromium per doc)",
                   percentile(warm[("pdf", "3 pages", 1)].latencies, 50)
                   / percentile(kept, 50), RATIO_GOAL, f"cold {percentile(kept, 50):.3f} s")
    table("Warm vs cold, Markdown to PDF (p50 latency ratio warm/cold; throughput warm/cold)",
          ["document", "cold path", "p50 warm/cold", "docs/s 1 client", "docs/s 2 clients",
           "warm <= 1/6 cold"], ratio_rows)

    split_rows = []
    for name in DOCUMENTS:
        p50 = {k: percentile(v, 50) for k, v in steps[name].items()}
        split_rows.append([name, f"{percentile(warm[('pdf', name, 1)].latencies, 50):.3f}",
                           f"{p50['images']:.3f}", f"{p50['html']:.3f}", f"{p50['new page']:.3f}",
                           f"{p50['reused page']:.3f}",
                           f"{p50['reused page'] / p50['new page']:.2f}"])
    table("Where the warm PDF time goes (p50 s, 1 client; the steps are timed in the bench "
          "process before the HTTP runs, so columns come from different moments)",
          ["document", "HTTP end to end", "image-source scan", "Markdown to HTML",
           "print, new page (as served)",
           "print, one reused page", "reused/new"], split_rows)

    docx_rows = [warm[("docx", name, c)].row(name, c) for name in DOCUMENTS for c in (1, 2)]
    table("Markdown to DOCX through HTTP (python-docx, no browser: no cold counterpart)",
          ["document", "clients", "docs", "p50 s", "p95 s", "docs/s"], docx_rows)

    growth = (rss1 - rss0) / rss0 * 100 if rss0 else float("nan")
    table(f"Chromium memory over {plan.memory_renders} renders (3-page PDF, 2 clients; "
          f"{procs} Chromium processes under the service, recycling by job count off)",
          ["when", "RSS sum MB", "PSS sum MB (shared with other Chromiums)"],
          [["after warm-up", f"{rss0:.0f}", f"{pss0:.0f}"],
           [f"after {plan.memory_renders} more renders", f"{rss1:.0f}", f"{pss1:.0f}"],
           ["peak (sampled)", f"{peak:.0f}", "-"],
           ["growth", f"{growth:+.1f}%",
            f"{(pss1 - pss0) / pss0 * 100 if pss0 else float('nan'):+.1f}%"]])


RATIO_GOAL = 0.15  # issue 34: warm at most this share of a cold print of the same page


async def _ratio_rounds(svc: Service, rounds: int, per_round: int
                        ) -> dict[str, list[float]]:
    """The 3-page document printed warm (HTTP) and cold, interleaved round by round so a
    busy moment of the shared machine hits both alike: seconds per document."""
    from playwright.async_api import async_playwright

    client = AsyncHTTPClient(max_clients=2)
    markdown = DOCUMENTS["3 pages"]
    html, opts = page_html(markdown)
    got: dict[str, list[float]] = {"warm": [], "cold: Chromium per doc (driver kept)": [],
                                   "cold: Playwright + Chromium per doc": []}
    for _ in range(3):  # warm-up: the workers' Chromium and the binaries in the page cache
        await convert(client, svc.base, markdown, "pdf")
    await cold_once(html, opts)
    try:
        async with async_playwright() as driver:
            for _ in range(rounds):
                for _ in range(per_round):
                    t0 = time.perf_counter()
                    await convert(client, svc.base, markdown, "pdf")
                    got["warm"].append(time.perf_counter() - t0)
                for _ in range(per_round):
                    got["cold: Chromium per doc (driver kept)"].append(
                        await cold_once(html, opts, driver=driver))
                got["cold: Playwright + Chromium per doc"].append(await cold_once(html, opts))
    finally:
        client.close()
    return got


def run_ratio(quick: bool = False) -> None:
    """Issue 34's figure alone: the 3-page document warm against cold, one client."""
    rounds, per_round = (3, 3) if quick else (6, 5)
    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(Path(tmp))
        try:
            got = asyncio.run(_ratio_rounds(svc, rounds, per_round))
        finally:
            svc.stop()
    warm = percentile(got["warm"], 50)
    rows = [[path, len(times), f"{percentile(times, 50):.3f}",
             f"{min(times):.3f}-{max(times):.3f}", f"{warm / percentile(times, 50):.3f}"]
            for path, times in got.items()]
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    table(f"Markdown to PDF, 3 pages, warm against cold in one run ({rounds} interleaved "
          f"rounds; {machine()}, load average {load}); goal: warm/cold <= {RATIO_GOAL}",
          ["path", "docs", "p50 s", "range s", "warm/this"], rows)
    for path, times in got.items():
        if path != "warm":
            summary.record("3", f"Markdown to PDF warm/cold p50, 3 pages ({path[6:]})",
                           warm / percentile(times, 50), RATIO_GOAL,
                           f"cold {percentile(times, 50):.3f} s")


def run(quick: bool = False) -> None:
    """Start the service, measure warm and cold rendering, print the tables."""
    plan = QUICK if quick else FULL
    steps = breakdown(2 if quick else 8)
    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(Path(tmp))
        try:
            asyncio.run(_measure(svc, plan, steps))
        finally:
            svc.stop()
