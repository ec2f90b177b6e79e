"""``python -m bench generated``: the generated corpus read by the service's engine and by
its peers, scored against the sources' Markdown per writer and per category.

Every document is converted in process (``convert_document(..., "markdown")``; scans with
``ocr_languages="eng"``), and, where their virtualenvs are installed under
``bench/.peers/`` (installed here when missing, pip into their own virtualenvs), by
pymupdf4llm (PDFs and scans) and markitdown (DOCX, PPTX, EPUB, PDFs, scans) in the same
run, through :func:`bench.pdf_peers.drive`, and the scans by ocrmypdf then pymupdf4llm
(:mod:`bench.generated.ocr_peer`). A conversion that fails scores as empty output and is
counted. Figures are printed for the tuning part, the held-out part (one source in three,
by hash: :func:`bench.generated.scoring.part_of`) and the whole set; only the held-out
figures say whether a change generalises.
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench.common import machine, table
from bench.fidelity import Score, elements
from bench.generated.model import Source
from bench.generated.ocr_peer import OCR_PEER, read_scans
from bench.generated.ocr_peer import install as install_ocr_peer
from bench.generated.scoring import (
    HELD_OUT,
    TUNING,
    add,
    categories_of,
    fmt,
    macro_f1,
    mean,
    new_score,
    part_of,
    reading_order,
)
from bench.generated.sources import sources
from bench.generated.writers import WRITERS, build, path_of

OURS = "ours"
PEERS = {"pymupdf4llm": ("pdf-lo", "pdf-lo-cols", "pdf-chromium", "scan"),
         "markitdown": ("docx", "pptx", "epub", "pdf-lo", "pdf-lo-cols", "pdf-chromium",
                        "scan"),
         OCR_PEER: ("scan",)}
QUICK_SOURCES = 6  # --quick: the first six sources (six subjects), every writer


def convert_ours(data: bytes, writer: str) -> tuple[str, str]:
    """(Markdown, error) of the service's engine in process."""
    from render_pool.engine.formats import ReadRequest
    from render_pool.engine.jobs import ConvertOptions, convert_document

    options = ConvertOptions(read=ReadRequest(ocr_languages="eng")) if writer == "scan" \
        else None
    try:
        return convert_document(data, "markdown", options=options).content, ""
    except Exception as exc:  # a failure is a data point: empty output, counted
        return "", f"{type(exc).__name__}: {exc}"[:160]


def _peer_available(tool: str, writers: tuple[str, ...]) -> bool:
    """Whether ``tool`` reads one of ``writers`` and is installed (pip, when missing)."""
    from bench.peers import _install

    if not set(PEERS[tool]) & set(writers):
        return False
    return (install_ocr_peer() if tool == OCR_PEER else _install(tool)) == "ok"


def _run_peer(tool: str, jobs: list[tuple[str, Source, Path]]) -> dict[tuple[str, str], str]:
    """(writer, source name) -> Markdown of ``tool`` ("" when it failed)."""
    from bench.pdf_peers import drive

    if tool == OCR_PEER:
        return read_scans(jobs)

    results = drive(tool, "text", [{"path": str(path), "page": None} for _, _, path in jobs])
    return {(writer, source.name): (res.get("text") or "") if not res.get("error") else ""
            for (writer, source, _), res in zip(jobs, results, strict=True)}


class Results:
    """Scores per (tool, writer, part), failures and seconds of our engine per writer."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str, str], Score] = {}
        self.failures: Counter[tuple[str, str]] = Counter()
        self.seconds: dict[str, float] = defaultdict(float)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.orders: dict[tuple[str, str, str], list[float]] = defaultdict(list)

    def add(self, tool: str, writer: str, source: Source, produced: str,
            expected: dict[str, Counter[object]], source_markdown: str = "") -> None:
        order = reading_order(produced, source_markdown) \
            if source_markdown and writer != "ods" else None  # ODS holds the tables alone
        for part in (part_of(source.name), "all"):
            key = (tool, writer, part)
            if key not in self.scores:
                self.scores[key] = new_score(writer)
            add(self.scores[key], produced, expected)
            if order is not None:
                self.orders[key].append(order)

    def order(self, tool: str, writer: str, part: str) -> float | None:
        """Mean reading order (word-sequence similarity to the source) over the documents."""
        return mean(self.orders.get((tool, writer, part), []))

    def macro(self, tool: str, writer: str, part: str) -> float | None:
        score = self.scores.get((tool, writer, part))
        return macro_f1(score) if score else None


def measure(chosen: list[Source], root: Path, writers: tuple[str, ...],
            peers: tuple[str, ...]) -> Results:
    """Read every written document with our engine and each peer; score it."""
    results = Results()
    markdown = {s.name: (root / "src" / f"{s.name}.md").read_text() for s in chosen}
    truth = {name: elements(text) for name, text in markdown.items()}
    peer_jobs: dict[str, list[tuple[str, Source, Path]]] = defaultdict(list)
    for writer in writers:
        for source in chosen:
            path = path_of(root, writer, source)
            data = path.read_bytes() if path.exists() else b""
            t0 = time.perf_counter()
            produced, error = convert_ours(data, writer) if data else ("", "not written")
            results.seconds[writer] += time.perf_counter() - t0
            if error:
                results.failures[(OURS, writer)] += 1
                results.errors[writer].append(f"{source.name}: {error}")
            results.add(OURS, writer, source, produced, truth[source.name],
                        markdown[source.name])
            for tool in peers:
                if writer in PEERS[tool] and data:
                    peer_jobs[tool].append((writer, source, path))
    for tool in peers:
        texts = _run_peer(tool, peer_jobs[tool])
        for writer, source, _ in peer_jobs[tool]:
            produced = texts[(writer, source.name)]
            if not produced:
                results.failures[(tool, writer)] += 1
            results.add(tool, writer, source, produced, truth[source.name],
                        markdown[source.name])
    return results


def _writer_table(results: Results, writer: str, tools: list[str], docs: int) -> None:
    header = ["category", f"{OURS} {TUNING}", f"{OURS} {HELD_OUT}", f"{OURS} all",
              *(f"{t} all" for t in tools)]
    rows: list[list[object]] = []
    for cat in categories_of(writer):
        ours = [results.scores.get((OURS, writer, p)) for p in (TUNING, HELD_OUT, "all")]
        peers = [results.scores.get((t, writer, "all")) for t in tools]
        if all(s is None or s.tallies[cat].f1 is None for s in ours):
            continue
        rows.append([cat, *(fmt(s.tallies[cat].f1 if s else None) for s in [*ours, *peers])])
    rows.append(["**macro-F1**", *(fmt(results.macro(OURS, writer, p))
                                   for p in (TUNING, HELD_OUT, "all")),
                 *(fmt(results.macro(t, writer, "all")) for t in tools)])
    if writer != "ods":
        rows.append(["reading order", *(fmt(results.order(OURS, writer, p))
                                        for p in (TUNING, HELD_OUT, "all")),
                     *(fmt(results.order(t, writer, "all")) for t in tools)])
    failed = [results.failures[(OURS, writer)], *(results.failures[(t, writer)] for t in tools)]
    rows.append(["failed documents", "", "", str(failed[0]), *map(str, failed[1:])])
    table(f"generated: {writer} ({docs} documents, F1 per category)", header, rows)


def _weakest(results: Results, writer: str) -> str:
    score = results.scores.get((OURS, writer, "all"))
    if score is None:
        return ""
    pairs = sorted((t.f1, c) for c, t in score.tallies.items() if t.f1 is not None)
    return ", ".join(f"{c} {f:.2f}" for f, c in pairs[:3])


def report(results: Results, writers: tuple[str, ...], tools: list[str], docs: int) -> None:
    for writer in writers:
        _writer_table(results, writer, [t for t in tools if writer in PEERS[t]], docs)
    rows: list[list[object]] = []
    for writer in writers:
        peer_cells = [fmt(results.macro(t, writer, "all")) if writer in PEERS[t] else "n/a"
                      for t in tools]
        rows.append([writer, fmt(results.macro(OURS, writer, TUNING)),
                     fmt(results.macro(OURS, writer, HELD_OUT)),
                     fmt(results.macro(OURS, writer, "all")), *peer_cells,
                     f"{fmt(results.order(OURS, writer, TUNING))} / "
                     f"{fmt(results.order(OURS, writer, HELD_OUT))}",
                     _weakest(results, writer), results.failures[(OURS, writer)],
                     f"{results.seconds[writer] / max(1, docs):.2f}"])
    table("generated: summary (structure macro-F1 per writer)",
          ["writer", f"{OURS} {TUNING}", f"{OURS} {HELD_OUT}", f"{OURS} all", *tools,
           f"reading order (ours, {TUNING} / {HELD_OUT})", "weakest categories (ours, all)",
           "failed", "s/doc (ours)"], rows)
    for writer, errors in results.errors.items():
        print(f"\n{writer}: {len(errors)} failed: " + "; ".join(errors[:3]))


def run(quick: bool = False, writers: tuple[str, ...] = WRITERS) -> Results:
    """Build (or reuse) the generated set, read it, print the tables."""
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    chosen = sources()[:QUICK_SOURCES] if quick else sources()
    held = sum(part_of(s.name) == HELD_OUT for s in chosen)
    print(f"\n# generated corpus: {len(chosen)} sources ({len(chosen) - held} tuning, "
          f"{held} held-out) x {len(writers)} writers; {machine()}")
    root = build(chosen, writers)
    print(f"  documents in {root.relative_to(root.parents[2])} "
          f"({time.perf_counter() - t0:.0f} s to write what was missing)")
    tools = [t for t in PEERS if _peer_available(t, writers)]
    missing = [t for t in PEERS if t not in tools and set(PEERS[t]) & set(writers)]
    if missing:
        print(f"  peers unavailable (pip install failed: bench/.peers/*-install.log): "
              f"{', '.join(missing)}")
    results = measure(chosen, root, writers, tuple(tools))
    report(results, writers, tools, len(chosen))
    print(f"\n(load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"{time.perf_counter() - t0:.0f} s in all)")
    return results
