"""The slow inputs of issue 30, item 4, made on the spot (shared by ``bench/hostile.py`` and
``tests/test_costly_inputs.py``): small files whose conversion used to hold a worker for the
whole time limit. Each maker takes its size, so the tests use smaller copies that still show
the behaviour; the bench sends them at the size of the finding:

- an RTF with one 100,000-row table (6.7 MB; 60 s, then 50401),
- an EPUB whose spine lists one 1 MB chapter 2,000 times (91 s, then 41301),
- a 3 MB DOCX showing one 2 MB PNG 3,000 times, converted with ``export=html`` (104 s),
- a 10 MB XLSX with 1.5 million shared strings (30 s).
"""

from __future__ import annotations

import io
import zipfile

from bench.hostile_inputs import large_png

_DEFLATED = zipfile.ZIP_DEFLATED


def _zip(members: dict[str, bytes], stored: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", _DEFLATED) as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name), data,
                       compress_type=zipfile.ZIP_STORED if name in stored else _DEFLATED)
    return out.getvalue()


def big_table_rtf(rows: int = 100_000, cols: int = 2) -> bytes:
    """An RTF document of one table of ``rows`` rows and ``cols`` columns (100,000 rows:
    about 7 MB)."""
    row = rb"\trowd" + b"".join(rb"\cellx%d" % (1500 * (c + 1)) for c in range(cols))
    body = b"".join(row + b"".join(rb"\pard\intbl %d.%d\cell " % (i, c)
                                   for c in range(cols)) + b"\\row\n" for i in range(rows))
    return (rb"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}" + b"\n" + body
            + rb"\pard The end.\par}")


def repeated_spine_epub(chapter_mb: float = 1.0, repeats: int = 2000) -> bytes:
    """An EPUB of one chapter of about ``chapter_mb`` MB that its spine lists ``repeats``
    times."""
    para = b"<p>All work and no play makes Jack a dull boy, again and again and again.</p>\n"
    paras = b"".join(para.replace(b"Jack", b"Jack %d" % i)
                     for i in range(max(1, int(chapter_mb * 1024 * 1024) // len(para))))
    chapter = (b'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/'
               b'xhtml"><head><title>One</title></head><body><h1 id="one">The only chapter'
               b"</h1>\n" + paras + b"</body></html>\n")
    spine = "".join('<itemref idref="c1"/>' for _ in range(repeats))
    opf = ('<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/'
           'opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/'
           'elements/1.1/"><dc:identifier id="id">x</dc:identifier><dc:title>Again</dc:title>'
           '<dc:language>en</dc:language></metadata><manifest><item id="c1" href="c1.xhtml" '
           f'media-type="application/xhtml+xml"/></manifest><spine>{spine}</spine></package>')
    container = ('<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:'
                 'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/'
                 'content.opf" media-type="application/oebps-package+xml"/></rootfiles>'
                 "</container>")
    return _zip({"mimetype": b"application/epub+zip",
                 "META-INF/container.xml": container.encode(),
                 "OEBPS/content.opf": opf.encode(), "OEBPS/c1.xhtml": chapter},
                stored=("mimetype",))


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"


def _drawing(n: int) -> str:
    return (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="952500"/>'
        f'<wp:docPr id="{n}" name="Picture {n}" descr="picture {n}"/><a:graphic><a:graphicData '
        'uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr>'
        f'<pic:cNvPr id="{n}" name="p{n}.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill>'
        '<a:blip r:embed="rIdImg"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData>'
        f"</a:graphic></wp:inline></w:drawing></w:r><w:r><w:t>use {n}</w:t></w:r></w:p>")


def reused_image_docx(image_mb: float = 2.0, uses: int = 3000) -> bytes:
    """A DOCX whose one PNG of about ``image_mb`` MB (random pixels: it does not compress)
    is shown ``uses`` times (2 MB, 3,000 times: about 3 MB)."""
    body = "".join(_drawing(n) for n in range(1, uses + 1))
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{_W}" '
        f'xmlns:r="{_R}" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
        'wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>'
        f"<w:p><w:r><w:t>One picture, {uses} times.</w:t></w:r></w:p>{body}<w:sectPr/>"
        "</w:body></w:document>")
    types = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
             '.org/package/2006/content-types"><Default Extension="rels" ContentType="'
             'application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="'
             'xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/'
             'png"/><Override PartName="/word/document.xml" ContentType="application/vnd.'
             'openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
    rels = (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG_RELS}">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
    doc_rels = (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG_RELS}">'
                '<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/'
                'officeDocument/2006/relationships/image" Target="media/image1.png"/>'
                "</Relationships>")
    return _zip({"[Content_Types].xml": types.encode(), "_rels/.rels": rels.encode(),
                 "word/document.xml": document.encode(),
                 "word/_rels/document.xml.rels": doc_rels.encode(),
                 "word/media/image1.png": large_png(image_mb, noise=True)})


_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def shared_strings_xlsx(strings: int = 1_500_000, rows: int | None = None) -> bytes:
    """An XLSX with ``strings`` shared strings and one sheet of ``rows`` rows (default: as
    many), row ``i`` showing the string ``strings - 1 - i`` (the last ones first, so every
    entry of the table is needed). 1.5 million: about 10 MB."""
    rows = strings if rows is None else rows
    sst = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="{_S}" '
           f'count="{strings}" uniqueCount="{strings}">'
           + "".join(f"<si><t>text {i}</t></si>" for i in range(strings)) + "</sst>")
    sheet = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_S}">'
             "<sheetData>" + "".join(
                 f'<row r="{i + 1}"><c r="A{i + 1}" t="s"><v>{(strings - 1 - i) % strings}</v>'
                 "</c></row>" for i in range(rows)) + "</sheetData></worksheet>")
    book = (f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_S}" xmlns:r="{_R}">'
            '<sheets><sheet name="Strings" sheetId="1" r:id="rId1"/></sheets></workbook>')
    types = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
             '.org/package/2006/content-types"><Default Extension="rels" ContentType="'
             'application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="'
             'xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
             'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.'
             'main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="'
             'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
             '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
             'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
    rels = (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG_RELS}">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    book_rels = (f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG_RELS}">'
                 f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/'
                 f'sheet1.xml"/><Relationship Id="rId2" Type="{rel}/sharedStrings" '
                 'Target="sharedStrings.xml"/></Relationships>')
    return _zip({"[Content_Types].xml": types.encode(), "_rels/.rels": rels.encode(),
                 "xl/workbook.xml": book.encode(), "xl/_rels/workbook.xml.rels":
                 book_rels.encode(), "xl/worksheets/sheet1.xml": sheet.encode(),
                 "xl/sharedStrings.xml": sst.encode()})


def one_line_odt(text: str = "One line from another company.") -> bytes:
    """The smallest ODT LibreOffice reads: one paragraph (the bystander's document)."""
    content = ('<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content '
               'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version='
               f'"1.2"><office:body><office:text><text:p>{text}</text:p></office:text>'
               "</office:body></office:document-content>")
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
                '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
                '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/'
                'vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="'
                'content.xml" manifest:media-type="text/xml"/></manifest:manifest>')
    return _zip({"mimetype": b"application/vnd.oasis.opendocument.text",
                 "content.xml": content.encode(), "META-INF/manifest.xml": manifest.encode()},
                stored=("mimetype",))
