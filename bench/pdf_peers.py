"""The peers of ``just bench pdf-layout``: pymupdf4llm, markitdown and pdfplumber read the
same PDFs as the service, pdfplumber's and PyMuPDF's ``find_tables`` the same tables, and
all are scored with ``bench.pdf_scoring``'s metrics (the service's bench uses them too) in
the same run:

* reading order (normalised indel similarity of the words against ``pdftotext``), words
  ratio and word recall over ``realworld/``, the six multi-column PDFs in rows of their own;
* cell F1 and row-major structure similarity over ``tables-camelot``, per group.

Each peer lives in its own virtualenv under ``bench/.peers/`` (installed by
:mod:`bench.peers`, never into ``.venv``) and runs in a subprocess of it, this file being
the runner::

    bench/.peers/VENV/bin/python -I bench/pdf_peers.py TOOL MODE MANIFEST.json

The runner prints one JSON line per file (``text`` or ``tables``, ``seconds``, ``error``)
after a ``ready`` line; the bench kills it when a file takes longer than the per-file limit
and starts it again on the next file. A file a peer fails on (error, time-out, crash)
scores 0 and is counted. Only the standard library is imported at module level: the peer
venvs have none of the project's packages.
"""

from __future__ import annotations

import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TEXT_PEERS = ("pymupdf4llm", "markitdown", "pdfplumber")
# default settings (ruling lines), then tables from text alignment alone (the settings for
# tables without rules: pdfplumber's "text" strategies, PyMuPDF's strategy="text")
TABLE_PEERS = ("pdfplumber", "pymupdf", "pdfplumber-text", "pymupdf-text")
VENV = {"pdfplumber-text": "pdfplumber", "pymupdf-text": "pymupdf"}  # tool -> its venv
FILE_LIMIT = 120.0  # seconds a peer may spend on one file
START_LIMIT = 300.0  # seconds for a runner to import its peer (pymupdf4llm loads a model)
SERVICE = "service"


def drive(tool: str, mode: str, jobs: list[dict[str, Any]], python: str | None = None,
          limit: float = FILE_LIMIT) -> list[dict[str, Any]]:
    """Run ``tool`` on every job (``{"path": ..., "page": 1-based or None}``) in a subprocess
    of ``python`` (the tool's venv), at most ``limit`` seconds per file.

    Returns one dict per job: ``text`` (mode ``text``) or ``tables`` (mode ``tables``),
    ``seconds``, ``error`` (None when it worked). A hung runner is killed and restarted past
    the file it hung on; one that dies before its ``ready`` line fails every remaining job.
    """
    if python is None:
        from bench.peers import peer_python

        python = str(peer_python(VENV.get(tool, tool)))
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    start = 0
    with tempfile.TemporaryDirectory(prefix="pdf-peers-") as tmp:
        while start < len(jobs):
            manifest = Path(tmp) / "manifest.json"
            manifest.write_text(json.dumps(jobs[start:]))
            done, reason = _run_once(python, tool, mode, manifest, limit)
            for i, res in done.items():
                results[start + i] = res
            nxt = start + len(done)
            if reason is None or nxt >= len(jobs):
                start = nxt
                continue
            if reason.startswith("start:"):  # cannot even start: every file left fails
                for i in range(nxt, len(jobs)):
                    results[i] = {"error": reason[6:], "seconds": 0.0}
                break
            results[nxt] = {"error": reason, "seconds": limit if "timed out" in reason else 0.0}
            start = nxt + 1
    return [r or {"error": "no result", "seconds": 0.0} for r in results]


def _run_once(python: str, tool: str, mode: str, manifest: Path, limit: float
              ) -> tuple[dict[int, dict[str, Any]], str | None]:
    """One runner process: its results by index, and why it stopped early (None: it did not)."""
    out: dict[int, dict[str, Any]] = {}
    try:
        # -I: bench/ must not shadow the peers' imports (nor .venv's packages leak in)
        proc = subprocess.Popen([python, "-I", str(Path(__file__).resolve()), tool, mode,
                                 str(manifest)], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError as exc:
        return out, f"start:cannot start {python}: {exc}"
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    ready = False
    deadline = time.monotonic() + START_LIMIT
    reason: str | None = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                reason = (f"timed out after {limit:g} s" if ready
                          else f"start:runner not ready after {START_LIMIT:.0f} s")
                break
            chunk = os.read(proc.stdout.fileno(), 1 << 20)
            if not chunk:  # the runner ended
                rc = proc.wait()
                if rc != 0 or not ready:
                    reason = (f"runner died (exit {rc})" if ready
                              else f"start:runner exited {rc} before it was ready")
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if msg.get("ready"):
                    ready = True
                else:
                    out[int(msg.pop("i"))] = msg
                deadline = time.monotonic() + limit
    finally:
        sel.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    return out, reason


# ------------------------------------------------------------------ scoring (bench side)
def score_text(text: str | None, ref: list[str], markdown: bool = True) -> dict[str, float]:
    """Reading-order similarity, words ratio and word recall of one output against the words
    of ``pdftotext``; a failed output (None) scores 0."""
    from bench import pdf_scoring

    if text is None:
        return {"order": 0.0, "ratio": 0.0, "recall": 0.0}
    got = pdf_scoring.words(text, markdown=markdown)
    return {"order": pdf_scoring.order_similarity(got, ref),
            "ratio": len(got) / max(len(ref), 1), "recall": pdf_scoring.recall(got, ref)}


def score_tables(found: list[list[list[str]]] | None,
                 expected: list[list[list[str]]]) -> dict[str, float]:
    """Cell F1 and structure similarity of the tables found (None: the tool failed: 0)."""
    from bench import pdf_scoring

    if found is None:
        return {"f1": 0.0, "structure": 0.0, "tables": 0, "one_col": 0}
    found = [[[c or "" for c in r] for r in t] for t in found if t]
    return {"f1": pdf_scoring.cell_f1(found, expected),
            "structure": pdf_scoring.structure(found, expected),
            "tables": len(found),
            "one_col": sum(1 for t in found if max(len(r) for r in t) == 1)}


def _ratio(secs: list[float], base: list[float]) -> str:
    if not secs or not base or statistics.median(base) <= 0:
        return "-"
    return f"{statistics.median(secs) / statistics.median(base):.2f}x"


def _service_tables(path: Path, page: int | None) -> tuple[list[list[list[str]]], float]:
    from bench import pdf_scoring

    read = getattr(pdf_scoring.tables_of, "__wrapped__", pdf_scoring.tables_of)  # timed: uncached
    t0 = time.perf_counter()
    found = read(path, page)
    return found, time.perf_counter() - t0


# ------------------------------------------------------------------ the two comparisons
def run_order(quick: bool = False) -> None:
    """Reading order, words ratio and recall of the service and the text peers over
    ``realworld/`` (every 6th PDF with ``quick``, the six multi-column PDFs always)."""
    from bench import pdf_scoring
    from bench.common import table

    realworld: Path = pdf_scoring.REALWORLD
    if not realworld.is_dir():
        print(f"\npdf-layout peers: {realworld} missing, skipped")
        return
    paths = sorted(realworld.glob("*.pdf"))
    if quick:
        paths = sorted(set(paths[::6]) | {realworld / n for n in pdf_scoring.COLUMNS
                                          if (realworld / n).is_file()})
    refs = {p: pdf_scoring.reference_words(p) for p in paths}
    paths = [p for p in paths if refs[p]]
    if not paths:
        print("\npdf-layout peers: no pdftotext reference (poppler-utils missing?), skipped")
        return
    status = _ensure(TEXT_PEERS)
    tools = [SERVICE, *TEXT_PEERS]
    scores: dict[str, dict[Path, dict[str, float]]] = {t: {} for t in tools}
    secs: dict[str, list[float]] = {t: [] for t in tools}
    fails: dict[str, int] = dict.fromkeys(tools, 0)
    for p in paths:
        text, s, err = pdf_scoring.markdown_of(p)
        scores[SERVICE][p] = score_text(None if err else text, refs[p] or [])
        secs[SERVICE].append(s)
        fails[SERVICE] += bool(err)
    for tool in TEXT_PEERS:
        if status[tool] != "ok":
            continue
        res = drive(tool, "text", [{"path": str(p), "page": None} for p in paths])
        for p, r in zip(paths, res, strict=True):
            scores[tool][p] = score_text(None if r["error"] else r["text"], refs[p] or [],
                                         markdown=tool != "pdfplumber")
            secs[tool].append(r["seconds"])
            fails[tool] += bool(r["error"])
    live = [t for t in tools if scores[t]]
    rows: list[list[object]] = []
    for name in pdf_scoring.COLUMNS:
        p = realworld / name
        if p in scores[SERVICE]:
            rows.append([name, *(f"{scores[t][p]['order']:.2f} ({scores[t][p]['ratio']:.1f}x)"
                                 for t in live)])
    rows.append([f"**mean order, {len(paths)} PDFs**",
                 *(f"{statistics.mean(v['order'] for v in scores[t].values()):.3f}"
                   for t in live)])
    rows.append(["**median order**",
                 *(f"{statistics.median(v['order'] for v in scores[t].values()):.3f}"
                   for t in live)])
    total = sum(len(refs[p] or []) for p in paths)  # recall of all words, as run_realworld
    hits = {t: sum(v["recall"] * len(refs[p] or []) for p, v in scores[t].items())
            for t in live}
    rows.append(["**word recall**", *(f"{hits[t] / total:.3f}" for t in live)])
    rows.append(["**PDFs over 1.2x the words**",
                 *(str(sum(v["ratio"] > 1.2 for v in scores[t].values())) for t in live)])
    rows.append(["**failed (error, time-out)**", *(str(fails[t]) for t in live)])
    rows.append(["**median time vs service**", *(_ratio(secs[t], secs[SERVICE]) for t in live)])
    off = [f"{t}: {status[t]}" for t in TEXT_PEERS if status[t] != "ok"]
    table("Reading order vs pdftotext, service and peers (similarity (words ratio); "
          f"{_versions(TEXT_PEERS)}){'; unavailable: ' + '; '.join(off) if off else ''}",
          ["file", *live], rows)


def run_tables(quick: bool = False) -> None:
    """Cell F1 and structure similarity of the service and the table peers on
    ``tables-camelot``, per group (all 17 small files, ``quick`` or not)."""
    del quick
    from bench import pdf_scoring
    from bench.common import table

    exp_path = pdf_scoring.CAMELOT / "expected.json"
    if not exp_path.is_file():
        print(f"\npdf-layout peers: {exp_path} missing, skipped")
        return
    expected: dict[str, list[list[list[str]]]] = {}
    groups: dict[str, str] = {}
    pages: dict[str, int] = {}
    for entry in json.loads(exp_path.read_text()):
        expected.setdefault(entry["file"], []).append(entry["rows"])
        pages[entry["file"]] = int(entry.get("page", 1))  # camelot's tests read one page
        groups[entry["file"]] = "ruled" if entry["group"] == "lattice" else "borderless"
    names = sorted(expected)
    status = _ensure(TABLE_PEERS)
    tools = [SERVICE, *(t for t in TABLE_PEERS if status[t] == "ok")]
    got: dict[str, dict[str, dict[str, float]]] = {t: {} for t in tools}
    secs: dict[str, list[float]] = {t: [] for t in tools}
    fails: dict[str, int] = dict.fromkeys(tools, 0)
    for n in names:
        found, s = _service_tables(pdf_scoring.CAMELOT / n, pages[n])
        got[SERVICE][n] = score_tables(found, expected[n])
        secs[SERVICE].append(s)
    for tool in tools[1:]:
        res = drive(tool, "tables", [{"path": str(pdf_scoring.CAMELOT / n), "page": pages[n]}
                                     for n in names])
        for n, r in zip(names, res, strict=True):
            got[tool][n] = score_tables(None if r["error"] else r["tables"], expected[n])
            secs[tool].append(r["seconds"])
            fails[tool] += bool(r["error"])
    rows: list[list[object]] = []
    for g in ("ruled", "borderless"):
        members = [n for n in names if groups[n] == g]
        for t in tools:
            vals = [got[t][n] for n in members]
            rows.append([g, t, len(members),
                         f"{statistics.mean(v['f1'] for v in vals):.3f} / "
                         f"{statistics.mean(v['structure'] for v in vals):.3f}",
                         sum(v["tables"] == 0 for v in vals), sum(v["one_col"] for v in vals),
                         fails[t] if t != SERVICE else "-",
                         _ratio([secs[t][names.index(n)] for n in members],
                                [secs[SERVICE][names.index(n)] for n in members])])
    off = [f"{t}: {status[t]}" for t in TABLE_PEERS if status[t] != "ok"]
    table("Tables (tables-camelot) per group, service and find_tables peers: cell F1 / "
          f"structure ({_versions(TABLE_PEERS)}; the page camelot's tests read)"
          f"{'; unavailable: ' + '; '.join(off) if off else ''}",
          ["group", "tool", "files", "cell F1 / structure", "no table", "1-column tables",
           "failed", "median time vs service"], rows)


def _ensure(tools: tuple[str, ...]) -> dict[str, str]:
    """Install the peers' venvs (pinned, reused when present): tool -> "ok" or why not."""
    from bench import peers

    return {t: peers._install(VENV.get(t, t)) for t in tools}


def _versions(tools: tuple[str, ...]) -> str:
    from bench import peers

    pins = {"pymupdf4llm": peers.PYMUPDF4LLM_VERSION, "markitdown": peers.MARKITDOWN_VERSION,
            "pdfplumber": peers.PDFPLUMBER_VERSION, "pymupdf": peers.PYMUPDF_VERSION}
    return ", ".join(f"{t} {pins[t]}" for t in tools if t in pins)


def run(quick: bool = False) -> None:
    """Both comparisons (``just bench pdf-layout`` runs them after its own tables)."""
    run_order(quick)
    run_tables(quick)


# ------------------------------------------------------------------ inside the peer venv
def _reader(tool: str, mode: str) -> Any:
    """``path, page -> text or tables`` of one peer (imported in its own venv only)."""
    if mode == "text" and tool == "pymupdf4llm":
        import pymupdf4llm  # type: ignore[import-not-found]  # only in the peer venv

        pymupdf4llm.use_layout(True)
        return lambda path, page: pymupdf4llm.to_markdown(path)
    if mode == "text" and tool == "markitdown":
        from markitdown import MarkItDown  # type: ignore[import-not-found]  # peer venv only

        engine = MarkItDown()
        return lambda path, page: engine.convert(path).text_content
    if tool in ("pdfplumber", "pdfplumber-text"):
        import pdfplumber  # type: ignore[import-not-found]  # only in the peer venv

        settings = ({"vertical_strategy": "text", "horizontal_strategy": "text"}
                    if tool == "pdfplumber-text" else None)

        def plumb(path: str, page: int | None) -> Any:
            with pdfplumber.open(path) as pdf:
                pages = pdf.pages if page is None else [pdf.pages[page - 1]]
                if mode == "text":
                    return "\n".join(p.extract_text() or "" for p in pages)
                return [t for p in pages for t in p.extract_tables(settings)]
        return plumb
    if mode == "tables" and tool in ("pymupdf", "pymupdf-text"):
        import pymupdf  # type: ignore[import-not-found]  # only in the peer venv

        strategy = "text" if tool == "pymupdf-text" else "lines"

        def mu(path: str, page: int | None) -> Any:
            with pymupdf.open(path) as doc:
                pages = list(doc) if page is None else [doc[page - 1]]
                return [t.extract() for p in pages for t in p.find_tables(strategy=strategy).tables]
        return mu
    raise SystemExit(f"unknown tool/mode {tool!r} {mode!r}")


def _main(tool: str, mode: str, manifest: str) -> int:
    proto = os.fdopen(os.dup(1), "w")  # the protocol's channel; peers print to stdout
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    jobs = json.loads(Path(manifest).read_text())
    read = _reader(tool, mode)
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for i, job in enumerate(jobs):
        t0 = time.perf_counter()
        try:
            value, error = read(job["path"], job.get("page")), None
        except Exception as exc:  # a peer's failure is a data point
            value, error = None, f"{type(exc).__name__}: {exc}"[:300]
        msg = {"i": i, "seconds": time.perf_counter() - t0, "error": error,
               mode: value}
        proto.write(json.dumps(msg, default=str) + "\n")
        proto.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:4]))
