"""An independent check of PDF provenance: do a block's words lie inside its box?

``pdftotext -bbox-layout -cropbox`` (poppler, not pdfium, so not the reader's own glyph boxes)
places every word of a page as a viewer shows it (crop box, ``/Rotate`` applied). For each
block with a page box, the block's words are matched against the words poppler places inside
that box on that page (as multisets, normalised: NFKC, case folded, edge punctuation dropped);
a word of the block that poppler reads nowhere on the page (a hyphenated line end joined, a
ligature poppler splits) is left out of the count. The share is inside / matched over all
blocks. Used by tests/test_provenance.py and ``just bench chunks``.
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from render_pool.engine.model import Block, Code, CodeBlock, Document, PageBox, Text, walk

SLACK = 2.0  # points a word's centre may lie outside a box (rounding, glyph bearings)
_EDGE = re.compile(r"^\W+|\W+$")


def norm(word: str) -> str:
    """A word as compared: NFKC, case folded, without punctuation at its ends."""
    return _EDGE.sub("", unicodedata.normalize("NFKC", word).casefold())


@dataclass
class Word:
    text: str
    x: float  # centre
    y: float


def poppler_words(pdf: Path, pages: list[int], timeout: float = 60.0) -> dict[int, list[Word]]:
    """Page (from 1) -> the words ``pdftotext -bbox-layout`` places there (centres)."""
    out: dict[int, list[Word]] = {}
    if not pages:
        return out
    try:
        raw = subprocess.run(
            ["pdftotext", "-bbox-layout", "-cropbox", "-q", "-f", str(min(pages)),
             "-l", str(max(pages)), str(pdf), "-"],
            capture_output=True, timeout=timeout, check=False).stdout
    except subprocess.TimeoutExpired:  # a hostile file poppler chokes on: no judge here
        return out
    if not raw:
        return out
    root = etree.fromstring(raw, etree.XMLParser(recover=True, huge_tree=True))
    if root is None:
        return out
    for number, page in enumerate(root.iter("{*}page"), min(pages)):
        words = out.setdefault(number, [])
        for w in page.iter("{*}word"):
            x0, y0 = float(w.get("xMin", 0)), float(w.get("yMin", 0))
            x1, y1 = float(w.get("xMax", 0)), float(w.get("yMax", 0))
            text = norm(w.text or "")
            if text:
                words.append(Word(text, (x0 + x1) / 2, (y0 + y1) / 2))
    return out


@dataclass
class ProvScore:
    """Words of blocks matched on their page, and how many of them lie inside the box."""

    matched: int = 0
    inside: int = 0
    blocks: int = 0
    blocks_without_box: int = 0
    misses: list[str] = field(default_factory=list)  # a few blocks far off, for a report

    @property
    def share(self) -> float:
        return self.inside / self.matched if self.matched else 1.0

    def add(self, other: ProvScore) -> None:
        self.matched += other.matched
        self.inside += other.inside
        self.blocks += other.blocks
        self.blocks_without_box += other.blocks_without_box
        self.misses.extend(other.misses[: max(0, 5 - len(self.misses))])


def shown_text(block: Block) -> str:
    """The text a block shows on the page (an image's alt text is not printed there)."""
    return " ".join(n.text for n in walk([block]) if isinstance(n, (Text, Code, CodeBlock)))


def _inside(word: Word, box: tuple[float, float, float, float]) -> bool:
    x0, top, x1, bottom = box
    return x0 - SLACK <= word.x <= x1 + SLACK and top - SLACK <= word.y <= bottom + SLACK


def score_document(doc: Document, pdf: Path) -> ProvScore:
    """The provenance score of ``doc`` (read from ``pdf``) over its top-level blocks."""
    score = ProvScore()
    pages = sorted({loc.page for b in doc.blocks for loc in b.prov
                    if isinstance(loc, PageBox)})
    words = poppler_words(pdf, pages)
    for block in doc.blocks:
        mine = Counter(w for w in map(norm, shown_text(block).split()) if w)
        if not mine:
            continue
        boxes = [loc for loc in block.prov if isinstance(loc, PageBox)]
        score.blocks += 1
        if not boxes:
            score.blocks_without_box += 1
            continue
        on_pages = Counter(w.text for b in boxes for w in words.get(b.page, []))
        in_box = Counter(w.text for b in boxes for w in words.get(b.page, [])
                         if _inside(w, b.bbox))
        matched = sum((mine & on_pages).values())
        inside = sum((mine & in_box).values())
        score.matched += matched
        score.inside += inside
        if matched and inside < 0.8 * matched and len(score.misses) < 5:
            score.misses.append(f"{pdf.name} p{boxes[0].page}: {inside}/{matched} "
                                f"{shown_text(block)[:60]!r}")
    return score
