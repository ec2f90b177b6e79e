"""Peer converters for the conversion benchmark: pandoc (Debian package), mammoth, markitdown
and pymupdf4llm (installed by :func:`ensure_peers` into separate virtualenvs under
``bench/.peers/``, never into the project's ``.venv``). pymupdf4llm runs twice from one venv:
``pymupdf4llm`` with its layout model (pymupdf-layout, ``use_layout(True)``) and
``pymupdf4llm-legacy`` without it (``use_layout(False)``).

This file is also the runner the benchmark starts once per peer with the peer venv's Python::

    bench/.peers/TOOL/bin/python -I bench/peers.py TOOL MANIFEST.json OUT.json

It converts every document of the manifest (one untimed warm-up pass first, then
``passes`` timed passes), timing each conversion inside this one process, so the interpreter
start and imports are not counted per document. It writes per-document seconds, errors and
the Markdown of the first pass. Only the standard library is imported at module level: the
peer venv has none of the project's packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

PEERS_DIR = Path(__file__).resolve().parent / ".peers"
MAMMOTH_VERSION = "1.13.0"
# 0.1.9 needs certifi>=2026.10.19, which the package index here does not have yet
MARKITDOWN_VERSION = "0.1.8"
PYMUPDF4LLM_VERSION = "1.28.2"  # 2.0 on the index is an empty placeholder
OCRMYPDF_VERSION = "17.13.0"  # the OCR bench's peer (it runs Debian's tesseract)
PDFPLUMBER_VERSION = "0.11.10"  # the pdf-layout bench's peers (text and find_tables)
PYMUPDF_VERSION = PYMUPDF4LLM_VERSION  # find_tables of the PyMuPDF that pymupdf4llm runs on
# tool -> source kinds it reads (pandoc has no PDF reader; mammoth reads DOCX only)
KINDS = {"pandoc": ("docx",), "mammoth": ("docx",), "markitdown": ("docx", "pdf"),
         "pymupdf4llm": ("pdf",), "pymupdf4llm-legacy": ("pdf",)}


PINS = {"mammoth": [f"mammoth=={MAMMOTH_VERSION}"],
        "markitdown": [f"markitdown[docx,pdf,pptx,xlsx]=={MARKITDOWN_VERSION}"],
        "pymupdf4llm": [f"pymupdf4llm=={PYMUPDF4LLM_VERSION}",
                        f"pymupdf-layout=={PYMUPDF4LLM_VERSION}"]}
OCR_PINS = {"ocrmypdf": [f"ocrmypdf=={OCRMYPDF_VERSION}"]}  # installed by the OCR bench only
# installed by the pdf-layout bench only (bench/pdf_peers.py)
PDF_PINS = {"pdfplumber": [f"pdfplumber=={PDFPLUMBER_VERSION}"],
            "pymupdf": [f"pymupdf=={PYMUPDF_VERSION}"]}
# installed by the chunks bench only (bench/chunks.py): LangChain's splitters, offline
LANGCHAIN_VERSION = "1.1.3"
CHUNK_PINS = {"langchain": [f"langchain-text-splitters=={LANGCHAIN_VERSION}"]}
VENV_OF = {"pymupdf4llm-legacy": "pymupdf4llm"}  # tools that share another tool's venv


def peer_python(tool: str) -> Path:
    """The interpreter of ``tool``'s own virtualenv, ``bench/.peers/<tool>``.

    One venv per peer: markitdown[docx] pins ``mammoth~=1.11.0``, which would downgrade the
    mammoth measured on its own.
    """
    return PEERS_DIR / VENV_OF.get(tool, tool) / "bin" / "python"


def _install(tool: str) -> str:
    venv = PEERS_DIR / tool
    pins = PINS.get(tool) or OCR_PINS.get(tool) or CHUNK_PINS.get(tool) or PDF_PINS[tool]
    stamp = venv / (".ok-" + "-".join(pins))
    if stamp.exists() and peer_python(tool).exists():
        return "ok"
    log = PEERS_DIR / f"{tool}-install.log"
    try:
        PEERS_DIR.mkdir(exist_ok=True)
        if not peer_python(tool).exists():
            subprocess.run(["python3", "-m", "venv", str(venv)], check=True,
                           capture_output=True, timeout=300)
        with log.open("wb") as fh:
            done = subprocess.run([str(peer_python(tool)), "-m", "pip", "install", "-q",
                                   "--disable-pip-version-check", *pins],
                                  stdout=fh, stderr=subprocess.STDOUT, timeout=1200)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot set up {venv}: {exc}"
    if done.returncode != 0:
        errors = [line for line in log.read_text(errors="replace").splitlines()
                  if line.startswith("ERROR")]
        return f"pip install {' '.join(pins)} failed: {(errors or ['?'])[-1][:160]}"
    stamp.touch()
    return "ok"


def ensure_peers() -> dict[str, str]:
    """Create the peer virtualenvs (``python3 -m venv``) and install the pinned peers.

    Returns ``tool -> "ok"`` or the reason it is unavailable; never raises for a failed
    install, so the benchmark reports the peer as unavailable instead of crashing. An
    installed venv is reused (stamp file per pin).
    """
    status = {"pandoc": "ok" if shutil.which("pandoc")
              else "pandoc not on PATH (apt-get install pandoc)"}
    for tool in PINS:
        status[tool] = _install(tool)
    for tool, venv in VENV_OF.items():
        status[tool] = status[venv]
    return status


def peer_version(tool: str) -> str:
    """Version string of a peer, for the table title."""
    if tool == "pandoc":
        try:
            out = subprocess.run(["pandoc", "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
            return out.split("\n", 1)[0].split()[-1]
        except (OSError, subprocess.SubprocessError, IndexError):
            return "?"
    return {"mammoth": MAMMOTH_VERSION, "markitdown": MARKITDOWN_VERSION,
            "pymupdf4llm": PYMUPDF4LLM_VERSION, "pymupdf4llm-legacy": PYMUPDF4LLM_VERSION}[tool]


def run_peer(tool: str, paths: list[Path], passes: int, out_dir: Path,
             timeout: float = 900) -> dict[str, Any]:
    """Run ``tool`` over ``paths`` in one subprocess of the peer venv's Python.

    Returns the runner's JSON (``docs``: per path ``seconds`` and ``cpu`` (seconds of CPU)
    lists, ``error``, ``markdown``),
    or ``{"error": ...}`` when the runner itself failed.
    """
    manifest = out_dir / f"{tool}-manifest.json"
    result = out_dir / f"{tool}-result.json"
    manifest.write_text(json.dumps({"paths": [str(p) for p in paths], "passes": passes}))
    # pandoc is a program: any Python can drive it (the one running the benchmark)
    python = sys.executable if tool == "pandoc" else str(peer_python(tool))
    try:
        # -I: the script's folder (bench/) must not shadow the peers' imports
        done = subprocess.run([python, "-I", str(Path(__file__).resolve()), tool, str(manifest),
                               str(result)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"runner timed out after {timeout:.0f} s"}
    if done.returncode != 0 or not result.exists():
        return {"error": f"runner exited {done.returncode}: {done.stderr[-500:]}"}
    return json.loads(result.read_text())


# ------------------------------------------------------------------ inside the peer venv
def _converter(tool: str) -> Any:
    if tool == "mammoth":
        import mammoth  # type: ignore[import-not-found]  # only in the peer venv

        def convert(path: str) -> str:
            with open(path, "rb") as fh:
                return mammoth.convert_to_markdown(fh).value
        return convert
    if tool == "markitdown":
        from markitdown import MarkItDown  # type: ignore[import-not-found]  # peer venv only

        engine = MarkItDown()

        def convert(path: str) -> str:
            return engine.convert(path).text_content
        return convert
    if tool in ("pymupdf4llm", "pymupdf4llm-legacy"):
        import pymupdf4llm  # type: ignore[import-not-found]  # only in the peer venv

        pymupdf4llm.use_layout(tool == "pymupdf4llm")  # the GNN layout model, or not

        def convert(path: str) -> str:
            return pymupdf4llm.to_markdown(path)
        return convert
    if tool == "pandoc":
        def convert(path: str) -> str:
            # the office benchmark passes EPUB, HTML, ODT, RTF and CSV too (by extension)
            source = ["-f", "docx"] if path.endswith(".docx") else []
            done = subprocess.run(["pandoc", *source, "-t", "gfm", "--wrap=none", path],
                                  capture_output=True, timeout=120)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.decode("utf-8", "replace")[-300:])
            return done.stdout.decode("utf-8", "replace")
        return convert
    raise SystemExit(f"unknown tool {tool!r}")


def _main(tool: str, manifest: str, out: str) -> int:
    spec = json.loads(Path(manifest).read_text())
    paths: list[str] = spec["paths"]
    passes = int(spec.get("passes", 1))
    convert = _converter(tool)
    docs: dict[str, dict[str, Any]] = {p: {"seconds": [], "cpu": [], "error": None,
                                           "markdown": None} for p in paths}
    with open(os.devnull, "w") as devnull:
        for n in range(-1, passes):  # pass -1: warm-up (lazy imports, caches), not timed
            for path in paths:
                entry = docs[path]
                stderr, sys.stderr = sys.stderr, devnull  # peers warn loudly
                t0, c0 = time.perf_counter(), time.process_time()
                try:
                    text = convert(path)
                except Exception as exc:  # a peer's crash is a data point
                    if n < 0:
                        continue
                    entry["seconds"].append(time.perf_counter() - t0)
                    entry["cpu"].append(time.process_time() - c0)
                    if entry["error"] is None:
                        tb = traceback.format_exception_only(type(exc), exc)
                        entry["error"] = "".join(tb).strip()[-300:]
                    continue
                finally:
                    sys.stderr = stderr
                if n < 0:
                    continue
                entry["seconds"].append(time.perf_counter() - t0)
                entry["cpu"].append(time.process_time() - c0)
                if n == 0:
                    entry["markdown"] = text
    Path(out).write_text(json.dumps({"tool": tool, "passes": passes, "docs": docs}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:4]))
