"""DOCX writer: read the output back with python-docx and lxml and check Word structures."""

from __future__ import annotations

import base64
import io
import shutil
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path

import docx
import pytest
from docx.oxml.ns import qn
from lxml import etree

from render_pool.engine.common.cover import CoverPage
from render_pool.engine.docx.writer import TOC_PLACEHOLDER, write_docx
from render_pool.engine.html.build import expand_raw_html
from render_pool.engine.jobs import RenderRequest, render_markdown
from render_pool.engine.markdown.reader import attach_images, read_markdown
from render_pool.engine.model import (
    Code,
    CodeBlock,
    Document,
    Heading,
    Image,
    Link,
    ListBlock,
    ListItem,
    Paragraph,
    RawHtml,
    Resource,
    Table,
    TableCell,
    TableRow,
    Text,
)
from render_pool.engine.options import WriterOptions
from tests.docx_fixtures import PNG_1PX
from tests.model_samples import NASTY, full_document

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS = {
    "w": W,
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "pr": "http://schemas.openxmlformats.org/package/2006/relationships",
}
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def png(width: int, height: int) -> bytes:
    """A valid RGB PNG of the given size (python-docx checks chunk structure)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + b"\x80\x40\x20" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


GIF = (b"GIF89a\x02\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
       b",\x00\x00\x00\x00\x02\x00\x01\x00\x00\x02\x02D\x01\x00;")


class Out:
    """A written DOCX opened both ways: python-docx objects and raw XML parts."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.doc = docx.Document(io.BytesIO(data))
        self.zip = zipfile.ZipFile(io.BytesIO(data))

    def xml(self, name: str) -> etree._Element:
        return etree.fromstring(self.zip.read(name))

    def has(self, name: str) -> bool:
        return name in self.zip.namelist()

    @property
    def body(self) -> etree._Element:
        return self.xml("word/document.xml")

    def rels(self, name: str = "word/_rels/document.xml.rels") -> dict[str, etree._Element]:
        return {r.get("Id"): r for r in self.xml(name).iter(f"{{{NS['pr']}}}Relationship")}

    def texts(self) -> list[str]:
        return [p.text for p in self.doc.paragraphs]


def write(doc: Document, **opts) -> Out:
    return Out(write_docx(doc, WriterOptions(**opts)))


def md(text: str, **opts) -> Out:
    return write(read_markdown(text), **opts)


# ------------------------------------------------------------------ headings
def test_heading_styles_levels_and_bookmarks():
    out = md("# One\n\n## Two\n\n### Three\n\n###### Six\n\ntext [go](#two)\n")
    styles = [(p.style.name, p.text) for p in out.doc.paragraphs if p.text]
    assert styles[:4] == [("Heading 1", "One"), ("Heading 2", "Two"), ("Heading 3", "Three"),
                          ("Heading 6", "Six")]
    names = out.body.xpath("//w:bookmarkStart/@w:name", namespaces=NS)
    assert names == ["one", "two", "three", "six"]
    anchors = out.body.xpath("//w:hyperlink/@w:anchor", namespaces=NS)
    assert anchors == ["two"]


def test_heading_anchor_that_is_not_a_valid_bookmark_name_is_mapped_consistently():
    doc = Document(blocks=[
        Heading(1, [Text("x")], anchor="1-intro-" + "a" * 60),
        Paragraph([Link([Text("jump")], "#1-intro-" + "a" * 60)]),
    ])
    out = write(doc)
    (name,) = out.body.xpath("//w:bookmarkStart/@w:name", namespaces=NS)
    assert name[0].isalpha() and len(name) <= 40
    assert out.body.xpath("//w:hyperlink/@w:anchor", namespaces=NS) == [name]


# ------------------------------------------------------------------ lists
def _numbering(out: Out):
    num = out.xml("word/numbering.xml")
    starts = {}
    abstract_of = {}
    for n in num.findall(qn("w:num")):
        num_id = int(n.get(qn("w:numId")))
        abstract_of[num_id] = n.find(qn("w:abstractNumId")).get(qn("w:val"))
        for ov in n.findall(qn("w:lvlOverride")):
            so = ov.find(qn("w:startOverride"))
            if so is not None:
                starts[num_id] = (int(ov.get(qn("w:ilvl"))), int(so.get(qn("w:val"))))
    formats = {}
    for a in num.findall(qn("w:abstractNum")):
        lvl0 = a.find(qn("w:lvl"))
        formats[a.get(qn("w:abstractNumId"))] = lvl0.find(qn("w:numFmt")).get(qn("w:val"))
    return starts, {k: formats[v] for k, v in abstract_of.items()}


def _list_paragraphs(out: Out) -> list[tuple[str, int, int]]:
    rows = []
    for p in out.body.iter(qn("w:p")):
        num_pr = p.find(f"{qn('w:pPr')}/{qn('w:numPr')}")
        if num_pr is not None:
            text = "".join(p.itertext())
            rows.append((text, int(num_pr.find(qn("w:ilvl")).get(qn("w:val"))),
                         int(num_pr.find(qn("w:numId")).get(qn("w:val")))))
    return rows


def test_lists_are_real_numbering_with_nesting_and_restarts():
    out = md("1. one\n2. two\n   1. sub a\n   2. sub b\n3. three\n\ntext\n\n"
             "1. again\n2. more\n\npara\n\n7. seven\n8. eight\n\n- dot\n  - inner dot\n")
    rows = _list_paragraphs(out)
    by_text = {t: (lvl, num) for t, lvl, num in rows}
    assert by_text["one"][0] == 0 and by_text["sub a"][0] == 1 and by_text["inner dot"][0] == 1
    assert by_text["one"][1] == by_text["two"][1] == by_text["three"][1]
    # each separate list has its own numbering instance
    lists = {by_text[k][1] for k in ("one", "sub a", "again", "seven", "dot", "inner dot")}
    assert len(lists) == 6
    starts, formats = _numbering(out)
    assert starts[by_text["one"][1]] == (0, 1)
    assert starts[by_text["sub a"][1]] == (1, 1)
    assert starts[by_text["again"][1]] == (0, 1)  # restarts, does not continue at 4
    assert starts[by_text["seven"][1]] == (0, 7)
    assert formats[by_text["one"][1]] == "decimal"
    assert formats[by_text["dot"][1]] == "bullet"
    styles = {p.text: p.style.name for p in out.doc.paragraphs}
    assert styles["one"] == "List Paragraph"


def test_model_list_start_values_and_task_items():
    out = write(full_document())
    starts, _ = _numbering(out)
    rows = {t: num for t, _lvl, num in _list_paragraphs(out)}
    assert starts[rows["sub one"]] == (1, 3)
    assert starts[rows["five"]] == (0, 5)
    texts = out.texts()
    assert "\u2612 done" in texts and "\u2610 todo" in texts


def test_list_item_with_several_blocks_keeps_continuation_indented():
    out = md("1. first\n\n   more text\n\n   ```\n   code\n   ```\n2. second\n")
    paras = {p.text: p for p in out.doc.paragraphs}
    assert paras["more text"].paragraph_format.left_indent is not None
    assert paras["code"].style.name == "Code"
    assert paras["code"].paragraph_format.left_indent.twips == 720


# ------------------------------------------------------------------ tables
def test_table_header_rows_repeat_bold_and_merged_cells():
    out = write(full_document())
    table = out.doc.tables[0]
    assert table.style.name == "Table Grid"
    first_tr = table.rows[0]._tr
    assert first_tr.find(f"{qn('w:trPr')}/{qn('w:tblHeader')}") is not None
    assert table.rows[1]._tr.find(f"{qn('w:trPr')}/{qn('w:tblHeader')}") is None
    header_runs = [r for c in table.rows[0].cells for p in c.paragraphs for r in p.runs]
    assert header_runs and all(r.bold for r in header_runs)
    # colspan: "Value" spans two grid columns; rowspan: "alpha" merged vertically
    tcs = first_tr.findall(qn("w:tc"))
    assert len(tcs) == 2
    assert tcs[1].find(f"{qn('w:tcPr')}/{qn('w:gridSpan')}").get(qn("w:val")) == "2"
    assert table.cell(1, 0).text == "alpha" and table.cell(2, 0)._tc is table.cell(1, 0)._tc
    vmerge = table.rows[2]._tr.find(f"{qn('w:tc')}/{qn('w:tcPr')}/{qn('w:vMerge')}")
    assert vmerge is not None
    assert table.cell(2, 2).text == "two\nlines"
    assert "Table 1: sample" in out.texts()


def test_nested_table_and_list_in_cells():
    out = write(full_document())
    rich = out.doc.tables[1]
    inner = rich.cell(1, 1).tables
    assert len(inner) == 1 and inner[0].cell(0, 1).text == "inner 2"
    # a cell ending with a table still ends with a paragraph (Word requires it)
    assert rich.cell(1, 1)._tc[-1].tag == qn("w:p")
    list_cell = rich.cell(1, 0)
    assert [p.text for p in list_cell.paragraphs] == ["item a", "item b"]
    assert all(p._p.pPr.numPr is not None for p in list_cell.paragraphs)


def test_markdown_table_first_row_is_header():
    out = md("| a | b |\n|---|--:|\n| 1 | `x|y` |\n| 3 | 4 |\n")
    (table,) = out.doc.tables
    assert [c.text for c in table.rows[0].cells] == ["a", "b"]
    assert table.rows[0]._tr.trPr.find(qn("w:tblHeader")) is not None
    assert len(table.rows) == 3


# ------------------------------------------------------------------ links
def test_hyperlinks_are_relationships_with_hyperlink_style():
    out = write(full_document())
    rels = out.rels()
    links = out.body.xpath("//w:hyperlink", namespaces=NS)
    external = [h for h in links if h.get(f"{{{NS['r']}}}id")]
    assert external
    rel = rels[external[0].get(f"{{{NS['r']}}}id")]
    assert rel.get("Target") == "https://example.com/a_b"
    assert rel.get("TargetMode") == "External"
    style = external[0].find(f"{qn('w:r')}/{qn('w:rPr')}/{qn('w:rStyle')}").get(qn("w:val"))
    assert out.doc.styles.get_by_id(style, docx.enum.style.WD_STYLE_TYPE.CHARACTER).name \
        == "Hyperlink"
    internal = [h.get(qn("w:anchor")) for h in links if h.get(qn("w:anchor"))]
    assert internal == ["bm1"]
    assert "bm1" in out.body.xpath("//w:bookmarkStart/@w:name", namespaces=NS)


def test_unsafe_link_schemes_become_text_and_odd_urls_are_encoded():
    out = md("[bad](javascript:alert(1)) and <https://ex.com/a%20b?q=ü>\n")
    targets = [r.get("Target") for r in out.rels().values()
               if r.get("Type").endswith("/hyperlink")]
    assert targets == ["https://ex.com/a%20b?q=%C3%BC"]
    assert "bad" in out.texts()[0]


# ------------------------------------------------------------------ images
def _extents(out: Out) -> list[tuple[int, int]]:
    return [(int(e.get("cx")), int(e.get("cy")))
            for e in out.body.xpath("//wp:inline/wp:extent", namespaces=NS)]


def test_images_embedded_and_scaled_to_text_width():
    big = png(3000, 1000)
    doc = Document(
        blocks=[Paragraph([Image("big", alt="wide"), Text(" "), Image("small", alt="tiny")]),
                Paragraph([Image("gif", alt="g")])],
        resources={"big": Resource(big, "image/png"), "small": Resource(png(40, 20), "image/png"),
                   "gif": Resource(GIF, "image/gif")},
    )
    out = write(doc)
    section = out.doc.sections[0]
    text_width = section.page_width - section.left_margin - section.right_margin
    (bw, bh), (sw, sh), (gw, _gh) = _extents(out)
    assert bw <= text_width and bw > text_width * 0.95
    assert abs(bw / bh - 3.0) < 0.01  # aspect ratio kept
    assert sw == 40 * 9525 and sh == 20 * 9525  # 96 dpi: natural size when it fits
    assert gw == 2 * 9525
    blips = out.body.xpath("//a:blip/@r:embed", namespaces=NS)
    rels = out.rels()
    assert all(rels[b].get("Type").endswith("/image") for b in blips)
    assert len({rels[b].get("Target") for b in blips}) == 3
    descr = out.body.xpath("//wp:docPr/@descr", namespaces=NS)
    assert descr == ["wide", "tiny", "g"]


def test_images_in_table_cells_fit_the_column():
    doc = Document(blocks=[Table([TableRow([
        TableCell([Paragraph([Image("i")])]), TableCell([Paragraph([Text("x")])])])])],
        resources={"i": Resource(png(2000, 500), "image/png")})
    out = write(doc)
    section = out.doc.sections[0]
    text_width = section.page_width - section.left_margin - section.right_margin
    ((w, _h),) = _extents(out)
    assert w <= text_width / 2


def test_explicit_pixel_width_wins():
    doc = Document(blocks=[Paragraph([Image("i", width_px=100)])],
                   resources={"i": Resource(png(400, 200), "image/png")})
    ((w, h),) = _extents(write(doc))
    assert (w, h) == (100 * 9525, 50 * 9525)


def test_unusable_or_missing_images_fall_back_to_alt_text_with_warning():
    doc = Document(
        blocks=[Paragraph([Image("svg", alt="vector"), Text(" / "),
                           Image("https://x.example/a.png", alt="remote")])],
        resources={"svg": Resource(b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml")},
    )
    out = write(doc)
    assert out.texts()[0] == "vector / remote"
    assert not _extents(out)
    assert any("svg" in w and "image/svg+xml" in w for w in doc.warnings)
    assert any("x.example" in w for w in doc.warnings)


def test_markdown_images_end_to_end_through_attach_images():
    doc = read_markdown("![chart](https://h.example/c.png)\n\n| a |\n|---|\n| ![t](t.png) |\n")
    attach_images(doc, {"https://h.example/c.png": Resource(png(10, 10), "image/png"),
                        "t.png": Resource(png(10, 10), "image/png")})
    out = write(doc)
    assert len(_extents(out)) == 2
    # the same bytes twice are stored once
    media = [n for n in out.zip.namelist() if n.startswith("word/media/")]
    assert len(media) == 1


# ------------------------------------------------------------------ footnotes
def test_footnotes_are_real_word_footnotes():
    out = write(full_document())
    assert out.has("word/footnotes.xml")
    ct = out.zip.read("[Content_Types].xml").decode()
    assert "wordprocessingml.footnotes+xml" in ct
    assert any(r.get("Type").endswith("/footnotes") and r.get("Target") == "footnotes.xml"
               for r in out.rels().values())
    notes = out.xml("word/footnotes.xml")
    by_id = {n.get(qn("w:id")): "".join(n.itertext()) for n in notes.findall(qn("w:footnote"))}
    refs = out.body.xpath("//w:footnoteReference/@w:id", namespaces=NS)
    assert len(refs) == 2
    assert "First note with emphasis." in by_id[refs[0]]
    assert "Second paragraph." in by_id[refs[1]]
    assert {"-1", "0"} <= set(by_id)  # separators
    settings = out.xml("word/settings.xml")
    assert settings.find(qn("w:footnotePr")) is not None


def test_footnote_links_get_relationships_in_the_footnotes_part():
    out = md("Text[^a].\n\n[^a]: See [site](https://note.example/x).\n")
    rels = out.rels("word/_rels/footnotes.xml.rels")
    assert [r.get("Target") for r in rels.values()] == ["https://note.example/x"]


def test_no_footnotes_part_without_notes():
    assert not md("plain\n").has("word/footnotes.xml")


# ------------------------------------------------------------------ TOC, header, footer, cover
def test_toc_field_and_update_fields():
    out = md("# A\n\n## B\n", toc=True)
    instr = "".join(out.body.xpath("//w:instrText/text()", namespaces=NS))
    assert 'TOC \\o "1-3" \\h \\z \\u' in instr
    assert out.body.xpath("//w:fldChar/@w:fldCharType", namespaces=NS) == [
        "begin", "separate", "end"]
    assert TOC_PLACEHOLDER not in out.texts()  # the entries are written, not a placeholder
    assert [p.text for p in out.doc.paragraphs if p.style.name.startswith("toc ")] == ["A", "B"]
    settings = out.xml("word/settings.xml")
    assert settings.find(qn("w:updateFields")).get(qn("w:val")) == "true"
    # the TOC heading is not itself a Heading 1 (it would list itself)
    assert out.doc.paragraphs[0].style.name == "TOC Heading"


def test_no_toc_by_default():
    out = md("# A\n")
    assert not out.body.xpath("//w:instrText", namespaces=NS)
    assert out.xml("word/settings.xml").find(qn("w:updateFields")) is None


def _part_xml(out: Out, part) -> str:
    return etree.tostring(part._element, encoding="unicode")


def test_header_footer_text_and_page_fields_with_cover():
    cover = CoverPage(cover_image=Resource(png(800, 400), "image/png"),
                      logo=Resource(png(300, 100), "image/png"), product_name="Widget",
                      product_version="2.1", document_name="User Guide", document_version="1.0",
                      copyright_text="(c) 2026 Acme")
    out = md("# Intro\n\nBody.\n", header_text="ACME confidential", footer_text="Widget guide",
             cover=cover)
    cover_section, section = out.doc.sections  # the cover is its own section
    assert section.different_first_page_header_footer is False
    assert section.header.paragraphs[0].text == "ACME confidential"
    footer_xml = _part_xml(out, section.footer)
    assert "Widget guide" in footer_xml
    # the body restarts at 1 and counts its own pages (the page of its last paragraph)
    assert " PAGE " in footer_xml and " PAGEREF _BodyEnd " in footer_xml
    assert "NUMPAGES" not in footer_xml
    assert section._sectPr.find(qn("w:pgNumType")).get(qn("w:start")) == "1"
    assert cover_section._sectPr.find(qn("w:pgNumType")).get(qn("w:start")) == "0"
    assert [c.tag.split("}")[1] for c in section._sectPr][-4:] == [
        "pgMar", "pgNumType", "cols", "docGrid"]  # schema order
    assert not cover_section.header.is_linked_to_previous
    assert not cover_section.footer.is_linked_to_previous
    assert "".join(cover_section.header._element.itertext()).strip() == ""
    assert "".join(cover_section.footer._element.itertext()).strip() == ""
    assert "PAGE" not in _part_xml(out, cover_section.footer)
    assert cover_section.page_width == section.page_width
    assert cover_section.left_margin == section.left_margin
    end = out.doc.element.body.xpath("//w:bookmarkStart[@w:name='_BodyEnd']")
    assert len(end) == 1 and end[0].getparent() is out.doc.paragraphs[-1]._p
    assert end[0].getnext().tag == qn("w:bookmarkEnd") and end[0].getnext().getnext() is None
    # cover content precedes the section break
    page_one: list[str] = []
    images_on_cover = 0
    for p in out.doc.paragraphs:
        page_one.append(p.text)
        images_on_cover += len(p._p.xpath(".//wp:inline"))
        if p._p.xpath("./w:pPr/w:sectPr"):
            break
    assert not out.body.xpath("//w:br[@w:type='page']", namespaces=NS)
    assert page_one == ["", "Widget", "Version 2.1", "", "User Guide", "Version 1.0",
                        "(c) 2026 Acme"]
    assert images_on_cover == 2
    assert out.doc.core_properties.title == "User Guide"
    assert out.doc.paragraphs[len(page_one)].style.name == "Heading 1"


def test_without_cover_no_title_page_and_page_numbers_still_present():
    out = md("text\n")
    (section,) = out.doc.sections
    assert section._sectPr.find(qn("w:titlePg")) is None
    assert section._sectPr.find(qn("w:pgNumType")) is None
    assert " PAGE " in _part_xml(out, section.footer)
    assert " NUMPAGES " in _part_xml(out, section.footer)


def test_cover_body_ending_in_a_table_gets_a_paragraph_for_its_end_bookmark():
    out = md("| a | b |\n|---|---|\n| 1 | 2 |\n", page_number_format="{pages}/{pages}",
             cover=CoverPage(document_name="Guide"))
    body = out.doc.element.body
    last = body[-2]  # body[-1] is the w:sectPr
    assert body[-3].tag == qn("w:tbl") and last.tag == qn("w:p")
    assert body.xpath("//w:bookmarkStart/@w:name") == ["_BodyEnd"]
    assert last.xpath("./w:bookmarkStart/@w:name") == ["_BodyEnd"]
    footer = _part_xml(out, out.doc.sections[-1].footer)
    assert footer.count(" PAGEREF _BodyEnd ") == 2


def test_page_numbers_can_be_turned_off():
    out = md("text\n", page_number_format="")
    assert "PAGE" not in _part_xml(out, out.doc.sections[0].footer)


def test_empty_cover_is_skipped_and_title_from_front_matter():
    out = md("---\ntitle: From Meta\nauthor: Ann\n---\n\nBody\n", cover=CoverPage())
    assert out.texts() == ["Body"]
    assert out.doc.core_properties.title == "From Meta"
    assert out.doc.core_properties.author == "Ann"


# ------------------------------------------------------------------ code, quotes, inline formats
def test_code_styles_inline_formats_and_quotes():
    out = write(full_document())
    code = [p for p in out.doc.paragraphs if p.style.name == "Code"]
    assert code and code[0].text == "print('```')\nx = 1"
    assert out.doc.styles["Code"].font.name == "Consolas"
    inline_code = [r for p in out.doc.paragraphs for r in p.runs
                   if r.style is not None and r.style.name == "Inline Code"]
    assert {r.text for r in inline_code} >= {"a`b", "a^2+b^2"}
    runs = {r.text: r for r in out.doc.paragraphs[1].runs}
    assert runs["em"].italic and runs["strong"].bold and runs["gone"].font.strike
    assert runs["under"].underline
    twos = [r for r in out.doc.paragraphs[1].runs if r.text == "2"]
    assert [(r.font.subscript, r.font.superscript) for r in twos] == [(True, False), (False, True)]
    quotes = [p.text for p in out.doc.paragraphs if p.style.name == "Block Quote"]
    assert quotes == ["quoted text", "second para"]
    assert out.doc.styles["Block Quote"].base_style.name == "Quote"


def test_raw_html_is_read_by_the_html_reader():
    """Raw HTML from Markdown reaches Word as real blocks (a table stays a table, bold stays
    bold); scripts and comments are dropped."""
    doc = Document(blocks=[RawHtml("<table><tr><th>H</th><td>cell <b>bold</b></td></tr></table>"
                                   "<script>bad()</script><p>para<br>two</p><!-- hidden -->")])
    expand_raw_html(doc)
    out = write(doc)
    assert out.texts() == ["para\ntwo"]
    (table,) = out.doc.tables
    assert [c.text for c in table.rows[0].cells] == ["H", "cell bold"]
    assert [r.bold for r in table.rows[0].cells[1].paragraphs[0].runs if r.text == "bold"] == [True]
    assert "bad()" not in out.doc.element.xml


def test_raw_html_through_the_markdown_job_keeps_images():
    png = "data:image/png;base64," + base64.b64encode(PNG_1PX).decode()
    text = f'Intro\n\n<div><p>Look: <img src="{png}" alt="dot"></p></div>\n'
    rendered = render_markdown(text, RenderRequest("docx"), {}, {})
    out = Out(rendered.data)
    assert "Look:" in " ".join(out.texts())
    assert len(out.doc.inline_shapes) == 1


# ------------------------------------------------------------------ text safety
def test_nasty_characters_do_not_break_the_file():
    evil = "a\x00b\x0bc\x1fd\ud800e\ufffef \u200b tab\tend"
    doc = Document(
        blocks=[Heading(1, [Text(evil)], anchor="x"), Paragraph([Text(evil), Code(evil)]),
                CodeBlock(evil), Table([TableRow([TableCell([Paragraph([Text(evil)])])])]),
                Paragraph([Link([Text(evil)], "https://e.example/\x00x")])],
        meta={"title": evil},
    )
    out = write(doc, header_text=evil, footer_text=evil)
    assert out.doc.paragraphs[0].text == "abcdef \u200b tab\tend"
    assert out.doc.core_properties.title == "abcdef \u200b tab\tend"
    assert out.doc.sections[0].header.paragraphs[0].text == "abcdef \u200b tab\tend"
    assert out.doc.tables[0].cell(0, 0).text == "abcdef \u200b tab\tend"


def test_markdown_look_alike_text_is_kept_literally():
    doc = Document(blocks=[Paragraph([Text(s)]) for s in NASTY])
    assert write(doc).texts() == NASTY


def test_cjk_document():
    text = ("---\ntitle: 用户指南\n---\n\n# 概述\n\n这是一个**中文**文档\uff0c包含[链接](https://例子.cn/路径)。\n"
            "第二行\n接着写。\n\n| 名称 | 值 |\n|---|---|\n| 甲 | 乙 |\n\n- 项目一\n- 项目二\n\n日本語のテキストも。\n")
    out = md(text, toc=True, header_text="页眉", footer_text="页脚",
             page_number_format="第 {page} 页\uff0c共 {pages} 页",
             cover=CoverPage(document_name="指南"))
    texts = out.texts()
    assert "概述" in texts
    assert "这是一个中文文档\uff0c包含链接。第二行接着写。" in texts  # no stray spaces at CJK breaks
    assert out.doc.tables[0].cell(1, 1).text == "乙"
    assert out.doc.core_properties.title == "用户指南"
    heading = [p for p in out.doc.paragraphs if p.text == "概述"][-1]  # the first: its TOC entry
    assert heading.style.name == "Heading 1"
    assert out.body.xpath("//w:bookmarkStart/@w:name", namespaces=NS) == ["概述", "_BodyEnd"]
    lang = out.xml("word/settings.xml").find(qn("w:themeFontLang")).get(qn("w:eastAsia"))
    assert lang == "ja-JP"  # kana present: Japanese fonts are the right choice
    footer = _part_xml(out, out.doc.sections[-1].footer)  # [0] is the cover's, empty
    assert "第 " in footer and " PAGE " in footer and " PAGEREF _BodyEnd " in footer


def test_chinese_only_document_uses_chinese_theme_fonts():
    out = md("中文内容\n")
    lang = out.xml("word/settings.xml").find(qn("w:themeFontLang")).get(qn("w:eastAsia"))
    assert lang == "zh-CN"


def test_letter_page_size_option():
    out = md("x\n", page_size="Letter")
    assert out.doc.sections[0].page_width.twips == 12240


def test_deeply_nested_lists_and_quotes_do_not_crash():
    text = "".join("  " * i + f"- level {i}\n" for i in range(12))
    text += "\n" + "".join(">" * i + f" q{i}\n" for i in range(1, 8))
    out = md(text)
    assert "level 11" in out.texts()
    ilvls = [lvl for _t, lvl, _n in _list_paragraphs(out)]
    assert max(ilvls) == 8  # Word has nine levels


def test_list_inside_table_inside_list():
    doc = Document(blocks=[ListBlock(True, [ListItem([
        Paragraph([Text("item")]),
        Table([TableRow([TableCell([ListBlock(False, [ListItem([Paragraph([Text("in")])])])])])]),
    ])])])
    out = write(doc)
    assert out.doc.tables[0].cell(0, 0).paragraphs[0].text == "in"
    ind = out.doc.tables[0]._tbl.tblPr.find(qn("w:tblInd"))
    assert ind is not None and ind.get(qn("w:w")) == "720"


# ------------------------------------------------------------------ other readers of the file
@pytest.mark.slow  # pandoc is a process
@pytest.mark.skipif(shutil.which("pandoc") is None, reason="pandoc not installed")
def test_pandoc_reads_the_file_back():
    data = write_docx(full_document(), WriterOptions(toc=True, header_text="h",
                                                  cover=CoverPage(document_name="D")))
    res = subprocess.run(["pandoc", "-f", "docx", "-t", "markdown"], input=data,
                         capture_output=True, timeout=60, check=True)
    text = res.stdout.decode()
    assert "# Main *Title*" in text
    assert "[site](https://example.com/a_b)" in text
    assert "First note with *emphasis*." in text
    assert "5.  five" in text


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_docling_markdown_corpus_converts():
    folder = CORPUS / "docling" / "docx" / "groundtruth"
    if not folder.is_dir():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    files = sorted(folder.glob("*.md"))
    assert files
    for path in files:
        doc = read_markdown(path.read_text(encoding="utf-8"))
        attach_images(doc, {}, {})
        out = write(doc, toc=True)
        body_text = "".join(out.body.itertext())
        for block in doc.blocks:
            if isinstance(block, Heading):
                assert "".join(t.text for t in block.children if isinstance(t, Text)).strip()[:10] \
                    in body_text, path.name
