"""Document conversion benchmark: DOCX/PDF to Markdown/HTML/JSON/DocTags on the shared corpus.

Measured in one run, on the same documents:

- the engine API in-process (``render_pool.engine.jobs.convert_document``, one process, sequential):
  documents/s and pages/s per engine, export and input kind;
- the real service over HTTP (``serve --services docs`` in a subprocess, ``POST /api/convert``
  multipart, word2markdown to Markdown) with 1 and 4 concurrent clients;
- peers: pandoc (``-f docx -t gfm``, Debian package), mammoth (``convert_to_markdown``) and
  markitdown (``MarkItDown().convert``), each in one subprocess of its own virtualenv under
  ``bench/.peers/`` that times every document itself (interpreter start and imports excluded;
  pandoc being a program, its process start is part of each document);
- fidelity against Docling's expected Markdown (see :mod:`bench.fidelity`).

Ratios are against our word2markdown engine exporting Markdown on the same input kind.
"""

from __future__ import annotations

import math
import os
import re
import statistics
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from bench import convert_office, convert_pdf
from bench.common import machine, percentile, table
from bench.convert_common import Doc, HttpResult, fmt, time_http
from bench.fidelity import CATEGORIES, Score, elements
from bench.peers import KINDS, ensure_peers, peer_version, run_peer

ROOT = Path(__file__).resolve().parents[1]
# ../shared/corpus beside the clone; BENCH_CORPUS names another (a git worktree elsewhere)
CORPUS = Path(os.environ.get("BENCH_CORPUS")
              or Path(__file__).resolve().parents[2] / "shared" / "corpus")
EXPORTS = ("markdown", "html", "json", "doctags")
CHARS_PER_PAGE = 3000
BASELINE = ("word2markdown", "markdown")


def _spread(items: list[Doc], limit: int) -> list[Doc]:
    """At most ``limit`` items spread over the sorted list (a quick run's subset)."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def find_corpus(quick: bool) -> tuple[list[Doc], str]:
    """The documents and a line saying where they come from.

    ``../shared/corpus`` (docling DOCX and PDF with expected Markdown, mammoth, markitdown);
    without it, the copies in ``tests/data`` (a user's clone has no ``../shared``).
    """
    groups: list[tuple[list[Doc], int]] = []
    if CORPUS.is_dir():
        where = f"corpus: {CORPUS}"
        d = CORPUS / "docling"
        groups.append(([Doc(p, "docling", d / "docx/groundtruth" / f"{p.name}.md")
                        for p in sorted((d / "docx/sources").glob("*.docx"))], 8))
        groups.append(([Doc(p, "docling", d / "pdf/groundtruth" / f"{p.stem}.md")
                        for p in sorted((d / "pdf/sources").glob("*.pdf"))], 3))
        groups.append(([Doc(p, "mammoth") for p in sorted((CORPUS / "mammoth").glob("*.docx"))],
                       3))
        groups.append(([Doc(p, "markitdown") for p in sorted((CORPUS / "markitdown").iterdir())
                        if p.suffix in (".docx", ".pdf")], 4))
    else:
        data = ROOT / "tests" / "data"
        where = (f"corpus: {CORPUS} is missing (a user's clone has none): using the copies in "
                 f"{data}")
        dd = data / "docx" / "docling"
        groups.append(([Doc(p, "docling", dd / "groundtruth" / f"{p.name}.md")
                        for p in sorted(dd.glob("*.docx"))], 8))
        groups.append(([Doc(p, "docling", p.with_suffix(".md"))
                        for p in sorted((data / "pdf").glob("*.pdf"))], 3))
        generated = sorted((data / "pdf" / "generated").glob("*.pdf"))
        groups.append(([Doc(p, "generated") for p in generated], 1))
        for name in ("mammoth", "markitdown"):
            groups.append(([Doc(p, name) for p in sorted((data / "docx" / name).glob("*.docx"))],
                           3))
    docs = [doc for items, limit in groups for doc in (_spread(items, limit) if quick else items)]
    for doc in docs:
        doc.data = doc.path.read_bytes()
        if doc.expected is not None and not doc.expected.is_file():
            doc.expected = None
    return docs, where


_DATA_URI = re.compile(r"data:[^)\s\"'>]*")


def count_pages(doc: Doc, markdown: str) -> None:
    """PDF: pdfium's page count. DOCX: ``<Pages>`` of docProps/app.xml (what Word saved last)
    when present and positive, else one page per 3,000 characters of our Markdown (data URIs
    removed), at least one."""
    if doc.kind == "pdf":
        import pypdfium2

        pdf = pypdfium2.PdfDocument(doc.data)
        try:
            doc.pages, doc.pages_from = len(pdf), "pdfium"
        finally:
            pdf.close()
        return
    try:
        with zipfile.ZipFile(doc.path) as z:
            app = z.read("docProps/app.xml").decode("utf-8", "replace")
        found = re.search(r"<(?:\w+:)?Pages>\s*(\d+)\s*<", app)
        if found and int(found.group(1)) > 0:
            doc.pages, doc.pages_from = int(found.group(1)), "app.xml"
            return
    except (KeyError, OSError, zipfile.BadZipFile):
        pass
    chars = len(_DATA_URI.sub("", markdown))
    doc.pages, doc.pages_from = max(1, math.ceil(chars / CHARS_PER_PAGE)), "chars"


# ------------------------------------------------------------------ timing
@dataclass
class Run:
    """Per-document seconds (one per pass), first error and first-pass Markdown of a tool."""

    tool: str
    seconds: dict[str, list[float]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    unavailable: str = ""
    kinds: tuple[str, ...] = ("docx", "pdf")

    def totals(self, docs: list[Doc]) -> tuple[int, int, float]:
        """Conversions, pages converted and seconds spent over ``docs``."""
        n = pages = 0
        spent = 0.0
        for doc in docs:
            times = self.seconds.get(doc.name, [])
            n += len(times)
            pages += doc.pages * len(times)
            spent += sum(times)
        return n, pages, spent

    def rate(self, docs: list[Doc]) -> float:
        """Documents per second over ``docs``."""
        n, _, spent = self.totals(docs)
        return n / spent if spent else float("nan")


def engine_pass(run: Run, docs: list[Doc], engine: str, export: str, *, timed: bool) -> None:
    """Convert every document once in this process, timing each call when ``timed``.

    The untimed pass warms lazy imports and caches (a service worker is long-lived).
    """
    from render_pool.engine.jobs import convert_document

    for doc in docs:
        t0 = time.perf_counter()
        try:
            out = convert_document(doc.data, export, engine)
        except Exception as exc:  # an error is a data point
            if timed:
                run.seconds.setdefault(doc.name, []).append(time.perf_counter() - t0)
                run.errors.setdefault(doc.name, f"{type(exc).__name__}: {exc}"[:160])
            continue
        if timed:
            run.seconds.setdefault(doc.name, []).append(time.perf_counter() - t0)
            if export == "markdown" and doc.name not in run.outputs:
                run.outputs[doc.name] = out.content


def time_engines(docs: list[Doc], passes: int) -> list[Run]:
    """Every engine x export over the documents: one warm-up pass, then ``passes`` timed
    passes, interleaved (pass 1 of every combination, then pass 2...) so that a change in the
    machine's load spreads over all of them. alt_engine gets the DOCX documents only."""
    combos = [(e, x) for e in ("word2markdown", "alt_engine") for x in EXPORTS]
    runs = [Run(f"{e} -> {x}") for e, x in combos]
    for n in range(passes + 1):
        for run, (engine, export) in zip(runs, combos, strict=True):
            subset = docs if engine == "word2markdown" else [d for d in docs if d.kind == "docx"]
            engine_pass(run, subset, engine, export, timed=n > 0)
    return runs


def time_peer(tool: str, status: str, docs: list[Doc], passes: int, tmp: Path) -> Run:
    """Run a peer over the documents it can read, in one subprocess (see bench.peers)."""
    run = Run(f"{tool} {peer_version(tool)}", kinds=KINDS[tool])
    if status != "ok":
        run.unavailable = status
        return run
    mine = [d for d in docs if d.kind in KINDS[tool]]
    result = run_peer(tool, [d.path for d in mine], passes, tmp)
    if "docs" not in result:
        run.unavailable = result.get("error", "runner failed")
        return run
    for doc in mine:
        entry = result["docs"].get(str(doc.path), {})
        run.seconds[doc.name] = entry.get("seconds", [])
        if entry.get("error"):
            run.errors[doc.name] = entry["error"].splitlines()[-1][:160]
        if entry.get("markdown") is not None:
            run.outputs[doc.name] = entry["markdown"]
    return run


# ------------------------------------------------------------------ HTTP
def _throughput_rows(kind: str, docs: list[Doc], runs: list[Run], base: Run) -> list[list[object]]:
    mine = [d for d in docs if d.kind == kind]
    base_rate = base.rate(mine)
    rows: list[list[object]] = []
    for run in runs:
        if run.unavailable and kind in run.kinds:
            rows.append([run.tool, kind.upper(), "-", "-", "-", "-",
                         f"unavailable: {run.unavailable[:90]}"])
            continue
        covered = [d for d in mine if d.name in run.seconds]
        if run.unavailable or not covered:
            continue
        n, pages, spent = run.totals(covered)
        errors = sum(1 for d in covered if d.name in run.errors)
        rate = n / spent if spent else float("nan")
        rows.append([run.tool, kind.upper(), len(covered), fmt(rate, 1),
                     fmt(pages / spent if spent else None, 1), errors,
                     "1.00 (baseline)" if run is base else fmt(rate / base_rate)])
    return rows


def _fidelity_rows(kind: str, docs: list[Doc], runs: list[Run], expected: dict[str, dict]
                   ) -> tuple[list[list[object]], list[list[object]], int]:
    """F1 rows and precision/recall rows per tool for the documents of ``kind`` that have
    expected Markdown, and their number."""
    mine = [d for d in docs if d.kind == kind and d.name in expected]
    f1_rows: list[list[object]] = []
    pr_rows: list[list[object]] = []
    for run in runs:
        covered = [d for d in mine if d.name in run.seconds]
        if run.unavailable or not covered:
            continue
        score = Score()
        for d in covered:
            score.add_elements(elements(run.outputs.get(d.name, "")), expected[d.name])
        f1s = [score.tallies[c].f1 for c in CATEGORIES]
        known = [x for x in f1s if x is not None]
        f1_rows.append([run.tool, len(covered), sum(1 for d in covered if d.name in run.errors),
                        *(fmt(x) for x in f1s), fmt(statistics.fmean(known) if known else None)])
        pr_rows.append([run.tool, *(f"{fmt(t.precision)}/{fmt(t.recall)}"
                                    for t in (score.tallies[c] for c in CATEGORIES))])
    return f1_rows, pr_rows, len(mine)


def _http_against_peers(docs: list[Doc], http: list[HttpResult], base: Run, peers: list[Run]
                        ) -> None:
    """DOCX to Markdown through HTTP with one client (requests one after another, so each
    document's time is its request's latency) beside the peers on the same DOCX documents:
    the service as it is used, against pandoc as it is used (one process per document)."""
    one = next((r for r in http if r.clients == 1), None)
    mine = [i for i, d in enumerate(docs) if d.kind == "docx"]
    if one is None or not mine:
        return
    times = [t for i in mine for t in one.by_doc.get(i, [])]
    rates = {"word2markdown -> markdown, HTTP, 1 client": len(times) / sum(times)
             if times else float("nan"),
             f"{base.tool}, in-process": base.rate([docs[i] for i in mine])}
    for peer in peers:
        if not peer.unavailable and "docx" in peer.kinds:
            rates[peer.tool] = peer.rate([docs[i] for i in mine])
    pandoc = next((rate for tool, rate in rates.items() if tool.startswith("pandoc")), None)
    table(f"DOCX to Markdown through HTTP beside the peers (the same {len(mine)} DOCX "
          f"documents, this run; 'x pandoc' = docs/s over pandoc's docs/s)",
          ["tool", "docs/s", "x pandoc"],
          [[tool, fmt(rate, 1), fmt(rate / pandoc if pandoc else None)]
           for tool, rate in rates.items()])


def run(quick: bool = False) -> None:
    """Measure our engines, the HTTP service and the peers on the corpus; print the tables."""
    passes = 1 if quick else 3
    docs, where = find_corpus(quick)
    print(f"\nConversion benchmark ({'quick: subset, 1 pass' if quick else f'{passes} passes'}"
          f"); {where}; {len(docs)} documents "
          f"({sum(d.kind == 'docx' for d in docs)} DOCX, {sum(d.kind == 'pdf' for d in docs)} PDF)")
    status = ensure_peers()
    load_before = os.getloadavg()

    ours = time_engines(docs, passes)
    base = ours[0]
    for doc in docs:
        count_pages(doc, base.outputs.get(doc.name, ""))

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        peers = [time_peer(tool, status[tool], docs, passes, tmp)
                 for tool in ("pandoc", "mammoth", "markitdown")]
        http, http_problem = time_http(docs, passes, tmp)
        convert_pdf.run(passes, status, tmp)
        convert_office.run(passes, status, tmp)

    # ---------------------------------------------------------------- throughput
    rows = []
    for kind in ("docx", "pdf"):
        rows += _throughput_rows(kind, docs, ours + peers, base)
    how = {src: sum(1 for d in docs if d.pages_from == src)
           for src in ("pdfium", "app.xml", "chars")}
    table(f"Conversion throughput, engine API in-process, sequential ({machine()})",
          ["tool", "input", "docs", "docs/s", "pages/s", "errors",
           "docs/s ratio to word2markdown -> markdown"], rows)
    print(f"\nPages: PDF from pdfium ({how['pdfium']} docs); DOCX from docProps/app.xml <Pages> "
          f"when present ({how['app.xml']} docs, the count Word saved last), else 1 page per "
          f"{CHARS_PER_PAGE:,} characters of our Markdown without data URIs ({how['chars']} docs)."
          f" Totals: {sum(d.pages for d in docs if d.kind == 'docx')} DOCX pages, "
          f"{sum(d.pages for d in docs if d.kind == 'pdf')} PDF pages. alt_engine reads DOCX "
          f"only (for PDF it falls back to the same PDF reader), so it has no PDF rows. Peers "
          f"are timed inside their own process (interpreter start and imports excluded); "
          f"pandoc starts one process per document, as it is used. Every tool first converts "
          f"all documents once untimed (warm-up); our engine combinations run their passes "
          f"interleaved.")

    # ---------------------------------------------------------------- HTTP
    if http:
        base_all = base.rate(docs)
        table(f"HTTP POST /api/convert (word2markdown -> markdown, {len(docs)} docs x {passes} "
              f"pass(es), pool workers = CPU count; client on the same machine)",
              ["clients", "requests", "docs/s", "p50 ms", "p95 ms", "errors",
               "ratio to in-process word2markdown -> markdown"],
              [[r.clients, len(r.latencies), fmt(len(r.latencies) / r.seconds, 1),
                fmt(percentile(r.latencies, 50) * 1000, 0),
                fmt(percentile(r.latencies, 95) * 1000, 0), r.errors,
                fmt(len(r.latencies) / r.seconds / base_all)] for r in http])
        _http_against_peers(docs, http, base, peers)
    else:
        print(f"\nHTTP: not measured ({http_problem})")

    # ---------------------------------------------------------------- fidelity
    expected = {d.name: elements(d.expected.read_text(encoding="utf-8"))
                for d in docs if d.expected is not None}
    md_runs = [r for r in ours if r.tool.endswith("markdown")] + peers
    for kind in ("docx", "pdf"):
        rows, pr_rows, n = _fidelity_rows(kind, docs, md_runs, expected)
        if n:
            table(f"Fidelity, {kind.upper()}: F1 per category against Docling's expected Markdown "
                  f"({n} documents, micro-averaged; '-' = the expected Markdown has none)",
                  ["tool", "docs", "errors", *CATEGORIES, "mean F1"], rows)
            table(f"Fidelity, {kind.upper()}: precision/recall per category (a low precision "
                  f"with a high recall: the tool keeps elements Docling's Markdown drops)",
                  ["tool", *CATEGORIES], pr_rows)
    print("\nFidelity: Markdown (GFM, marko) is rendered to HTML and raw HTML kept, so pipe and "
          "HTML tables score alike. Heading levels are stripped in 'headings' (Docling's DOCX "
          "ground truth writes Title as # and Heading N as N+1); 'heading levels' compares the "
          "dense rank of each level within the document. Text is NFKC, case-folded, punctuation "
          "collapsed. Images are counted. A failed conversion scores as empty output. The "
          "expected Markdown is Docling's own output (its regression fixtures), not a human "
          "reference.")

    print(f"\nLoad average (1, 5, 15 min) before measuring: "
          f"{', '.join(f'{x:.1f}' for x in load_before)}; after: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores): figures "
          f"above 1 per core mean other work shared the machine.")

    # ---------------------------------------------------------------- errors
    lines = []
    for r in ours + peers:
        if r.errors:
            shown = [f"{name}: {r.errors[name][:110]}" for name in sorted(r.errors)[:4]]
            more = f"; and {len(r.errors) - 4} more" if len(r.errors) > 4 else ""
            lines.append(f"- {r.tool}: {len(r.errors)} ({'; '.join(shown)}{more})")
    unavailable = [f"- {r.tool}: {r.unavailable}" for r in peers if r.unavailable]
    if lines or unavailable:
        print("\nErrors (documents that raised or were refused, per tool):")
        print("\n".join(lines + unavailable))
    sys.stdout.flush()
