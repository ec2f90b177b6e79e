"""``just bench scale``: what reading costs against the size of the document (issue 34,
item 5). Each reader (DOCX, PPTX, XLSX, PDF, HTML, EPUB, CSV, Markdown) reads 1x, 4x and
16x versions of the same document (``bench.scale_inputs``: concatenated bodies, repeated
slides, more rows, more pages, more chapters); a 16x step costing more than 20x the time or
the memory of the 1x step is super-linear, a bug to fix.

Each read runs in a fresh subprocess (``registry.read``, as a pool job calls it, with a pool
worker's collector thresholds), after one read of the 1x input there (imports and caches
warm): its CPU time (the least of
``repeats`` reads; CPU rather than wall time, as the machine is shared), the peak of the
Python heap during the first read (tracemalloc, in a read of its own) and the peak resident
size during it over the size before it (the kernel's high-water mark, reset just before the
read through ``/proc/self/clear_refs``; it counts lxml's and pdfium's C memory too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench import summary
from bench.common import machine, table
from bench.scale_inputs import GENERATORS

ROOT = Path(__file__).resolve().parents[1]
FACTORS = (1, 4, 16)
LIMIT = 20.0  # a 16x step may cost at most this many times the 1x step


# ---------------------------------------------------------------- in the child process
def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    """Reset this process's resident high-water mark (Linux 4.0+); False when it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def measure(path: str, warm_path: str, kind: str | None, repeats: int) -> dict[str, Any]:
    """The figures of reading ``path`` (see the module docstring)."""
    import gc

    from render_pool.engine import registry
    from render_pool.runtime.pool import tune_collector

    tune_collector()  # as in a pool worker
    registry.read(Path(warm_path).read_bytes(), kind=kind)
    data = Path(path).read_bytes()
    gc.collect()
    rss_before = _status_kb("VmRSS")
    reset = _reset_peak()
    t0 = time.process_time()
    doc = registry.read(data, kind=kind)
    cpu = [time.process_time() - t0]
    peak_rss = _status_kb("VmHWM") - rss_before if reset else -1
    blocks = len(doc.blocks)
    del doc
    for _ in range(repeats - 1):
        gc.collect()
        t0 = time.process_time()
        registry.read(data, kind=kind)
        cpu.append(time.process_time() - t0)
    gc.collect()
    tracemalloc.start()
    registry.read(data, kind=kind)
    _, heap_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"cpu_s": min(cpu), "heap_peak_kb": heap_peak / 1024,
            "rss_peak_kb": peak_rss, "blocks": blocks}


# ---------------------------------------------------------------- in the bench process
def _child(path: Path, warm: Path, kind: str | None, repeats: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.scale", str(path), str(warm), kind or "", str(repeats)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"reading {path.name} failed: {out.stderr[-1500:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _ratio(values: list[float]) -> tuple[float, float, float]:
    one, four, sixteen = values
    return four / one, sixteen / one, sixteen / four


def run(quick: bool = False) -> None:
    repeats = 1 if quick else 3
    rows, flagged = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for reader, (generate, kind) in GENERATORS.items():
            paths = {}
            for factor in FACTORS:
                paths[factor] = Path(tmp) / f"{reader}-{factor}x.bin"
                paths[factor].write_bytes(generate(factor))
            try:
                got = {f: _child(paths[f], paths[1], kind, repeats) for f in FACTORS}
            except RuntimeError as exc:  # one reader failing leaves the others measured
                last = str(exc).strip().splitlines()[-1][:120]
                rows.append([reader, *["-"] * 10, f"failed: {last}"])
                flagged.append(f"{reader}: failed")
                continue
            sizes = [paths[f].stat().st_size / 1024 for f in FACTORS]
            cpu = [got[f]["cpu_s"] * 1000 for f in FACTORS]
            heap = [got[f]["heap_peak_kb"] / 1024 for f in FACTORS]
            rss = [max(got[f]["rss_peak_kb"], 0) / 1024 for f in FACTORS]
            t4, t16, t16_4 = _ratio(cpu)
            _, m16, _ = _ratio(heap)
            r16 = f"{rss[2] / rss[0]:.1f}" if rss[0] >= 1 else "-"  # below 1 MB: noise
            bad = [what for what, ratio in (("time", t16), ("memory", m16)) if ratio > LIMIT]
            if bad:
                flagged.append(f"{reader}: {' and '.join(bad)}")
            rows.append([reader, " / ".join(f"{s:.0f}" for s in sizes),
                         " / ".join(str(got[f]["blocks"]) for f in FACTORS),
                         " / ".join(f"{c:.0f}" for c in cpu), f"{t4:.1f}", f"{t16:.1f}",
                         f"{t16_4:.1f}", " / ".join(f"{h:.1f}" for h in heap), f"{m16:.1f}",
                         " / ".join(f"{r:.0f}" for r in rss), r16,
                         "SUPER-LINEAR" if bad else "ok"])
            summary.record("5", f"{reader} reader, 16x/1x CPU time", t16, LIMIT, "its 1x input")
            summary.record("5", f"{reader} reader, 16x/1x peak heap", m16, LIMIT,
                           "its 1x input")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    table(f"Cost against size: each reader on 1x, 4x and 16x of one document, each read in a "
          f"fresh process ({machine()}, load average {load}; CPU time least of {repeats}); "
          f"linear: 4x/1x <= 4, 16x/1x <= 16, 16x/4x <= 4; super-linear: 16x/1x > {LIMIT:g}",
          ["reader", "input KB", "blocks", "CPU ms", "4x/1x", "16x/1x", "16x/4x",
           "heap peak MB", "16x/1x", "RSS peak growth MB", "16x/1x", "verdict"], rows)
    print("\nsuper-linear: " + ("; ".join(flagged) if flagged else "none"))


if __name__ == "__main__":
    given_path, given_warm, given_kind, given_repeats = sys.argv[1:5]
    print(json.dumps(measure(given_path, given_warm, given_kind or None, int(given_repeats))))
