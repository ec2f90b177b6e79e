"""Reading time of the PDF reader now against an earlier commit, in one run
(``python -m bench.pdf_speed_since COMMIT``; needs ``../shared/corpus/realworld/``).

The earlier tree is checked out in a temporary git worktree; both trees read every
``realworld/`` PDF to Markdown in-process (OCR off: the older tree may have none), in
alternating rounds so that the machine's load falls on both alike. Each file's time is
the faster of its rounds; the figures are the medians and totals of the two trees and
their ratio (issue 22 asks the median to stay within 1.5x of the tree before it).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import machine, table
from bench.pdf_scoring import REALWORLD, ROOT

ROUNDS = 2
# run inside each tree's interpreter: seconds per file as JSON on stdout
_MEASURE = """
import json, sys, time
from pathlib import Path
from render_pool.engine.jobs import convert_document
try:  # typed options since issue 31; a dictionary before
    from render_pool.engine.formats import ReadRequest
    from render_pool.engine.jobs import ConvertOptions
    OCR_OFF = ConvertOptions(read=ReadRequest(ocr="off"))
except ImportError:
    OCR_OFF = {"ocr": "off"}
out = {}
for p in sorted(Path(sys.argv[1]).glob("*.pdf")):
    t0 = time.perf_counter()
    try:
        convert_document(p.read_bytes(), "markdown", options=OCR_OFF)
    except Exception:
        pass  # a refusal is timed too
    out[p.name] = time.perf_counter() - t0
print(json.dumps(out))
"""


def _seconds(tree: Path) -> dict[str, float]:
    """Seconds per realworld PDF of the reader in ``tree``."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(REALWORLD)], cwd=tree,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=3600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(commit: str) -> None:
    """Measure both trees and print the comparison."""
    if not REALWORLD.is_dir():
        print(f"\npdf speed: {REALWORLD} missing, skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old),
                        commit], check=True)
        try:
            rounds: dict[str, list[dict[str, float]]] = {"then": [], "now": []}
            for _ in range(ROUNDS):
                rounds["then"].append(_seconds(old))
                rounds["now"].append(_seconds(ROOT))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           check=False)
    best = {tree: {name: min(r[name] for r in runs) for name in runs[0]}
            for tree, runs in rounds.items()}
    names = sorted(set(best["then"]) & set(best["now"]))
    medians = {tree: statistics.median(best[tree][n] for n in names) for tree in best}
    totals = {tree: sum(best[tree][n] for n in names) for tree in best}
    table(f"PDF reading time, {len(names)} realworld PDFs, this tree against {commit} "
          f"({machine()}; {ROUNDS} alternating rounds, each file's faster)",
          ["tree", "median s/PDF", "total s", "median ratio to then"],
          [[f"then ({commit})", f"{medians['then']:.3f}", f"{totals['then']:.1f}", "1.00"],
           ["now", f"{medians['now']:.3f}", f"{totals['now']:.1f}",
            f"{medians['now'] / medians['then']:.2f}"]])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.pdf_speed_since COMMIT")
    run(sys.argv[1])
