"""DOCX reader (word2markdown engine): features on python-docx fixtures, and hostile input."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from render_pool.engine.docx import package as docx_package
from render_pool.engine.docx.omml import omml_to_latex
from render_pool.engine.docx.reader import read_docx
from render_pool.engine.model import (
    Anchor,
    BlockQuote,
    Code,
    CodeBlock,
    Emph,
    Heading,
    Image,
    Link,
    ListBlock,
    Math,
    MathBlock,
    NoteRef,
    Paragraph,
    Strike,
    Strong,
    Subscript,
    Superscript,
    Table,
    Underline,
    plain_text,
)
from render_pool.errors import CorruptDocument, TooLarge, UnsupportedFormat
from tests.docx_fixtures import (
    add_member,
    build_external_image_docx,
    build_feature_docx,
    replace_part,
)
from tests.tree_walk import model_nodes as walk

DATA = Path(__file__).parent / "data" / "docx"


@pytest.fixture(scope="module")
def feature_bytes() -> bytes:
    return build_feature_docx()


@pytest.fixture(scope="module")
def doc(feature_bytes):
    return read_docx(feature_bytes)


def para_with(doc, text):
    for b in walk(doc.blocks):
        if isinstance(b, Paragraph) and text in plain_text(b.children):
            return b
    raise AssertionError(f"no paragraph with {text!r}")


# ---------------------------------------------------------------- headings and metadata
def test_headings_from_styles_custom_and_localized(doc):
    heads = [(b.level, plain_text(b.children)) for b in doc.blocks if isinstance(b, Heading)]
    assert heads == [(1, "Introduction"), (2, "Custom styled section"),
                     (1, "Lokalisierte Überschrift")]
    anchors = [b.anchor for b in doc.blocks if isinstance(b, Heading)]
    assert anchors == ["introduction", "custom-styled-section", "lokalisierte-überschrift"]


def test_metadata_from_core_properties(doc):
    assert doc.meta["title"] == "Feature Test"
    assert doc.meta["author"] == "Ada Lovelace"


def test_heading_slugs_are_unique():
    import docx

    d = docx.Document()
    for _ in range(3):
        d.add_heading("Same Title!", 1)
    buf = io.BytesIO()
    d.save(buf)
    out = read_docx(buf.getvalue())
    assert [b.anchor for b in out.blocks] == ["same-title", "same-title-1", "same-title-2"]


# ---------------------------------------------------------------- inline formatting
def test_inline_formatting(doc):
    p = para_with(doc, "Plain bold")
    kinds = {type(n): plain_text([n]) for n in p.children if not hasattr(n, "text")}
    assert kinds[Strong] == "bold"
    assert kinds[Emph] == "italic"
    assert kinds[Strike] == "struck"
    assert kinds[Underline] == "under"
    assert kinds[Subscript] == "2"
    assert kinds[Superscript] == "2"
    assert Code("printf") in p.children
    assert plain_text(p.children) == "Plain bold italic struck under H2O x2 call printf end."


def test_hyperlinks_external_and_internal(doc):
    p = para_with(doc, "See the site")
    links = {plain_text(n.children): n.target for n in walk(p.children) if isinstance(n, Link)}
    assert links["the site"] == "https://example.com/page"
    # bookmark inside a heading -> that heading's anchor
    assert links["the intro"] == "#introduction"
    # bookmark in a plain paragraph -> #name with an Anchor at the target
    assert links["a paragraph"] == "#para_bm"
    target = para_with(doc, "Bookmarked paragraph")
    assert Anchor("para_bm") in target.children


# ---------------------------------------------------------------- lists
def test_nested_bullets(doc):
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    bullets = lists[0]
    assert not bullets.ordered
    assert [plain_text(i.blocks[:1]) for i in bullets.items] == ["Bullet one", "Bullet two"]
    nested = bullets.items[0].blocks[1]
    assert isinstance(nested, ListBlock) and plain_text(nested.items[0].blocks[:1]) == \
        "Bullet nested"
    deeper = nested.items[0].blocks[1]
    assert isinstance(deeper, ListBlock)
    assert plain_text(deeper.items[0].blocks) == "Bullet nested deeper"


def test_numbered_list_with_nested_and_restart(doc):
    lists = [b for b in doc.blocks if isinstance(b, ListBlock)]
    numbered, restarted = lists[1], lists[2]
    assert numbered.ordered and numbered.start == 1
    assert [plain_text(i.blocks[:1]) for i in numbered.items] == [
        "Number one", "Number two", "Number three"]
    sub = numbered.items[1].blocks[1]
    assert isinstance(sub, ListBlock) and sub.ordered
    assert plain_text(sub.items[0].blocks) == "Letter a"
    assert restarted.ordered and restarted.start == 5
    assert [plain_text(i.blocks) for i in restarted.items] == ["Five", "Six"]


# ---------------------------------------------------------------- tables
def test_table_header_spans_and_nested(doc):
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1
    t = tables[0]
    assert t.header_rows == 1
    assert [plain_text(c.blocks) for c in t.rows[0].cells] == ["Name", "Value", "Note"]
    assert all(c.header for c in t.rows[0].cells)
    wide = t.rows[1].cells[0]
    assert plain_text(wide.blocks) == "wide" and wide.colspan == 2
    assert len(t.rows[1].cells) == 2
    tall = t.rows[2].cells[2]
    assert plain_text(tall.blocks) == "tall" and tall.rowspan == 2
    assert len(t.rows[3].cells) == 2  # the merged continuation cell is not repeated
    inner = [b for b in t.rows[3].cells[0].blocks if isinstance(b, Table)]
    assert inner and [plain_text(c.blocks) for c in inner[0].rows[0].cells] == [
        "inner1", "inner2"]


# ---------------------------------------------------------------- images
def test_image_with_alt_text_and_resource(doc):
    images = [n for n in walk(doc.blocks) if isinstance(n, Image)]
    assert len(images) == 1
    img = images[0]
    assert img.alt == "A tiny red dot" and img.title == "Dot"
    assert img.src == "media/image1.png"
    res = doc.resources[img.src]
    assert res.mime == "image/png" and res.data.startswith(b"\x89PNG")


def test_externally_linked_image_keeps_url():
    out = read_docx(build_external_image_docx())
    images = [n for n in walk(out.blocks) if isinstance(n, Image)]
    assert [i.src for i in images] == ["https://example.com/remote.png"]
    assert out.resources == {}


# ---------------------------------------------------------------- notes, tracked changes
def test_footnote(doc):
    p = para_with(doc, "Noted claim")
    refs = [n for n in p.children if isinstance(n, NoteRef)]
    assert refs and refs[0].note_id in doc.notes
    assert plain_text(doc.notes[refs[0].note_id]).strip() == "The footnote text."


def test_tracked_changes_accepted_by_default(doc):
    p = para_with(doc, "Kept")
    assert plain_text(p.children) == "Kept inserted text."


def test_tracked_changes_all(feature_bytes):
    out = read_docx(feature_bytes, track_changes="all")
    p = para_with(out, "Kept")
    assert any(isinstance(n, Underline) and plain_text(n.children) == "inserted"
               for n in p.children)
    assert any(isinstance(n, Strike) and plain_text(n.children).strip() == "deleted"
               for n in p.children)


def test_bad_track_changes_value(feature_bytes):
    with pytest.raises(UnsupportedFormat):
        read_docx(feature_bytes, track_changes="maybe")


# ---------------------------------------------------------------- code, quotes, math
def test_code_style_paragraphs_merge_into_one_block(doc):
    blocks = [b for b in doc.blocks if isinstance(b, CodeBlock)]
    assert [b.text for b in blocks] == ["def f(x):\n    return x + 1"]


def test_quote_styles(doc):
    quotes = [b for b in doc.blocks if isinstance(b, BlockQuote)]
    assert len(quotes) == 1
    assert [plain_text([b]) for b in quotes[0].blocks] == ["A wise quote.", "More wisdom."]


def test_equations(doc):
    blocks = [b for b in doc.blocks if isinstance(b, MathBlock)]
    assert [b.tex for b in blocks] == [r"x=\frac{a}{b}+y^{2}"]
    p = para_with(doc, "Root:")
    assert Math(r"\sqrt{z}") in p.children


def test_omml_constructs():
    m = "http://schemas.openxmlformats.org/officeDocument/2006/math"

    def tex(xml):
        return omml_to_latex(etree.fromstring(f'<m:oMath xmlns:m="{m}">{xml}</m:oMath>'))

    r = "<m:r><m:t>{}</m:t></m:r>".format
    assert tex(f"<m:nary><m:naryPr><m:chr m:val='∑'/></m:naryPr><m:sub>{r('i=1')}</m:sub>"
               f"<m:sup>{r('n')}</m:sup><m:e>{r('i')}</m:e></m:nary>") == r"\sum_{i=1}^{n}{i}"
    assert tex(f"<m:func><m:fName>{r('sin')}</m:fName><m:e>{r('x')}</m:e></m:func>") == \
        r"\sin{x}"
    assert tex(f"<m:d><m:e>{r('a')}</m:e><m:e>{r('b')}</m:e></m:d>") == \
        r"\left(a | b\right)"
    assert tex(f"<m:m><m:mr><m:e>{r('1')}</m:e><m:e>{r('0')}</m:e></m:mr>"
               f"<m:mr><m:e>{r('0')}</m:e><m:e>{r('1')}</m:e></m:mr></m:m>") == \
        r"\begin{matrix}1 & 0 \\ 0 & 1\end{matrix}"
    assert tex(f"<m:acc><m:accPr><m:chr m:val='̃'/></m:accPr><m:e>{r('x')}</m:e></m:acc>") == \
        r"\tilde{x}"
    assert tex(f"<m:sSub><m:e>{r('a')}</m:e><m:sub>{r('n')}</m:sub></m:sSub>") == "a_{n}"
    assert tex(f"<m:rad><m:deg>{r('3')}</m:deg><m:e>{r('x')}</m:e></m:rad>") == r"\sqrt[3]{x}"
    assert tex(r("a_b {c} \u03b1 \u2264 50%")) == r"a\_b \{c\} \alpha \leq 50\%"


# ---------------------------------------------------------------- controls, boxes, furniture
def test_checkbox_content_control_becomes_checked_item(doc):
    items = [i for b in doc.blocks if isinstance(b, ListBlock) for i in b.items]
    box = [i for i in items if plain_text(i.blocks) == "Ship it"]
    assert box and box[0].checked is True


def test_content_control_and_text_box_kept_in_flow(doc):
    texts = [plain_text([b]) for b in doc.blocks]
    assert "Inside control" in texts
    i = texts.index("Before box")
    assert texts[i + 1] == "Text in a box"


def test_furniture_kept_out_of_body_by_default(doc):
    body = plain_text(doc.blocks)
    assert "Running header" not in body and "Page footer" not in body
    assert "Reviewer remark" not in body
    assert doc.furniture == []


def test_furniture_when_asked(feature_bytes):
    out = read_docx(feature_bytes, include_furniture=True)
    furniture = plain_text(out.furniture)
    assert "Running header" in furniture and "Page footer" in furniture
    assert "Reviewer remark" in furniture and "Bob" in furniture
    assert "Running header" not in plain_text(out.blocks)


# ---------------------------------------------------------------- Strict OOXML
def test_strict_ooxml_opens():
    strict = read_docx((DATA / "docling" / "Strict.docx").read_bytes())
    transitional = read_docx((DATA / "docling" / "Transitional.docx").read_bytes())
    assert plain_text(strict.blocks).strip()
    assert plain_text(strict.blocks) == plain_text(transitional.blocks)


def test_mammoth_strict_format_opens():
    out = read_docx((DATA / "mammoth" / "strict-format.docx").read_bytes())
    assert "Test" in plain_text(out.blocks)


# ---------------------------------------------------------------- hostile input
def test_empty_file():
    with pytest.raises(CorruptDocument, match="empty"):
        read_docx(b"")


def test_not_a_zip():
    with pytest.raises(CorruptDocument, match="not a zip"):
        read_docx(b"Hello, this is plain text pretending to be a DOCX.")


def test_corrupt_zip(feature_bytes):
    broken = feature_bytes[:200] + b"\x00" * 500 + feature_bytes[700:1500]
    with pytest.raises(CorruptDocument):
        read_docx(broken)


def test_corrupt_member_data(feature_bytes):
    # flip bytes inside the compressed document part: CRC or inflate error -> CorruptDocument
    zf = zipfile.ZipFile(io.BytesIO(feature_bytes))
    info = zf.getinfo("word/document.xml")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 20
    damaged = bytearray(feature_bytes)
    for i in range(start, start + 40):
        damaged[i] ^= 0xFF
    with pytest.raises(CorruptDocument):
        read_docx(bytes(damaged))


def test_missing_document_part(feature_bytes):
    data = replace_part(feature_bytes, "word/document.xml", None)
    with pytest.raises(CorruptDocument, match=r"document\.xml"):
        read_docx(data)


def test_malformed_xml(feature_bytes):
    data = replace_part(feature_bytes, "word/document.xml", b"<w:document><unclosed>")
    with pytest.raises(CorruptDocument, match="Malformed XML"):
        read_docx(data)


def test_encrypted_docx():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + "EncryptionInfo".encode(
        "utf-16-le") + b"\x00" * 1000
    with pytest.raises(CorruptDocument, match="encrypted"):
        read_docx(ole)


def test_legacy_doc_is_unsupported():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 2000
    with pytest.raises(UnsupportedFormat, match="legacy"):
        read_docx(ole)


def test_pdf_renamed_docx():
    with pytest.raises(UnsupportedFormat, match="PDF"):
        read_docx(b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n")


def test_xlsx_is_unsupported():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(UnsupportedFormat, match="Excel"):
        read_docx(buf.getvalue())


def test_zip_bomb_part_is_refused(feature_bytes):
    bomb = add_member(feature_bytes, "word/media/huge.bin", b"\x00" * (20 * 1024 * 1024))
    with pytest.raises(TooLarge):
        read_docx(bomb)


def test_size_cap_applies_while_reading(feature_bytes):
    # the directory says the parts are small enough; the streaming cap still stops the read
    pkg = docx_package.Package(feature_bytes)
    pkg.zip.remaining = 1000  # as if earlier parts had used the rest of the budget
    with pytest.raises(TooLarge):
        pkg.read("word/document.xml")


def test_total_unpacked_limit(feature_bytes, monkeypatch):
    monkeypatch.setattr(docx_package, "DOCX_LIMITS",
                        dataclasses.replace(docx_package.DOCX_LIMITS, max_total=5000))
    with pytest.raises(TooLarge):
        read_docx(feature_bytes)


def test_entity_expansion_is_not_performed(feature_bytes):
    evil = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "AAAAAAAAAA">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
            b"<w:body><w:p><w:r><w:t>x&b;</w:t></w:r></w:p></w:body></w:document>")
    data = replace_part(feature_bytes, "word/document.xml", evil)
    try:
        out = read_docx(data)
    except CorruptDocument:
        return
    assert "AAAAAAAAAA" not in plain_text(out.blocks)
