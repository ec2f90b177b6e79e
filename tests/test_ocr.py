"""OCR of scans and images (issue 23): real Tesseract, no mock of the engine.

Scans are made here from born-digital test PDFs (bench/scans.py: rasterised at 200 dpi,
skewed, speckled, one page fed sideways) so the expected text is known.
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from PIL import Image

from bench.scans import image_only_pdf, scan_pages, scanned_copy
from render_pool.engine import registry
from render_pool.engine.common.image_links import data_uri_resolver
from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.pdf.reader import read_pdf
from render_pool.errors import CorruptDocument
from tests.conftest import post_form
from tests.pdf_fixtures import scanned_pdf
from tornado_app.app import make_app

GEN = Path(__file__).parent / "data" / "pdf" / "generated"
# the shared corpus beside the checkout (/work/main) or beside the worktrees (/work/wt/X)
REALWORLD = next((p / "shared" / "corpus" / "realworld" / "pdf"
                  for p in Path(__file__).resolve().parents[2:4]
                  if (p / "shared" / "corpus").is_dir()),
                 Path(__file__).resolve().parents[2] / "shared" / "corpus" / "realworld" / "pdf")
TESSERACT = pytest.mark.slow  # the test runs Tesseract, a process (`just test-fast` skips it)


def _markdown(doc) -> str:
    return write_markdown(doc, data_uri_resolver(doc))


@pytest.fixture(scope="module")
def lists_scan() -> bytes:
    """lists_tables.pdf (headings, nested list, numbered list, ruled table) scanned sideways."""
    return scanned_copy((GEN / "lists_tables.pdf").read_bytes(), turn={0: 90})


@pytest.fixture(scope="module")
def lists_scan_doc(lists_scan):
    return read_pdf(lists_scan)


def _top_of_report(fraction: float = 0.3) -> Image.Image:
    """The top of report.pdf's first page (title and first paragraph) as a 200 dpi scan."""
    page = scan_pages((GEN / "report.pdf").read_bytes(), skew=0.4)[0]
    return page.crop((0, 0, page.width, int(page.height * fraction)))


@TESSERACT
def test_scanned_pdf_reads_headings_lists_and_table(lists_scan_doc) -> None:
    md = _markdown(lists_scan_doc)
    assert md.startswith("# Lists and Tables\n")
    assert "## Sales by Region" in md
    assert "- Fruit for the week\n- Vegetables\n  - Carrots from the market" in md
    assert "1. Preheat the oven to two hundred degrees." in md
    rows = [line.split("|")[1:-1] for line in md.splitlines() if line.startswith("| ")]
    cells = [[c.strip(" .") for c in row] for row in rows]  # a speck may read as a dot
    assert ["North", "120", "135", "255"] in cells and ["South", "98", "101", "199"] in cells
    assert "Closing remarks after the picture" in md
    assert "data:image" not in md  # the scan itself is not kept as a picture


@TESSERACT
def test_warnings_name_ocr_pages_confidence_and_rotation(lists_scan_doc) -> None:
    warnings = " ".join(lists_scan_doc.read_notes)  # facts, not problems: notes
    assert "page 1: turned 90 degrees for OCR" in warnings
    conf = [w for w in lists_scan_doc.read_notes if w.startswith("OCR read page(s) 1 (")]
    assert conf and 60 <= int(conf[0].split("confidence ")[1].rstrip("%)")) <= 100


def test_ocr_off_keeps_the_refusal(lists_scan) -> None:
    with pytest.raises(CorruptDocument, match=r"no text layer.*ocr=off") as err:
        read_pdf(lists_scan, ocr="off")
    assert err.value.code == 40003


@TESSERACT
def test_scan_without_any_text_is_a_clear_refusal() -> None:
    with pytest.raises(CorruptDocument, match="OCR found no text"):
        read_pdf(scanned_pdf(1))


@TESSERACT
def test_mixed_document_ocrs_only_the_image_page() -> None:
    born = pdfium.PdfDocument((GEN / "report.pdf").read_bytes())
    scan = pdfium.PdfDocument(image_only_pdf([_top_of_report()]))
    born.import_pages(scan)
    out = io.BytesIO()
    born.save(out)
    count = len(born)
    doc = read_pdf(out.getvalue())
    ocr_warnings = [w for w in doc.read_notes if w.startswith("OCR read")]
    assert ocr_warnings and ocr_warnings[0].startswith(f"OCR read page(s) {count} (")
    md = _markdown(doc)
    assert "Method and Wording" in md  # born-digital page, text layer
    assert md.count("This report summarises the state of the widget market") == 2


@TESSERACT
def test_a_page_whose_ocr_fails_keeps_its_picture(monkeypatch) -> None:
    """The scanned page's picture is not extracted while OCR is to read the page; when its
    OCR fails (here: past a time limit too short for any page), the page is read without
    OCR and its picture is kept, with a warning."""
    import render_pool.engine.pdf.ocr as pdf_ocr

    born = pdfium.PdfDocument((GEN / "report.pdf").read_bytes())
    born.import_pages(pdfium.PdfDocument(image_only_pdf([_top_of_report()])))
    out = io.BytesIO()
    born.save(out)
    count = len(born)
    monkeypatch.setattr(pdf_ocr, "PAGE_TIMEOUT", 0.01)
    doc = read_pdf(out.getvalue())
    assert any(w.startswith(f"page {count}: OCR failed (") for w in doc.warnings), doc.warnings
    assert not any(w.startswith("OCR read") for w in doc.read_notes)
    assert f"page{count}-img1.png" in doc.resources
    assert "Method and Wording" in _markdown(doc)


@TESSERACT
def test_force_reads_a_text_page_by_ocr() -> None:
    doc = read_pdf((GEN / "lists_tables.pdf").read_bytes(), ocr="force")
    assert any(w.startswith("OCR read page(s) 1 (") for w in doc.read_notes)
    assert "## Sales by Region" in _markdown(doc)


def _image(fmt: str) -> bytes:
    top = _top_of_report()
    out = io.BytesIO()
    if fmt == "TIFF":  # two pages, the second fed upside down
        top.save(out, format="TIFF", save_all=True, append_images=[top.rotate(180)],
                 dpi=(200, 200), compression="tiff_lzw")
    else:
        top.save(out, format=fmt, dpi=(200, 200))
    return out.getvalue()


@TESSERACT
@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_image_reader_reads_each_format(fmt: str) -> None:
    doc = registry.read(_image(fmt))
    md = _markdown(doc)
    assert "# Widget Market " in md and "summarises the state of the widget market" in md
    assert any(w.startswith("OCR read page(s) 1 (") for w in doc.read_notes)


@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


def _data(reply) -> dict:
    assert reply.status == 200 and reply.body["code"] == 0, reply.body
    return reply.body["data"]


async def test_image_uploads_convert_over_http(api) -> None:
    data = _data(await post_form(api, "/api/convert", {}, {"file": ("photo.png", _image("PNG"))}))
    assert "# Widget Market " in data["content"]
    data = _data(await post_form(api, "/api/convert", {}, {"file": ("fax.tif", _image("TIFF"))}))
    assert data["content"].count("This report summarises the state") == 2
    assert "page 2: turned 180 degrees for OCR" in data["notes"]
    assert any(w.startswith("OCR read page(s) 1, 2 (") for w in data["notes"])


async def test_ocr_option_over_http(api, lists_scan) -> None:
    reply = await post_form(api, "/api/convert", {"ocr": "off"}, {"file": ("s.pdf", lists_scan)})
    assert reply.body["code"] == 40003 and "ocr=off" in reply.body["msg"]
    reply = await post_form(api, "/api/convert", {"ocr": "sometimes"},
                            {"file": ("s.pdf", lists_scan)})
    assert reply.body["code"] == 40002
    reply = await post_form(api, "/api/convert", {"ocr": "off"},
                            {"file": ("p.png", _image("PNG"))})
    assert reply.body["code"] == 40003 and "OCR" in reply.body["msg"]


CORPUS_SCANS = ["kreuzberg__image_only_german_pdf.pdf",
                "unstructured__loremipsum-flat.pdf",
                "unstructured__table-multi-row-column-cells.pdf"]


@TESSERACT
@pytest.mark.parametrize("name", CORPUS_SCANS)
def test_realworld_scans_read_with_text(name: str) -> None:
    path = REALWORLD / name
    if not path.is_file():
        pytest.skip(f"{path} absent (the shared corpus is not on this machine)")
    doc = read_pdf(path.read_bytes())
    words = _markdown(doc).split()
    assert len(words) >= 20, words
    assert any(w.startswith("OCR read page(s)") for w in doc.read_notes)


@TESSERACT
def test_realworld_scan_with_one_word_reads_that_word() -> None:
    """pdf.js's scan-bad.pdf: a scanned page whose only text is "pdf.js" (and a hidden text
    layer of 6 characters, too few to count as one): OCR reads it, nothing more."""
    path = REALWORLD / "pdfjs__scan-bad.pdf"
    if not path.is_file():
        pytest.skip(f"{path} absent (the shared corpus is not on this machine)")
    doc = read_pdf(path.read_bytes())
    assert _markdown(doc).strip() == "pdf.js"
    assert any(w.startswith("OCR read page(s) 1 (") for w in doc.read_notes)


@TESSERACT
def test_the_command_line_engine_reads_as_the_api_does() -> None:
    """Both ways into Tesseract (its API through tesserocr, its command line) give the same
    words for the same page, so a machine without tesserocr reads scans as well."""
    from render_pool.engine import config as engine_config
    from render_pool.engine.ocr import tesseract

    if tesseract.engine_name() != "tesserocr":
        pytest.skip("tesserocr is not installed: the command line is the only engine here")
    page = _top_of_report(0.3)
    api = [w.text for w in tesseract.recognise(page, "eng").words]
    with engine_config.configured(ocr_engine="cli"):
        assert tesseract.engine_name() == "cli"
        cli = [w.text for w in tesseract.recognise(page, "eng").words]
    assert len(api) >= 20
    same = sum(1 for a, b in zip(api, cli, strict=False) if a == b)
    assert same >= 0.95 * max(len(api), len(cli)), (api, cli)


@TESSERACT
def test_realworld_tiny_images_are_a_clear_refusal_not_an_empty_success() -> None:
    """Six 16x16-pixel images whose only text lies outside the page: nothing to read."""
    path = REALWORLD / "pypdf__imagemagick-images.pdf"
    if not path.is_file():
        pytest.skip(f"{path} absent (the shared corpus is not on this machine)")
    with pytest.raises(CorruptDocument, match="no readable text") as err:
        read_pdf(path.read_bytes())
    assert err.value.code == 40003


@pytest.mark.slow  # the render pool's processes and Tesseract
async def test_pages_of_a_scan_spread_over_the_pool_and_let_another_company_in(io_loop):
    """One worker; company A's three-page scan is recognised page by page in pool jobs of
    their own, so company B's conversion, sent while A's scan is under way, is done before
    A's (as one job, A's scan held the only worker until its last page)."""
    from types import SimpleNamespace

    from render_pool.runtime.pool import RenderPool
    from tornado_app.documents.conversion import _convert_job

    top = _top_of_report(0.25)
    scan = image_only_pdf([top, top.rotate(180), top], 200.0)
    pool = RenderPool(1, queue_limit=4, tenant_queue_limit=1, job_timeout=120,
                      memory_limit_mb=2000)
    svc = SimpleNamespace(pool=pool)
    from render_pool.engine.formats import ReadRequest
    from render_pool.engine.jobs import ConvertOptions

    options = ConvertOptions(read=ReadRequest(ocr="auto", ocr_languages="eng"))
    finished: list[str] = []

    async def convert(company: str, data: bytes) -> Any:
        result = await _convert_job(svc, company, data, "markdown", "word2markdown",
                                    options, False)
        finished.append(company)
        return result

    try:
        await pool.run(os.getpid, tenant="warm-up")
        a = asyncio.ensure_future(convert("A", scan))
        deadline = time.monotonic() + 30
        while pool.in_flight < 1:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        b = await convert("B", (GEN / "report.pdf").read_bytes())
        assert "Widget" in b.content and finished == ["B"]
        result = await a
    finally:
        pool.close(wait=False)
    assert finished == ["B", "A"]
    assert result.content.count("This report summarises the state") == 3
    assert any(w.startswith("OCR read page(s) 1, 2, 3 (") for w in result.notes)
    assert "page 2: turned 180 degrees for OCR" in result.notes


@pytest.mark.slow  # Tesseract
def test_a_scan_hands_each_page_job_its_own_page() -> None:
    """A scan whose pages go to pool jobs of their own hands each job a one-page PDF of its
    page (together about the scan's size, not the scan once a page), and that page alone
    reads as it does inside the whole scan, a sideways page turned the same way."""
    from render_pool.engine.pdf.ocr import recognise_pdf_page
    from render_pool.errors import OcrPending

    top = _top_of_report(0.25)
    scan = image_only_pdf([top, top.rotate(90, expand=True), top], 200.0)
    with pytest.raises(OcrPending) as pending:
        read_pdf(scan, ocr="auto", ocr_languages="eng", ocr_fanout=True)
    alone = pending.value.page_pdfs
    assert sorted(alone) == pending.value.pages == [0, 1, 2]
    assert all(len(pdfium.PdfDocument(data)) == 1 for data in alone.values())
    assert sum(len(data) for data in alone.values()) < 1.2 * len(scan)
    for index in (0, 1):
        whole, _ = recognise_pdf_page(scan, index, "eng")
        own, _ = recognise_pdf_page(alone[index], 0, "eng")
        assert [w.text for w in own.words] == [w.text for w in whole.words]
        assert "summarises" in [w.text for w in own.words]


def test_one_page_pdfs_stop_at_their_budget() -> None:
    """Pages sharing one large image would each carry a copy of it: past the budget the
    remaining pages are not copied (their jobs are sent the whole scan)."""
    from render_pool.engine.pdf.ocr import pages_alone

    top = _top_of_report(0.25)
    pdf = pdfium.PdfDocument(image_only_pdf([top, top, top], 200.0))
    assert sorted(pages_alone(pdf, [0, 1, 2], budget=10 << 20)) == [0, 1, 2]
    assert sorted(pages_alone(pdf, [0, 1, 2], budget=1)) == [0]


CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")  # fonts-wqy-microhei


@pytest.mark.slow  # Tesseract
@pytest.mark.parametrize("lines", [
    ["文档转换服务的使用说明", "本服务可以把扫描的文件转换为文本。", "每一页都会被识别并保留标题和表格。"],
    ["文書変換サービスの使い方", "スキャンした書類をテキストに変換します。", "ファイルをアップロードしてください。"],
], ids=["chinese", "japanese"])
def test_a_page_in_another_script_is_read_with_its_packs(lines: list[str]) -> None:
    """With the default languages a Chinese or Japanese scan is read in its own script:
    the Latin reading is poor, OSD sees the script, and the page is read again with its
    packs (a Latin page never pays for them)."""
    from PIL import ImageDraw, ImageFont

    from render_pool.engine.ocr import available_languages, recognise
    from tornado_app.settings import Settings

    if not CJK_FONT.is_file() or not {"chi_sim", "jpn"} <= available_languages():
        pytest.skip("fonts-wqy-microhei or the chi_sim/jpn packs are not installed")
    font = ImageFont.truetype(str(CJK_FONT), 44)
    page = Image.new("L", (1700, 600), 255)
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(lines):
        draw.text((120, 120 + i * 110), line, font=font, fill=0)
    got = recognise(page, Settings.from_env({}).ocr_languages)
    text = "".join(w.text for w in got.words)
    wanted = "".join(lines)
    same = sum(1 for ch in set(wanted) if ch in text) / len(set(wanted))
    assert same >= 0.9, text
    assert got.confidence >= 80
