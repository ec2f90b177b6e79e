"""PDF structure benchmark: our PDF reader against pymupdf4llm (layout model and legacy) and
markitdown on PDFs whose source DOCX we have, in one run.

Documents: ``tests/data/pdf/office/`` (written by ``tests/pdf_office_set.py`` with python-docx
and exported by LibreOffice, untagged and tagged). The expectation for each PDF is our DOCX
reader's Markdown of the DOCX it was exported from; every tool's Markdown of the PDF is scored
against it per category (:data:`bench.fidelity.PDF_CATEGORIES`), micro-averaged over the
documents, and the macro-F1 is the mean over the categories the expectation has.

Throughput: pages/s in-process (ours) and inside each peer's own process (interpreter start
and imports excluded), and ours through HTTP (``POST /api/convert``) on the 28-page
document, tagged and untagged, with the slowest seconds per page seen.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.common import table
from bench.convert_common import Doc, fmt, time_http
from bench.fidelity import PDF_CATEGORIES, Score, elements
from bench.peers import peer_version, run_peer

ROOT = Path(__file__).resolve().parents[1]
OFFICE = ROOT / "tests" / "data" / "pdf" / "office"
PEERS = ("pymupdf4llm", "pymupdf4llm-legacy", "markitdown")
VARIANTS = {"untagged": ".pdf", "tagged": ".tagged.pdf"}
LONG = "long"  # the 28-page document of the HTTP throughput check


def _documents() -> list[tuple[str, Path, dict[str, Path]]]:
    """(name, DOCX, {variant: PDF}) for every DOCX with both PDF exports next to it."""
    out = []
    for docx in sorted(OFFICE.glob("*.docx")):
        pdfs = {v: OFFICE / f"{docx.stem}{suffix}" for v, suffix in VARIANTS.items()}
        if all(p.is_file() for p in pdfs.values()):
            out.append((docx.stem, docx, pdfs))
    return out


def _pages(path: Path) -> int:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(path.read_bytes())
    try:
        return len(pdf)
    finally:
        pdf.close()


def _ours(paths: list[Path], passes: int) -> dict[str, dict]:
    """Our engine API, in-process: seconds per pass and first-pass Markdown per path."""
    from render_pool.engine.jobs import convert_document

    result: dict[str, dict] = {str(p): {"seconds": [], "markdown": None, "error": None}
                               for p in paths}
    for n in range(-1, passes):
        for p in paths:
            entry = result[str(p)]
            data = p.read_bytes()
            t0 = time.perf_counter()
            try:
                text = convert_document(data, "markdown").content
            except Exception as exc:  # an error is a data point
                entry["error"] = entry["error"] or f"{type(exc).__name__}: {exc}"[:160]
                text = ""
            if n >= 0:
                entry["seconds"].append(time.perf_counter() - t0)
                if entry["markdown"] is None:
                    entry["markdown"] = text
    return result


def _http_rows(passes: int, tmp: Path) -> tuple[list[list[object]], str]:
    rows: list[list[object]] = []
    for variant, suffix in VARIANTS.items():
        path = OFFICE / f"{LONG}{suffix}"
        if not path.is_file():
            continue
        doc = Doc(path, "office", data=path.read_bytes(), pages=_pages(path))
        results, problem = time_http([doc] * 2, passes, tmp)
        if not results:
            return rows, problem
        for r in results:
            pages = doc.pages * len(r.latencies)
            rows.append([f"{LONG}{suffix}", variant, doc.pages, r.clients, len(r.latencies),
                         fmt(pages / r.seconds, 1), fmt(max(r.latencies) / doc.pages, 3),
                         r.errors])
    return rows, ""


def run(passes: int, status: dict[str, str], tmp: Path) -> None:
    """Measure and print the PDF tables (called by :func:`bench.convert.run`)."""
    from render_pool.engine.jobs import convert_document

    docs = _documents()
    if not docs:
        print(f"\nPDF structure: no documents in {OFFICE} (run tests/pdf_office_set.py build)")
        return
    expected = {name: elements(convert_document(docx.read_bytes(), "markdown").content)
                for name, docx, _ in docs}
    paths = [p for _, _, pdfs in docs for p in pdfs.values()]
    pages = {str(p): _pages(p) for p in paths}
    runs: dict[str, dict[str, dict]] = {"word2markdown (ours)": _ours(paths, passes)}
    for tool in PEERS:
        if status.get(tool) != "ok":
            runs[f"{tool} (unavailable: {status.get(tool, '?')[:60]})"] = {}
            continue
        result = run_peer(tool, paths, passes, tmp)
        runs[f"{tool} {peer_version(tool)}"] = result.get("docs", {})
    f1_rows: list[list[object]] = []
    pr_rows: list[list[object]] = []
    speed_rows: list[list[object]] = []
    for variant in VARIANTS:
        mine = [(name, pdfs[variant]) for name, _, pdfs in docs]
        for tool, result in runs.items():
            if not result:
                f1_rows.append([tool, variant, "-", *["-"] * len(PDF_CATEGORIES), "-"])
                continue
            score = Score(categories=PDF_CATEGORIES)
            spent = 0.0
            done_pages = 0
            errors = 0
            for name, path in mine:
                entry = result.get(str(path), {})
                score.add_elements(elements(entry.get("markdown") or ""), expected[name])
                spent += sum(entry.get("seconds", []))
                done_pages += pages[str(path)] * len(entry.get("seconds", []))
                errors += bool(entry.get("error"))
            f1s = [score.tallies[c].f1 for c in PDF_CATEGORIES]
            known = [x for x in f1s if x is not None]
            f1_rows.append([tool, variant, errors, *(fmt(x) for x in f1s),
                            fmt(statistics.fmean(known) if known else None)])
            pr_rows.append([tool, variant, *(
                f"{fmt(t.precision)}/{fmt(t.recall)}"
                for t in (score.tallies[c] for c in PDF_CATEGORIES))])
            speed_rows.append([tool, variant, len(mine), done_pages,
                               fmt(done_pages / spent if spent else None, 1)])
    names = ", ".join(f"{n} ({pages[str(p['untagged'])]} p.)" for n, _, p in docs)
    table(f"PDF structure: F1 per category against our DOCX reader on the source DOCX "
          f"({len(docs)} documents: {names}; LibreOffice exports, untagged and tagged; "
          f"micro-averaged; '-' = the DOCX has none)",
          ["tool", "PDF", "errors", *PDF_CATEGORIES, "macro F1"], f1_rows)
    table("PDF structure: precision/recall per category", ["tool", "PDF", *PDF_CATEGORIES],
          pr_rows)
    table(f"PDF throughput on the same documents ({passes} timed pass(es) after a warm-up; "
          f"ours in-process, peers inside their own process)",
          ["tool", "PDF", "docs", "pages converted", "pages/s"], speed_rows)
    rows, problem = _http_rows(passes, tmp)
    if rows:
        table("PDF through HTTP POST /api/convert (word2markdown -> markdown; the issue asks "
              ">= 20 pages/s and no page over 2 s)",
              ["file", "PDF", "pages", "clients", "requests", "pages/s",
               "slowest s/page", "errors"], rows)
    else:
        print(f"\nPDF HTTP throughput: not measured ({problem})")
