"""The scoring both PDF benches share (``bench.pdf_layout`` for the service, ``bench.pdf_peers``
for the peers): the corpora's places, words of a text, reading-order similarity, recall, the
tables of a PDF and their cell F1 and structure scores, so both score alike and neither
imports the other.
"""

from __future__ import annotations

import difflib
import functools
import re
import shutil
import subprocess
import time
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ``../shared/corpus`` beside the clone; from a worktree under ``wt/``, one level further up
CORPUS = next((p / "shared" / "corpus" for p in ROOT.parents[:2]
               if (p / "shared" / "corpus").is_dir()), ROOT.parent / "shared" / "corpus")
REALWORLD = CORPUS / "realworld" / "pdf"
CAMELOT = CORPUS / "tables-camelot"
COLUMNS = ("pdfjs__tracemonkey.pdf", "pypdf__multicolumn.pdf",
           "unstructured__multi-column-2p.pdf", "pdfplumber__federal-register-2020-17221.pdf",
           "unstructured__layout-parser-paper-fast.pdf", "pymupdf__2201.00069.pdf")
_WORD = re.compile(r"\w+")
_CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")
_MD_NOISE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)|\]\([^)\s]*\)|</?[a-zA-Z][^<>\n]{0,80}>"
                       r"|data:[^)\s]+")
# inline emphasis is markup, not a word break: "*x*1" and "A<sub>1</sub>" read as one word
_MD_INLINE = re.compile(r"\*+|</?(em|strong|sup|sub|b|i|u|s|del|mark|code)>")


def words(text: str, markdown: bool = True) -> list[str]:
    """Lower-case word tokens (letters/digits), each Chinese/Japanese character a token of
    its own (those scripts put no spaces between words); of Markdown, link targets, images
    and HTML tags left out (inline emphasis joined to its word)."""
    text = _MD_NOISE.sub(" ", _MD_INLINE.sub("", text)) if markdown else text
    return _WORD.findall(_CJK.sub(r" \g<0> ", text).lower())


def _pdftotext(path: Path) -> str | None:
    """Text of ``pdftotext`` (reading order mode), or None when poppler is missing/fails."""
    if shutil.which("pdftotext") is None:
        return None
    try:
        out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"],
                             capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8", "replace")


def pdftotext_words(path: Path) -> list[str] | None:
    """Words of ``pdftotext`` (reading order mode), or None when poppler is missing/fails."""
    text = _pdftotext(path)
    return None if text is None else words(text, markdown=False)


# Where pdftotext itself reads a page out of order, the block it misplaces, moved to where the
# page shows it: (first words of the block, last words of the block, the words it follows).
# Checked by eye against the rendered page; the words stay pdftotext's own.
REFERENCE_FIXES: dict[str, list[tuple[str, str, str]]] = {
    # page 1: the top of the right-hand column is read right after "Abstract", before the
    # left-hand column; on the page it continues the left column's last line "Donec nonummy"
    "pypdf__multicolumn.pdf": [("pellentesque ante. Phasellus", "pellentesque felis eu\nmassa.",
                                "fermentum felis. Donec nonummy")],
}


def reference_words(path: Path) -> list[str] | None:
    """The reading-order reference of ``path``: pdftotext's words, with the misreadings of
    ``REFERENCE_FIXES`` put right (None when poppler is missing or fails)."""
    text = _pdftotext(path)
    if text is None:
        return None
    for first, last, after in REFERENCE_FIXES.get(path.name, []):
        start = text.find(first)
        end = text.find(last, start) + len(last)
        if start < 0 or end < len(last):
            raise ValueError(f"{path.name}: reference fix {first!r}..{last!r} no longer applies")
        block, rest = text[start:end], text[:start] + text[end:]
        at = rest.find(after)
        if at < 0:
            raise ValueError(f"{path.name}: reference fix anchor {after!r} not found")
        at += len(after)
        text = f"{rest[:at]} {block} {rest[at:]}"
    return words(text, markdown=False)


def order_similarity(ours: list[str], ref: list[str]) -> float:
    """Normalised indel similarity of two word sequences (1 = same order, same words)."""
    if not ours and not ref:
        return 1.0
    ours = ours[: 3 * len(ref) + 10]  # a runaway output is bad enough; keep difflib bounded
    matcher = difflib.SequenceMatcher(None, ours, ref, autojunk=False)
    same = sum(b.size for b in matcher.get_matching_blocks())
    return 2 * same / (len(ours) + len(ref))


def recall(ours: list[str], ref: list[str]) -> float:
    """Share of the reference's words (as a multiset) found in ours."""
    if not ref:
        return 1.0
    got = Counter(ours)
    return sum(min(n, got[w]) for w, n in Counter(ref).items()) / len(ref)


@functools.cache  # the peers' comparison (bench/pdf_peers.py) scores the same conversion
def markdown_of(path: Path) -> tuple[str, float, str]:
    """(Markdown, seconds, error) of our reader; images as placeholders."""
    from render_pool.engine.jobs import convert_document

    t0 = time.perf_counter()
    try:
        text = convert_document(path.read_bytes(), "markdown").content
        err = ""
    except Exception as exc:  # an error is a data point
        text, err = "", f"{type(exc).__name__}"
    return text, time.perf_counter() - t0, err


def _norm_cell(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).lower()


def _logical(text: str) -> str:
    """camelot's expected Arabic cells are in visual order with presentation forms: as
    logical text. A line whose first strong letter is right-to-left is reversed whole and
    its left-to-right runs (Latin words, numbers) turned back; in a left-to-right line only
    the right-to-left runs are reversed. Reversed before NFKC, so that a lam-alef
    ligature keeps its letters' order."""
    lines = []
    for line in " ".join(text.split()).split("\n") if "\n" in text else [" ".join(text.split())]:
        kinds = [unicodedata.bidirectional(ch) for ch in line]
        if not any(k in ("R", "AL") for k in kinds):
            lines.append(line)
            continue
        first = next((k for k in kinds if k in ("L", "R", "AL")), "L")
        if first == "L":
            lines.append(re.sub(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]"
                                r"(?:[\s\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]*"
                                r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff])?",
                                lambda m: m.group(0)[::-1], line))
        else:
            lines.append(re.sub(r"[A-Za-z0-9][A-Za-z0-9 .,:%-]*[A-Za-z0-9]|[A-Za-z0-9]",
                                lambda m: m.group(0)[::-1], line[::-1]))
    return _norm_cell(" ".join(lines))


def page_bytes(path: Path, page: int | None) -> bytes:
    """The PDF's bytes, or a PDF of its one page ``page`` (1-based) when it has several:
    camelot's tests read that page alone, and so are we scored."""
    data = path.read_bytes()
    if page is None:
        return data
    import io

    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(data)
    try:
        if len(src) == 1:
            return data
        one = pdfium.PdfDocument.new()
        one.import_pages(src, [page - 1])
        buf = io.BytesIO()
        one.save(buf)
        one.close()
        return buf.getvalue()
    finally:
        src.close()


@functools.cache  # the same for the peers' comparison
def tables_of(path: Path, page: int | None = None) -> list[list[list[str]]]:
    """Every table of our reading of the PDF (of its page ``page`` alone when given), as
    rows of cell texts."""
    from render_pool.engine.model import Paragraph, Table, Text
    from render_pool.engine.registry import read

    def text_of(node: object) -> str:
        if isinstance(node, Text):
            return node.text
        return "".join(text_of(k) for k in getattr(node, "children", None) or [])

    def walk(blocks: list, out: list) -> None:
        for b in blocks:
            if isinstance(b, Table):
                # laid out as a grid: a spanning cell's text in its first slot, the slots
                # it covers (right of it, and below it) empty, as camelot writes them
                rows: list[list[str]] = []
                below: dict[tuple[int, int], bool] = {}
                for r, row in enumerate(b.rows):
                    cells: list[str] = []
                    for cell in row.cells:
                        while below.get((r, len(cells))):
                            cells.append("")
                        at = len(cells)
                        cells.append(" ".join(
                            text_of_para(p) for p in cell.blocks if isinstance(p, Paragraph)))
                        cells.extend([""] * (max(cell.colspan, 1) - 1))
                        for rr in range(r + 1, r + max(cell.rowspan, 1)):
                            for cc in range(at, at + max(cell.colspan, 1)):
                                below[(rr, cc)] = True
                    while below.get((r, len(cells))):
                        cells.append("")
                    rows.append(cells)
                out.append(rows)
            for attr in ("blocks", "items"):
                kids = getattr(b, attr, None)
                if isinstance(kids, list):
                    walk(kids, out)

    def text_of_para(p: Paragraph) -> str:
        return "".join(text_of(n) for n in p.children)

    try:
        doc = read(page_bytes(path, page), "word2markdown", None)
    except Exception:
        return []
    out: list[list[list[str]]] = []
    walk(doc.blocks, out)
    return out


def cell_f1(found: list[list[list[str]]], expected: list[list[list[str]]]) -> float:
    """F1 of the multisets of non-empty normalised cell texts."""
    pred = Counter(_norm_cell(c) for t in found for r in t for c in r if c.strip())
    gold = Counter(_logical(c) for t in expected for r in t for c in r if c.strip())
    if not pred or not gold:
        return 0.0
    hit = sum((pred & gold).values())
    return 2 * hit / (sum(pred.values()) + sum(gold.values()))


def _row_major(rows: list[list[str]], norm: object = _norm_cell) -> list[str]:
    """Cells of a table in row-major order, empty ones kept, each row closed by a marker."""
    out: list[str] = []
    for r in rows:
        out.extend(norm(c) for c in r)  # type: ignore[operator]
        out.append("\x00")
    return out


def structure(found: list[list[list[str]]], expected: list[list[list[str]]]) -> float:
    """Mean over the expected tables of the normalised indel similarity of its row-major
    cell sequence (empty cells and row ends included) to the most similar table found;
    a table found is matched to one expected table at most."""
    if not expected:
        return 1.0
    left = [_row_major(t) for t in found]
    total = 0.0
    for exp in expected:
        gold = _row_major(exp, _logical)
        best, at = 0.0, -1
        for i, cand in enumerate(left):
            sim = difflib.SequenceMatcher(None, cand, gold, autojunk=False).ratio()
            if sim > best:
                best, at = sim, i
        if at >= 0:
            left.pop(at)
        total += best
    return total / len(expected)
