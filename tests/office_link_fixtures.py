"""Hostile OpenDocument and RTF files that point LibreOffice at files on the server's disk,
for the sandbox and link-neutralising tests (``tests/test_office_sandbox.py``).

:class:`Canary` writes files outside any conversion job (a PNG of random pixels, a one-page
PDF, a text file, an ODT, an ODS, each carrying one unique word); :func:`hostile_inputs`
builds each way of reaching them (RTF fields, ODF image links, linked objects, sections,
sheets, fill and background images, bullets, Calc formulas, file-name fields). Everything is
made with zipfile and strings at test time; nothing is committed.
"""

from __future__ import annotations

import os
import secrets
import zlib
from dataclasses import dataclass
from pathlib import Path

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "of": "urn:oasis:names:tc:opendocument:xmlns:of:1.2",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "meta": "urn:oasis:names:tc:opendocument:xmlns:meta:1.0",
}
_XMLNS = " ".join(f'xmlns:{k}="{v}"' for k, v in _NS.items())
_MIME = {"odt": "application/vnd.oasis.opendocument.text",
         "ods": "application/vnd.oasis.opendocument.spreadsheet",
         "odp": "application/vnd.oasis.opendocument.presentation"}
_BODY = {"odt": "office:text", "ods": "office:spreadsheet", "odp": "office:presentation"}


def odf(kind: str, body: str, *, automatic_styles: str = "", styles: str = "",
        members: dict[str, bytes] | None = None) -> bytes:
    """An OpenDocument package of ``kind`` (odt/ods/odp) whose body is ``body``."""
    content = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_XMLNS} '
               f'office:version="1.3"><office:automatic-styles>{automatic_styles}'
               f"</office:automatic-styles><office:body><{_BODY[kind]}>{body}</{_BODY[kind]}>"
               "</office:body></office:document-content>")
    styles_xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-styles {_XMLNS} '
                  f'office:version="1.3">{styles}</office:document-styles>')
    extra = members or {}
    entries = "".join(f'<manifest:file-entry manifest:full-path="{name}" '
                      'manifest:media-type=""/>' for name in extra)
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
                '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">'
                f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{_MIME[kind]}"/>'
                '<manifest:file-entry manifest:full-path="content.xml" '
                'manifest:media-type="text/xml"/><manifest:file-entry '
                'manifest:full-path="styles.xml" manifest:media-type="text/xml"/>'
                f"{entries}</manifest:manifest>")
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), _MIME[kind].encode(), zipfile.ZIP_STORED)
        zf.writestr("META-INF/manifest.xml", manifest)
        zf.writestr("content.xml", content)
        zf.writestr("styles.xml", styles_xml)
        for name, data in extra.items():
            zf.writestr(name, data)
    return out.getvalue()


def random_png(width: int = 23, height: int = 17) -> bytes:
    """A PNG of random pixels: no other file on the machine has these bytes."""
    rows = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def one_page_pdf(word: str) -> bytes:
    """A one-page PDF showing ``word`` in large type."""
    from tests.pdf_fixtures import _pdf, _stream

    content = b"BT /F1 48 Tf 72 600 Td (%s) Tj ET" % word.encode()
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                 b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
                 _stream(b"", content),
                 b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


@dataclass
class Canary:
    """Files outside the job, each carrying ``word``; ``png`` is unique random pixels."""

    root: Path
    word: str
    png: Path
    pdf: Path
    txt: Path
    odt: Path
    ods: Path

    @classmethod
    def make(cls, root: Path) -> Canary:
        root.mkdir(parents=True, exist_ok=True)
        word = "Canary" + secrets.token_hex(6)
        files = {"png": random_png(), "pdf": one_page_pdf(word),
                 "txt": f"{word} secret text\n".encode(),
                 "odt": odf("odt", f"<text:p>{word} linked document</text:p>"),
                 "ods": odf("ods", '<table:table table:name="Sheet1"><table:table-row>'
                                   '<table:table-cell office:value-type="string">'
                                   f"<text:p>{word}</text:p></table:table-cell>"
                                   "</table:table-row></table:table>")}
        paths = {}
        for ext, data in files.items():
            path = root / f"canary.{ext}"
            path.write_bytes(data)
            paths[ext] = path
        return cls(root, word, **paths)

    def secrets_in(self, text: str) -> list[str]:
        """What of this canary shows in ``text``: its word or its folder."""
        return [s for s in (self.word, str(self.root)) if s in text]


def _frame(inner: str, anchor: str = "as-char") -> str:
    return (f'<draw:frame draw:name="f" text:anchor-type="{anchor}" svg:width="3cm" '
            f'svg:height="2cm">{inner}</draw:frame>')


def _image(href: str) -> str:
    return (f'<draw:image xlink:href="{href}" xlink:type="simple" xlink:show="embed" '
            'xlink:actuate="onLoad"/>')


def _rtf_field(instruction: str, result: str = "x") -> bytes:
    return ("{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Helvetica;}}Before the field. "
            f"{{\\field{{\\*\\fldinst {instruction}}}{{\\fldrslt {result}}}}}"
            " After the field.\\par}").encode()


def _cell(formula: str) -> str:
    return (f'<table:table-cell table:formula="of:={formula}"/>')


def _relative(target: Path) -> str:
    """``target`` as a relative link from any folder: enough ``..`` to reach the root."""
    return "../" * 12 + str(target).lstrip("/")


def hostile_inputs(c: Canary) -> dict[str, tuple[str, bytes]]:
    """Each way of pointing LibreOffice at the canary: name -> (kind, file bytes)."""
    png, pdf = c.png.as_uri(), c.pdf.as_uri()
    para = "<text:p>Visible text.</text:p>"
    graphic = ('<style:style style:name="gr1" style:family="graphic"><style:graphic-properties '
               'draw:fill="bitmap" draw:fill-image-name="canary" style:repeat="stretch"/>'
               "</style:style>")
    fill_image = (f'<office:styles><draw:fill-image draw:name="canary" xlink:href="{png}" '
                  'xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
                  "</office:styles>")
    rect = ('<draw:rect draw:style-name="gr1" svg:x="2cm" svg:y="2cm" svg:width="8cm" '
            'svg:height="6cm"/>')
    anchored_rect = rect.replace("<draw:rect", '<draw:rect text:anchor-type="paragraph"')
    return {
        "rtf INCLUDEPICTURE png": ("rtf", _rtf_field(f'INCLUDEPICTURE "{c.png}"')),
        "rtf INCLUDEPICTURE linked png": ("rtf", _rtf_field(f'INCLUDEPICTURE "{c.png}" \\\\d')),
        "rtf INCLUDEPICTURE pdf": ("rtf", _rtf_field(f'INCLUDEPICTURE "{c.pdf}"')),
        "rtf INCLUDETEXT": ("rtf", _rtf_field(f'INCLUDETEXT "{c.txt}"')),
        "rtf INCLUDEPICTURE split": ("rtf", _rtf_field(
            f'{{\\b INCLUDE}}{{PICT\\u85?RE}} "{c.png}"')),
        "odt image file uri": ("odt", odf("odt", f"{para}<text:p>{_frame(_image(png))}</text:p>")),
        "odt image pdf": ("odt", odf("odt", f"{para}<text:p>{_frame(_image(pdf))}</text:p>")),
        "odt image relative": ("odt", odf("odt", f"{para}<text:p>"
                                                 f"{_frame(_image(_relative(c.png)))}</text:p>")),
        "odt image absolute path": ("odt", odf("odt", f"{para}<text:p>"
                                                      f"{_frame(_image(str(c.png)))}</text:p>")),
        "odp image": ("odp", odf("odp", '<draw:page draw:name="p1"><draw:frame svg:x="1cm" '
                                        'svg:y="1cm" svg:width="8cm" svg:height="6cm">'
                                        f"{_image(png)}</draw:frame></draw:page>")),
        "odp image pdf": ("odp", odf("odp", '<draw:page draw:name="p1"><draw:frame svg:x="1cm" '
                                            'svg:y="1cm" svg:width="8cm" svg:height="6cm">'
                                            f"{_image(pdf)}</draw:frame></draw:page>")),
        "odt linked object": ("odt", odf("odt", f"{para}<text:p>" + _frame(
            f'<draw:object xlink:href="{c.odt.as_uri()}" xlink:type="simple" '
            'xlink:show="embed" xlink:actuate="onLoad"/>') + "</text:p>")),
        "odt background image": ("odt", odf(
            "odt", '<text:p text:style-name="P1">Background.</text:p>',
            automatic_styles=('<style:style style:name="P1" style:family="paragraph">'
                              '<style:paragraph-properties><style:background-image '
                              f'xlink:href="{png}" xlink:type="simple" xlink:actuate="onLoad"/>'
                              "</style:paragraph-properties></style:style>"))),
        "odt page background": ("odt", odf(
            "odt", para, styles=(
                '<office:automatic-styles><style:page-layout style:name="pm1">'
                '<style:page-layout-properties fo:page-width="21cm" fo:page-height="29.7cm" '
                f'draw:fill="bitmap" draw:fill-image-name="canary"><style:background-image '
                f'xlink:href="{png}" xlink:type="simple" xlink:actuate="onLoad"/>'
                "</style:page-layout-properties></style:page-layout></office:automatic-styles>"
                '<office:master-styles><style:master-page style:name="Standard" '
                'style:page-layout-name="pm1"/></office:master-styles>'))),
        "odt list bullet image": ("odt", odf(
            "odt", '<text:list text:style-name="L1"><text:list-item><text:p>Item one.</text:p>'
                   "</text:list-item></text:list>",
            automatic_styles=('<text:list-style style:name="L1"><text:list-level-style-image '
                              f'text:level="1" xlink:href="{png}" xlink:type="simple" '
                              'xlink:show="embed" xlink:actuate="onLoad"><style:list-level-'
                              'properties fo:width="0.5cm" fo:height="0.5cm"/>'
                              "</text:list-level-style-image></text:list-style>"))),
        "odt fill image": ("odt", odf(
            "odt", f"<text:p>{anchored_rect}</text:p>", automatic_styles=graphic,
            styles=fill_image)),
        "odp fill image": ("odp", odf("odp", f'<draw:page draw:name="p1">{rect}</draw:page>',
                                      automatic_styles=graphic, styles=fill_image)),
        "odt section source": ("odt", odf(
            "odt", f'{para}<text:section text:name="S1"><text:section-source '
                   f'xlink:href="{c.odt.as_uri()}" xlink:type="simple"/><text:p/>'
                   "</text:section>")),
        "odt section source text": ("odt", odf(
            "odt", f'{para}<text:section text:name="S1"><text:section-source '
                   f'xlink:href="{c.txt.as_uri()}" xlink:type="simple" '
                   'text:filter-name="Text"/><text:p/></text:section>')),
        "ods table source": ("ods", odf(
            "ods", '<table:table table:name="Linked"><table:table-source table:mode="copy-all" '
                   f'xlink:href="{c.ods.as_uri()}" xlink:type="simple" '
                   'table:table-name="Sheet1"/><table:table-row><table:table-cell/>'
                   "</table:table-row></table:table>")),
        "ods external reference": ("ods", odf(
            "ods", '<table:table table:name="S"><table:table-row>'
                   f"{_cell(repr_ext(c.ods))}</table:table-row></table:table>")),
        "ods INFO CELL": ("ods", odf(
            "ods", '<table:table table:name="S"><table:table-row>'
                   + _cell('INFO(&quot;system&quot;)') + _cell('INFO(&quot;osversion&quot;)')
                   + _cell('INFO(&quot;release&quot;)') + _cell('INFO(&quot;directory&quot;)')
                   + _cell('CELL(&quot;filename&quot;)')
                   + _cell('CELL(&quot;file&quot;&amp;&quot;name&quot;)')
                   + "</table:table-row></table:table>")),
        "ods WEBSERVICE DDE": ("ods", odf(
            "ods", '<table:table table:name="S"><table:table-row>'
                   + _cell(f'WEBSERVICE(&quot;{c.txt.as_uri()}&quot;)')
                   + _cell(f'DDE(&quot;soffice&quot;;&quot;{c.ods}&quot;;&quot;A1&quot;)')
                   + "</table:table-row></table:table>")),
        "odt file-name field": ("odt", odf(
            "odt", '<text:p>Name: <text:file-name text:display="full">x</text:file-name> '
                   'template: <text:template-name text:display="full">y</text:template-name>'
                   "</text:p>")),
    }


def repr_ext(target: Path) -> str:
    """An OpenFormula reference to cell A1 of sheet Sheet1 of another file."""
    return f"[&apos;{target.as_uri()}&apos;#$Sheet1.A1]"
