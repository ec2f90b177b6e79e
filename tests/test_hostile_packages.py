"""Hostile packages, images and pages (issue 30, item 6): what a DTD does is refused in every
package format whatever the part's encoding (40003), images too large are refused from their
headers (41301 with the figure and the limit, no traceback), and an element left open in an
uploaded HTML page no longer swallows the rest of the page.

The readers are called directly (fast); the answer codes and the log are checked over HTTP
at the end (slow: the service and its pool).
"""

from __future__ import annotations

import io
import logging
import re
import struct
import time
import weakref
import zipfile
from collections.abc import Callable

import pytest
from PIL import Image, TiffImagePlugin

from render_pool.engine.common.safe_zip import verified_zip
from render_pool.engine.common.xml_guard import check_xml, encoding_of
from render_pool.engine.docx.reader import read_docx
from render_pool.engine.html.build import read_html
from render_pool.engine.html.reader import read_html_file
from render_pool.engine.image import reader as image_reader
from render_pool.engine.jobs import convert_document
from render_pool.engine.model import plain_text
from render_pool.errors import CorruptDocument, TooLarge
from tests.conftest import post_form
from tests.docx_fixtures import build_feature_docx, replace_part
from tests.office_fixtures import build_xlsx, zip_bytes
from tornado_app.app import make_app

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
BOMB_SUBSET = '<!DOCTYPE r [<!ENTITY e "EXPANDED"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;">]>'


# ---------------------------------------------------------------- packages
def _sheet(doctype: str, encoding: str, bom: bool = False) -> bytes:
    """A worksheet whose one cell is an inline string holding ``&f;`` (when ``doctype``
    declares it), written in ``encoding`` with or without a byte-order mark."""
    xml = (f'<?xml version="1.0" encoding="{encoding.upper()[:6]}"?>{doctype}'
           '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
           '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>cell &f; end</t></is></c>'
           "</row></sheetData></worksheet>")
    data = xml.encode(encoding)
    return ("\ufeff".encode(encoding) if bom else b"") + data


def _replace(package: bytes, name: str, body: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as src:
        entries = {n: src.read(n) for n in src.namelist()}
    entries[name] = body
    return zip_bytes(entries)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_an_xlsx_part_in_utf16_without_bom_cannot_hide_its_entities(encoding):
    """Before: the byte scan saw no ``<!ENTITY`` between the zero bytes; openpyxl (expat)
    read the part and expanded the entity into the cell."""
    data = _replace(build_xlsx(), "xl/worksheets/sheet1.xml", _sheet(BOMB_SUBSET, encoding))
    with pytest.raises(CorruptDocument, match=r"sheet1\.xml.*DTD") as info:
        convert_document(data, "markdown")
    assert info.value.code == 40003


def test_a_utf16_part_without_bom_and_without_declaration_is_checked_too():
    """expat reads UTF-16 from a bare ``<`` followed by a zero byte, libxml2 from ``<?``:
    both are detected, as are UTF-32 and BOMs."""
    body = (BOMB_SUBSET + "<r>&f;</r>").encode("utf-16-le")
    with pytest.raises(CorruptDocument, match="DTD"):
        check_xml(body, "part")
    assert encoding_of(b"<\x00r\x00")[0] == "utf-16-le"
    assert encoding_of(b"\x00<\x00?")[0] == "utf-16-be"
    assert encoding_of("<r/>".encode("utf-32-le"))[0] == "utf-32-le"
    assert encoding_of("<r/>".encode("utf-32-be"))[0] == "utf-32-be"
    assert encoding_of(b"\xff\xfe<\x00")[:2] == ("utf-16-le", 2)
    assert encoding_of(b'<?xml version="1.0" encoding="ISO-8859-1"?><r/>')[0] == "iso8859-1"
    for hostile in (BOMB_SUBSET + "<r/>").encode("utf-32-be"), \
            b"\xfe\xff" + (BOMB_SUBSET + "<r/>").encode("utf-16-be"):
        with pytest.raises(CorruptDocument):
            check_xml(hostile, "part")


@pytest.mark.parametrize("declared", ["UTF-7", "x-unknown-encoding", "cp037"])
def test_an_encoding_the_check_cannot_read_is_refused(declared):
    body = f'<?xml version="1.0" encoding="{declared}"?><r>+ADw-!ENTITY</r>'.encode()
    with pytest.raises(CorruptDocument, match=r"encoded in|not read here") as info:
        check_xml(body, "A part")
    assert info.value.code == 40003
    with pytest.raises(CorruptDocument):  # EBCDIC's own "<?xm", which libxml2 decodes
        check_xml(b"\x4c\x6f\xa7\x94" + b"\x00" * 8, "A part")


def _epub(opf: bytes, chapter: bytes = b"<html><body><p>Chapter text</p></body></html>"
          ) -> bytes:
    container = (b'<?xml version="1.0"?><container version="1.0" '
                 b'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 b'<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
                 b"</rootfiles></container>")
    return zip_bytes({"mimetype": b"application/epub+zip", "META-INF/container.xml": container,
                      "content.opf": opf, "ch1.xhtml": chapter}, zipfile.ZIP_STORED)


def _opf(doctype: str = "", title: str = "Book", encoding: str = "utf-8") -> bytes:
    return (f'<?xml version="1.0" encoding="{encoding.upper()[:6]}"?>{doctype}'
            '<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata '
            f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title>'
            '</metadata><manifest><item id="c1" href="ch1.xhtml" '
            'media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/>'
            "</spine></package>").encode(encoding)


def test_an_epub_package_file_in_utf16_without_bom_cannot_hide_its_entities():
    assert "Chapter text" in convert_document(_epub(_opf(encoding="utf-16-be")),
                                              "markdown").content
    hostile = _epub(_opf(BOMB_SUBSET, "A &f; title", "utf-16-be"))
    with pytest.raises(CorruptDocument, match=r"content\.opf.*DTD") as info:
        convert_document(hostile, "markdown")
    assert info.value.code == 40003


def test_an_undeclared_entity_behind_a_public_doctype_is_refused_not_dropped():
    """With an external DTD named (not loaded), lxml keeps ``&x;`` as a node and the text
    after it was lost from the title; now the part is refused, naming the entity."""
    doctype = ('<!DOCTYPE package PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
               '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">')
    with pytest.raises(CorruptDocument, match=r"undeclared entity \(&x;\)") as info:
        convert_document(_epub(_opf(doctype, "Kept &x; after")), "markdown")
    assert info.value.code == 40003
    # an EPUB 2 chapter with the XHTML doctype and HTML entities is still read
    chapter = (doctype.replace("package", "html") + "<html><body><p>A&nbsp;b &copy; c</p>"
               "</body></html>").encode()
    assert "b \u00a9 c" in convert_document(_epub(_opf(), chapter), "markdown").content


DOCUMENT = (f'<w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>before &b; after</w:t></w:r>'
            "</w:p></w:body></w:document>")


@pytest.mark.parametrize("doctype,reason", [
    ('<!DOCTYPE w:document [<!ENTITY b "bee">]>', "internal DTD subset"),
    ('<!ENTITY b "bee"><w:x/>', "entity"),
    ("<!DOCTYPE w:document [ ]>", "internal DTD subset"),
    ('<!DOCTYPE w:document SYSTEM "word.dtd">', "external DTD"),
    ('<!DOCTYPE w:document PUBLIC "-//W3C//DTD XHTML 1.1//EN" "x.dtd">', "external DTD"),
])
def test_a_docx_with_a_dtd_is_refused(doctype, reason):
    """Before: the DOCX reader parsed these (no expansion) and dropped the text after the
    entity it did not expand: "before" was read, "after" silently lost."""
    data = replace_part(build_feature_docx(), "word/document.xml",
                        ('<?xml version="1.0"?>' + doctype + DOCUMENT).encode())
    with pytest.raises(CorruptDocument, match=rf"word/document\.xml.*{reason}") as info:
        read_docx(data)
    assert info.value.code == 40003


def test_a_docx_with_an_undeclared_entity_or_a_utf16_subset_is_refused():
    data = replace_part(build_feature_docx(), "word/document.xml",
                        ('<?xml version="1.0"?>' + DOCUMENT).encode())
    with pytest.raises(CorruptDocument, match=r"undeclared entity \(&b;\)"):
        read_docx(data)
    hostile = ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE w:document '
               '[<!ENTITY b "bee">]>' + DOCUMENT).encode("utf-16-le")
    with pytest.raises(CorruptDocument, match="DTD"):
        read_docx(replace_part(build_feature_docx(), "word/document.xml", hostile))


def test_a_bare_doctype_is_not_refused_anywhere():
    """A ``<!DOCTYPE name>`` with no subset, no external id and no entity does nothing: an
    ODF manifest with one passes the strict check LibreOffice's parts get."""
    manifest = (b'<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE manifest:manifest>'
                b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:'
                b'manifest:1.0"/>')
    odt = zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text",
                     "META-INF/manifest.xml": manifest, "content.xml": b"<c/>"})
    assert verified_zip(odt, "The ODT document", strict_dtd=True)
    data = replace_part(build_feature_docx(), "word/document.xml", (
        '<?xml version="1.0"?><!DOCTYPE w:document>' + DOCUMENT.replace("&b;", "&amp;")
    ).encode())
    assert "before & after" in plain_text(read_docx(data).blocks)


def test_the_doctypes_openoffice_writes_pass_and_look_alikes_do_not():
    """OpenOffice.org 3 manifests, formulas and (still in LibreOffice) Basic modules name
    their DTD by a public id and a file name the package does not hold: harmless, and
    refused before, so such files could not be converted. The same id pointing anywhere
    else, or a DTD file carried in the package, is refused."""
    def odt(doctype: bytes, extra: dict[str, bytes] | None = None) -> bytes:
        manifest = (b'<?xml version="1.0" encoding="UTF-8"?>' + doctype +
                    b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:'
                    b'xmlns:manifest:1.0"/>')
        return zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text",
                          "META-INF/manifest.xml": manifest, **(extra or {})})

    office = b'<!DOCTYPE manifest:manifest PUBLIC "-//OpenOffice.org//DTD Manifest 1.0//EN" '
    assert verified_zip(odt(office + b'"Manifest.dtd">'), "The ODT document", strict_dtd=True)
    for hostile in (odt(office + b'"file:///etc/passwd">'),
                    odt(office + b'"../../x.dtd">'),
                    odt(office + b'"Manifest.dtd">',
                        {"META-INF/Manifest.dtd": b'%p; <!ENTITY e "x">'})):
        with pytest.raises(CorruptDocument):
            verified_zip(hostile, "The ODT document", strict_dtd=True)


@pytest.mark.parametrize("label,name,strict", [
    ("The PPTX package", "ppt/slides/slide1.xml", False),
    ("The XLSX package", "xl/worksheets/sheet1.xml", False),
    ("The EPUB package", "OEBPS/toc.ncx", False),
    ("The ODT document", "content.xml", True),
    ("The ODT document", "manifest.rdf", True),
    ("The PPTX package", "ppt/slides/slide1.bin", False),  # found by content, not by name
])
def test_every_package_refuses_a_dtd_subset_with_40003(label, name, strict):
    """Before: 40004 (an "unsafe archive"), and a part with another name (an OOXML part
    is found through the content types, whatever its name) was not checked at all."""
    package = zip_bytes({name: (BOMB_SUBSET + "<r>&f;</r>").encode()})
    with pytest.raises(CorruptDocument, match=re.escape(name)) as info:
        verified_zip(package, label, strict_dtd=strict)
    assert info.value.code == 40003


def _linear(seconds: Callable[[int], float], n: int) -> bool:
    """8x the input in well under 16x the time, in one of three tries (a busy machine)."""
    return any(seconds(8 * n) / seconds(n) < 16 for _ in range(3))


def test_the_doctype_check_stays_linear():
    """Many DOCTYPE openers before one '>', many entity references: 8x the input takes well
    under 16x the time."""
    def best(body: bytes) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            try:
                check_xml(body, "part")
            except CorruptDocument:
                pass
            times.append(time.perf_counter() - start)
        return max(min(times), 1e-4)

    for unit in (b"<!DOCTYPE ", b"<!DOCTYPE x PUBLIC '-//W3C//DTD x' '", b"&amp;"):
        assert _linear(lambda n, u=unit: best(u * n), 20_000), unit


# ---------------------------------------------------------------- images and OCR input
def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("L", (width, height), 255).save(out, format="PNG")
    return out.getvalue()


def _tiff(pages: int, size: tuple[int, int]) -> bytes:
    """A bilevel TIFF of ``pages`` blank pages (Group 4: a few bytes a page)."""
    page = Image.new("1", size, 1)
    out = io.BytesIO()
    page.save(out, format="TIFF", save_all=True, append_images=[page] * (pages - 1),
              compression="group4")
    return out.getvalue()


def _big_tiff(pages: int, size: tuple[int, int]) -> bytes:
    """A TIFF whose ``pages`` headers each say ``size`` (its pixels are never there to
    decode): a small file that claims big pages, made in milliseconds."""
    data = bytearray(_tiff(pages, (8, 8)))
    ifd = struct.unpack_from("<I", data, 4)[0]
    while ifd:
        count = struct.unpack_from("<H", data, ifd)[0]
        for entry in range(ifd + 2, ifd + 2 + 12 * count, 12):
            tag, kind = struct.unpack_from("<HH", data, entry)
            value = {256: size[0], 257: size[1], 278: size[1]}.get(tag)
            if value is not None:
                struct.pack_into("<H" if kind == 3 else "<I", data, entry + 8, value)
        ifd = struct.unpack_from("<I", data, ifd + 2 + 12 * count)[0]
    return bytes(data)


@pytest.mark.parametrize("size", [(1_000_000, 1), (1, 1_000_000)])
def test_an_image_too_wide_or_tall_is_refused_with_figure_and_limit(size):
    """Before: an OSError from the PDF's JPEG encoder (not a ConversionError: 50001 and a
    traceback)."""
    with pytest.raises(TooLarge, match=r"1,000,000.*the limit is 65,500") as info:
        image_reader.image_pdf(_png(*size))
    assert info.value.code == 41301


def test_frames_are_counted_and_sized_from_the_headers_before_any_is_decoded(monkeypatch):
    def no_decoding(self, *args, **kwargs):
        raise AssertionError("a frame was decoded")

    monkeypatch.setattr(TiffImagePlugin.TiffImageFile, "load", no_decoding)
    with pytest.raises(TooLarge, match="more than 200 pages; the limit is 200"):
        image_reader.image_pdf(_tiff(201, (50, 50)))
    # 199 pages of 4,000 x 3,000: each one allowed, together past the budget
    with pytest.raises(TooLarge, match=r"199 pages have 2,388,000,000 pixels in all; the "
                                       r"limit is 2,000,000,000"):
        image_reader.image_pdf(_big_tiff(199, (4000, 3000)))


def test_a_199_page_tiff_becomes_a_199_page_pdf_one_frame_at_a_time(monkeypatch):
    """The frames are decoded and written one at a time (before: all 199 decoded pages were
    held at once, past a worker's memory limit for A4 scans)."""
    import pypdfium2 as pdfium

    made: list[weakref.ref[Image.Image]] = []
    real_init, real_save = Image.Image.__init__, Image.Image.save
    held: list[int] = []

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    def save(self, *args, **kwargs):  # how many decoded pages are alive while one is saved
        alive = [i for i in (r() for r in made) if i is not None]
        held.append(sum(1 for i in alive if i.size == (200, 280) and i.mode == "L"))
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "__init__", init)
    monkeypatch.setattr(Image.Image, "save", save)
    pdf = pdfium.PdfDocument(image_reader.image_pdf(_tiff(199, (200, 280))))
    assert len(pdf) == 199
    pdf.close()
    assert held and max(held) <= 2, held


def test_ocr_refuses_an_image_tesseract_cannot_read():
    """Before: Tesseract's Recognize failed on a side over 32,767 pixels and the page was
    reported as having run out of time."""
    from render_pool.engine.ocr import recognise

    with pytest.raises(TooLarge, match="40,000 x 20 pixels; OCR reads at most 32,767"):
        recognise(Image.new("L", (40_000, 20), 255), timeout=2)


# ---------------------------------------------------------------- HTML left open
UNCLOSED = ["embed", "object", "iframe", "noembed", "noscript", "template", "title",
            "textarea", "xmp", "plaintext", "script", "style", "select", "svg", "noframes"]


@pytest.mark.parametrize("tag", UNCLOSED)
def test_text_after_an_unclosed_element_is_kept_with_a_warning(tag):
    doc = read_html(f"<p>Before.</p><{tag} src=x><p>After one.</p><h2>After two</h2>")
    texts = [plain_text([b]) for b in doc.blocks]
    assert texts == ["Before.", "After one.", "After two"], texts
    if tag != "embed":  # void in HTML: never closed, nothing to say
        assert any(f"<{tag}> unclosed" in w for w in doc.warnings), doc.warnings


def test_closed_elements_keep_their_meaning_and_say_nothing():
    doc = read_html("<html><head><title>T</title></head><body><p>a</p>"
                    '<embed src="movie.swf"><p>b</p><object data=x>fallback</object>'
                    "<p>c</p><iframe src=y>inner</iframe><script>var x = '<p>';</script>"
                    "<textarea>typed</textarea><p>d</p><embed src=z /><p>e</p></body></html>")
    assert [plain_text([b]) for b in doc.blocks] == ["a", "b", "c", "d", "e"]
    assert doc.meta["title"] == "T" and doc.warnings == []


def test_an_uploaded_page_keeps_its_text_after_several_open_elements():
    page = (b"<html><body><h1>Report</h1><object data=a.swf><p>First.</p>"
            b"<iframe src=b><p>Second.</p><!-- a comment --><p>Third.</p>"
            b"<textarea><p>Fourth.</p></body></html>")
    doc = read_html_file(page)
    text = " ".join(plain_text([b]) for b in doc.blocks)
    assert all(w in text for w in ("Report", "First.", "Second.", "Third.", "Fourth.")), text
    warned = " ".join(doc.warnings)
    assert all(f"<{t}> unclosed" in warned for t in ("object", "iframe", "textarea"))


def test_an_unclosed_comment_is_named_in_a_warning():
    doc = read_html("<p>Shown.</p><!-- <p>Hidden, as in a browser.</p>")
    assert [plain_text([b]) for b in doc.blocks] == ["Shown."]
    assert any("comment" in w and "never closed" in w for w in doc.warnings)


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_the_open_element_scan_stays_linear():
    from render_pool.engine.html.unclosed import close_open_elements

    def best(page: str) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            close_open_elements(page)
            times.append(time.perf_counter() - start)
        return max(min(times), 1e-4)

    for unit in ("<textarea>", "<object>", "<p a='x", "<embed>", "<a b=c d=e ", "<!--"):
        assert _linear(lambda n, u=unit: best(u * n), 10_000), unit


# ---------------------------------------------------------------- over HTTP
@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def test_hostile_images_and_packages_answer_codes_without_a_traceback(api, caplog):
    caplog.set_level(logging.INFO)
    cases = {
        "wide.png": (_png(1_000_000, 1), 41301, "65,500"),
        "pages.tif": (_big_tiff(199, (4000, 3000)), 41301, "2,000,000,000"),
        "entities.xlsx": (_replace(build_xlsx(), "xl/worksheets/sheet1.xml",
                                   _sheet(BOMB_SUBSET, "utf-16-le")), 40003, "DTD"),
    }
    for name, (payload, code, figure) in cases.items():
        reply = await post_form(api, "/api/convert", {}, {"file": (name, payload)})
        assert reply.body["code"] == code, (name, reply.body)
        assert figure in reply.body["msg"], (name, reply.body)
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    assert (await api.call("GET", "/health")).status == 200
