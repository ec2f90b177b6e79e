"""Issue 30, item 4: small inputs whose conversion cost grows with something other than their
unique content are bounded before the work (smaller copies of the files of the finding,
made by ``bench/slow_inputs.py``; times belong in ``just bench hostile``).

- EPUB: a spine listing one chapter 500 times gives the chapter once and a warning.
- DOCX: one image shown 2,000 times is kept once; an HTML or Markdown output embedding it
  2,000 times is refused (41301, with the estimate and the limit) before it is written,
  while JSON (which embeds each image once) and placeholders still convert.
- XLSX: 300,000 shared strings, read for the kept cells only (openpyxl's whole-table reader
  never runs), and a sheet cut at the row limit with a warning; a DOCX table likewise.
- RTF, ODT, ODS, DOC, XLS: the table cells LibreOffice would lay out are counted first; an
  RTF of 50,000 rows is refused (41301) without LibreOffice starting.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from bench import slow_inputs
from render_pool.engine import limits, registry
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import Heading, Image, Table, walk_document
from render_pool.engine.office import cost as office_cost
from render_pool.engine.office import reader as office_lo
from render_pool.errors import TooLarge
from tests.office_fixtures import has_libreoffice, zip_bytes

needs_lo = pytest.mark.skipif(not has_libreoffice(), reason="LibreOffice (soffice) not installed")


@pytest.fixture
def no_libreoffice(monkeypatch):
    """Fail the test if LibreOffice would be started."""
    def refuse(*args, **kwargs):
        raise AssertionError("LibreOffice was started")

    monkeypatch.setattr(office_lo, "run_libreoffice", refuse)


# -- EPUB ---------------------------------------------------------------------------------


def test_an_epub_spine_repeating_one_chapter_reads_it_once_with_a_warning():
    data = slow_inputs.repeated_spine_epub(chapter_mb=0.2, repeats=500)
    doc = registry.read(data)
    headings = [b for b in doc.blocks if isinstance(b, Heading)]
    assert len(headings) == 1 and headings[0].anchor == "one"
    assert any("more than once" in w and "499 repeated entries" in w for w in doc.warnings)
    markdown = convert_document(data, "markdown").content
    assert markdown.count("The only chapter") == 1
    assert markdown.count("Jack 7 ") == 1  # its text once, not 500 times


# -- DOCX images --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reused_image() -> bytes:
    return slow_inputs.reused_image_docx(image_mb=0.1, uses=2000)


@pytest.mark.parametrize("engine", ["word2markdown", "alt_engine"])
def test_one_image_shown_2000_times_is_kept_once(reused_image, engine):
    doc = registry.read(reused_image, engine)
    shown = [n for n in walk_document(doc) if isinstance(n, Image)]
    assert len(shown) == 2000 and len(doc.resources) == 1
    assert {n.src for n in shown} == set(doc.resources)


@pytest.mark.parametrize(("export", "options"), [("html", ConvertOptions()),
                                                ("markdown", ConvertOptions(images="embed"))])
@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_an_output_embedding_one_image_2000_times_is_refused_with_the_figures(
        reused_image, export, options):
    """2,000 copies of a 0.1 MB image in base64: about 270 MB, past the 100 MB limit."""
    with pytest.raises(TooLarge) as info:
        convert_document(reused_image, export, options=options)
    message = info.value.message
    assert info.value.code == 41301
    assert "2,000 times" in message and "100 MB limit" in message and "images=placeholder" in message
    assert "about 2" in message  # the estimate: 2xx MB


def test_json_embeds_the_image_once_and_placeholders_stay_small(reused_image):
    as_json = convert_document(reused_image, "json").content
    assert as_json.count("data:image/png;base64,") == 1
    html = convert_document(reused_image, "html", options=ConvertOptions(images="placeholder")).content
    assert html.count("<img") == 2000 and len(html) < 1024 * 1024


def test_the_embedded_image_limit_counts_every_showing():
    small = slow_inputs.reused_image_docx(image_mb=0.1, uses=3)
    doc = registry.read(small)
    from render_pool.engine.common.images import resolver_for

    resolve = resolver_for(doc, "embed", max_bytes=300 * 1024)  # two showings fit, not three
    (key,) = doc.resources
    resolve(key)
    resolve(key)
    with pytest.raises(TooLarge):
        resolve(key)


def test_the_pdf_writer_bounds_the_images_it_hands_chromium(monkeypatch):
    """Markdown to PDF embeds images as data URIs in the HTML Chromium prints: the same
    bound as the HTML export, counted per showing, before Chromium is asked anything."""
    from render_pool.engine.pdf import writer as pdf

    doc = registry.read(slow_inputs.reused_image_docx(image_mb=0.1, uses=3))
    monkeypatch.setattr(limits, "_current", limits.ReaderLimits(
        embedded_images_max_bytes=300 * 1024))  # two showings fit, not three
    with pytest.raises(TooLarge) as info:
        pdf._body_fragment(doc)
    assert info.value.code == 41301
    monkeypatch.setattr(limits, "_current", limits.ReaderLimits())
    assert pdf._body_fragment(doc).count("data:image/png;base64,") == 3


# -- XLSX and DOCX tables -----------------------------------------------------------------


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_xlsx_with_300k_shared_strings_reads_only_the_kept_cells_strings(monkeypatch):
    """Row ``i`` shows string ``299999 - i``: the kept rows need the end of the table."""
    import openpyxl.reader.excel as excel

    def whole_table(*args, **kwargs):
        raise AssertionError("the whole shared-strings table was read")

    monkeypatch.setattr(excel, "read_string_table", whole_table)
    data = slow_inputs.shared_strings_xlsx(strings=300_000)
    doc = registry.read(data)
    table = next(b for b in doc.blocks if isinstance(b, Table))
    cap = limits.current().table_max_rows
    assert len(table.rows) == cap
    texts = [row.cells[0].blocks[0].children[0].text for row in table.rows[:2]]
    assert texts == ["text 299999", "text 299998"]
    assert any(f"more than {cap:,} rows" in w for w in doc.warnings)


def test_shared_strings_keep_rich_text_and_escapes_and_skip_phonetic_guides():
    from render_pool.engine.xlsx.strings import SharedStrings

    sst = (b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/'
           b'spreadsheetml/2006/main"><si><t>a &amp; b</t></si><si/><si><r><t>bo</t></r>'
           b'<r><rPr><b/></rPr><t xml:space="preserve">ld </t></r><rPh sb="0" eb="1"><t>'
           b"ruby</t></rPh></si><si><t>&#x4e2d;</t></si></sst>")
    package = zipfile.ZipFile(io.BytesIO(zip_bytes({"xl/sharedStrings.xml": sst})))
    table = SharedStrings(package, "xl/sharedStrings.xml")
    assert [table[i] for i in range(5)] == ["a & b", "", "bold ", "\u4e2d", ""]
    assert len(table) == 4


def _docx_table(rows: int) -> bytes:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(f"<w:tr><w:tc><w:p><w:r><w:t>r{i}</w:t></w:r></w:p></w:tc><w:tc><w:p>"
                   f"<w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr>" for i in range(rows))
    data = slow_inputs.reused_image_docx(image_mb=0.001, uses=0)
    document = (f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{w}"><w:body>'
                f"<w:tbl>{body}</w:tbl><w:p><w:r><w:t>after</w:t></w:r></w:p></w:body>"
                "</w:document>")
    from tests.docx_fixtures import replace_part

    return replace_part(data, "word/document.xml", document.encode())


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_a_docx_table_past_the_row_limit_is_cut_with_a_warning():
    doc = registry.read(_docx_table(12_000))
    table = next(b for b in doc.blocks if isinstance(b, Table))
    assert len(table.rows) == limits.current().table_max_rows == 10_000
    assert any("more than 10,000 rows" in w for w in doc.warnings)
    assert "after" in convert_document(_docx_table(12_000), "markdown").content


# -- LibreOffice inputs, costed before LibreOffice ------------------------------------------


def test_an_rtf_of_50000_rows_is_refused_before_libreoffice_starts(no_libreoffice):
    data = slow_inputs.big_table_rtf(rows=50_000, cols=2)
    with pytest.raises(TooLarge) as info:
        registry.read(data, options=ReadRequest(office_timeout=5))
    assert info.value.code == 41301
    assert "100,000 table cells" in info.value.message and "10,000" in info.value.message


def test_rtf_cells_cannot_hide_behind_escapes_or_missing_cell_words():
    assert office_cost.rtf_cells(rb"{\rtf1 \trowd\cellx100\cellx200 a\cell b\cell\row}") == 2
    assert office_cost.rtf_cells(rb"\\\cell \\\cell \nestcell") == 3  # escaped backslashes
    defined_only = rb"{\rtf1 " + rb"\trowd" + rb"\cellx10" * 50 + rb"\row" + b"}"
    assert office_cost.rtf_cells(defined_only) == 50
    assert office_cost.rtf_cells(rb"\cellxyz \cells") == 0  # other control words


def _odf(content: str, mimetype: bytes) -> bytes:
    doc = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:'
           'oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:'
           'opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:'
           f'text:1.0"><office:body>{content}</office:body></office:document-content>')
    return zip_bytes({"mimetype": mimetype, "content.xml": doc.encode()})


def test_an_ods_whose_one_row_repeats_a_million_times_is_refused_at_once(no_libreoffice):
    row = ('<table:table-row table:number-rows-repeated="1000000"><table:table-cell '
           'table:number-columns-repeated="3" office:value-type="string"><text:p>x</text:p>'
           "</table:table-cell></table:table-row>")
    data = _odf(f'<office:spreadsheet><table:table table:name="S">{row}</table:table>'
                "</office:spreadsheet>", b"application/vnd.oasis.opendocument.spreadsheet")
    with pytest.raises(TooLarge) as info:
        registry.read(data)
    assert "3,000,000 cells" in info.value.message


def test_empty_repeated_sheet_cells_cost_nothing_but_text_table_cells_all_count():
    empty_tail = ('<table:table-row table:number-rows-repeated="1048000"><table:table-cell '
                  'table:number-columns-repeated="1024"/></table:table-row>')
    styled = '<table:table-row><table:table-cell table:style-name="x"></table:table-cell>'
    sheet = (f"<table:table>{empty_tail}{styled}</table:table-row><table:table-row>"
             "<table:table-cell><text:p>t</text:p></table:table-cell></table:table-row>"
             "</table:table>").encode()
    assert office_cost.odf_cells(sheet, sheet=True) == 1
    text = (b'<table:table><table:table-row table:number-rows-repeated="4"><table:table-cell/>'
            b"<table:covered-table-cell/></table:table-row></table:table>")
    assert office_cost.odf_cells(text, sheet=False) == 8
    broken = b"<x><table:table-cell/>" * 10 + b"<oops" + b"<table:table-cell/>" * 1000
    assert office_cost.odf_cells(broken, sheet=False) == 505  # counted past the error


def test_an_odt_with_a_doctype_is_left_to_the_xml_guard():
    assert office_cost.odf_cells(b'<!DOCTYPE x [<!ENTITY a "b">]><x/>', sheet=False) == 0


@pytest.mark.slow  # LibreOffice makes the DOC and XLS
@needs_lo
def test_doc_and_xls_are_costed_from_their_main_stream(tmp_path):
    from tests.office_fixtures import soffice_convert

    (tmp_path / "t.rtf").write_bytes(slow_inputs.big_table_rtf(rows=4000, cols=2))
    (tmp_path / "t.csv").write_text("".join(f"{i},r{i},{i / 2}\n" for i in range(3000)))
    profile = tmp_path / "profile"
    soffice_convert([tmp_path / "t.rtf"], "doc", tmp_path, profile)
    soffice_convert([tmp_path / "t.csv"], "xls", tmp_path, profile)
    doc = (tmp_path / "t.doc").read_bytes()
    assert 12_000 <= office_cost.estimate(doc, "doc") < 14_000  # 8,000 cells, 4,000 rows
    with pytest.raises(TooLarge):
        office_cost.check_cost(doc, "doc")
    xls = (tmp_path / "t.xls").read_bytes()
    assert 9_000 <= office_cost.estimate(xls, "xls") <= 9_010
    office_cost.check_cost(xls, "xls")  # within the sheet bound


def test_the_bounds_are_settings_that_reach_the_pool():
    from render_pool.engine.worker_setup import WorkerSetup
    from tornado_app.documents.setup import open_pool
    from tornado_app.settings import Settings

    defaults = Settings.from_env({})
    assert (defaults.table_max_rows, defaults.office_max_text_cells,
            defaults.office_max_sheet_cells, defaults.embedded_images_max_mb * 1024 ** 2) == (
        limits.ReaderLimits().table_max_rows, limits.ReaderLimits().office_max_text_cells,
        limits.ReaderLimits().office_max_sheet_cells,
        limits.ReaderLimits().embedded_images_max_bytes)
    settings = Settings.from_env({"TABLE_MAX_ROWS": "50", "OFFICE_MAX_TEXT_CELLS": "7",
                                  "OFFICE_MAX_SHEET_CELLS": "9", "EMBEDDED_IMAGES_MAX_MB": "2",
                                  "POOL_TENANT_MAX_RUNNING": "1", "POOL_WORKERS": "3"})
    holder = type("Svc", (), {"settings": settings, "pool": None})()
    pool = open_pool(holder)  # type: ignore[arg-type]  # a stub of what open_pool reads
    try:
        assert pool.tenant_max_running == 1
        setup = pool.worker_setup
        assert isinstance(setup, WorkerSetup)
        assert setup.reader_limits == {"table_max_rows": 50, "office_max_text_cells": 7,
                                       "office_max_sheet_cells": 9,
                                       "embedded_images_max_bytes": 2 * 1024 ** 2}
    finally:
        pool.close(wait=False)
    with pytest.raises(TypeError):
        limits.configure(table_rows=5)


@pytest.mark.slow  # a pool worker
async def test_a_pool_worker_applies_the_bounds(io_loop):
    from render_pool.engine.worker_setup import worker_setup
    from render_pool.runtime.pool import RenderPool

    pool = RenderPool(1, memory_limit_mb=0,
                      worker_setup=worker_setup(reader_limits={"table_max_rows": 3}))
    try:
        doc = await pool.run(registry.read, _docx_table(5), tenant="co")
        table = next(b for b in doc.blocks if isinstance(b, Table))
        assert len(table.rows) == 3 and any("more than 3 rows" in w for w in doc.warnings)
    finally:
        pool.close(wait=False)
