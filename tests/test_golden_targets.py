"""Golden outputs of ``/md/convert``: a few Markdown sources rendered to PDF (Chromium) and
DOCX (python-docx), kept in tests/golden/targets/ as their text and structure, not their bytes
(the bytes change with every build: dates, ids, font subsets).

- DOCX: each body paragraph as its style name, list level and text, tables as rows of cell
  text, pictures by their description, then the headers, footers and footnotes.
- PDF: the page count, the document title, the outline (level, title, page) and each page's
  text as pypdfium2 extracts it.

Regenerate after an intended change with ``pytest tests/test_golden_targets.py
--update-golden`` and review ``git diff tests/golden``."""

from __future__ import annotations

import base64
import io
from typing import Any

import pypdfium2 as pdfium
import pytest

from render_pool.engine.common.cover import CoverPage
from render_pool.engine.jobs import RenderRequest, render_markdown
from render_pool.runtime.browser import find_chromium
from tests import golden_inputs
from tests.pdf_office_set import _png
from tests.test_golden import GOLDEN, check_golden, stray_files

TARGETS_DIR = GOLDEN / "targets"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

GUIDE = "\n\n".join([
    "# Setting up",
    "This guide walks through the set-up in three parts.",
    "## Install",
    "1. Download the package\n2. Run the installer\n    - accept the licence\n3. Restart",
    "### Checking the install",
    *(f"Paragraph {n} of the checks: each step is described at length so that the guide "
      "runs over more than one page when it is printed on A4 paper with the default theme."
      for n in range(1, 13)),
    "## Configure",
    "| Setting | Default | Meaning |\n|---|---|---|\n| `port` | 8080 | where it listens |\n"
    "| `workers` | 2 | processes |",
    "# Using it",
    "Open the app and sign in.[^1]",
    "[^1]: An account is needed.",
])

PICTURE = "data:image/png;base64," + base64.b64encode(_png(32, 20)).decode()
COVERED = (f"# Product sheet\n\nThe café\u2019s menu, naïve résumé — “quoted” and ∑ signs.\n\n"
           f"![A checked pattern]({PICTURE})\n\n> Note: prices include tax.\n")

# name -> (Markdown, the request's options besides the target)
SOURCES: dict[str, tuple[str, dict[str, Any]]] = {
    "field-notes": (golden_inputs.MARKDOWN, {}),
    "guide-toc": (GUIDE, {"toc": True, "title": "Setup guide", "header_text": "Setup guide",
                          "footer_text": "Internal"}),
    "product-cover": (COVERED, {"cover": CoverPage(product_name="Widget", product_version="2.1",
                                                   document_name="Product sheet",
                                                   copyright_text="© 2026 Example Ltd"),
                                "page_number_format": "{page}/{pages}"}),
}


def rendered(name: str, target: str) -> bytes:
    text, options = SOURCES[name]
    return render_markdown(text, RenderRequest(target=target, **options), {}, {}).data


def _text(element: Any) -> str:
    """The text of ``element``: its ``w:t`` runs, a line break as a new line, a tab as one."""
    parts = {f"{W}br": "\n", f"{W}tab": "\t"}
    return "".join(e.text or "" if e.tag == f"{W}t" else parts[e.tag]
                   for e in element.iter(f"{W}t", f"{W}br", f"{W}tab"))


def _paragraph_line(p: Any, styles: dict[str, str]) -> str:
    """``[Style] text`` with the list level when numbered, pictures by their description."""
    ppr = p.find(f"{W}pPr")
    style_el = ppr.find(f"{W}pStyle") if ppr is not None else None
    style = styles.get(style_el.get(f"{W}val"), "?") if style_el is not None else "Normal"
    numbering = ppr.find(f"{W}numPr") if ppr is not None else None
    list_mark = ""
    if numbering is not None:
        ids = [numbering.find(f"{W}{tag}") for tag in ("numId", "ilvl")]
        list_mark = " (list {} level {})".format(*(
            "?" if el is None else el.get(f"{W}val") for el in ids))
    pictures = [d.get("descr", "") for d in p.iter(
        "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr")]
    shown = "".join(f" [picture: {d}]" for d in pictures)
    text = _text(p).replace("\n", "\n    ")  # a line break: the next line, indented
    return f"[{style}]{list_mark} {text}{shown}".rstrip()


def _block_lines(parent: Any, styles: dict[str, str]) -> list[str]:
    """The paragraphs and tables directly in ``parent`` (and in content controls) in order."""
    lines: list[str] = []
    for child in parent:
        if child.tag == f"{W}p":
            lines.append(_paragraph_line(child, styles))
        elif child.tag == f"{W}tbl":
            lines.append("table:")
            for row in child.iter(f"{W}tr"):
                lines.append("  | " + " | ".join(_text(c) for c in row.iter(f"{W}tc")) + " |")
        elif child.tag == f"{W}sdt":
            content = child.find(f"{W}sdtContent")
            if content is not None:
                lines += ["content control:", *("  " + x for x in _block_lines(content, styles))]
    return lines


def docx_structure(data: bytes) -> str:
    """What a reader of the DOCX sees, one line per paragraph (see the module docstring)."""
    import docx

    document = docx.Document(io.BytesIO(data))
    styles = {s.style_id: s.name for s in document.styles}
    lines = ["body:", *_block_lines(document.element.body, styles)]
    for n, section in enumerate(document.sections, start=1):
        for where, part in (("header", section.header), ("footer", section.footer)):
            texts = [_text(p) for p in part._element.iter(f"{W}p")]
            lines.append(f"section {n} {where}: " + " / ".join(t for t in texts if t))
    for part in document.part.package.iter_parts():
        if str(part.partname) == "/word/footnotes.xml":
            from lxml import etree

            root = etree.fromstring(part.blob)
            for note in root.iter(f"{W}footnote"):
                if int(note.get(f"{W}id")) > 0:
                    lines.append(f"footnote {note.get(f'{W}id')}: {_text(note).strip()}")
    return "\n".join(lines) + "\n"


def pdf_structure(data: bytes) -> str:
    """Page count, title, outline and each page's text (see the module docstring)."""
    pdf = pdfium.PdfDocument(data)
    lines = [f"pages: {len(pdf)}", f"title: {pdf.get_metadata_dict().get('Title', '')}",
             "outline:"]
    for item in pdf.get_toc():
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        page = "?" if index is None else index + 1
        lines.append(f"  {'  ' * item.level}{item.get_title()} (page {page})")
    for index in range(len(pdf)):
        text = pdf[index].get_textpage().get_text_range()
        body = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n"))
        lines += [f"--- page {index + 1} ---", body.strip("\n")]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_docx_target_matches_the_golden_structure(name: str,
                                                  request: pytest.FixtureRequest) -> None:
    check_golden(TARGETS_DIR / f"{name}.docx.txt", docx_structure(rendered(name, "docx")),
                 request)


@pytest.mark.slow  # Chromium
@pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed: PDF is printed by it")
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_pdf_target_matches_the_golden_structure(name: str,
                                                 request: pytest.FixtureRequest) -> None:
    check_golden(TARGETS_DIR / f"{name}.pdf.txt", pdf_structure(rendered(name, "pdf")), request)


def test_every_golden_file_belongs_to_a_case() -> None:
    """A golden file left behind by a removed source or target fails here."""
    expected = {f"{n}.{t}.txt" for n in SOURCES for t in ("docx", "pdf")}
    assert stray_files(TARGETS_DIR, expected) == set()
