"""Two ways from an HTML page into the document model, measured on the same pages.

- ``markdownify``: the page to Markdown with markdownify (what batches did,
  ``render_pool.html_markdown`` before issue 21), then the Markdown reader;
- ``html reader``: the page straight through the HTML reader (what uploads do,
  ``render_pool.engine.html.reader``).

Each path's model is written as HTML by the HTML writer and compared with the page itself
(``bench.fidelity.html_elements``: headings, list items, table cells, links, images,
emphasis...), plus two categories of this section: ``spanned cells`` (text, rowspan, colspan of
every cell that spans more than one row or column) and ``words`` (the page's visible words as
a multiset). Scores are micro-averaged F1 over the pages; time is the sum over the pages of
the best of three runs of each path (the HTML writer not included).

Pages: the HTML files of ``../shared/corpus`` (Docling's HTML ground truth and serialiser
output: spanned tables), the HTML mammoth's tests expect from their DOCX files, and the
DOCX files of the Docling and pandoc corpora written as HTML by this service (its DOCX
reader and HTML writer: tables with ``rowspan``/``colspan``, lists, notes, links). The last
set favours the HTML reader (it reads what the HTML writer writes), so figures are given per
set. Run: ``python -m bench html_paths``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.common import machine, table
from bench.fidelity import CATEGORIES, Tally, html_elements, normalise
from render_pool.batch.links import AUTOLINK, markdown_destination
from render_pool.engine.model import Document
from render_pool.engine.url_safety import is_safe_image_src, is_safe_link
from render_pool.errors import CorruptDocument

# ../shared/corpus beside the clone, or where BENCH_CORPUS says
CORPUS = Path(os.environ.get("BENCH_CORPUS")
              or Path(__file__).resolve().parents[2] / "shared" / "corpus")
_CATEGORIES = (*CATEGORIES, "spanned cells", "words")


def _body(html: str) -> str:
    """The inside of the page's ``<body>`` (the whole text when it has none)."""
    import lxml.html

    root = lxml.html.document_fromstring(html)
    for el in root.xpath("//script|//style|//head"):
        el.drop_tree()
    body = root.find("body")
    node = body if body is not None else root
    inner = (node.text or "") + "".join(
        lxml.html.tostring(c, encoding="unicode") for c in node)
    return inner


def _extra(html: str) -> dict[str, Counter[object]]:
    """The ``spanned cells`` and ``words`` multisets of an HTML fragment."""
    import lxml.html

    found: dict[str, Counter[object]] = {"spanned cells": Counter(), "words": Counter()}
    if not html.strip():
        return found
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    for cell in root.iter("td", "th"):
        span = (cell.get("rowspan") or "1", cell.get("colspan") or "1")
        if span != ("1", "1"):
            found["spanned cells"][(normalise(cell.text_content()), *span)] += 1
    found["words"].update(normalise(root.text_content()).split())
    return found


def _elements(fragment: str) -> dict[str, Counter[object]]:
    return {**html_elements(fragment), **_extra(fragment)}


def pages() -> Iterator[tuple[str, str, str]]:
    """(set, name, HTML) of every page measured."""
    for path in sorted(CORPUS.rglob("*.htm*")):
        yield "corpus HTML", path.name, path.read_text(encoding="utf-8")
    expected = CORPUS / "mammoth" / "EXPECTED.json"
    if expected.exists():
        for case in json.loads(expected.read_text(encoding="utf-8")):
            value = case.get("expected_value")
            html = "".join(value) if isinstance(value, list) else value
            if isinstance(html, str) and "<" in html:
                yield "mammoth HTML", case["test"], f"<html><body>{html}</body></html>"
    from render_pool.engine.docx.reader import read_docx
    from render_pool.engine.html.writer import write_html

    for folder in ("docling/docx/sources", "pandoc/docx"):
        for path in sorted((CORPUS / folder).glob("*.docx")):
            try:
                html = write_html(read_docx(path.read_bytes()))
            except Exception as exc:  # a file the DOCX reader refuses is no page
                print(f"skipped {path.name}: {type(exc).__name__}", file=sys.stderr)
                continue
            yield "DOCX written as HTML", path.name, html


# ---------------------------------------------------------------- the markdownify path
# render_pool/html_markdown.py before issue 21 (the batch's converter then), kept here as the
# baseline: markdownify with the allow-list on link and image destinations.
def _markdown_url(url: str) -> str:
    return markdown_destination(url, angle=False)


def _converter():  # imported lazily: markdownify pulls in BeautifulSoup
    from markdownify import MarkdownConverter, chomp

    class Converter(MarkdownConverter):
        """markdownify with safe destinations and images kept everywhere (links, cells)."""

        def convert_head(self, el, text, parent_tags):
            return ""

        def convert_title(self, el, text, parent_tags):
            return ""

        def convert_img(self, el, text, parent_tags):
            alt = (el.attrs.get("alt") or "").replace("[", r"\[").replace("]", r"\]")
            src = el.attrs.get("src") or ""
            if "_noformat" in parent_tags or not src or not is_safe_image_src(src):
                return alt
            title = el.attrs.get("title") or ""
            title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
            return f"![{alt}]({_markdown_url(src)}{title_part})"

        def convert_a(self, el, text, parent_tags):
            if "_noformat" in parent_tags:
                return text
            prefix, suffix, text = chomp(text)
            href = el.get("href")
            if not text:
                return ""
            if not href or not is_safe_link(href):
                return text
            title = el.get("title")
            if text.replace(r"\_", "_") == href and not title and AUTOLINK.fullmatch(
                    f"<{href}>"):
                return f"{prefix}<{href}>{suffix}"
            title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
            return f"{prefix}[{text}]({_markdown_url(href)}{title_part}){suffix}"

    return Converter


_MAX_DEPTH = 200  # elements inside each other; the converter recurses once per level


def _check_depth(soup) -> None:
    """Raise :class:`CorruptDocument` (40003) for HTML nested deeper than the converter can
    recurse (it ended in a RecursionError); measured without recursion, in linear time."""
    stack = [(soup, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise CorruptDocument(f"the HTML nests elements deeper than {_MAX_DEPTH} "
                                  f"levels; the limit is {_MAX_DEPTH}")
        stack.extend((child, depth + 1) for child in getattr(node, "contents", ()))


def markdownify_markdown(html: str) -> str:
    """Convert HTML to Markdown with markdownify (ATX headings, ``-`` bullets, fenced code
    with the language from ``class="language-x"``); ``<head>``, scripts and styles dropped."""

    def language(el) -> str:
        for node in (el, *el.find_all("code", limit=1)):
            for cls in node.get("class") or []:
                if cls.startswith(("language-", "lang-")):
                    return cls.split("-", 1)[1]
        return ""

    from bs4 import BeautifulSoup

    converter = _converter()(heading_style="ATX", bullets="-", code_language_callback=language,
                             escape_underscores=False, escape_misc=False)
    # lxml (libxml2) parses in linear time; Python's html.parser rescans the rest of the
    # text for every unclosed tag ("<a " * 4000 took 2 s, * 32000 minutes)
    soup = BeautifulSoup(html, "lxml")
    _check_depth(soup)
    text = converter.convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _markdownify_path(html: str) -> Document:
    from render_pool.engine.markdown.reader import read_markdown

    return read_markdown(markdownify_markdown(html))


def _reader_path(html: str) -> Document:
    from render_pool.engine.html.reader import read_html_file

    return read_html_file(html.encode("utf-8"))


PATHS: dict[str, Callable[[str], Document]] = {"markdownify": _markdownify_path,
                                             "html reader": _reader_path}


def _best(fn: Callable[[str], Document], html: str) -> tuple[Document, float]:
    best, out = float("inf"), None
    for _ in range(3):
        start = time.perf_counter()
        out = fn(html)
        best = min(best, time.perf_counter() - start)
    return out, best


def measure(quick: bool = False) -> dict[str, dict[str, dict[str, Tally]]]:
    """{set: {path: {category: tally}}} plus a ``seconds`` pseudo-category and page counts."""
    from render_pool.engine.html.render import html_body

    results: dict[str, dict[str, dict[str, Tally]]] = {}
    for n, (group, _name, html) in enumerate(pages()):
        if quick and n % 8:
            continue
        expected = _elements(_body(html))
        by_path = results.setdefault(group, {p: {c: Tally() for c in _CATEGORIES}
                                             for p in PATHS})
        for path, fn in PATHS.items():
            doc, seconds = _best(fn, html)
            produced = _elements(html_body(doc))
            for c in _CATEGORIES:
                by_path[path][c].add(produced[c], expected[c])
            by_path[path].setdefault("seconds", Tally()).tp += round(seconds * 1e6)
            by_path[path]["seconds"].expected += 1  # pages
    return results


def _f1(t: Tally) -> str:
    return "-" if t.f1 is None else f"{t.f1:.3f}"


def run(quick: bool = False) -> None:
    if not CORPUS.exists():
        print(f"\n## HTML into the model\n\nskipped: {CORPUS} not present")
        return
    results = measure(quick)
    print(f"\nmachine: {machine()}")
    for group, by_path in results.items():
        pages_n = by_path["html reader"]["seconds"].expected
        rows = [[c, *(_f1(by_path[p][c]) for p in PATHS),
                 by_path["html reader"][c].expected] for c in _CATEGORIES]
        ms = [by_path[p]["seconds"].tp / 1e3 for p in PATHS]
        rows.append(["time, ms (sum of best of 3)", *(f"{x:.1f}" for x in ms),
                     f"ratio {ms[0] / max(ms[1], 1e-9):.2f}"])
        table(f"HTML into the model: {group} ({pages_n} pages), F1 against the page",
              ["category", *PATHS, "elements in pages"], rows)


if __name__ == "__main__":
    run()
