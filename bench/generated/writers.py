"""Every writer of the generated corpus: the sources through pandoc, LibreOffice, Chromium
and a simulated scanner, cached on disk.

A build writes ``<cache>/<writer>/<source>.<ext>`` and skips files already there; the cache
folder's name carries :data:`VERSION` and a hash of the sources' Markdown, so a change to the
sources (or to :data:`VERSION`) starts a new set. Writers (what the bench scores):

- ``docx``: pandoc from the AST, tables post-edited to the source's style;
- ``odt``: LibreOffice from that DOCX;
- ``pdf-lo``: LibreOffice from that DOCX;
- ``pdf-lo-cols``: LibreOffice from the DOCX set in two or three columns;
- ``pdf-chromium``: pandoc's HTML with CSS tables and one to three columns, printed by the
  project's Chromium (Debian's, through Playwright; network blocked);
- ``pptx`` and ``epub``: pandoc; ``odp``: LibreOffice from that PPTX;
- ``ods``: LibreOffice's Calc import of the source's tables as HTML;
- ``scan``: ``pdf-lo`` (even sources) or ``pdf-chromium`` (odd) rasterised at 150-300 dpi,
  turned 0.8-3 degrees, speckled (:mod:`bench.scans`).

LibreOffice runs headless with a private profile and, where the kernel allows, in a network
namespace of its own (``unshare -rn``).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from bench.generated.markdown import to_markdown
from bench.generated.model import Source, Table
from bench.generated.pandoc_ast import to_pandoc_json
from bench.generated.styles import css, style_docx_xml

VERSION = 2  # 2: tables span the columns of Chromium's multi-column pages
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench-cache" / "generated"
WRITERS = ("docx", "odt", "pdf-lo", "pdf-lo-cols", "pdf-chromium", "pptx", "odp", "epub",
           "ods", "scan")
EXTENSION = {"docx": "docx", "odt": "odt", "pptx": "pptx", "odp": "odp", "epub": "epub",
             "ods": "ods", "docx-cols": "docx", "html": "html", "tables-html": "html"}
DPI = (150, 200, 300)
SKEW = (0.8, 1.6, 2.4, 3.0)
# what each writer needs first
NEEDS = {"odt": ("docx",), "pdf-lo": ("docx",), "pdf-lo-cols": ("docx-cols",),
         "pdf-chromium": ("html",), "odp": ("pptx",), "ods": ("tables-html",),
         "scan": ("pdf-lo", "pdf-chromium")}


def cache_dir() -> Path:
    """This generator's folder: :data:`VERSION` (bump it when a writer changes) and a hash
    of every source's Markdown (a change to the sources starts a new set by itself)."""
    from bench.generated.sources import sources

    digest = hashlib.sha256()
    for source in sources():
        digest.update(to_markdown(source).encode())
    return CACHE / f"v{VERSION}-{digest.hexdigest()[:10]}"


def path_of(root: Path, writer: str, source: Source) -> Path:
    return root / writer / f"{source.name}.{EXTENSION.get(writer, 'pdf')}"


def _pandoc(source: Source, to: str, out: Path, *extra: str) -> None:
    subprocess.run(["pandoc", "-f", "json", "-t", to, "-o", str(out), *extra],
                   input=to_pandoc_json(source).encode(), check=True, capture_output=True,
                   timeout=300)


def _docx(source: Source, out: Path, columns: int) -> None:
    raw = out.with_suffix(".raw.docx")
    _pandoc(source, "docx", raw)
    buffer = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "word/document.xml":
                data = style_docx_xml(data.decode("utf-8"), source.table_style,
                                      columns).encode("utf-8")
            dst.writestr(info, data)
    raw.unlink()
    out.write_bytes(buffer.getvalue())


def _html(source: Source, out: Path, tables_only: bool = False) -> None:
    if tables_only:
        source = Source(source.name, source.subject, source.table_style, 1,
                        [b for b in source.blocks if isinstance(b, Table)])
    body = subprocess.run(["pandoc", "-f", "json", "-t", "html5"],
                          input=to_pandoc_json(source).encode(), check=True,
                          capture_output=True, timeout=300).stdout.decode("utf-8")
    style = "" if tables_only else f"<style>{css(source.table_style, source.columns)}</style>"
    out.write_text(f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{source.name}'
                   f"</title>{style}</head><body><main>{body}</main></body></html>\n")


def _soffice(inputs: list[Path], fmt: str, outdir: Path, infilter: str | None = None) -> None:
    """LibreOffice headless, one call for many files (start-up is most of its cost)."""
    if not inputs:
        return
    with tempfile.TemporaryDirectory(prefix="bench-gen-lo-") as profile:
        cmd = ["soffice", f"-env:UserInstallation={Path(profile).as_uri()}", "--headless",
               "--norestore", "--nolockcheck"]
        if infilter:
            cmd.append(f"--infilter={infilter}")
        cmd += ["--convert-to", fmt, "--outdir", str(outdir), *map(str, inputs)]
        if shutil.which("unshare") and subprocess.run(
                ["unshare", "-rn", "true"], capture_output=True).returncode == 0:
            cmd = ["unshare", "-rn", *cmd]
        subprocess.run(cmd, check=False, capture_output=True, timeout=60 + 30 * len(inputs))


def _chromium(html_path: Path, out: Path) -> None:
    from render_pool.runtime.browser import render_pdf

    out.write_bytes(render_pdf(html_path.read_text("utf-8"), pdf_options={
        "format": "A4", "print_background": True,
        "margin": {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"}}))


def _scan(index: int, source: Source, root: Path, out: Path) -> None:
    from bench.scans import scanned_copy

    born = path_of(root, "pdf-lo" if index % 2 == 0 else "pdf-chromium", source)
    if born.exists():
        out.write_bytes(scanned_copy(born.read_bytes(), dpi=DPI[index % len(DPI)],
                                     skew=SKEW[index % len(SKEW)], noise=0.002, seed=index))


def _one_by_one(root: Path, writer: str, todo: list[tuple[int, Source]],
                make: Callable[[int, Source, Path], None]) -> None:
    for index, source in todo:
        make(index, source, path_of(root, writer, source))


def _build_writer(root: Path, writer: str, todo: list[tuple[int, Source]]) -> None:
    out = root / writer
    out.mkdir(parents=True, exist_ok=True)
    lo = {"odt": ("docx", "odt", None), "pdf-lo": ("docx", "pdf", None),
          "pdf-lo-cols": ("docx-cols", "pdf", None), "odp": ("pptx", "odp", None),
          "ods": ("tables-html", "ods", "HTML (StarCalc)")}
    if writer in lo:
        given, fmt, infilter = lo[writer]
        _soffice([path_of(root, given, s) for _, s in todo], fmt, out, infilter)
    elif writer == "docx":
        _one_by_one(root, writer, todo, lambda i, s, p: _docx(s, p, 1))
    elif writer == "docx-cols":
        _one_by_one(root, writer, todo, lambda i, s, p: _docx(s, p, max(2, s.columns)))
    elif writer == "html":
        _one_by_one(root, writer, todo, lambda i, s, p: _html(s, p))
    elif writer == "tables-html":
        _one_by_one(root, writer, todo, lambda i, s, p: _html(s, p, tables_only=True))
    elif writer == "pdf-chromium":
        _one_by_one(root, writer, todo,
                    lambda i, s, p: _chromium(path_of(root, "html", s), p))
    elif writer in ("pptx", "epub"):
        extra = ("-M", "title= ") if writer == "epub" else ()
        _one_by_one(root, writer, todo, lambda i, s, p: _pandoc(s, writer, p, *extra))
    elif writer == "scan":
        _one_by_one(root, writer, todo, lambda i, s, p: _scan(i, s, root, p))


def build(sources: list[Source], writers: tuple[str, ...] = WRITERS,
          root: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """Write every source through ``writers`` (and what they need) into the cache; returns
    the cache folder. Missing outputs mean the writer failed on that source."""
    root = root or cache_dir()
    (root / "src").mkdir(parents=True, exist_ok=True)
    for source in sources:
        truth = root / "src" / f"{source.name}.md"
        if not truth.exists():
            truth.write_text(to_markdown(source))
    done: set[str] = set()

    def make(writer: str) -> None:
        if writer in done:
            return
        for need in NEEDS.get(writer, ()):
            make(need)
        todo = [(i, s) for i, s in enumerate(sources)
                if not path_of(root, writer, s).exists()]
        if todo:
            log(f"  writing {len(todo)} x {writer}")
            _build_writer(root, writer, todo)
        done.add(writer)

    for writer in writers:
        make(writer)
    return root
