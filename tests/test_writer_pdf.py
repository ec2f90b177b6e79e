"""Markdown-to-PDF writer: read the PDFs back with pypdfium2 and check what a reader would see."""

from __future__ import annotations

import ctypes
import logging
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from render_pool.engine.common.cover import CoverPage
from render_pool.engine.model import (
    CodeBlock,
    Document,
    Heading,
    Image,
    Paragraph,
    RawHtml,
    Resource,
    Strong,
    Table,
    TableCell,
    TableRow,
    Text,
)
from render_pool.engine.options import WriterOptions
from render_pool.engine.pdf.writer import list_themes, write_pdf
from render_pool.engine.pdf.writer_layout import collect_headings
from render_pool.engine.pdf.writer_style import check_css, highlight_code
from render_pool.errors import UnsupportedFormat
from render_pool.runtime import browser
from render_pool.runtime.browser import find_chromium

pytestmark = [pytest.mark.skipif(find_chromium() is None, reason="no chromium"),
              pytest.mark.slow]  # Chromium
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. " * 28


# ------------------------------------------------------------------ helpers
def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG (no Pillow needed)."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def para(text: str) -> Paragraph:
    return Paragraph([Text(text)])


def head(level: int, text: str, anchor: str) -> Heading:
    return Heading(level, [Text(text)], anchor)


def long_table(rows: int = 90) -> Table:
    header = TableRow([TableCell([para(t)], header=True) for t in ("Item", "Amount", "备注")])
    body = [TableRow([TableCell([para(f"item-{i}")]), TableCell([para(str(i * 7))]),
                      TableCell([para(f"说明 {i}")])]) for i in range(rows)]
    return Table([header, *body], header_rows=1)


HEADINGS = [
    (1, "Installation Guide 安装指南", "guide"),
    (2, "Getting started", "start"),
    (3, "Requirements", "req"),
    (2, "Configuration", "config"),
    (3, "Options in detail", "options"),
    (2, "Reference table", "table"),
    (2, "Troubleshooting", "trouble"),
]


def sample_doc() -> Document:
    """Several pages: headings at three levels, CJK text, code, a table spanning pages."""
    blocks = []
    for level, text, anchor in HEADINGS:
        blocks.append(head(level, text, anchor))
        if anchor == "guide":
            blocks.append(Paragraph([Text("This guide explains "), Strong([Text("everything")]),
                                     Text(". 这是中文正文用于检查字体。")]))
        elif anchor == "options":
            blocks.append(CodeBlock('def greet(name):\n    return f"hello {name}"  # 问候\n',
                                    "python"))
        elif anchor == "table":
            blocks.append(long_table())
        else:
            blocks.append(para(f"{text}: {LOREM}"))
    return Document(blocks=blocks, meta={"title": "Installation Guide"})


def sample_cover() -> CoverPage:
    return CoverPage(
        cover_image=Resource(png(320, 160, (40, 90, 170)), "image/png"),
        logo=Resource(png(120, 40, (220, 90, 30)), "image/png"),
        product_name="Acme Widget", product_version="v2.1",
        document_name="Installation Guide 安装指南", document_version="Revision 7",
        copyright_text="© 2026 Acme Corp. All rights reserved.",
    )


def texts(pdf: pdfium.PdfDocument) -> list[str]:
    return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]


def squash(text: str) -> str:
    """Text without whitespace (pdfium sometimes splits runs oddly)."""
    return re.sub(r"\s+", "", text)


def outline(pdf: pdfium.PdfDocument) -> list[tuple[str, int]]:
    return [(item.get_title(), item.get_dest().get_index()) for item in pdf.get_toc()]


def link_targets(pdf: pdfium.PdfDocument, index: int) -> list[tuple[float, int]]:
    """(top y, destination page index) of every internal link on a page, top to bottom."""
    raw = pdfium.raw
    page = pdf[index]
    pos, link, found = ctypes.c_int(0), raw.FPDF_LINK(), []
    while raw.FPDFLink_Enumerate(page.raw, ctypes.byref(pos), ctypes.byref(link)):
        dest = raw.FPDFLink_GetDest(pdf.raw, link)
        if not dest:
            action = raw.FPDFLink_GetAction(link)
            dest = raw.FPDFAction_GetDest(pdf.raw, action) if action else None
        if dest:
            rect = raw.FS_RECTF()
            raw.FPDFLink_GetAnnotRect(link, ctypes.byref(rect))
            found.append((rect.top, raw.FPDFDest_GetDestPageIndex(pdf.raw, dest)))
    return sorted(found, key=lambda t: -t[0])


def first_font(pdf: pdfium.PdfDocument, index: int) -> str:
    textpage = pdf[index].get_textpage()
    buf, flags = ctypes.create_string_buffer(256), ctypes.c_int()
    pdfium.raw.FPDFText_GetFontInfo(textpage.raw, 0, buf, 256, ctypes.byref(flags))
    return buf.value.decode("latin-1")


def save_png(data: bytes, page_no: int, name: str) -> Path:
    """Page ``page_no`` (1-based) as a PNG under test-artifacts/ for a human to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    pdf_path = ARTIFACTS / f"{name}.pdf"
    pdf_path.write_bytes(data)
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", str(page_no), "-l", str(page_no),
                    "-singlefile", str(pdf_path), str(ARTIFACTS / name)], check=True, timeout=60)
    return ARTIFACTS / f"{name}.png"


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module", autouse=True)
def _one_browser_for_the_module():
    yield
    browser.close_browser()


@pytest.fixture(scope="module")
def full():
    """One document with cover, TOC, header and footer, shared by several tests."""
    options = WriterOptions(toc=True, header_text="Acme Widget — Installation", cover=sample_cover(),
                         footer_text="Internal use 内部")
    data, warnings = write_pdf(sample_doc(), options)
    pdf = pdfium.PdfDocument(data)
    yield data, pdf, warnings
    pdf.close()


# ------------------------------------------------------------------ the full document
def test_pages_text_and_cjk(full):
    data, pdf, warnings = full
    assert data.startswith(b"%PDF-")
    assert warnings == []
    pages = texts(pdf)
    assert len(pages) >= 5  # cover, TOC, at least three body pages (long table)
    body = squash("".join(pages[2:]))
    for _, text, _ in HEADINGS:
        assert squash(text) in body
    assert "这是中文正文用于检查字体。" in body
    assert squash('return f"hello {name}"') in body
    assert pdf.get_metadata_dict()["Title"] == "Installation Guide"


def test_cover_page_is_clean_and_first(full):
    _, pdf, _ = full
    cover = texts(pdf)[0]
    for expected in ("ACME WIDGET", "v2.1", "Installation Guide 安装指南", "Revision 7",
                     "© 2026 Acme Corp."):
        assert expected in cover
    assert "Acme Widget — Installation" not in cover
    assert "Internal use" not in cover and "Page" not in cover
    kinds = [obj.type for obj in pdf[0].get_objects()]
    assert kinds.count(pdfium.raw.FPDF_PAGEOBJ_IMAGE) == 2  # logo and cover image
    save_png(bytes(full[0]), 1, "pdf-cover")


def test_header_footer_and_numbering_on_every_body_page(full):
    _, pdf, _ = full
    pages = texts(pdf)
    total = len(pages) - 1  # the cover is not counted
    for number, text in enumerate(pages[1:], start=1):
        flat = squash(text)
        assert squash("Acme Widget — Installation") in flat
        assert squash("Internal use 内部") in flat
        assert f"Page{number}of{total}" in flat


def test_outline_matches_headings_after_the_cover(full):
    _, pdf, _ = full
    entries = outline(pdf)
    assert [t for t, _ in entries] == [text for _, text, _ in HEADINGS]
    levels = [item.level for item in pdf.get_toc()]
    assert levels == [0, 1, 2, 1, 2, 1, 1]
    pages = texts(pdf)
    for title, index in entries:
        assert index >= 2  # after cover and TOC
        assert squash(title) in squash(pages[index])


def test_toc_lists_headings_with_correct_page_numbers_and_links(full):
    data, pdf, _ = full
    toc = texts(pdf)[1]
    assert "Contents" in toc
    where = dict(outline(pdf))
    for _, text, _ in HEADINGS:
        match = re.search(re.escape(squash(text)) + r"(\d+)", squash(toc))
        assert match, f"{text!r} missing from the TOC"
        printed = int(match.group(1))
        assert printed == where[text]  # page index incl. cover == body page number
    links = link_targets(pdf, 1)
    assert [index for _, index in links] == [where[text] for _, text, _ in HEADINGS]
    save_png(data, 2, "pdf-toc")


def test_long_table_repeats_its_header_on_each_page(full):
    _, pdf, _ = full
    pages = [squash(t) for t in texts(pdf)]
    spanned = [i for i, t in enumerate(pages) if re.search(r"item-\d+", t)]
    assert len(spanned) >= 2, "the table should span pages"
    for i in spanned:
        assert "ItemAmount备注" in pages[i]
    # no row is cut in two: every row's cells stay on one page
    for n in range(90):
        holders = [i for i in spanned if f"item-{n}{n * 7}说明{n}" in pages[i]]
        assert len(holders) == 1


@pytest.mark.parametrize("lines_per_page_guess", [34, 1000])
def test_multi_page_toc_numbers_are_right_even_after_a_wrong_guess(monkeypatch,
                                                                   lines_per_page_guess):
    import render_pool.engine.pdf.writer as pdf_writer

    monkeypatch.setattr(pdf_writer, "_TOC_LINES_PER_PAGE", lines_per_page_guess)
    blocks = []
    for i in range(80):
        blocks += [head(2, f"Topic {i} title", f"topic-{i}"), para(f"Body of topic {i}.")]
    data, warnings = write_pdf(Document(blocks=blocks), WriterOptions(toc=True))
    assert warnings == []
    pdf = pdfium.PdfDocument(data)
    entries = outline(pdf)
    assert len(entries) == 80
    toc_pages = entries[0][1]
    assert toc_pages >= 2  # 80 lines do not fit one page
    toc = squash("".join(texts(pdf)[:toc_pages]))
    for title, index in entries:
        match = re.search(re.escape(squash(title)) + r"(\d+)", toc)
        assert match and int(match.group(1)) == index + 1, title
    links = [i for p in range(toc_pages) for _, i in link_targets(pdf, p)]
    assert links == [index for _, index in entries]


def test_toc_without_headings_is_skipped_with_a_warning():
    data, warnings = write_pdf(Document(blocks=[para("no headings here")]), WriterOptions(toc=True))
    assert len(pdfium.PdfDocument(data)) == 1
    assert any("no headings" in w for w in warnings)


# ------------------------------------------------------------------ options and safety
def test_cover_without_toc_keeps_bookmarks():
    data, _ = write_pdf(sample_doc(), WriterOptions(cover=sample_cover()))
    pdf = pdfium.PdfDocument(data)
    entries = outline(pdf)
    assert [t for t, _ in entries] == [text for _, text, _ in HEADINGS]
    assert entries[0][1] == 1
    assert "Page" not in texts(pdf)[0] and "Page1of" in squash(texts(pdf)[1])


def test_plain_document_has_page_numbers_and_no_cover():
    doc = Document(blocks=[head(1, "Only page", "only"), para("Short body.")])
    data, warnings = write_pdf(doc, WriterOptions(cover=CoverPage()))  # an empty cover is skipped
    pdf = pdfium.PdfDocument(data)
    assert len(pdf) == 1 and warnings == []
    assert "Only page" in texts(pdf)[0] and "Page 1 of 1" in texts(pdf)[0]


def test_themes_differ_and_academic_is_serif():
    names = list_themes()
    assert {"default", "github", "academic", "compact"} <= set(names)
    doc = Document(blocks=[head(1, "Theme check", "t"), para(LOREM[:600]),
                           CodeBlock("x = 1\n", "python")])
    renders = {}
    for name in names:
        data, _ = write_pdf(doc, WriterOptions(css_name=name))
        pdf = pdfium.PdfDocument(data)
        bitmap = pdf[0].render(scale=0.5)
        renders[name] = bytes(bitmap.buffer)
        if name == "academic":
            assert "Serif" in first_font(pdf, 0)
        if name == "default":
            assert "Serif" not in first_font(pdf, 0)
    assert len(set(renders.values())) == len(names)


def test_unknown_theme_is_unsupported():
    with pytest.raises(UnsupportedFormat) as info:
        write_pdf(Document(blocks=[para("x")]), WriterOptions(css_name="../../etc/passwd"))
    assert info.value.code == 40002 and "default" in info.value.message


def test_break_word_warns_but_renders(caplog):
    doc = Document(blocks=[para("averyveryverylongwordwithoutanyspaces" * 6)])
    with caplog.at_level(logging.WARNING):
        data, warnings = write_pdf(doc, WriterOptions(css_text="p { word-break: break-word; }"))
    assert any("break-word" in w for w in warnings)
    assert any("break-word" in r.getMessage() for r in caplog.records)
    assert "averyveryvery" in texts(pdfium.PdfDocument(data))[0]


def test_css_text_applies_after_theme_and_cannot_escape_style():
    doc = Document(blocks=[para("styled text")])
    css = "p { font-family: 'DejaVu Serif'; } </style><p>INJECTED</p><style>"
    data, _ = write_pdf(doc, WriterOptions(css_text=css))
    pdf = pdfium.PdfDocument(data)
    assert "INJECTED" not in texts(pdf)[0]
    assert "DejaVuSerif" in first_font(pdf, 0)


def test_raw_html_script_does_not_run_and_nothing_is_fetched(counting_server):
    base, hits = counting_server
    doc = Document(blocks=[
        para("visible body"),
        RawHtml("<div id=x>kept</div><script>document.body.innerHTML='SCRIPT-RAN'</script>"),
        RawHtml(f'<img src="{base}/tracker.png"><img src="http://127.0.0.1:1/x.png">'),
        Paragraph([Image(f"{base}/inline.png", alt="remote")]),
    ])
    data, _ = write_pdf(doc, WriterOptions())
    text = texts(pdfium.PdfDocument(data))[0]
    assert "visible body" in text and "kept" in text
    assert "SCRIPT-RAN" not in text
    assert hits == []


def test_embedded_image_resources_are_inlined():
    doc = Document(blocks=[Paragraph([Image("img1", alt="chart")])],
                   resources={"img1": Resource(png(2000, 100, (0, 128, 0)), "image/png")})
    data, _ = write_pdf(doc, WriterOptions())
    pdf = pdfium.PdfDocument(data)
    images = [o for o in pdf[0].get_objects() if o.type == pdfium.raw.FPDF_PAGEOBJ_IMAGE]
    assert len(images) == 1
    left, _, right, _ = images[0].get_bounds()
    width, _ = pdf.get_page_size(0)
    assert right <= width - 18 / 25.4 * 72 + 1  # max-width: 100% keeps it inside the margins
    assert left >= 18 / 25.4 * 72 - 1


# ------------------------------------------------------------------ pure helpers
def test_highlight_code_colours_known_languages_only():
    body = ('<pre><code class="language-python">def f(x):\n    return x &lt; 1</code></pre>'
            '<pre><code class="language-nosuchlang">a &lt; b</code></pre><pre><code>plain</code></pre>')
    out = highlight_code(body)
    assert '<pre class="highlight"><code class="language-python">' in out
    assert '<span class="k">def</span>' in out and "&lt;" in out
    assert '<code class="language-nosuchlang">a &lt; b</code>' in out
    assert "<pre><code>plain</code></pre>" in out


def test_check_css_messages():
    assert check_css("p { color: red }") == []
    assert check_css("/* word-break: break-word */ p { color: red }") == []
    assert len(check_css("p { word-break: break-word }")) == 1
    assert any("external" in w for w in check_css("@import url(http://x/y.css);"))
    assert check_css("p { background: url(data:image/png;base64,AAAA) }") == []


def test_collect_headings_adds_missing_ids():
    body, refs = collect_headings('<h2 id="a">One <em>x</em></h2><h3>Two</h3><h4></h4>')
    assert [(r.level, r.text, r.anchor) for r in refs] == [(2, "One x", "a"), (3, "Two", "pdf-h-2")]
    assert '<h3 id="pdf-h-2">Two</h3>' in body


def test_our_own_pdf_reads_back_with_its_structure():
    """Markdown -> PDF (Chromium) -> Markdown: every table-of-contents entry links to its own
    heading, code spans in list items stay in their line, a level-3 heading stays one, and
    body text set in NotoSans-Regular (which pdfium weighs 625 from its stem) is not bold."""
    from render_pool.engine.jobs import RenderRequest, convert_document, render_markdown

    source = ("# Guide\n\nIntro paragraph with some text.\n\n## Install\n\n"
              "- run `pip install x` first\n- then `just run`\n\n### Details\n\n"
              "Level three body.\n\n## Use\n\n1. open the app\n2. sign in\n")
    pdf = render_markdown(source, RenderRequest(target="pdf", toc=True, title="Guide"),
                          {}, {}).data
    back = convert_document(pdf, "markdown").content
    toc = re.findall(r"\[\**([A-Za-z]+) \d+\**\]\((#[^)]+)\)", back)
    assert toc == [("Guide", "#guide"), ("Install", "#install"), ("Details", "#details"),
                   ("Use", "#use")], back
    assert "- run `pip install x` first\n- then `just run`" in back
    assert "### Details" in back
    assert "\nIntro paragraph with some text.\n" in back and "**Intro" not in back
    assert "\n1. open the app\n2. sign in" in back


def test_the_pdf_title_is_never_the_browsers_blank_page():
    # Chromium names a page without a <title> by its address: viewers showed "about:blank"
    def title_of(doc: Document, options: WriterOptions | None = None) -> str:
        data, _ = write_pdf(doc, options or WriterOptions())
        return str(pdfium.PdfDocument(data).get_metadata_dict().get("Title", ""))

    assert title_of(Document(blocks=[para("Only a paragraph.")])) == "Untitled document"
    assert title_of(Document(blocks=[head(1, "Field notes", "field-notes"),
                                     para("Text.")])) == "Field notes"
    assert title_of(Document(blocks=[head(1, "Field notes", "field-notes")]),
                    WriterOptions(title="Given")) == "Given"
