"""Structural fidelity of converted Markdown against an expected Markdown: per-category
precision, recall and F1 over element multisets.

Both texts are parsed the same way: Markdown (GFM, marko) is rendered to HTML and the HTML
(Markdown syntax and raw HTML alike: converters emit ``<table>``, ``<strong>``, ``<u>``...) is
walked with lxml, so a table written as a pipe table and the same table written as HTML score
the same. Categories:

- ``headings``: normalised heading text (levels stripped: Docling's DOCX ground truth writes
  Title as ``#`` and Heading N as N+1, other tools map them differently);
- ``heading levels``: (dense rank of the level within the document, text), so ``#/##/###``
  matches ``##/###/####``: the relative nesting, not the absolute level;
- ``list items``: normalised text of each item, nested lists excluded;
- ``table cells``: normalised text of each non-empty cell (a nested table's text included);
  lists and tables inside a table cell are not counted as items or cells: a GFM pipe table
  cannot hold them, so expected Markdown flattens them into the cell's text;
- ``links``: link targets (``href``), trimmed, trailing ``/`` dropped, images' ``data:`` excluded;
- ``images``: one token per image (``<img>``, Markdown image, Docling's ``<!-- image -->``
  placeholder): a count-based score;
- ``emphasis``: ("bold" or "italic", normalised text) per span (``**``/``<strong>``/``<b>``,
  ``*``/``<em>``/``<i>``).

The PDF comparison (``PDF_CATEGORIES``) adds: ``paragraphs`` (normalised text of each
paragraph outside lists, tables and quotes), ``tables`` (one ``rows x columns`` token per
table), ``code blocks`` (normalised text of each ``<pre>``), ``alt text`` (normalised alt of
each image that has one), ``footnotes`` (normalised text of each footnote definition) and
``block quotes`` (normalised text of each paragraph inside a quote).

Text is normalised with NFKC, case folding, and every run of non-word characters (punctuation,
Markdown escapes, whitespace) collapsed to one space; elements empty after that are dropped.
Multisets are compared (a heading repeated twice must appear twice). Scores are micro-averaged:
true positives and counts are summed over the corpus before computing P/R/F1.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("headings", "heading levels", "list items", "table cells", "links", "images",
              "emphasis")
PDF_CATEGORIES = ("headings", "heading levels", "paragraphs", "list items", "table cells",
                  "tables", "links", "images", "alt text", "emphasis", "code blocks",
                  "footnotes", "block quotes")
_FOOTNOTE_DEF = re.compile(r"^\[\^([^\]]+)\]:\s*(.*)$", re.MULTILINE)

_DATA_URI = re.compile(r"data:[a-zA-Z0-9.+/-]*(;[a-zA-Z0-9=.+-]*)*,[^)\s\"'>]*")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_IMAGE_COMMENT = re.compile(r"^\s*image\s*$", re.IGNORECASE)


def normalise(text: str) -> str:
    """NFKC, case-folded, non-word runs collapsed to one space, trimmed."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _markdown_to_html(markdown: str) -> str:
    import marko

    # data: URIs (embedded images) can be megabytes: keep the image, drop the payload
    return marko.Markdown(extensions=["gfm"]).convert(_DATA_URI.sub("data:,", markdown))


def _own_text(el: Any) -> str:  # an lxml element (lxml has no type stubs here)
    """Text of ``el`` without the text of nested lists (for list items)."""
    parts: list[str] = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and child.tag not in ("ul", "ol"):
            parts.append(_own_text(child))
        parts.append(child.tail or "")
    return " ".join(parts)


def _in_cell(el: Any) -> bool:  # an lxml element
    return any(a.tag in ("td", "th") for a in el.iterancestors())


def elements(markdown: str) -> dict[str, Counter[object]]:
    """Element multisets per category (see the module docstring) of a Markdown text."""
    found: dict[str, Counter[object]] = {c: Counter() for c in (*CATEGORIES, *PDF_CATEGORIES)}
    for _, text in _FOOTNOTE_DEF.findall(markdown):
        if normalise(text):
            found["footnotes"][normalise(text)] += 1
    html_elements(_markdown_to_html(_FOOTNOTE_DEF.sub("", markdown)), found)
    return found


def html_elements(html: str, found: dict[str, Counter[object]] | None = None
                  ) -> dict[str, Counter[object]]:
    """Element multisets per category of an HTML text (added to ``found`` when given)."""
    import lxml.html

    if found is None:
        found = {c: Counter() for c in (*CATEGORIES, *PDF_CATEGORIES)}
    if not html.strip():
        return found
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    headings: list[tuple[int, str]] = []
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):  # comments, processing instructions
            if _IMAGE_COMMENT.match(el.text or ""):
                found["images"]["image"] += 1
            continue
        tag = tag.lower()
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            text = normalise(el.text_content())
            if text:
                headings.append((int(tag[1]), text))
                found["headings"][text] += 1
        elif tag in ("li", "td", "th") and _in_cell(el):
            continue  # a GFM pipe table cannot hold lists or tables: not comparable
        elif tag == "li":
            text = normalise(_own_text(el))
            if text:
                found["list items"][text] += 1
        elif tag in ("td", "th"):
            text = normalise(el.text_content())
            if text:
                found["table cells"][text] += 1
        elif tag == "a":
            href = (el.get("href") or "").strip().rstrip("/")
            if href and not href.startswith("data:"):
                found["links"][href] += 1
        elif tag == "img":
            found["images"]["image"] += 1
            if normalise(el.get("alt") or ""):
                found["alt text"][normalise(el.get("alt") or "")] += 1
        elif tag == "p" and not any(a.tag in ("li", "td", "th", "blockquote")
                                    for a in el.iterancestors()):
            text = normalise(el.text_content())
            if text:
                found["paragraphs"][text] += 1
        elif tag == "p" and not any(a.tag in ("li", "td", "th") for a in el.iterancestors()):
            text = normalise(el.text_content())
            if text:
                found["block quotes"][text] += 1
        elif tag == "pre":
            text = normalise(el.text_content())
            if text:
                found["code blocks"][text] += 1
        elif tag == "table" and not _in_cell(el):
            rows = [r for r in el.iter("tr")]
            cols = max((len(r.findall("td")) + len(r.findall("th")) for r in rows), default=0)
            found["tables"][f"{len(rows)}x{cols}"] += 1
        elif tag in ("strong", "b", "em", "i"):
            text = normalise(el.text_content())
            if text:
                found["emphasis"][("bold" if tag in ("strong", "b") else "italic", text)] += 1
    ranks = {level: i + 1 for i, level in enumerate(sorted({lvl for lvl, _ in headings}))}
    for level, text in headings:
        found["heading levels"][(ranks[level], text)] += 1
    return found


@dataclass
class Tally:
    """Micro-averaged counts of one tool in one category."""

    tp: int = 0
    produced: int = 0
    expected: int = 0

    def add(self, produced: Counter[object], expected: Counter[object]) -> None:
        """Add one document's multisets."""
        self.tp += sum((produced & expected).values())
        self.produced += sum(produced.values())
        self.expected += sum(expected.values())

    @property
    def precision(self) -> float | None:
        return self.tp / self.produced if self.produced else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.expected if self.expected else None

    @property
    def f1(self) -> float | None:
        """F1; ``None`` when the expected side has no element (recall undefined)."""
        if not self.expected:
            return None
        if not self.tp:
            return 0.0
        p, r = self.tp / self.produced, self.tp / self.expected
        return 2 * p * r / (p + r)


@dataclass
class Score:
    """Per-category tallies of one tool over a corpus."""

    tallies: dict[str, Tally] = field(default_factory=lambda: {c: Tally() for c in CATEGORIES})
    documents: int = 0
    categories: tuple[str, ...] = CATEGORIES

    def add(self, produced_markdown: str, expected_markdown: str) -> None:
        """Score one document (a failed conversion counts as empty output)."""
        self.add_elements(elements(produced_markdown), elements(expected_markdown))

    def add_elements(self, produced: dict[str, Counter[object]],
                     expected: dict[str, Counter[object]]) -> None:
        """Score one document from already extracted element sets."""
        self.documents += 1
        for c in self.categories:
            self.tallies.setdefault(c, Tally()).add(produced[c], expected[c])


def score(produced: str, expected: str) -> Score:
    """Score a single document (convenience for tests)."""
    s = Score()
    s.add(produced, expected)
    return s
