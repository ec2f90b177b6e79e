"""Markdown to PDF/DOCX (issue 25, item 7): ``:---:`` / ``---:`` column alignment reaches the
PDF and the DOCX, the DOCX table of contents is written with its entries, so it shows
without a field update, and the DOCX "Page N of M" leaves the cover out as the PDF does
(checked in LibreOffice too when ``soffice`` is installed)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import docx
import jsonschema_rs
import pypdfium2 as pdfium
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml.ns import qn

from render_pool.engine.common.cover import CoverPage
from render_pool.engine.docx.writer import TOC_PLACEHOLDER, write_docx
from render_pool.engine.json.writer import SCHEMA_PATH, document_to_json_data
from render_pool.engine.markdown.reader import attach_images, read_markdown
from render_pool.engine.options import WriterOptions
from render_pool.runtime import browser
from render_pool.runtime.browser import find_chromium

ALIGNED = ("| Left | Centre | Right |\n|:-----|:------:|------:|\n"
           "| aaa | bbb | ccc |\n")
PLAIN = "| Left | Centre | Right |\n|------|--------|-------|\n| aaa | bbb | ccc |\n"


@pytest.fixture(scope="module", autouse=True)
def _close_at_end():
    """Chromium (Playwright's sync API) keeps an event loop marked running in this thread
    until it is closed; later tests on Tornado's loop would fail."""
    yield
    browser.close_browser()


def doc_of(text: str):
    doc = read_markdown(text)
    attach_images(doc, {}, {})
    return doc


def test_the_reader_keeps_column_alignment_and_json_shows_it_only_when_given():
    rows = doc_of(ALIGNED).blocks[0].rows
    assert [[c.align for c in r.cells] for r in rows] == [["left", "center", "right"]] * 2
    schema = jsonschema_rs.validator_for(json.loads(SCHEMA_PATH.read_text()))
    data = document_to_json_data(doc_of(ALIGNED))
    schema.validate(data)
    assert data["blocks"][0]["rows"][1]["cells"][1]["align"] == "center"
    plain = document_to_json_data(doc_of(PLAIN))
    schema.validate(plain)
    assert "align" not in plain["blocks"][0]["rows"][1]["cells"][1]  # unchanged shape


def test_docx_cells_are_aligned_like_the_columns():
    d = docx.Document(io.BytesIO(write_docx(doc_of(ALIGNED), WriterOptions())))
    cells = d.tables[0].rows[1].cells
    assert [c.paragraphs[0].alignment for c in cells] == [
        WD_ALIGN_PARAGRAPH.LEFT, WD_ALIGN_PARAGRAPH.CENTER, WD_ALIGN_PARAGRAPH.RIGHT]
    plain = docx.Document(io.BytesIO(write_docx(doc_of(PLAIN), WriterOptions())))
    assert {c.paragraphs[0].alignment for c in plain.tables[0].rows[1].cells} == {None}


@pytest.mark.slow  # Chromium
@pytest.mark.skipif(find_chromium() is None, reason="no chromium")
def test_pdf_cells_are_aligned_like_the_columns():
    from render_pool.engine.options import WriterOptions
    from render_pool.engine.pdf.writer import write_pdf

    def x_of(text: str, word: str) -> tuple[float, float, float]:
        """Left edge of ``word``, and of the cells' first and last words, on page 1."""
        data, _ = write_pdf(doc_of(text), WriterOptions(css_name="academic"))  # left-aligned th/td
        pdf = pdfium.PdfDocument(data)
        page = pdf[0].get_textpage()
        lefts = {}
        for w in ("aaa", word, "ccc"):
            found = page.search(w).get_next()
            assert found, w
            lefts[w] = page.get_charbox(found[0])[0]
        pdf.close()
        return lefts["aaa"], lefts[word], lefts["ccc"]

    _, centre_plain, right_plain = x_of(PLAIN, "bbb")
    _, centre, right = x_of(ALIGNED, "bbb")
    assert centre > centre_plain + 5  # moved towards the middle of its column
    assert right > right_plain + 5  # and to the right edge


def toc_doc_text() -> str:
    body = "\n\n".join(f"# Chapter {i}\n\nText {i}.\n\n## Part {i}.1\n\nMore." for i in range(1, 4))
    return body + "\n\n#### Too deep\n"


def test_docx_toc_is_written_with_its_entries_linked_to_the_headings():
    data = write_docx(doc_of(toc_doc_text()), WriterOptions(toc=True))
    d = docx.Document(io.BytesIO(data))
    entries = [p for p in d.paragraphs if p.style.name.startswith("toc ")]
    assert [p.text for p in entries] == [
        "Chapter 1", "Part 1.1", "Chapter 2", "Part 2.1", "Chapter 3", "Part 3.1"]
    assert [p.style.name for p in entries[:2]] == ["toc 1", "toc 2"]
    assert TOC_PLACEHOLDER not in "\n".join(p.text for p in d.paragraphs)
    # one field around the entries (Word still refreshes it, with page numbers)
    body = d.element.body
    assert [e.get(qn("w:fldCharType")) for e in body.iter(qn("w:fldChar"))] == [
        "begin", "separate", "end"]
    bookmarks = {b.get(qn("w:name")) for b in body.iter(qn("w:bookmarkStart"))}
    anchors = [h.get(qn("w:anchor")) for h in body.iter(qn("w:hyperlink"))]
    assert len(anchors) == 6 and set(anchors) <= bookmarks


@pytest.mark.slow  # LibreOffice
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice not installed")
def test_libreoffice_shows_the_toc_without_an_update(tmp_path: Path):
    data = write_docx(doc_of(toc_doc_text()), WriterOptions(
        toc=True, cover=CoverPage(document_name="Guide")))
    (tmp_path / "t.docx").write_bytes(data)
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(tmp_path / "t.docx")],
                   check=True, capture_output=True, timeout=180)
    pdf = pdfium.PdfDocument(str(tmp_path / "t.pdf"))
    contents = pdf[1].get_textpage().get_text_range()  # page 1 is the cover
    pdf.close()
    assert "Contents" in contents and "Right-click" not in contents
    for entry in ("Chapter 1", "Part 1.1", "Chapter 3", "Part 3.1"):
        assert entry in contents


def _libreoffice_pages(tmp_path: Path, data: bytes) -> list[str]:
    (tmp_path / "p.docx").write_bytes(data)
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/lo",
                    "--convert-to", "pdf", "--outdir", str(tmp_path), str(tmp_path / "p.docx")],
                   check=True, capture_output=True, timeout=180)
    pdf = pdfium.PdfDocument(str(tmp_path / "p.pdf"))
    try:
        return [page.get_textpage().get_text_range() for page in pdf]
    finally:
        pdf.close()


@pytest.mark.slow  # LibreOffice
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice not installed")
def test_libreoffice_page_numbers_leave_the_cover_out(tmp_path: Path):
    """/md/convert target=docx with a cover, footer text and the "Page {page} of {pages}"
    numbers: a cover and three body pages show "Page 1 of 3" .. "Page 3 of 3", the cover
    none (as in the PDF, where the TOC would start at page 1)."""
    from render_pool.engine import jobs

    text = "# Guide\n\n" + "\n\n".join(f"Paragraph {i} of the body." for i in range(1, 65))
    request = jobs.RenderRequest(target="docx", header_text="ACME confidential",
                                 footer_text="Acme guide",
                                 cover=CoverPage(document_name="User Guide"))
    pages = _libreoffice_pages(tmp_path, jobs.render_markdown(text, request, {}, {}).data)
    assert len(pages) == 4  # no blank page between the cover and the body
    assert "User Guide" in pages[0]
    assert "Page" not in pages[0] and "Acme guide" not in pages[0]
    assert "ACME confidential" not in pages[0]
    for n, page in enumerate(pages[1:], start=1):
        assert f"Page {n} of 3" in page and "Acme guide" in page and "ACME confidential" in page
    assert "Paragraph 64 of" in pages[3]
