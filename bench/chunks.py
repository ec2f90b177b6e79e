"""``just bench chunks``: our chunks beside LangChain's splitters, and the PDF provenance check.

On ``../shared/corpus/realworld`` (PDF, DOCX) and ``realworld-office`` (CSV, EPUB, HTML, and
the LibreOffice formats when ``soffice`` is installed), each document is read once; our
chunks (``export=chunks``, 512 tokens, no overlap) and LangChain's
``MarkdownHeaderTextSplitter`` + ``RecursiveCharacterTextSplitter`` (512 tokens of the same
counter, on our own Markdown of the document; ``bench/chunk_peer.py`` in its own venv under
``bench/.peers/langchain``) are measured in one run:

- words in exactly one chunk: 1 - (words lost + words doubled) / words of the Markdown,
  counted on the text only (:func:`text_words`: HTML tags and entities dropped the same way
  from the whole Markdown and from the chunks, since a table part may be written as a pipe
  table where the whole table is HTML, or the other way round; the header rows a table part
  repeats are not counted as doubled);
- chunks within the budget (ours over it: single table rows larger than it);
- boundaries at a heading (the next chunk opens with a heading line of the Markdown, one
  outside code: a ``# comment`` in a code block a splitter cut is no heading), at a block
  end (a whole line of the Markdown on both sides: a paragraph, list item, table row or
  code line), or inside a block; lines are compared as LangChain's header splitter leaves
  them (stripped, characters that do not print dropped), so its chunks are not counted
  inside a block for the indentation it strips;
- table parts with their header (a chunk holding table rows whose first table line is a
  header row, ``|---|`` under it), and broken tables: parts without their header and
  tables cut inside a row;
- time (chunking only; both read the same document model / Markdown).

Both our settings are measured: ``chunk_merge=true`` (the default) joins small sibling
sections, so it has fewer boundaries at headings by design; ``chunk_merge=false`` is the
like-for-like comparison with LangChain, which never joins sections.

Provenance: the share of a PDF block's words that ``pdftotext -bbox-layout -cropbox`` places
inside the block's box on its page (``bench/prov_check.py``), for the text layer of every
realworld PDF, and for a few pages read by OCR (``ocr=force``).
"""

from __future__ import annotations

import html
import itertools
import json
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import peers
from bench.common import machine, table
from bench.prov_check import ProvScore, score_document
from render_pool.engine.formats import ReadRequest
from render_pool.engine.model import Document, Table
from render_pool.errors import ConversionError

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
BUDGET = 512
_WORD = re.compile(r"\w+")
# an HTML start or end tag (``<td colspan="2">``, ``</tr>``, ``<br>``), not an autolink
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
_OFFICE = ("csv", "epub", "html", "odt", "ods", "odp", "doc", "xls", "ppt")
_LO = ("odt", "ods", "odp", "doc", "xls", "ppt")


@dataclass
class Stats:
    """One splitter's figures over the corpus."""

    words: int = 0
    lost: int = 0
    doubled: int = 0
    chunks: int = 0
    within: int = 0
    boundaries: int = 0
    at_heading: int = 0
    at_block_end: int = 0
    table_chunks: int = 0
    with_header: int = 0
    no_header: int = 0
    rows_cut: int = 0
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)


def corpus_files(quick: bool) -> list[Path]:
    files = sorted((CORPUS / "realworld" / "pdf").glob("*.pdf"))
    files += sorted((CORPUS / "realworld" / "docx").glob("*.docx"))
    office = CORPUS / "realworld-office"
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    for kind in _OFFICE:
        if kind in _LO and not soffice:
            continue
        files += sorted((office / kind).glob("*")) if (office / kind).is_dir() else []
    files = [f for f in files if f.is_file() and not f.name.endswith(".md")]
    return files[::6] if quick else files


def text_words(markdown: str) -> list[str]:
    """The words of Markdown's text: HTML tags dropped and entities decoded, so the markup
    of an HTML table (``td``, ``colspan``, ``tbody``) or a ``<br>`` is not counted as words."""
    return _WORD.findall(html.unescape(_TAG.sub(" ", markdown)))


def header_repeats(doc: Document, chunks: list[dict[str, Any]]) -> Counter[str]:
    """The words our chunks write more than once by rule: the header rows of a table,
    repeated in every part after the first (a table's parts: the chunks naming its block)."""
    from render_pool.engine.chunks.tables import part_table
    from render_pool.engine.chunks.tokens import count_words
    from render_pool.engine.chunks.units import repeated_header
    from render_pool.engine.markdown.render import MarkdownRenderer, pipe_ok

    renderer = MarkdownRenderer(doc, lambda src: src)
    out: Counter[str] = Counter()
    for pos, block in enumerate(doc.blocks):
        if not isinstance(block, Table) or not block.rows:
            continue
        parts = sum(pos in c["blocks"] for c in chunks)
        pipe = pipe_ok(block)
        header, _ = repeated_header(block, renderer, count_words, BUDGET, pipe)
        if parts > 1 and header:
            words = Counter(text_words(part_table(renderer, Table(header, len(header)),
                                                  pipe)))
            for _ in range(parts - 1):
                out.update(words)
    return out


_HEADING = re.compile(r"#{1,6}(?: |$)")
_FENCE = re.compile(r"(`{3,}|~{3,})")


def line_key(line: str) -> str:
    """A line as LangChain's header splitter writes it: stripped, and only characters that
    print (a no-break space dropped), so lines of both splitters compare alike."""
    return "".join(filter(str.isprintable, line.strip()))


def heading_lines(markdown: str) -> set[str]:
    """The ATX heading lines of ``markdown`` (:func:`line_key`), those in fenced code left
    out."""
    out: set[str] = set()
    fence = ""
    for line in markdown.split("\n"):
        key = line_key(line)
        m = _FENCE.match(key)
        if fence:
            if key.startswith(fence):
                fence = ""
        elif m:
            fence = m.group(1)
        elif _HEADING.match(key):
            out.add(key)
    return out


def measure(stats: Stats, markdown: str, chunks: list[str], seconds: float,
            repeats: Counter[str] | None = None) -> None:
    """Add one document's chunks to ``stats`` (see the module doc); ``repeats``: the words
    the splitter writes more than once by rule (table headers), not counted as doubled."""
    from render_pool.engine.chunks.tokens import count_words

    expected = Counter(text_words(markdown)) + (repeats or Counter())
    got = Counter(w for text in chunks for w in text_words(text))
    stats.words += sum(expected.values()) - sum((repeats or Counter()).values())
    stats.lost += sum((expected - got).values())
    stats.doubled += sum((got - expected).values())
    stats.chunks += len(chunks)
    stats.within += sum(count_words(c) <= BUDGET for c in chunks)
    stats.seconds += seconds
    lines = {line_key(ln) for ln in markdown.split("\n")}
    headings = heading_lines(markdown)
    for a, b in itertools.pairwise(chunks):
        stats.boundaries += 1
        first = line_key(b.lstrip("\n").split("\n", 1)[0])
        last = line_key(a.rstrip("\n").rsplit("\n", 1)[-1])
        if first in headings:
            stats.at_heading += 1
        elif first in lines and last in lines:
            stats.at_block_end += 1
    for text in chunks:
        rows = [ln for ln in text.split("\n") if ln.startswith("|")]
        if not rows:
            continue
        stats.table_chunks += 1
        all_lines = text.split("\n")
        at = all_lines.index(rows[0])
        if at + 1 < len(all_lines) and all_lines[at + 1].startswith("|---"):
            stats.with_header += 1
        else:
            stats.no_header += 1
        if not rows[-1].rstrip().endswith("|") or not rows[0].rstrip().endswith("|"):
            stats.rows_cut += 1


def ensure_langchain() -> str:
    """The LangChain peer's venv (``bench/.peers/langchain``): "ok" or why not."""
    return peers._install("langchain")


def run_langchain(docs: dict[str, str], out_dir: Path) -> dict[str, dict[str, Any]]:
    """LangChain's chunks of ``docs`` (name -> Markdown), by ``bench/chunk_peer.py`` in its
    venv: name -> ``{"chunks": [...], "seconds": s}``."""
    manifest = out_dir / "langchain-manifest.json"
    result = out_dir / "langchain-result.json"
    tokens = Path(__file__).resolve().parents[1] / "render_pool" / "engine" / "chunks" / "tokens.py"
    manifest.write_text(json.dumps({"docs": docs, "budget": BUDGET,
                                    "tokens_module": str(tokens)}))
    import subprocess

    done = subprocess.run([str(peers.peer_python("langchain")), "-I",
                           str(Path(__file__).with_name("chunk_peer.py")), str(manifest),
                           str(result)], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0 or not result.exists():
        raise RuntimeError(f"the LangChain runner failed: {done.stderr[-400:]}")
    got: dict[str, dict[str, Any]] = json.loads(result.read_text())
    return got


def provenance(files: list[Path], ocr_files: list[Path]) -> tuple[ProvScore, ProvScore, int]:
    from render_pool.engine.pdf.reader import read_pdf

    text_layer, ocr = ProvScore(), ProvScore()
    read = 0
    for path in files:
        try:
            doc = read_pdf(path.read_bytes(), ocr="off")
        except ConversionError:  # encrypted, scans without text: nothing to check
            continue
        read += 1
        text_layer.add(score_document(doc, path))
    for path in ocr_files:
        try:
            doc = read_pdf(path.read_bytes(), ocr="force", pages=((1, 1),))
        except ConversionError:
            continue
        ocr.add(score_document(doc, path))
    return text_layer, ocr, read


def run(quick: bool = False) -> None:
    from render_pool.engine import registry
    from render_pool.engine.chunks.writer import chunk_document
    from render_pool.engine.markdown.writer import write_markdown
    from render_pool.engine.options import WriterOptions

    if not CORPUS.is_dir():
        print("\n## Chunks\n\n../shared/corpus is not here: nothing to measure")
        return
    status = ensure_langchain()
    files = corpus_files(quick)
    ours, apart, theirs = Stats(), Stats(), Stats()
    over = 0
    markdown: dict[str, str] = {}
    for path in files:
        try:
            doc = registry.read(path.read_bytes(), options=ReadRequest(ocr="off"))
        except Exception as exc:
            ours.failed.append(f"{path.name}: {type(exc).__name__}")
            continue
        md = write_markdown(doc, lambda src: src)
        start = time.perf_counter()
        chunks = chunk_document(doc, lambda src: src, WriterOptions(chunk_tokens=BUDGET))
        seconds = time.perf_counter() - start
        over += sum(c["tokens"] > BUDGET for c in chunks)
        measure(ours, md, [c["text"] for c in chunks], seconds, header_repeats(doc, chunks))
        start = time.perf_counter()
        chunks = chunk_document(doc, lambda src: src,
                                WriterOptions(chunk_tokens=BUDGET, chunk_merge=False))
        measure(apart, md, [c["text"] for c in chunks], time.perf_counter() - start,
                header_repeats(doc, chunks))
        markdown[path.name] = md
    rows = [_row("ours, chunk_merge=true (the default)", ours),
            _row("ours, chunk_merge=false (no merging, as LangChain)", apart)]
    if status == "ok":
        with tempfile.TemporaryDirectory() as tmp:
            got = run_langchain(markdown, Path(tmp))
        for name, md in markdown.items():
            measure(theirs, md, got[name]["chunks"], got[name]["seconds"])
        rows.append(_row(f"LangChain {peers.LANGCHAIN_VERSION} (header + recursive)", theirs))
    else:
        print(f"LangChain unavailable: {status}")
    table(f"Chunks: {len(markdown)} documents of the realworld corpora, budget {BUDGET} "
          f"tokens (words counter), overlap 0 ({machine()})",
          ["splitter", "chunks", "words in exactly one chunk", "lost", "doubled", "within budget",
           "boundaries", "at a heading", "at a heading or block end",
           "table parts with header", "broken tables: parts without header",
           "tables cut in a row", "seconds"], rows)
    if status == "ok":
        print(f"\nboundaries at a heading: ours {apart.at_heading} with chunk_merge=false "
              f"({ours.at_heading} merged), LangChain {theirs.at_heading} (goal: ours at "
              f"chunk_merge=false >= LangChain); broken tables (parts without header + cut "
              f"in a row): ours {ours.no_header + ours.rows_cut} merged, "
              f"{apart.no_header + apart.rows_cut} not, LangChain "
              f"{theirs.no_header + theirs.rows_cut} (goal: fewer)")
    print(f"\nours over the budget: {over} chunk(s), each a single table row larger than it; "
          f"not read: {len(ours.failed)} ({', '.join(ours.failed[:6])})")
    pdfs = [f for f in files if f.suffix == ".pdf"]
    ocr_files = [f for f in pdfs if f.stat().st_size < 300_000][: 2 if quick else 6]
    text_layer, ocr, read = provenance(pdfs, ocr_files)
    table("PDF provenance: words that pdftotext places inside their block's box",
          ["read by", "PDFs", "words matched", "inside the box", "blocks without a box"],
          [["text layer", read, text_layer.matched, f"{text_layer.share:.4f}",
            text_layer.blocks_without_box],
           ["OCR (ocr=force, first page)", len(ocr_files), ocr.matched, f"{ocr.share:.4f}",
            ocr.blocks_without_box]])


def _row(name: str, s: Stats) -> list[object]:
    def share(a: int, b: int) -> str:
        return f"{a / b:.4f}" if b else "-"

    exact = 1 - (s.lost + s.doubled) / s.words if s.words else 0.0
    return [name, s.chunks, f"{exact:.4f}", share(s.lost, s.words), share(s.doubled, s.words),
            share(s.within, s.chunks), s.boundaries,
            f"{s.at_heading} ({share(s.at_heading, s.boundaries)})",
            share(s.at_heading + s.at_block_end, s.boundaries),
            share(s.with_header, s.table_chunks), s.no_header, s.rows_cut, f"{s.seconds:.2f}"]
