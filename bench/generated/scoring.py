"""Scores of the generated corpus: per tool, writer and part of the set (tuning or held-out),
``bench.fidelity``'s categories micro-averaged over the documents, and their macro-F1.

The split is by a stable hash of the source's name (CRC-32 modulo 3: one third held out),
so that a change is judged on documents that were not looked at while making it. The ODS
writer holds only the sources' tables: it is scored on table cells alone. The scan writer
is not scored on links: a link's target is not on paper, so no reader of a scan can give it
(its text is still scored, in the paragraphs).
"""

from __future__ import annotations

import zlib
from collections import Counter

from bench.fidelity import PDF_CATEGORIES, Score, Tally, elements
from bench.pdf_scoring import order_similarity, words

ODS_CATEGORIES = ("table cells",)
SCAN_CATEGORIES = tuple(c for c in PDF_CATEGORIES if c != "links")
TUNING, HELD_OUT = "tuning", "held-out"


def part_of(name: str) -> str:
    """``held-out`` for about one source in three (stable over runs and machines)."""
    return HELD_OUT if zlib.crc32(name.encode()) % 3 == 0 else TUNING


def categories_of(writer: str) -> tuple[str, ...]:
    if writer == "ods":
        return ODS_CATEGORIES
    return SCAN_CATEGORIES if writer == "scan" else PDF_CATEGORIES


def new_score(writer: str) -> Score:
    cats = categories_of(writer)
    return Score(tallies={c: Tally() for c in cats}, categories=cats)


def add(score: Score, produced: str, expected: dict[str, Counter[object]]) -> None:
    """Add one document (a failed conversion is scored as empty output)."""
    score.add_elements(elements(produced), expected)


def macro_f1(score: Score) -> float | None:
    """Mean F1 over the categories the truth has elements of."""
    values = [t.f1 for t in score.tallies.values() if t.f1 is not None]
    return sum(values) / len(values) if values else None


def reading_order(produced: str, source_markdown: str) -> float:
    """Reading order of one document: the normalised indel similarity of the words of the
    produced Markdown against the source Markdown's (``bench.pdf_scoring.order_similarity``,
    the measure ``bench.pdf_layout`` uses against pdftotext), so lost, repeated or displaced
    words all lower it."""
    return order_similarity(words(produced), words(source_markdown))


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
