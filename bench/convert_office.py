"""Office formats benchmark: our readers against markitdown and pandoc, per format, in one run.

Documents: the office set of ``tests/office_fixtures.py``, made from structured Markdown
sources (pandoc writes PPTX, DOCX, EPUB and HTML; openpyxl the XLSX; LibreOffice, when
installed, turns the DOCX into ODT/DOC/RTF, the PPTX into ODP and the XLSX into ODS). Each
file is scored against the Markdown it was made from (:data:`bench.fidelity.CATEGORIES`);
the macro-F1 is the mean over the categories the source has. A tool that does not read a
format has no row for it (pandoc reads no PPTX/XLSX/ODP/ODS/DOC; markitdown no ODF/RTF).

Throughput: documents/s in-process for ours (LibreOffice formats include LibreOffice's own
start, one per document, as in the service) and inside each peer's own process.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench.common import table
from bench.convert_common import fmt
from bench.fidelity import CATEGORIES, Score, elements
from bench.peers import peer_version, run_peer

# tool -> formats it reads (by file extension)
PEER_FORMATS = {"pandoc": ("docx", "epub", "html", "odt", "rtf", "csv"),
                "markitdown": ("docx", "pptx", "xlsx", "csv", "html", "epub")}


def _ours(paths: dict[str, Path], passes: int) -> dict[str, dict]:
    from render_pool.engine.jobs import convert_document

    result: dict[str, dict] = {k: {"seconds": [], "markdown": None, "error": None}
                               for k in paths}
    for n in range(-1, passes):  # pass -1: warm-up, not timed
        for kind, path in paths.items():
            data = path.read_bytes()
            t0 = time.perf_counter()
            try:
                text = convert_document(data, "markdown").content
            except Exception as exc:  # an error is a data point
                result[kind]["error"] = f"{type(exc).__name__}: {exc}"[:200]
                continue
            if n >= 0:
                result[kind]["seconds"].append(time.perf_counter() - t0)
            if n == 0:
                result[kind]["markdown"] = text
    return result


def _macro_f1(produced: str | None, expected: str) -> float | None:
    if produced is None:
        return None
    s = Score()
    s.add_elements(elements(produced), elements(expected))
    f1s = [s.tallies[c].f1 for c in CATEGORIES if s.tallies[c].f1 is not None]
    return statistics.fmean(f1s) if f1s else None


def run(passes: int, status: dict[str, str], tmp: Path) -> None:
    """Build the office set in ``tmp``, measure ours and the peers, print one table."""
    from tests.office_fixtures import build_office_set, has_libreoffice

    made = build_office_set(tmp / "office-set", has_libreoffice())
    files: dict[str, Path] = {}
    for kind, (data, _) in made.items():
        path = tmp / "office-set" / f"bench.{kind}"
        path.write_bytes(data)
        files[kind] = path
    results = {"ours": _ours(files, passes)}
    for tool, kinds in PEER_FORMATS.items():
        if status.get(tool) != "ok":
            print(f"\n{tool}: not measured ({status.get(tool)})")
            continue
        mine = {k: files[k] for k in kinds if k in files}
        got = run_peer(tool, list(mine.values()), passes, tmp)
        docs = got.get("docs", {})
        results[tool] = {k: docs.get(str(p), {"seconds": [], "markdown": None,
                                              "error": got.get("error")})
                         for k, p in mine.items()}
    rows = []
    for kind in files:
        expected = made[kind][1]
        base = results["ours"][kind]
        base_rate = (len(base["seconds"]) / sum(base["seconds"])) if base["seconds"] else None
        for tool, per_kind in results.items():
            entry = per_kind.get(kind)
            if entry is None:
                continue
            secs = entry["seconds"]
            rate = len(secs) / sum(secs) if secs and not entry.get("error") else None
            ratio = rate / base_rate if rate and base_rate else None
            f1 = None if entry.get("error") else _macro_f1(entry["markdown"], expected)
            rows.append([kind, tool if tool != "ours" else "word2markdown", fmt(rate, 1),
                         fmt(ratio), fmt(f1), (entry.get("error") or "")[:60]])
    versions = ", ".join(f"{t} {peer_version(t)}" for t in PEER_FORMATS if t in results)
    table(f"Office formats: structure macro-F1 against the Markdown source and documents/s "
          f"in-process, {passes} pass(es) ({versions})",
          ["format", "tool", "docs/s", "docs/s ratio to ours", "macro-F1", "error"], rows)
