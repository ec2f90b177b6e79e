"""Office files written by others, read rather than refused (issue 32, items 6 and 7).

Each test is one way a real file from another project's test suite was refused or lost
text: the kind told from the bytes (an OLE file's root entries, a bare BIFF4 stream, an
EPUB without its ``mimetype``, HTML after a long preamble, CSV with long lines), an empty
part of an OpenDocument package, a UTF-8 page declaring gb2312, and in XLSX: hidden
sheets, formatted but empty ranges, durations and formulas saved without a value.
"""

from __future__ import annotations

import datetime as dt
import io
import struct
import zipfile

from render_pool.engine import registry
from render_pool.engine.common.text_decode import decode_text
from render_pool.engine.jobs import convert_document
from render_pool.engine.office import links as office_links
from render_pool.engine.office.reader import profile_xcu
from render_pool.engine.sniff import detect_kind
from render_pool.engine.xlsx.formulas import uncomputed_cells
from render_pool.engine.xlsx.reader import read_xlsx
from render_pool.engine.xlsx.values import shown
from tests.office_fixtures import zip_bytes

_END, _FREE, _FAT = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD


def _entry(name: str, kind: int, left: int = _FREE, right: int = _FREE,
           child: int = _FREE) -> bytes:
    raw = name.encode("utf-16-le") + b"\x00\x00"
    out = bytearray(128)
    out[:len(raw)] = raw
    struct.pack_into("<HBB3I", out, 64, len(raw), kind, 1, left, right, child)
    struct.pack_into("<IQ", out, 116, _END, 0)
    return bytes(out)


def compound_file(entries: list[bytes]) -> bytes:
    """A real OLE compound file (version 3, one FAT sector, one directory sector) whose
    directory is ``entries`` (at most four), all streams empty."""
    header = bytearray(512)
    header[:8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    struct.pack_into("<HHH", header, 0x18, 0x3E, 3, 0xFFFE)
    struct.pack_into("<HH", header, 0x1E, 9, 6)
    struct.pack_into("<I", header, 0x2C, 1)  # FAT sectors
    struct.pack_into("<IIIIIII", header, 0x30, 1, 0, 4096, _END, 0, _END, 0)
    struct.pack_into("<109I", header, 0x4C, 0, *([_FREE] * 108))
    fat = struct.pack("<128I", _FAT, _END, *([_FREE] * 126))
    directory = b"".join(entries).ljust(512, b"\x00")
    return bytes(header) + fat + directory


def test_a_slide_show_holding_a_workbook_is_a_slide_show():
    # the embedded chart's "Book" stream comes first in the directory, below a storage;
    # the root's own entry names the slide show (it was read as XLS and refused)
    data = compound_file([
        _entry("Root Entry", 5, child=3),
        _entry("Object1", 1, child=2),
        _entry("Book", 2),
        _entry("PowerPoint Document", 2, left=1),
    ])
    assert detect_kind(data) == "ppt"


def test_a_powerpoint_4_file_is_a_slide_show():
    # PowerPoint 4 (Mac) keeps its slides in a "PP40" stream; LibreOffice opens it
    data = compound_file([_entry("Root Entry", 5, child=1), _entry("PP40", 2)])
    assert detect_kind(data) == "ppt"


def test_a_bare_biff4_worksheet_is_xls():
    # Excel 4.0 saved the BIFF stream as the whole file: BOF 0x0409, length 6, worksheet
    data = bytes.fromhex("0904060000001000") + b"\x00" * 64
    assert detect_kind(data) == "xls"


def test_an_epub_without_its_mimetype_entry_is_read_as_epub():
    container = (b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                 b'opendocument:xmlns:container"><rootfiles><rootfile full-path="OPS/book.opf"'
                 b' media-type="application/oebps-package+xml"/></rootfiles></container>')
    opf = (b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
           b'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title>'
           b'</metadata><manifest><item id="c1" href="c1.html" media-type="application/'
           b'xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>')
    chapter = b"<html><body><h1>Chapter</h1><p>Chapter one of the unnamed book.</p></body></html>"
    data = zip_bytes({"META-INF/container.xml": container, "OPS/book.opf": opf,
                      "OPS/c1.html": chapter})
    assert detect_kind(data) == "epub"
    assert "Chapter one of the unnamed book." in convert_document(data, "markdown").content


def test_html_after_a_long_script_preamble_is_html():
    script = "<script>\n" + "var x = 1;\n" * 1000 + "</script>\n"
    data = (script + "<html><body><p>After the preamble.</p></body></html>").encode()
    assert detect_kind(data) == "html"


def test_csv_with_lines_longer_than_the_sample_is_csv():
    header = ",".join(f"column{i}" for i in range(600))
    rows = [",".join(str(r * i) for i in range(600)) for r in range(5)]
    data = "\n".join([header, *rows]).encode()
    assert detect_kind(data) == "csv"
    assert "column599" in convert_document(data, "markdown").content


def test_csv_of_quoted_fields_holding_commas_is_csv():
    lines = ["key,info", ',"Smith, John"'] + [
        f'Offense {i}:,"Conspiracy to manufacture, distribute, or possess, count {i}"'
        for i in range(30)]
    assert detect_kind("\n".join(lines).encode()) == "csv"


def test_a_utf8_page_declaring_gb2312_is_read_as_utf8():
    page = ('<html><head><meta charset="gb2312"><title>t</title></head>'
            "<body><p>中文新闻内容</p></body></html>").encode()
    text, warning = decode_text(page, declared_scan=True)
    assert "中文新闻内容" in text and warning is None
    legacy = page.decode().encode("gb2312")  # truly gb2312: the declaration still holds
    assert "中文新闻内容" in decode_text(legacy, declared_scan=True)[0]


def test_an_empty_part_of_an_opendocument_package_is_no_damage():
    content = (b'<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office='
               b'"urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:'
               b'names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>'
               b"Hello</text:p></office:text></office:body></office:document-content>")
    data = zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text",
                      "content.xml": content,
                      "Configurations2/accelerator/current.xml": b""})
    prepared = office_links.prepare(data, "odt")  # was 40003 "not well-formed XML"
    assert b"Hello" in zipfile.ZipFile(io.BytesIO(prepared.data)).read("content.xml")


def test_libreoffice_keeps_the_saved_values_of_formulas():
    xcu = profile_xcu()
    assert ('<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop '
            'oor:name="OOXMLRecalcMode" oor:op="fuse"><value>1</value>') in xcu
    assert 'oor:name="ODFRecalcMode" oor:op="fuse"><value>1</value>' in xcu


def _xlsx(build) -> bytes:  # type: ignore[no-untyped-def]
    import openpyxl

    wb = openpyxl.Workbook()
    build(wb)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_hidden_sheets_are_read_and_marked_hidden():
    def build(wb):  # type: ignore[no-untyped-def]
        wb.active["A1"] = "shown"
        hidden = wb.create_sheet("Lookup")
        hidden["A1"] = "kept lookup words"
        hidden.sheet_state = "hidden"

    md = convert_document(_xlsx(build), "markdown").content
    assert "Lookup (hidden)" in md and "kept lookup words" in md


def test_a_formatted_but_empty_range_costs_no_cells():
    from openpyxl.styles import Font

    def build(wb):  # type: ignore[no-untyped-def]
        ws = wb.active
        for r in range(1, 201):
            for c in range(1, 51):
                ws.cell(r, c).font = Font(bold=True)  # styled, no value: 10,000 cells
        ws["A201"] = "value below the styled range"

    doc = read_xlsx(_xlsx(build), max_cells=1000)
    assert not [w for w in doc.warnings if "cell limit" in w]
    assert "value below the styled range" in convert_document(
        _xlsx(build), "markdown").content


def test_a_duration_reads_as_hours_minutes_seconds():
    assert shown(dt.timedelta(days=12345, seconds=58656.96), "[h]:mm:ss") == "296296:17:37"
    assert shown(dt.timedelta(minutes=-90), "[h]:mm") == "-1:30:00"


def test_formulas_saved_without_a_value_are_named_in_a_warning():
    def build(wb):  # type: ignore[no-untyped-def]
        ws = wb.active
        ws.title = "Totals"
        ws["A1"], ws["A2"] = 1, 2
        ws["A3"] = "=SUM(A1:A2)"  # openpyxl saves the formula, no value
        for r in range(1, 8):
            ws.cell(r, 2, f"=A1*{r}")

    doc = registry.read(_xlsx(build))
    warning = next(w for w in doc.warnings if "no saved value" in w)
    assert warning.startswith("Sheet 'Totals': 8 formula cells have no saved value (")
    assert "..." in warning and "open and save the file in a spreadsheet program" in warning


def test_formulas_with_a_saved_value_need_no_warning():
    sheet = (b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
             b'<sheetData><row r="1"><c r="A1"><f>1+1</f><v>2</v></c>'
             b'<c r="B1" t="str"><f>""</f><v></v></c>'  # a saved empty text
             b'<c r="C1"><f>A1*2</f><v></v></c><c r="D1"><f>A1*3</f></c>'
             b"</row></sheetData></worksheet>")
    assert uncomputed_cells(sheet) == (2, ["C1", "D1"])


def test_a_slide_picture_of_unknown_format_is_left_out_not_a_500():
    # poi's 53446.ppt and 54332b.ppt: LibreOffice writes a picture PIL cannot identify;
    # python-pptx asks PIL for its format and raised UnidentifiedImageError (50001)
    from PIL import Image as PILImage
    from pptx import Presentation
    from pptx.util import Inches

    png = io.BytesIO()
    PILImage.new("RGB", (4, 4)).save(png, "PNG")
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Slide with a strange picture"
    slide.shapes.add_picture(io.BytesIO(png.getvalue()), Inches(1), Inches(1))
    out = io.BytesIO()
    prs.save(out)
    src = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    entries = {n: (b"\x01\x00\x09\x00junk" * 8 if n.startswith("ppt/media/") else src.read(n))
               for n in src.namelist()}
    converted = convert_document(zip_bytes(entries), "markdown")
    assert "Slide with a strange picture" in converted.content
    assert any("cannot be told" in w for w in converted.warnings)


def test_stream_names_are_compared_regardless_of_case():
    # poi's OddStyleRecord.xls names its workbook stream "WORKBOOK"
    data = compound_file([_entry("Root Entry", 5, child=1), _entry("WORKBOOK", 2)])
    assert detect_kind(data) == "xls"


def test_a_picture_without_its_fill_is_left_out_not_a_500():
    # poi's 2411-Performance_Up.pptx: a <p:pic> with no <p:blipFill> (InvalidXmlError)
    from PIL import Image as PILImage
    from pptx import Presentation
    from pptx.util import Inches

    png = io.BytesIO()
    PILImage.new("RGB", (4, 4)).save(png, "PNG")
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Slide with a broken picture"
    pic = slide.shapes.add_picture(io.BytesIO(png.getvalue()), Inches(1), Inches(1))
    pic._element.remove(pic._element.blipFill)
    out = io.BytesIO()
    prs.save(out)
    assert "Slide with a broken picture" in convert_document(out.getvalue(), "markdown").content
