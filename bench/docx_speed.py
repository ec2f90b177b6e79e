"""DOCX reader speed on ordinary reports (issue 34, item 1): ``python -m bench docx-speed``.

Twelve reports are written at run time by pandoc from generated Markdown (headings, 100-150
paragraphs with emphasis, links and code, lists, tables, footnotes, small images): the kind of
12-24 KB document the issue measured. Nothing binary is committed; the same seed gives the
same documents. Measured in one run, on those documents:

- in process: ``convert_document(data, "markdown")`` per report against a bare lxml parse of
  the same XML parts (unzip and ``etree.fromstring`` of every ``.xml``/``.rels`` part), the two
  alternated report by report so a busy moment of the shared machine hits both alike, CPU
  time, with a pool worker's collector thresholds (goal: within 3x);
- through HTTP, one client: ``POST /api/convert`` on the real service against pandoc
  (``-f docx -t gfm``, one process per document, as :mod:`bench.peers` runs it) (goal: >= 6x).

Without pandoc the reports cannot be made and the section says so.
"""

from __future__ import annotations

import gc
import io
import os
import random
import shutil
import statistics
import struct
import subprocess
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

from bench import summary
from bench.common import machine, table
from bench.convert_common import Doc, fmt, time_http
from bench.peers import run_peer

REPORTS = 12
GOAL_LXML = 3.0
GOAL_PANDOC = 6.0
_WORDS = ("report quarter revenue margin growth customer region product service team budget "
          "forecast risk plan delivery schedule review audit policy contract supplier cost "
          "project milestone result analysis measure target market share pricing volume "
          "increase decrease stable annual monthly weekly board member committee approval").split()


def _png(seed: int, size: int = 24) -> bytes:
    """A small deterministic RGB PNG (a colour gradient), written without an image library."""
    rows = b"".join(
        b"\x00" + bytes((x * 9 + seed * 40) % 256 if c == 0 else (y * 9 + c * 70) % 256
                        for x in range(size) for c in range(3))
        for y in range(size))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def _sentence(rng: random.Random, notes: list[str]) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 12))]
    roll = rng.random()
    i = rng.randrange(len(words))
    if roll < 0.15:
        words[i] = f"**{words[i]}**"
    elif roll < 0.3:
        words[i] = f"*{words[i]}*"
    elif roll < 0.38:
        words[i] = f"`{words[i]}_{rng.randint(1, 99)}()`"
    elif roll < 0.46:
        words[i] = f"[{words[i]}](https://example.com/{words[i]}?id={rng.randint(1, 999)})"
    elif roll < 0.52:
        notes.append(f"Source: {' '.join(rng.choice(_WORDS) for _ in range(8))}.")
        words[i] += f"[^{len(notes)}]"
    text = " ".join(words)
    if rng.random() < 0.1:
        text += f" ({rng.randint(1, 100)}% & <{rng.choice(_WORDS)}>, #{rng.randint(1, 9)})"
    return text[0].upper() + text[1:] + "."


def report_markdown(seed: int) -> str:
    """Markdown of one report: 100-150 paragraphs in sections, with tables, lists,
    footnotes and two images (``figure1.png``, ``figure2.png``)."""
    rng = random.Random(seed)
    notes: list[str] = []
    out = [f"# Report {seed}: {rng.choice(_WORDS)} and {rng.choice(_WORDS)}", ""]
    paragraphs = rng.randint(100, 150)
    written = 0
    section = 0
    while written < paragraphs:
        section += 1
        out += [f"## {section}. {rng.choice(_WORDS).title()} {rng.choice(_WORDS)}", ""]
        for _ in range(rng.randint(5, 12)):
            kind = rng.random()
            if kind < 0.08:
                out += [f"- {_sentence(rng, notes)}" for _ in range(rng.randint(2, 4))] + [""]
            elif kind < 0.12:
                out += [f"{n}. {_sentence(rng, notes)}" for n in range(1, rng.randint(3, 5))]
                out.append("")
            elif kind < 0.15:
                out += [f"### {rng.choice(_WORDS).title()} {rng.choice(_WORDS)}", ""]
            else:
                out += [" ".join(_sentence(rng, notes) for _ in range(rng.randint(1, 3))), ""]
            written += 1
        if section % 3 == 1:
            cols = rng.randint(3, 5)
            out.append("| " + " | ".join(rng.choice(_WORDS).title() for _ in range(cols)) + " |")
            out.append("|" + "---|" * cols)
            for _ in range(rng.randint(3, 7)):
                out.append("| " + " | ".join(
                    str(rng.randint(1, 9999)) if c else rng.choice(_WORDS) for c in range(cols))
                    + " |")
            out.append("")
        if section in (2, 5):
            n = 1 if section == 2 else 2
            out += [f"![Figure {n}: {rng.choice(_WORDS)}](figure{n}.png)", ""]
    out += [f"[^{n}]: {text}" for n, text in enumerate(notes, 1)]
    return "\n".join(out) + "\n"


def make_reports(folder: Path) -> list[Path]:
    """Write the twelve reports with pandoc into ``folder``; [] without pandoc."""
    if shutil.which("pandoc") is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "figure1.png").write_bytes(_png(1))
    (folder / "figure2.png").write_bytes(_png(2))
    paths = []
    for seed in range(1, REPORTS + 1):
        path = folder / f"report{seed:02d}.docx"
        subprocess.run(["pandoc", "-f", "markdown", "-t", "docx", "-o", str(path)],
                       input=report_markdown(seed).encode(), cwd=folder, check=True,
                       capture_output=True)
        paths.append(path)
    return paths


def bare_parse(data: bytes) -> None:
    """What the issue compares with: unzip and parse every XML part with lxml, nothing else."""
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for name in package.namelist():
            if name.endswith((".xml", ".rels")):
                etree.fromstring(package.read(name))


def in_process(datas: list[bytes], passes: int) -> tuple[list[float], list[float]]:
    """Per report, the median CPU seconds of the conversion and of the bare parse,
    alternated (CPU time of this process: the machine is shared, and waiting for a core
    is no part of either), with a pool worker's collector: its thresholds, and what was
    left after the warm-up pass set aside (``gc.freeze``), as a worker does after its
    first job."""
    from render_pool.runtime.pool import WORKER_GC_THRESHOLDS

    before = gc.get_threshold()
    gc.set_threshold(*WORKER_GC_THRESHOLDS)
    try:
        return _alternated(datas, passes)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def _alternated(datas: list[bytes], passes: int) -> tuple[list[float], list[float]]:
    from render_pool.engine.jobs import convert_document

    convert: list[list[float]] = [[] for _ in datas]
    parse: list[list[float]] = [[] for _ in datas]
    for n in range(passes + 1):  # pass 0 warms imports and caches
        for i, data in enumerate(datas):
            t0 = time.process_time()
            convert_document(data, "markdown")
            t1 = time.process_time()
            bare_parse(data)
            t2 = time.process_time()
            if n:
                convert[i].append(t1 - t0)
                parse[i].append(t2 - t1)
        if n == 0:  # warm: what a worker keeps from its first job is set aside
            gc.collect()
            gc.freeze()
    return [statistics.median(t) for t in convert], [statistics.median(t) for t in parse]


def run(quick: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="docx-speed-") as tmp:
        paths = make_reports(Path(tmp) / "reports")
        if not paths:
            print("\n## DOCX reader speed (issue 34)\n\npandoc is not on PATH: no reports made.")
            return
        datas = [p.read_bytes() for p in paths]
        convert, parse = in_process(datas, 5 if quick else 20)
        rows: list[list[object]] = []
        for path, data, c, p in zip(paths, datas, convert, parse, strict=True):
            rows.append([path.name, f"{len(data) / 1024:.1f}", fmt(c * 1000), fmt(p * 1000),
                         fmt(c / p)])
        total_c, total_p = sum(convert), sum(parse)
        rows.append(["all (mean)", f"{sum(map(len, datas)) / len(datas) / 1024:.1f}",
                     fmt(total_c / len(datas) * 1000), fmt(total_p / len(datas) * 1000),
                     fmt(total_c / total_p)])
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        table(f"DOCX -> Markdown in process against a bare lxml parse of the same parts, "
              f"median CPU ms ({machine()}, load average {load})",
              ["report", "KB", "convert ms", "lxml parse ms", "ratio"], rows)
        summary.record("1", "DOCX reports in process / bare lxml parse", total_c / total_p,
                       GOAL_LXML, "lxml parse of the same parts")
        passes = 1 if quick else 3
        docs = [Doc(p, "reports", data=d) for p, d in zip(paths, datas, strict=True)]
        http, error = time_http(docs, passes, Path(tmp))
        peer = run_peer("pandoc", paths, passes, Path(tmp))
        one = next((r for r in http if r.clients == 1), None)
        ours = len(one.latencies) / one.seconds if one and one.seconds else float("nan")
        times = [t for entry in peer.get("docs", {}).values() for t in entry.get("seconds", [])]
        theirs = len(times) / sum(times) if times else float("nan")
        table("DOCX -> Markdown through HTTP, one client, against pandoc (documents/s)",
              ["tool", "docs/s", "ratio"],
              [["service POST /api/convert" + (f" ({error})" if error else ""), fmt(ours),
                fmt(ours / theirs)],
               ["pandoc -f docx -t gfm" + (f" ({peer['error']})" if "error" in peer else ""),
                fmt(theirs), "1.00"]])
        summary.record("1", "DOCX reports over HTTP / pandoc", ours / theirs, GOAL_PANDOC,
                       "pandoc, same reports", higher_is_better=True)
