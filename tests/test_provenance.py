"""Provenance (issue 33): every block says where it came from, in JSON, DocTags and as page
markers; ``pages=`` reads only the pages asked for.

PDF boxes are checked against an independent reader: ``pdftotext -bbox-layout`` (poppler)
must place the block's words inside the block's box on its page (bench/prov_check.py).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from bench.prov_check import ProvScore, score_document
from render_pool.engine import model, registry
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.json.writer import SCHEMA_PATH
from render_pool.engine.model import (
    Document,
    Heading,
    PageBox,
    Paragraph,
    PartRef,
    SheetRange,
    SlideRef,
    Text,
    walk,
)
from render_pool.engine.options import WriterOptions
from render_pool.engine.page_ranges import pages_in, parse_pages
from render_pool.engine.pdf.reader import read_pdf
from render_pool.errors import ConversionError, InvalidOption
from tests.conftest import need_corpus, post_form
from tests.office_fixtures import big_deck, build_xlsx
from tests.test_writer_json import validate
from tornado_app.app import make_app

DATA = Path(__file__).parent / "data"
PDFS = [DATA / "pdf" / "multi_page.pdf", DATA / "pdf" / "2305.03393v1-pg9.pdf",
        DATA / "pdf" / "generated" / "lists_tables.pdf",
        DATA / "pdf" / "generated" / "tagged_features.pdf",
        DATA / "pdf" / "office" / "report.tagged.pdf", DATA / "pdf" / "office" / "long.pdf"]
LONG = DATA / "pdf" / "office" / "long.pdf"
poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                             reason="pdftotext (poppler-utils) is not installed")


def _boxes(doc: Document) -> list[PageBox]:
    return [loc for b in doc.blocks for loc in b.prov if isinstance(loc, PageBox)]


# ----------------------------------------------------------------- PDF boxes
@pytest.mark.slow  # pdftotext is a process
@poppler
@pytest.mark.parametrize("path", PDFS, ids=lambda p: p.name)
def test_pdf_words_lie_inside_their_blocks_box(path: Path):
    doc = read_pdf(path.read_bytes())
    assert doc.blocks and all(b.prov for b in doc.blocks if model.plain_text([b]).strip())
    score = score_document(doc, path)
    assert score.matched > 50
    assert score.share >= 0.98, score.misses


@pytest.mark.slow
@poppler
def test_realworld_pdfs_words_lie_inside_their_blocks_box():
    corpus = need_corpus() / "realworld" / "pdf"
    names = sorted(p.name for p in corpus.glob("*.pdf"))[::12]  # a spread over the sources
    total = ProvScore()
    for name in names:
        try:
            doc = read_pdf((corpus / name).read_bytes(), ocr="off")
        except ConversionError:
            continue  # encrypted or scanned: refused, nothing to check
        total.add(score_document(doc, corpus / name))
    assert total.matched > 1000
    assert total.share >= 0.98, total.misses


def test_pdf_boxes_are_on_the_page_and_pages_have_sizes():
    doc = read_pdf(PDFS[0].read_bytes())
    assert sorted(doc.pages) == [1, 2, 3, 4, 5]
    for box in _boxes(doc):
        width, height = doc.pages[box.page]
        x0, top, x1, bottom = box.bbox
        assert 0 <= x0 < x1 <= width and 0 <= top < bottom <= height


def test_tagged_pdf_blocks_have_glyph_boxes():
    """Blocks read from the structure tree get the box of their glyphs, not the page's
    width (a tagged list nested by position takes in its sublists)."""
    doc = read_pdf((DATA / "pdf" / "office" / "report.tagged.pdf").read_bytes())
    boxes = _boxes(doc)
    assert boxes and all(b.bbox[0] > 50 and b.bbox[2] < 560 for b in boxes)


# ----------------------------------------------------------------- other inputs
def test_every_slide_is_named():
    doc = registry.read(big_deck(4))
    slides = {loc.slide for b in doc.blocks for loc in b.prov if isinstance(loc, SlideRef)}
    assert slides == {1, 2, 3, 4}
    assert all(b.prov for b in doc.blocks)
    data = json.loads(convert_document(big_deck(4), "json").content)
    assert {p["slide"] for b in data["blocks"] for p in b.get("prov", [])} == {1, 2, 3, 4}


def test_every_sheet_is_named_with_its_range_and_cells_with_their_address():
    doc = registry.read(build_xlsx())
    ranges = [loc for b in doc.blocks for loc in b.prov if isinstance(loc, SheetRange)]
    assert {r.sheet for r in ranges} == {"Sales", "Staff", "Secret"}  # hidden, read too
    assert SheetRange("Sales", "B2:F5") in ranges and SheetRange("Staff", "A1:B3") in ranges
    table = next(b for b in doc.blocks if isinstance(b, model.Table))
    cells = [c.prov for r in table.rows for c in r.cells]
    assert cells[0] == [SheetRange("Sales", "B2:F2")]  # the merged title row
    assert [SheetRange("Sales", "B3")] in cells and [SheetRange("Sales", "F5")] in cells


def test_docx_blocks_name_their_part_and_position():
    doc = registry.read((DATA / "docx" / "docling" / "docx_lists.docx").read_bytes())
    refs = [b.prov[0] for b in doc.blocks]
    assert all(isinstance(r, PartRef) and r.part == "word/document.xml" for r in refs)
    indexes = [r.index for r in refs if isinstance(r, PartRef)]
    assert indexes == sorted(indexes) and len(set(indexes)) == len(indexes)


def _epub(chapters: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
            'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf" '
            'media-type="application/oebps-package+xml"/></rootfiles></container>'))
        items = "".join(f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
                        for i, name in enumerate(chapters))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        z.writestr("OEBPS/book.opf", (
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            f'<metadata/><manifest>{items}</manifest><spine>{spine}</spine></package>'))
        for name, body in chapters.items():
            z.writestr(f"OEBPS/{name}", f"<html><body>{body}</body></html>")
    return out.getvalue()


def test_every_epub_spine_item_is_named():
    book = _epub({"one.xhtml": "<h1>One</h1><p>First chapter.</p>",
                  "two.xhtml": "<h1>Two</h1><p>Second.</p><p>More.</p>"})
    data = json.loads(convert_document(book, "json").content)
    refs = [p for b in data["blocks"] for p in b["prov"]]
    assert refs == [{"part": "OEBPS/one.xhtml", "index": 0}, {"part": "OEBPS/one.xhtml",
                    "index": 1}, {"part": "OEBPS/two.xhtml", "index": 0},
                    {"part": "OEBPS/two.xhtml", "index": 1},
                    {"part": "OEBPS/two.xhtml", "index": 2}]


# ----------------------------------------------------------------- writers
def test_json_carries_prov_and_pages_validates_and_reads_back():
    converted = convert_document(PDFS[0].read_bytes(), "json")
    data = json.loads(converted.content)
    assert data["version"] == model.SCHEMA_VERSION == "1.1"
    assert data["pages"][0] == {"page": 1, "width": 595.2, "height": 841.92}
    first = data["blocks"][0]["prov"][0]
    assert set(first) == {"page", "bbox"} and len(first["bbox"]) == 4
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert validate(data, schema, schema) == []
    blocks = model.from_dict(data["blocks"])
    assert blocks[0].prov == [PageBox(1, tuple(first["bbox"]))]
    # a document read from no PDF has neither
    plain = json.loads(convert_document(
        (DATA / "docx" / "docling" / "docx_lists.docx").read_bytes(), "json").content)
    assert "pages" not in plain and validate(plain, schema, schema) == []


def test_schema_refuses_a_location_of_no_known_kind():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    data = json.loads(convert_document(PDFS[0].read_bytes(), "json").content)
    data["blocks"][0]["prov"] = [{"page": 1}]
    assert validate(data, schema, schema)


def test_doctags_has_location_tokens_and_page_breaks_for_pdf_only():
    text = convert_document(PDFS[0].read_bytes(), "doctags").content
    assert re.search(r"<section_header_level_\d><loc_\d+><loc_\d+><loc_\d+><loc_\d+>\w", text)
    assert text.count("<page_break>") == 4  # five pages
    assert all(0 <= int(v) <= 499 for v in re.findall(r"<loc_(\d+)>", text))
    docx = convert_document((DATA / "docx" / "docling" / "docx_lists.docx").read_bytes(),
                            "doctags").content
    assert "<loc_" not in docx and "<page_break>" not in docx


@pytest.mark.parametrize("export", ["markdown", "html"])
def test_page_markers_on_request(export):
    data = PDFS[0].read_bytes()
    plain = convert_document(data, export).content
    marked = convert_document(data, export, options=ConvertOptions(write=WriterOptions(page_markers=True))).content
    assert "<!-- page" not in plain
    markers = re.findall(r"<!-- page (\d+) -->", marked)
    assert markers == ["1", "2", "3", "4", "5"]
    # the text between the markers is the text without them
    assert re.sub(r"\s+", "", re.sub(r"<!-- page \d+ -->", "", marked)) == re.sub(
        r"\s+", "", plain)


def test_page_markers_stand_where_pages_start():
    doc = Document([Heading(1, [Text("A")], prov=[PageBox(1, (0, 0, 1, 1))]),
                    Paragraph([Text("b")], prov=[PageBox(1, (0, 2, 1, 3)),
                                                 PageBox(2, (0, 0, 1, 1))]),
                    Paragraph([Text("c")], prov=[PageBox(3, (0, 0, 1, 1))])])
    text = registry.write("markdown", doc, options=WriterOptions(page_markers=True))
    assert text == "<!-- page 1 -->\n\n# A\n\nb\n\n<!-- page 3 -->\n\nc\n"


# ----------------------------------------------------------------- pages=
@pytest.mark.parametrize(("spec", "words"), [
    ("1-3,x", "not a page"), ("0", "from 1"), ("3-1", "backwards"), ("", "empty"),
    ("1,,2", "not a page"), ("1-2-3", "not a page"), ("9" * 12, "not a page")])
def test_pages_syntax_is_checked(spec, words):
    with pytest.raises(InvalidOption, match=words) as caught:
        parse_pages(spec)
    assert caught.value.code == 40001


def test_pages_are_expanded_within_the_page_count():
    assert pages_in(parse_pages("1-3, 7,2"), 7) == [1, 2, 3, 7]
    with pytest.raises(InvalidOption, match="page 9, but the document has 5 pages"):
        pages_in(parse_pages("2,9"), 5)
    with pytest.raises(InvalidOption):  # a huge range costs nothing before it is refused
        pages_in(parse_pages("1-999999999"), 5)


def test_pages_reads_only_those_pages():
    doc = read_pdf(PDFS[0].read_bytes(), pages=parse_pages("2-3"))
    assert sorted(doc.pages) == [2, 3]
    assert {b.page for b in _boxes(doc)} == {2, 3}
    with pytest.raises(InvalidOption, match="has 5 pages"):
        read_pdf(PDFS[0].read_bytes(), pages=parse_pages("5-6"))
    with pytest.raises(InvalidOption, match="PDF and image input only"):
        registry.read((DATA / "docx" / "docling" / "docx_lists.docx").read_bytes(),
                      options=ReadRequest(pages=parse_pages("1")))


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_two_pages_of_the_long_document_cost_a_fraction_of_it():
    """pages=5-6 of the 28-page document: the other pages are never laid out."""
    data = LONG.read_bytes()

    def cpu(options: ConvertOptions) -> float:
        start = time.process_time()
        convert_document(data, "markdown", options=options)
        return time.process_time() - start

    pages_5_6 = ConvertOptions(read=ReadRequest(pages=parse_pages("5-6")))
    cpu(pages_5_6)  # warm the imports
    whole = cpu(ConvertOptions())
    part = min(cpu(pages_5_6) for _ in range(2))
    assert part < 0.15 * whole, (part, whole)


# ----------------------------------------------------------------- over HTTP
@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def test_pages_and_options_are_checked_over_http(api):
    pdf = {"file": ("multi.pdf", PDFS[0].read_bytes())}
    for fields, words in [({"pages": "3-1"}, "backwards"), ({"pages": "0"}, "from 1"),
                          ({"pages": "7"}, "has 5 pages"), ({"page": "2"}, "unknown field"),
                          ({"page_markers": "true", "export": "json"}, "page_markers"),
                          ({"chunk_tokens": "100"}, "export=chunks only")]:
        reply = await post_form(api, "/api/convert", fields, pdf)
        assert reply.body["code"] == 40001, (fields, reply.body)
        assert words in reply.body["msg"]
    reply = await post_form(api, "/api/convert", {"pages": "1"}, {
        "file": ("a.docx", (DATA / "docx" / "docling" / "docx_lists.docx").read_bytes())})
    assert reply.body["code"] == 40001
    reply = await post_form(api, "/api/convert", {"pages": "2,4", "page_markers": "true"}, pdf)
    assert reply.body["code"] == 0, reply.body
    assert re.findall(r"<!-- page (\d+) -->", reply.body["data"]["content"]) == ["2", "4"]


def test_walk_does_not_enter_locations():
    doc = Document([Paragraph([Text("x")], prov=[PageBox(1, (0, 0, 1, 1))])])
    assert [type(n).__name__ for n in walk(doc.blocks)] == ["Paragraph", "Text"]
