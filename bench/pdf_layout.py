"""PDF layout benchmark (``just bench pdf-layout``): how our PDF reader reads documents
written by others, from the corpora in ``../shared/corpus/`` (skipped when absent).

* Reading order on six multi-column PDFs: normalised indel similarity of our Markdown's word
  sequence against ``pdftotext``'s (poppler reads these columns correctly, with the one
  misreading listed in ``REFERENCE_FIXES`` put right; both figures are printed), and the ratio
  of our words to its words (repeated cells or glyph codes push it above 1).
* Tables without and with rules (``tables-camelot``): cell F1 of the non-empty cells of every
  table we find against the cells camelot's own tests assert, per group (ruled/borderless),
  and how many one-column tables we produce.
* Word recall of our Markdown against ``pdftotext`` over every PDF of ``realworld/``, with
  the median seconds per PDF.

Then the same scores of the peers (pymupdf4llm, markitdown, pdfplumber, PyMuPDF's
``find_tables``) beside the service's, on the same files: ``bench/pdf_peers.py``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter

from bench.common import table
from bench.pdf_scoring import (
    CAMELOT,
    COLUMNS,
    CORPUS,
    REALWORLD,
    REFERENCE_FIXES,
    cell_f1,
    markdown_of,
    order_similarity,
    pdftotext_words,
    reference_words,
    structure,
    tables_of,
    words,
)


def run_columns() -> None:
    rows: list[list[object]] = []
    for name in COLUMNS:
        path = REALWORLD / name
        raw = pdftotext_words(path) if path.is_file() else None
        ref = reference_words(path) if path.is_file() else None
        if ref is None or raw is None:
            rows.append([name, "-", "-", "-", "-"])
            continue
        text, secs, err = markdown_of(path)
        ours = words(text)
        rows.append([name, f"{order_similarity(ours, ref):.3f}",
                     f"{order_similarity(ours, raw):.3f}" if name in REFERENCE_FIXES else "same",
                     f"{len(ours) / max(len(ref), 1):.2f}",
                     f"{secs:.2f} {err}".strip()])
    table("Reading order on multi-column PDFs (vs pdftotext, its misreadings put right as "
          "REFERENCE_FIXES lists; target >= 0.90, words <= 1.2x)",
          ["file", "similarity", "vs pdftotext as is", "words ratio", "seconds"], rows)


def run_camelot() -> None:
    exp_path = CAMELOT / "expected.json"
    if not exp_path.is_file():
        print(f"\ntables-camelot: {exp_path} missing, skipped")
        return
    expected: dict[str, list] = {}
    groups: dict[str, str] = {}
    pages: dict[str, int] = {}
    for entry in json.loads(exp_path.read_text()):
        expected.setdefault(entry["file"], []).append(entry["rows"])
        pages[entry["file"]] = int(entry.get("page", 1))
        groups[entry["file"]] = "ruled" if entry["group"] == "lattice" else "borderless"
    rows: list[list[object]] = []
    per_group: dict[str, list[tuple[float, float, float]]] = {}
    for name, exp in sorted(expected.items()):
        t0 = time.perf_counter()
        found = tables_of(CAMELOT / name, pages[name])
        secs = time.perf_counter() - t0
        f1, struct = cell_f1(found, exp), structure(found, exp)
        per_group.setdefault(groups[name], []).append((f1, struct, secs))
        one_col = sum(1 for t in found if t and max(len(r) for r in t) == 1)
        rows.append([name, groups[name], len(found), one_col, f"{f1:.3f}", f"{struct:.3f}",
                     f"{secs:.2f}"])
    for g, vals in sorted(per_group.items()):
        rows.append([f"**mean {g}**", g, "", "", f"{statistics.mean(v[0] for v in vals):.3f}",
                     f"{statistics.mean(v[1] for v in vals):.3f}",
                     f"{statistics.median(v[2] for v in vals):.2f}"])
    table("Tables (tables-camelot): cell F1 and row-major structure similarity against "
          "camelot's expected cells (target >= 0.90 / >= 0.85 per group, no 1-column tables)",
          ["file", "group", "tables", "1-column", "cell F1", "structure", "seconds"], rows)


def run_realworld(quick: bool) -> None:
    if not REALWORLD.is_dir():
        print(f"\nrealworld: {REALWORLD} missing, skipped")
        return
    paths = sorted(REALWORLD.glob("*.pdf"))
    if quick:
        paths = paths[::6]
    hit = total = 0
    secs: list[float] = []
    errors = 0
    for p in paths:
        ref = pdftotext_words(p)
        if not ref:
            continue
        text, s, err = markdown_of(p)
        errors += bool(err)
        secs.append(s)
        got = Counter(words(text))
        total += len(ref)
        hit += sum(min(n, got[w]) for w, n in Counter(ref).items())
    table("Word recall over realworld/ PDFs (vs pdftotext)",
          ["PDFs", "word recall", "errors", "median s/PDF"],
          [[len(secs), f"{hit / max(total, 1):.3f}", errors,
            f"{statistics.median(secs):.3f}" if secs else "-"]])


def run(quick: bool = False) -> None:
    """Print the three tables; each part is skipped when its corpus is absent."""
    if not CORPUS.is_dir():
        print(f"\npdf-layout: corpus {CORPUS} missing, skipped")
        return
    run_columns()
    run_camelot()
    run_realworld(quick)
    from bench import pdf_peers

    pdf_peers.run(quick)
