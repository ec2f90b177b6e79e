"""Guards for the DOCX reader's cheaper paths (issue 34, item 1): what each keeps per
document or reads in fewer steps must give the output the plain reading gives.

- paragraph properties with numbering are kept per (style, numId, ilvl): items of two lists,
  at two levels, with the style before or after the numbering, stay where they belong;
- run formats are kept per the run properties' children and their attributes (not what
  those children hold): properties that differ only inside a child read alike, ones that
  differ in an attribute do not;
- a run is read by its last child and the one before it: empty runs, runs with their
  properties after the text and runs of two texts still read as before;
- a table cell's properties are looked for first where Word writes them (its first child):
  spans and merges beside cells without properties still hold.
"""

from __future__ import annotations

import io
import zipfile

from render_pool.engine.jobs import convert_document

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
_CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
       'package/2006/content-types"><Default Extension="rels" ContentType="application/'
       'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
       '"application/xml"/><Override PartName="/word/document.xml" ContentType="application/'
       'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
_ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
              'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="'
              'http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
              'officeDocument" Target="word/document.xml"/></Relationships>')
_DOC_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
             'openxmlformats.org/package/2006/relationships"><Relationship Id="rId9" Type="'
             'http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" '
             'Target="numbering.xml"/></Relationships>')
_NUMBERING = (f'<?xml version="1.0" encoding="UTF-8"?><w:numbering xmlns:w="{_W}">'
              '<w:abstractNum w:abstractNumId="1">'
              '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/>'
              '<w:lvlText w:val="%1."/></w:lvl>'
              '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="bullet"/>'
              '<w:lvlText w:val="-"/></w:lvl></w:abstractNum>'
              '<w:abstractNum w:abstractNumId="2">'
              '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/>'
              '<w:lvlText w:val="-"/></w:lvl></w:abstractNum>'
              '<w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>'
              '<w:num w:numId="2"><w:abstractNumId w:val="2"/></w:num></w:numbering>')


def _docx(body: str) -> bytes:
    """A package of ``body`` (the children of ``w:body``) with two list definitions."""
    document = (f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}" '
                f'xmlns:w14="{_W14}"><w:body>{body}</w:body></w:document>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", _CT)
        z.writestr("_rels/.rels", _ROOT_RELS)
        z.writestr("word/document.xml", document)
        z.writestr("word/_rels/document.xml.rels", _DOC_RELS)
        z.writestr("word/numbering.xml", _NUMBERING)
    return buf.getvalue()


def _markdown(body: str) -> str:
    return convert_document(_docx(body), "markdown").content


def _item(text: str, num: str, lvl: str, style_first: bool = True) -> str:
    numpr = f'<w:numPr><w:ilvl w:val="{lvl}"/><w:numId w:val="{num}"/></w:numPr>'
    style = '<w:pStyle w:val="ListParagraph"/>'
    ppr = style + numpr if style_first else numpr + style
    return f'<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>'


def _para(runs: str) -> str:
    return f"<w:p>{runs}</w:p>"


def test_numbered_items_keep_their_list_and_level() -> None:
    body = (_item("one", "1", "0") + _item("inner", "1", "1", style_first=False)
            + _item("two", "1", "0", style_first=False) + _para("<w:r><w:t>Between.</w:t></w:r>")
            + _item("dash", "2", "0") + _item("three", "1", "0"))
    assert _markdown(body) == ("1. one\n   - inner\n2. two\n\nBetween.\n\n- dash\n\n"
                               "3. three\n")


def test_run_formats_follow_the_properties_attributes() -> None:
    outline = ('<w14:textOutline><w14:solidFill><w14:srgbClr w14:val="{c}"/></w14:solidFill>'
               '</w14:textOutline>')
    runs = (
        '<w:r><w:t xml:space="preserve">a </w:t></w:r>'
        f'<w:r><w:rPr><w:b/>{outline.format(c="FF0000")}</w:rPr><w:t>red</w:t></w:r>'
        '<w:r><w:t xml:space="preserve"> b </w:t></w:r>'
        f'<w:r><w:rPr><w:b/>{outline.format(c="00FF00")}</w:rPr><w:t>green</w:t></w:r>'
        '<w:r><w:t xml:space="preserve"> c </w:t></w:r>'
        '<w:r><w:rPr><w:b w:val="0"/></w:rPr><w:t>plain</w:t></w:r>'
        '<w:r><w:t xml:space="preserve"> d </w:t></w:r>'
        '<w:r><w:rPr><w:i/></w:rPr><w:t>slanted</w:t></w:r>'
    )
    assert _markdown(_para(runs)) == "a **red** b **green** c plain d *slanted*\n"


def test_runs_of_other_shapes_read_as_before() -> None:
    runs = ('<w:r/><w:r><w:t xml:space="preserve">first </w:t></w:r>'
            '<w:r><w:t>late</w:t><w:rPr><w:b/></w:rPr></w:r>'
            '<w:r><w:t xml:space="preserve"> two</w:t><w:t xml:space="preserve"> texts</w:t></w:r>'
            '<w:r><w:rPr><w:i/></w:rPr><w:rPr><w:b/></w:rPr><w:t xml:space="preserve"> end</w:t>'
            '</w:r>')
    assert _markdown(_para(runs)) == "first **late** two texts *end*\n"


def test_plain_cells_beside_spans_and_merges() -> None:
    def cell(text: str, props: str = "") -> str:
        tcpr = f"<w:tcPr>{props}</w:tcPr>" if props else ""
        return f"<w:tc>{tcpr}<w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:tc>"

    rows = [
        cell("a") + cell("b", '<w:gridSpan w:val="2"/>'),
        cell("c", '<w:vMerge w:val="restart"/>') + cell("d") + cell("e"),
        cell("", "<w:vMerge/>") + cell("f") + cell("g"),
    ]
    body = "<w:tbl>" + "".join(f"<w:tr>{r}</w:tr>" for r in rows) + "</w:tbl>"
    doc = convert_document(_docx(body), "json").content
    assert '"colspan": 2' in doc and '"rowspan": 2' in doc
    assert _markdown(body) == ("| a | b | b |\n|---|---|---|\n| c | d | e |\n"
                               "| c | f | g |\n")
