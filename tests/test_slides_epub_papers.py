"""Slides, EPUB notes and the details of real papers (issue 32, items 4 and 5).

Slides: a text box in a monospace font is a code block with its lines kept, monospaced runs
in prose are inline code, bold and italic runs stay, a short wholly bold paragraph below
the slide title is a heading one level down, and a slide is named by a comment, never by
an anchor inside its heading. EPUB (and HTML marked the same way): ``noteref`` links and
``footnote``/``endnote`` asides are the document's notes. Papers: an accent drawn as a
glyph of its own joins its letter, the author block is paragraphs with superscript marks.

Documents are made here (python-pptx, hand-written PDFs and EPUBs) or by pandoc and
LibreOffice from Markdown (held-out checks: scored against the Markdown source).
"""

from __future__ import annotations

import io
import shutil
import statistics
from pathlib import Path

import pytest

from bench.fidelity import Score
from render_pool.engine import registry
from render_pool.engine.formats import ReadRequest
from render_pool.engine.html.build import read_html
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import (
    Anchor,
    Code,
    CodeBlock,
    Emph,
    Heading,
    Link,
    NoteRef,
    Paragraph,
    RawHtml,
    SlideRef,
    Strong,
    Superscript,
    plain_text,
    walk,
    walk_document,
)
from tests.office_fixtures import has_libreoffice, pandoc, soffice_convert, zip_bytes
from tests.pdf_fixtures import _pdf, _stream

REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "realworld" / "pdf"
needs_pandoc = pytest.mark.skipif(shutil.which("pandoc") is None, reason="needs pandoc")

SOURCE_MD = """# Setting up

## Installing the tools

Run the installer with **administrator rights** and *read the log* afterwards.
Call `make install` from the checkout.

- First item
- Second item

## Example script

```
def greet(name):

    return "Hello " + name
```

### Deeper level

Some paragraph under the third level heading.

## Results

A sentence with a result.
"""
NOTES_MD = SOURCE_MD + """
A sentence with a note.[^1] And another.[^2]

[^1]: The first footnote text.
[^2]: The second footnote with *emphasis*.
"""
CODE = 'def greet(name):\n\n    return "Hello " + name'


def _structure(produced: str, expected: str) -> dict[str, float | None]:
    s = Score(categories=("headings", "heading levels", "emphasis", "code blocks",
                          "footnotes"))
    s.add(produced, expected)
    return {name: t.f1 for name, t in s.tallies.items()}


# ---------------------------------------------------------------- slides
def _deck() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    prs.slides.add_slide(prs.slide_layouts[0]).shapes.title.text = "Tools"
    slide = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    slide.shapes.title.text = "Running the tool"
    body = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(2)).text_frame
    body.text = "Setup"
    body.paragraphs[0].runs[0].font.bold = True
    p = body.add_paragraph()
    for text, font, bold, italic in (("Call ", None, False, False),
                                     ("make install", "Consolas", False, False),
                                     (" with ", None, False, False),
                                     ("care", None, True, False), (" and ", None, False, False),
                                     ("patience", None, False, True)):
        run = p.add_run()
        run.text = text
        run.font.name = font
        run.font.bold = bold or None
        run.font.italic = italic or None
    box = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(2)).text_frame
    lines = ["def greet(name):", "", "    return name"]
    box.text = lines[0]
    for line in lines[1:]:
        box.add_paragraph().text = line
    for para in box.paragraphs:
        for run in para.runs:
            run.font.name = "Courier New"
            run.font.size = Pt(14)
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def test_a_monospaced_text_box_is_a_code_block_with_its_lines():
    doc = registry.read(_deck())
    code = [b for b in doc.blocks if isinstance(b, CodeBlock)]
    assert [c.text for c in code] == ["def greet(name):\n\n    return name"]
    markdown = convert_document(_deck(), "markdown").content
    assert "```\ndef greet(name):\n\n    return name\n```" in markdown
    assert "\\\n" not in markdown  # no hard line breaks standing in for code lines


def test_slide_runs_keep_inline_code_and_emphasis_and_bold_lines_are_subheadings():
    doc = registry.read(_deck())
    nodes = list(walk(doc.blocks))
    assert Code("make install") in nodes
    assert any(isinstance(n, Strong) and plain_text(n.children) == "care" for n in nodes)
    assert any(isinstance(n, Emph) and plain_text(n.children) == "patience" for n in nodes)
    headings = [(b.level, plain_text(b.children)) for b in doc.blocks if isinstance(b, Heading)]
    assert headings == [(1, "Tools"), (2, "Running the tool"), (3, "Setup")]


def test_slides_are_named_by_a_comment_not_an_anchor_in_the_heading():
    doc = registry.read(_deck())
    assert not [n for n in walk(doc.blocks) if isinstance(n, Anchor)]
    comments = [b for b in doc.blocks if isinstance(b, RawHtml)]
    assert [c.html for c in comments] == ["<!-- slide 1 -->", "<!-- slide 2 -->"]
    assert [b.prov for b in doc.blocks[:3]] == [[SlideRef(1)], [SlideRef(1)], [SlideRef(2)]]
    assert all(b.prov == [SlideRef(2)] for b in doc.blocks[2:])
    markdown = convert_document(_deck(), "markdown").content
    assert markdown.startswith("<!-- slide 1 -->\n\n# Tools\n\n<!-- slide 2 -->\n\n## Running")
    assert "<a id=" not in markdown


@pytest.mark.slow  # pandoc and LibreOffice are processes
@needs_pandoc
@pytest.mark.parametrize("kind", ["pptx", "odp"])
def test_pandoc_slides_keep_code_headings_and_emphasis(tmp_path, kind):
    if kind == "odp" and not has_libreoffice():
        pytest.skip("needs LibreOffice")
    (tmp_path / "deck.md").write_text(SOURCE_MD, encoding="utf-8")
    path = pandoc(tmp_path / "deck.md", tmp_path / "deck.pptx")
    if kind == "odp":
        soffice_convert([path], "odp", tmp_path, tmp_path / "profile")
        path = tmp_path / "deck.odp"
    out = convert_document(path.read_bytes(), "markdown",
                           options=ConvertOptions(read=ReadRequest(office_timeout=120)))
    doc = registry.read(path.read_bytes(), options=ReadRequest(office_timeout=120))
    assert [b.text for b in doc.blocks if isinstance(b, CodeBlock)] == [CODE]
    headings = [(b.level, plain_text(b.children)) for b in doc.blocks if isinstance(b, Heading)]
    assert (3, "Deeper level") in headings and (2, "Example script") in headings
    assert Code("make install") in list(walk(doc.blocks))
    scores = _structure(out.content, SOURCE_MD)
    assert scores["code blocks"] == 1.0 and scores["emphasis"] == 1.0, scores
    assert scores["heading levels"] >= 0.9, scores


# ---------------------------------------------------------------- EPUB notes
@pytest.mark.slow  # pandoc is a process
@needs_pandoc
@pytest.mark.parametrize("writer", ["epub3", "epub2"])
def test_pandoc_epub_notes_are_footnotes(tmp_path, writer):
    (tmp_path / "book.md").write_text(NOTES_MD, encoding="utf-8")
    path = pandoc(tmp_path / "book.md", tmp_path / "book.epub", "-t", writer,
                  "--metadata", "title=Notes")
    doc = registry.read(path.read_bytes())
    refs = [n for n in walk(doc.blocks) if isinstance(n, NoteRef)]
    assert len(refs) == 2 and len(doc.notes) == 2
    assert [plain_text(doc.notes[r.note_id]) for r in refs] == [
        "The first footnote text.", "The second footnote with emphasis."]
    assert not [n for n in walk_document(doc) if isinstance(n, Link)]  # no #fn, no back links
    out = convert_document(path.read_bytes(), "markdown").content
    assert "[^1]: The first footnote text." in out and "↩" not in out
    assert _structure(out, NOTES_MD)["footnotes"] == 1.0


def _epub(chapters: dict[str, str]) -> bytes:
    items = "".join(f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
                    for i, name in enumerate(chapters))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    opf = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>B</dc:title>'
           f'</metadata><manifest>{items}</manifest><spine>{spine}</spine></package>')
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                 'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/'
                 'content.opf" media-type="application/oebps-package+xml"/></rootfiles>'
                 '</container>')
    page = ('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub='
            '"http://www.idpf.org/2007/ops"><body>{}</body></html>')
    entries = {"mimetype": b"application/epub+zip",
               "META-INF/container.xml": container.encode(),
               "OEBPS/content.opf": opf.encode()}
    entries.update({f"OEBPS/{name}": page.format(body).encode()
                    for name, body in chapters.items()})
    return zip_bytes(entries)


def test_epub_endnotes_in_another_chapter_and_asides_are_notes():
    book = _epub({
        "one.xhtml": '<h1>One</h1><p>Claim.<sup><a epub:type="noteref" href="notes.xhtml#e1">'
                     '1</a></sup> Aside.<a epub:type="noteref" href="#a1">*</a></p>'
                     '<aside epub:type="footnote" id="a1"><p>An aside note.</p></aside>'
                     '<p>After.</p>',
        "notes.xhtml": '<section epub:type="endnotes"><h2>Notes</h2><ol>'
                       '<li epub:type="endnote" id="e1"><p><a href="one.xhtml#r1" '
                       'epub:type="backlink">1</a> The endnote.</p></li></ol></section>',
    })
    doc = registry.read(book)
    refs = [n for n in walk(doc.blocks) if isinstance(n, NoteRef)]
    assert [plain_text(doc.notes[r.note_id]).strip() for r in refs] == [
        "The endnote.", "An aside note."]
    body = plain_text(doc.blocks)
    assert "An aside note" not in body and "The endnote" not in body
    assert not [n for n in walk(doc.blocks) if isinstance(n, Superscript)]


def test_html_doc_noteref_roles_are_footnotes():
    doc = read_html('<p>Text<a role="doc-noteref" href="#n1" id="r1">1</a>.</p>'
                    '<section role="doc-endnotes"><hr><ol><li id="n1" role="doc-endnote">'
                    '<p>Note. <a role="doc-backlink" href="#r1">back</a></p></li></ol>'
                    '</section>')
    assert doc.blocks == [Paragraph([*doc.blocks[0].children])]
    assert isinstance(doc.blocks[0].children[1], NoteRef)
    assert [plain_text(b).strip() for b in doc.notes.values()] == ["Note."]


# ---------------------------------------------------------------- papers
def _paper() -> bytes:
    """A paper's first page as TeX sets it: accents drawn over their letters as glyphs of
    their own (a breve, an acute), author names with raised affiliation marks, the
    affiliations and an address below, then the abstract."""
    def mark(digit: bytes) -> bytes:
        return b"/F1 7 Tf 4 Ts (" + digit + b") Tj 0 Ts /F1 12 Tf "

    content = b"".join([
        b"BT /F2 20 Tf 72 760 Td (Reading Old Maps) Tj ET\n",
        b"BT /F1 12 Tf 72 730 Td [(O) -111.5 (\\200) 444.5 (g) (uz Lima)] TJ ", mark(b"1"),
        b"(, Oleg Petrov) Tj ", mark(b"2"),
        b"( and Jos) Tj [-111.5 (\\264) 444.5 (e Silva)] TJ ", mark(b"1"), b"ET\n",
        b"BT /F1 7 Tf 72 712 Td 4 Ts (1) Tj 0 Ts /F1 11 Tf (University of Lisbon) Tj ET\n",
        b"BT /F1 7 Tf 72 698 Td 4 Ts (2) Tj 0 Ts /F1 11 Tf (Institute of Maps, Kyiv) Tj ET\n",
        b"BT /F1 11 Tf 72 684 Td (oguz.lima@example.org) Tj ET\n",
        b"BT /F2 12 Tf 72 650 Td (Abstract) Tj ET\n",
        b"BT /F1 10 Tf 72 630 Td (Old maps hold more than roads: this paper reads them.) Tj ET\n",
        b"BT /F1 10 Tf 72 616 Td (The body text goes on for a while so that its size is the "
        b"common one.) Tj ET\n",
        b"BT /F2 12 Tf 72 580 Td (1 Introduction) Tj ET\n",
        b"BT /F1 10 Tf 72 560 Td (Maps were drawn by hand for centuries, and signed.) Tj ET\n",
    ])
    fonts = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /Type "
             b"/Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 /breve] >> >>")
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
                 b"<< /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>",
                 _stream(b"", content), fonts,
                 b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>"])


def test_accents_drawn_apart_join_their_letters():
    text = plain_text(registry.read(_paper()).blocks)
    assert "Oğuz Lima" in text and "José Silva" in text
    assert "\u02d8" not in text and "\u00b4" not in text  # breve, acute


def test_the_author_block_is_paragraphs_with_superscript_marks():
    doc = registry.read(_paper())
    headings = [(b.level, plain_text(b.children)) for b in doc.blocks if isinstance(b, Heading)]
    assert [t for _, t in headings] == ["Reading Old Maps", "Abstract", "1 Introduction"]
    authors = doc.blocks[1]
    assert isinstance(authors, Paragraph)
    assert plain_text(authors.children) == "Oğuz Lima1, Oleg Petrov2 and José Silva1"
    assert [plain_text(s.children) for s in authors.children
            if isinstance(s, Superscript)] == ["1", "2", "1"]
    affiliations = [plain_text(b.children) for b in doc.blocks[2:4] if isinstance(b, Paragraph)]
    assert affiliations == ["1University of Lisbon", "2Institute of Maps, Kyiv"]
    assert isinstance(doc.blocks[2].children[0], Superscript)


def test_a_two_column_papers_author_block_and_accents():
    path = REALWORLD / "unstructured__multi-column-2p.pdf"
    if not path.is_file():
        pytest.skip("needs ../shared/corpus/realworld/pdf/unstructured__multi-column-2p.pdf")
    doc = registry.read(path.read_bytes())
    headings = [plain_text(b.children) for b in doc.blocks if isinstance(b, Heading)]
    assert headings[0] == "Dense Passage Retrieval for Open-Domain Question Answering"
    assert headings[1] == "Abstract"  # no author or affiliation line in between
    authors = doc.blocks[1]
    assert isinstance(authors, Paragraph)
    assert plain_text(authors.children).startswith(
        "Vladimir Karpukhin\u2217, Barlas Oğuz\u2217, Sewon")
    assert not [n for n in walk(authors.children) if isinstance(n, Link)]
    assert statistics.fmean(isinstance(n, Superscript) for n in authors.children) > 0.2


def test_comments_and_processing_instructions_beside_notes_are_no_elements():
    """lxml gives comments and processing instructions no attributes: the note finder asks
    elements only (a comment in a notes section once failed every such page)."""
    from render_pool.engine.html.build import read_html

    doc = read_html(
        '<html><body><p>Text<!-- a --><a href="#fn1" class="footnote-ref" id="r1">1</a>'
        '<?pi x?></p><div class="footnotes"><!-- b --><ol><li id="fn1">The note <!-- c -->'
        '<a href="#r1" class="footnote-back">&#8617;</a></li></ol></div></body></html>')
    assert len(doc.notes) == 1 and "The note" in repr(next(iter(doc.notes.values())))
    text = repr(doc.blocks)
    assert "Text" in text and "The note" not in text
