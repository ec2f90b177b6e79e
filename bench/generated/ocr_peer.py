"""The scans' own peer in the generated bench: ``ocrmypdf`` then ``pymupdf4llm``.

pymupdf4llm and markitdown read a scan's image-only pages as nothing (no text layer), so a
fair peer for the ``scan`` writer is the usual pipeline of someone who has scans: ocrmypdf
(pinned in :mod:`bench.peers`, its own virtualenv under ``bench/.peers/``, Debian's
tesseract in English as ours, run by :func:`bench.ocr.run_ocrmypdf`, the OCR bench's runner)
adds a text layer, and pymupdf4llm (through :func:`bench.pdf_peers.drive`, as the generated
bench's other peers) turns that PDF into Markdown. Both run in the bench's own run, on the
same scans as ours; a scan either step fails on scores as empty output.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench import peers
from bench.generated.model import Source
from bench.ocr import run_ocrmypdf
from bench.pdf_peers import drive

OCR_PEER = "ocrmypdf+pymupdf4llm"
READER = "pymupdf4llm"  # reads ocrmypdf's output
NEEDS = ("ocrmypdf", READER)  # the virtualenvs this peer runs in


def install() -> str:
    """Install the pinned ocrmypdf and pymupdf4llm when missing (pip, each in its own
    virtualenv under ``bench/.peers/``; an installed one is reused): "ok" or why not."""
    for tool in NEEDS:
        status = peers._install(tool)
        if status != "ok":
            return f"{tool}: {status}"
    return "ok"


def read_scans(jobs: list[tuple[str, Source, Path]]) -> dict[tuple[str, str], str]:
    """(writer, source name) -> Markdown of pymupdf4llm on ocrmypdf's output of each scan
    ("" when either step failed); prints ocrmypdf's time and its failures."""
    texts = {(writer, source.name): "" for writer, source, _ in jobs}
    errors: list[str] = []
    seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="ocrmypdf-") as tmp:
        made: list[tuple[tuple[str, str], Path]] = []
        for writer, source, path in jobs:
            out = Path(tmp) / f"{writer}-{source.name}.pdf"
            error, wall, _ = run_ocrmypdf(path, out)
            seconds += wall
            if error:
                errors.append(f"{source.name}: {error}")
            else:
                made.append(((writer, source.name), out))
        t0 = time.perf_counter()
        results = drive(READER, "text", [{"path": str(out), "page": None} for _, out in made])
        read_seconds = time.perf_counter() - t0
    for (key, _), res in zip(made, results, strict=True):
        if res.get("error"):
            errors.append(f"{key[1]}: {READER}: {res['error']}"[:200])
        else:
            texts[key] = res.get("text") or ""
    print(f"  {OCR_PEER}: ocrmypdf {peers.OCRMYPDF_VERSION} on {len(jobs)} scans in "
          f"{seconds:.0f} s, then {READER} in {read_seconds:.0f} s; {len(errors)} failed"
          + (": " + "; ".join(errors[:3]) if errors else ""))
    return texts
