"""Hostile-input benchmark (issue 20): what one caller's worst input costs everyone else.

One ``serve`` process (embedded stores, a pool of two workers) with two companies: EVIL's
ANNOTATOR sends each hostile input in turn while GOOD's user calls ``GET /api/auth/me``
back to back. For each input the table gives the answer code and its time, GOOD's worst
``me`` latency during it (against ``me`` at rest, measured first in the same run; goal:
under 1 s) and the peak resident size of the whole service tree (service, pool workers,
Chromium, embedded stores; psutil, sampled between ``me`` calls) over its size just before.
The last rows are issue 30's slow small files (``bench/hostile_slow.py``): the time each
takes to be answered, and how long GOOD's one-line ODT waits while two of them run.

``--quick`` runs the same inputs with the service's job time limit at 20 s and the inputs
that cost time on the event loop at half size, so the section ends in a couple of minutes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from bench import hostile_inputs as hi
from bench.common import machine, percentile, table
from bench.hostile_service import (
    Hostile,
    attack,
    attacked_service,
    tree_rss_mb,
)
from bench.hostile_slow import slow_rows
from bench.hostile_uploads import concurrent_uploads


def _image_server(count: int, mb: float) -> tuple[Callable[[], None], list[str]]:
    """A loopback HTTP server of ``count`` PNGs of ``mb`` MB; (stop, urls)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    png = hi.large_png(mb)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(png)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(png)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    return stop, [f"http://127.0.0.1:{port}/img{i}.png" for i in range(count)]


def inputs(quick: bool, image_urls: list[str]) -> list[Hostile]:
    """The hostile inputs of issue 20 (loop-bound ones at half size when ``quick``)."""
    scale = 2 if quick else 1
    md = {"target": "docx"}
    images_md = "# Pictures\n\n" + "".join(f"![p{i}]({u})\n\n" for i, u in enumerate(image_urls))
    big_zip = hi.zip_of({"doc.md": b"![x](big.png)\n", "big.png": hi.large_png(400)})
    return [
        Hostile(f"zip: doc.md = '![](a (' x {8000 // scale}", "/api/upload-archive",
                {"prefix": "h1"},
                {"file": ("q.zip", hi.zip_of({"doc.md": hi.quadratic_markdown(8000 // scale)}))}),
        Hostile(f"zip: a 400 MB PNG ({len(big_zip) / 2**20:.1f} MB zip)", "/api/upload-archive",
                {"prefix": "h2"}, {"file": ("png.zip", big_zip)}),
        Hostile(f"PDF: content stream of {2048 // scale} MB of spaces", "/api/convert",
                {"export": "markdown"},
                {"file": ("bomb.pdf", hi.space_bomb_pdf(2048 // scale))}),
        Hostile(f"/md/convert docx: {len(image_urls)} remote images of 19 MB", "/md/convert",
                {**md, "markdown_text": images_md}, {}),
        Hostile("/md/convert docx: '[a](' x 25000", "/md/convert",
                {**md, "markdown_text": hi.open_links(25_000)}, {}),
        Hostile("/md/convert docx: 50,000 footnotes", "/md/convert",
                {**md, "markdown_text": hi.footnotes(50_000)}, {}),
        Hostile(f"zip: page.html = '<style>@import url(' x {5000 // scale}",
                "/api/upload-archive", {"prefix": "h7"},
                {"file": ("s.zip", hi.zip_of({"page.html": hi.style_imports(5000 // scale)
                                              .encode()}))}),
    ]


def run(quick: bool = False) -> None:
    stop_images, urls = _image_server(20, 19)
    items = inputs(quick, urls)
    try:
        with attacked_service(quick) as svc:
            rest = svc.me_at_rest()
            idle = tree_rss_mb(svc.pid)
            rows = []
            for item in items:
                out = attack(svc.http, svc.pid, svc.victim, svc.attacker, item)
                rows.append([item.name, out.code, f"{out.seconds:.1f}",
                             f"{out.me_worst_ms:.0f} ({out.me_calls} calls)",
                             f"{out.peak_over_idle_mb:+.0f}"])
            rows.append(concurrent_uploads(svc.http, svc.pid, svc.victim, svc.attacker))
            rows.extend(slow_rows(svc.http, svc.pid, svc.victim, svc.attacker, quick))
    finally:
        stop_images()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table(f"Hostile inputs from one company, another company's `me` meanwhile ({when}, "
          f"{machine()}, pool of 2; `me` at rest: p50 {percentile(rest, 50) * 1000:.1f} ms, "
          f"max {max(rest) * 1000:.1f} ms; service tree at idle {idle:.0f} MB"
          f"{'; --quick: job limit 20 s' if quick else ''})",
          ["hostile input", "answer code", "seconds", "worst `me` ms (goal < 1000)",
           "peak RSS over idle MB"], rows)
