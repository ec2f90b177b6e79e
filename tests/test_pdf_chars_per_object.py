"""page_chars reads a text object's matrix, font size and style once and gives them to all
its characters: every character must still get the size and baseline pdfium reports for it
(a space pdfium inserts into a right-to-left run carries a matrix of its own).

The oracle asks pdfium for each character, the slow way, and indexes the answers by the
character's box (boxes may repeat, so each box keeps the set of answers seen for it)."""

from __future__ import annotations

import math
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from render_pool.engine.pdf.chars import page_chars

DATA = Path(__file__).resolve().parent / "data" / "pdf"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "realworld" / "pdf"
Box = tuple[float, float, float]


def _per_char(textpage: pdfium.PdfTextPage, height: float) -> dict[Box, set[tuple[float, float]]]:
    """(size, baseline) of every character as pdfium reports it, by the character's box."""
    out: dict[Box, set[tuple[float, float]]] = {}
    rect = pdfium_c.FS_RECTF()
    mat = pdfium_c.FS_MATRIX()
    for i in range(textpage.count_chars()):
        if not pdfium_c.FPDFText_GetLooseCharBox(textpage, i, rect):
            continue
        pdfium_c.FPDFText_GetMatrix(textpage, i, mat)
        scale = math.sqrt(abs(mat.a * mat.d - mat.b * mat.c)) or 1.0
        size = pdfium_c.FPDFText_GetFontSize(textpage, i) * scale
        if size <= 0:
            size = max(1.0, (rect.top - rect.bottom) / 1.2)
        box = (rect.left, rect.right, height - rect.top)
        out.setdefault(box, set()).add((size, height - mat.f))
    return out


def _check(path: Path) -> int:
    doc = pdfium.PdfDocument(path)
    checked = 0
    try:
        for index in range(min(len(doc), 4)):
            page = doc[index]
            height = page.get_height()
            textpage = page.get_textpage()
            truth = _per_char(textpage, height)
            for ch in page_chars(textpage, height):
                if ch is None or ch.generated:
                    continue
                seen = truth.get((ch.x0, ch.x1, ch.top))
                assert seen is not None, (path.name, index, ch.text)
                assert (ch.size, ch.baseline) in seen, (path.name, index, ch.text, seen)
                checked += 1
    finally:
        doc.close()
    return checked


def test_every_character_has_its_own_size_and_baseline() -> None:
    pdfs = sorted(DATA.rglob("*.pdf"))
    assert pdfs
    assert sum(_check(p) for p in pdfs) > 1000


def test_space_inside_right_to_left_text_keeps_its_matrix() -> None:
    path = CORPUS / "pypdf__habibi.pdf"
    if not path.exists():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    assert _check(path) > 0
