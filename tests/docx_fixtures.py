"""DOCX fixtures built with python-docx (plus a little raw XML) for the DOCX reader tests.

Each builder returns the bytes of a .docx that exercises one group of features, so a test
failure points at one feature. python-docx has no API for footnotes, bookmarks, hyperlinks,
numbering instances, tracked changes, content controls or equations: those are written as
OOXML directly, exactly as Word would.
"""

from __future__ import annotations

import base64
import io
import zipfile

import docx
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.shared import Pt

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
M_NS = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def _save(document: docx.document.Document) -> bytes:
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def _append_xml(paragraph, xml: str) -> None:
    paragraph._p.append(parse_xml(xml))


def _bookmark(paragraph, name: str, bid: int) -> None:
    p = paragraph._p
    start = parse_xml(f'<w:bookmarkStart {nsdecls("w")} w:id="{bid}" w:name="{name}"/>')
    end = parse_xml(f'<w:bookmarkEnd {nsdecls("w")} w:id="{bid}"/>')
    ppr = p.find(qn("w:pPr"))
    if ppr is not None:
        ppr.addnext(start)
    else:
        p.insert(0, start)
    p.append(end)


def _run_xml(text: str, rpr: str = "") -> str:
    return f'<w:r><w:rPr>{rpr}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>' if rpr else \
        f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def _numbering(document) -> None:
    """Add abstract list definitions 90 (decimal) and 91 (bullets), and num instances.

    numId 101 -> decimal list; 102 -> same definition restarted at 5 (startOverride);
    103 -> bullets.
    """
    numbering = document.part.numbering_part.element
    dec_levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
        f'<w:lvlText w:val="%{i + 1}."/></w:lvl>'
        for i, fmt in enumerate(["decimal", "lowerLetter", "lowerRoman"])
    )
    bul_levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="bullet"/>'
        f'<w:lvlText w:val="•"/></w:lvl>' for i in range(3)
    )
    abstracts = [
        parse_xml(f'<w:abstractNum {nsdecls("w")} w:abstractNumId="90">{dec_levels}'
                  "</w:abstractNum>"),
        parse_xml(f'<w:abstractNum {nsdecls("w")} w:abstractNumId="91">{bul_levels}'
                  "</w:abstractNum>"),
    ]
    first_num = numbering.find(qn("w:num"))
    for ab in abstracts:
        if first_num is not None:
            first_num.addprevious(ab)
        else:
            numbering.append(ab)
    numbering.append(parse_xml(
        f'<w:num {nsdecls("w")} w:numId="101"><w:abstractNumId w:val="90"/></w:num>'))
    numbering.append(parse_xml(
        f'<w:num {nsdecls("w")} w:numId="102"><w:abstractNumId w:val="90"/>'
        '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="5"/></w:lvlOverride></w:num>'))
    numbering.append(parse_xml(
        f'<w:num {nsdecls("w")} w:numId="103"><w:abstractNumId w:val="91"/></w:num>'))


def _list_para(document, text: str, num_id: int, ilvl: int):
    p = document.add_paragraph(text)
    ppr = p._p.get_or_add_pPr()
    ppr.append(parse_xml(
        f'<w:numPr {nsdecls("w")}><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num_id}"/></w:numPr>'))
    return p


def _add_part(data: bytes, name: str, xml: str, rel_type: str, content_type: str) -> bytes:
    """Add a part related from word/document.xml (python-docx cannot create footnotes)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "word/_rels/document.xml.rels":
                rel = (f'<Relationship Id="rIdX{abs(hash(name)) % 10000}" Type="{rel_type}" '
                       f'Target="{name.split("/", 1)[1]}"/>')
                body = body.replace(b"</Relationships>", rel.encode() + b"</Relationships>")
            elif info.filename == "[Content_Types].xml":
                ov = f'<Override PartName="/{name}" ContentType="{content_type}"/>'
                body = body.replace(b"</Types>", ov.encode() + b"</Types>")
            dst.writestr(info, body)
        dst.writestr(name, xml)
    return out.getvalue()


def build_feature_docx() -> bytes:
    """One document with every feature the reader must understand (see the tests)."""
    d = docx.Document()
    d.core_properties.title = "Feature Test"
    d.core_properties.author = "Ada Lovelace"
    styles = d.styles
    custom = styles.add_style("My Section", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = styles["Heading 2"]
    german = styles.add_style("Überschrift 1", WD_STYLE_TYPE.PARAGRAPH)
    german.base_style = styles["Normal"]
    code = styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
    code.font.name = "Courier New"
    code.font.size = Pt(9)
    _numbering(d)

    h = d.add_heading("Introduction", level=1)
    _bookmark(h, "intro_bm", 1)
    d.add_paragraph("Custom styled section", style="My Section")
    d.add_paragraph("Lokalisierte Überschrift", style="Überschrift 1")

    p = d.add_paragraph("Plain ")
    p.add_run("bold").bold = True
    p.add_run(" ")
    p.add_run("italic").italic = True
    p.add_run(" ")
    p.add_run("struck").font.strike = True
    p.add_run(" ")
    p.add_run("under").underline = True
    p.add_run(" H")
    p.add_run("2").font.subscript = True
    p.add_run("O x")
    p.add_run("2").font.superscript = True
    p.add_run(" call ")
    p.add_run("printf").font.name = "Courier New"
    p.add_run(" end.")

    # hyperlinks: external (relationship) and internal (w:anchor)
    rid = d.part.relate_to("https://example.com/page", RT.HYPERLINK, is_external=True)
    links = d.add_paragraph("See ")
    _append_xml(links, f'<w:hyperlink {nsdecls("w", "r")} r:id="{rid}">'
                       f'{_run_xml("the site")}</w:hyperlink>')
    links.add_run(" and ")
    _append_xml(links, f'<w:hyperlink {nsdecls("w")} w:anchor="intro_bm">'
                       f'{_run_xml("the intro")}</w:hyperlink>')
    links.add_run(" and ")
    _append_xml(links, f'<w:hyperlink {nsdecls("w")} w:anchor="para_bm">'
                       f'{_run_xml("a paragraph")}</w:hyperlink>')
    target = d.add_paragraph("Bookmarked paragraph.")
    _bookmark(target, "para_bm", 2)

    # lists: bullets with nesting, numbered, then the same list restarted at 5
    _list_para(d, "Bullet one", 103, 0)
    _list_para(d, "Bullet nested", 103, 1)
    _list_para(d, "Bullet nested deeper", 103, 2)
    _list_para(d, "Bullet two", 103, 0)
    d.add_paragraph("Between lists.")
    _list_para(d, "Number one", 101, 0)
    _list_para(d, "Number two", 101, 0)
    _list_para(d, "Letter a", 101, 1)
    _list_para(d, "Number three", 101, 0)
    d.add_paragraph("Restart below.")
    _list_para(d, "Five", 102, 0)
    _list_para(d, "Six", 102, 0)

    # table: header row (tblHeader), gridSpan, vMerge, nested table
    d.add_paragraph("Table follows.")
    t = d.add_table(rows=4, cols=3)
    for r, row in enumerate(t.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"r{r}c{c}"
    t.rows[0].cells[0].text = "Name"
    t.rows[0].cells[1].text = "Value"
    t.rows[0].cells[2].text = "Note"
    trpr = t.rows[0]._tr.get_or_add_trPr()
    trpr.append(parse_xml(f'<w:tblHeader {nsdecls("w")}/>'))
    t.cell(1, 0).merge(t.cell(1, 1)).text = "wide"          # gridSpan=2
    t.cell(2, 2).merge(t.cell(3, 2)).text = "tall"          # vMerge restart/continue
    nested = t.cell(3, 0).add_table(rows=1, cols=2)
    nested.cell(0, 0).text = "inner1"
    nested.cell(0, 1).text = "inner2"

    # image with alt text and title
    d.add_picture(io.BytesIO(PNG_1PX))
    doc_pr = d.paragraphs[-1]._p.xpath(".//wp:docPr")[0]
    doc_pr.set("descr", "A tiny red dot")
    doc_pr.set("title", "Dot")

    # footnote reference (the footnotes part is added after saving)
    fn = d.add_paragraph("Noted claim")
    _append_xml(fn, f'<w:r {nsdecls("w")}><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                    '<w:footnoteReference w:id="1"/></w:r>')
    fn.add_run(".")

    # tracked changes
    tc = d.add_paragraph("Kept ")
    _append_xml(tc, f'<w:ins {nsdecls("w")} w:id="11" w:author="A" w:date="2024-01-01T00:00:00Z">'
                    f'{_run_xml("inserted")}</w:ins>')
    _append_xml(tc, f'<w:del {nsdecls("w")} w:id="12" w:author="A" w:date="2024-01-01T00:00:00Z">'
                    '<w:r><w:delText xml:space="preserve"> deleted</w:delText></w:r></w:del>')
    tc.add_run(" text.")

    # code and quotes by style
    d.add_paragraph("def f(x):", style="Code")
    d.add_paragraph("    return x + 1", style="Code")
    d.add_paragraph("A wise quote.", style="Quote")
    d.add_paragraph("More wisdom.", style="Intense Quote")

    # equation: x = a/b + y^2 (display) and an inline sqrt
    eq = d.add_paragraph()
    _append_xml(eq, f'<m:oMathPara {nsdecls("m", "w")}><m:oMath>'
                    '<m:r><m:t>x=</m:t></m:r>'
                    '<m:f><m:num><m:r><m:t>a</m:t></m:r></m:num>'
                    '<m:den><m:r><m:t>b</m:t></m:r></m:den></m:f>'
                    '<m:r><m:t>+</m:t></m:r>'
                    '<m:sSup><m:e><m:r><m:t>y</m:t></m:r></m:e>'
                    '<m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup>'
                    '</m:oMath></m:oMathPara>')
    inline_eq = d.add_paragraph("Root: ")
    _append_xml(inline_eq, f'<m:oMath {nsdecls("m")}><m:rad><m:radPr><m:degHide m:val="1"/>'
                           '</m:radPr><m:deg/><m:e><m:r><m:t>z</m:t></m:r></m:e></m:rad>'
                           '</m:oMath>')
    inline_eq.add_run(" done.")

    # checkbox content control
    cb = d.add_paragraph()
    _append_xml(cb, f'<w:sdt {nsdecls("w")} xmlns:w14="http://schemas.microsoft.com/office/'
                    'word/2010/wordml"><w:sdtPr><w14:checkbox><w14:checked w14:val="1"/>'
                    '</w14:checkbox></w:sdtPr><w:sdtContent><w:r><w:t>☒</w:t></w:r>'
                    '</w:sdtContent></w:sdt>')
    cb.add_run(" Ship it")

    # plain content control around text, and a VML text box kept in flow
    sdt = d.add_paragraph()
    _append_xml(sdt, f'<w:sdt {nsdecls("w")}><w:sdtPr/><w:sdtContent>'
                     f'{_run_xml("Inside control")}</w:sdtContent></w:sdt>')
    box = d.add_paragraph("Before box")
    _append_xml(box, f'<w:r {nsdecls("w")} xmlns:v="urn:schemas-microsoft-com:vml">'
                     '<w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r>'
                     '<w:t>Text in a box</w:t></w:r></w:p></w:txbxContent></v:textbox>'
                     '</v:shape></w:pict></w:r>')

    # furniture: header, footer, comment
    d.sections[0].header.paragraphs[0].text = "Running header"
    d.sections[0].footer.paragraphs[0].text = "Page footer"
    commented = d.add_paragraph("Commented text")
    d.add_comment(commented.runs, text="Reviewer remark", author="Bob")
    d.add_paragraph("The end.")

    data = _save(d)
    footnotes = (
        f'<w:footnotes {nsdecls("w")}>'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
        '</w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
        '<w:continuationSeparator/></w:r></w:p></w:footnote>'
        '<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>'
        '<w:r><w:t xml:space="preserve"> The footnote text.</w:t></w:r></w:p></w:footnote>'
        "</w:footnotes>"
    )
    return _add_part(
        data, "word/footnotes.xml", footnotes,
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
    )


def build_external_image_docx() -> bytes:
    """An image that is only linked (r:link to an external URL), with no embedded data."""
    d = docx.Document()
    d.add_paragraph("Linked picture:")
    d.add_picture(io.BytesIO(PNG_1PX))
    p = d.paragraphs[-1]._p
    blip = p.xpath(".//a:blip")[0]
    rid = d.part.relate_to("https://example.com/remote.png", RT.IMAGE, is_external=True)
    del blip.attrib[qn("r:embed")]
    blip.set(qn("r:link"), rid)
    return _save(d)


def replace_part(data: bytes, name: str, content: bytes | None) -> bytes:
    """Copy of a zip with one member replaced (or removed when ``content`` is None)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename == name:
                if content is not None:
                    dst.writestr(info, content)
            else:
                dst.writestr(info, src.read(info.filename))
    return out.getvalue()


def add_member(data: bytes, name: str, content: bytes) -> bytes:
    """Copy of a zip with one more member (deflated)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        dst.writestr(name, content)
    return out.getvalue()


HOSTILE_TARGETS = (
    "javascript:alert(1)",
    "JaVaScRiPt:alert(2)",
    "java\tscript:alert(3)",
    "java\nscript:alert(4)",
    " \r\njavascript:alert(5)",
    "vbscript:msgbox(6)",
    "VBScript:msgbox(7)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==",
    "DATA:text/html,<script>alert(9)</script>",
)


def build_hostile_links_docx() -> bytes:
    """Hyperlinks to ``javascript:``, ``vbscript:`` and ``data:`` targets (mixed case, tabs
    and newlines inside the scheme), one per paragraph as ``hostile-N``, plus one safe
    ``https`` link (``safe-link``) that must stay live."""
    d = docx.Document()
    d.add_heading("Links", 1)
    for i, target in enumerate(HOSTILE_TARGETS):
        rid = d.part.relate_to(target, RT.HYPERLINK, is_external=True)
        p = d.add_paragraph("Go ")
        _append_xml(p, f'<w:hyperlink {nsdecls("w", "r")} r:id="{rid}">'
                       f'{_run_xml(f"hostile-{i}")}</w:hyperlink>')
    rid = d.part.relate_to("https://example.com/ok", RT.HYPERLINK, is_external=True)
    p = d.add_paragraph("And ")
    _append_xml(p, f'<w:hyperlink {nsdecls("w", "r")} r:id="{rid}">'
                   f'{_run_xml("safe-link")}</w:hyperlink>')
    return _save(d)


def body_words(data: bytes) -> set[str]:
    """Distinct words (4+ letters) of the text runs (``w:t``) of a DOCX's main part: what a
    reader of the document sees, to check that a conversion kept it."""
    import re

    with zipfile.ZipFile(io.BytesIO(data)) as z:
        xml = z.read("word/document.xml").decode("utf-8")
    runs = re.findall(r"<w:t(?:\s[^>]*)?>([^<]*)<", xml)
    return set(re.findall(r"[^\W\d_]{4,}", " ".join(runs)))
