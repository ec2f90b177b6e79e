"""The DOCX reader's one-pass paragraph path (``render_pool.engine.docx.simple_inlines``).

Ordinary paragraphs (runs of text with at most one format, hyperlinks, note references) are
read and built in one pass; anything else must take the general walk, with the Markdown the
general walk gave before the one-pass path existed (the expected strings below were written
by the reader before it). The one-pass builder must give what ``build_inlines`` gives for any
run of pieces the reader can collect.
"""

from __future__ import annotations

import io
import random

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from lxml import etree

from render_pool.engine.common.inlines import build_inlines
from render_pool.engine.docx import simple_inlines
from render_pool.engine.docx.reader import DocxReader, _plain_inlines
from render_pool.engine.jobs import convert_document
from render_pool.engine.model import NoteRef

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
BEFORE = '<w:r><w:t xml:space="preserve">Before </w:t></w:r>' \
         '<w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r>'
AFTER = '<w:r><w:t xml:space="preserve"> after.</w:t></w:r>'
MONO = '<w:rPr><w:rFonts w:ascii="Courier New" w:hAnsi="Courier New"/></w:rPr>'

# paragraph content (between BEFORE and AFTER) that the one-pass path must leave alone
SLOW = {
    "field": '<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
             '<w:r><w:instrText xml:space="preserve"> HYPERLINK "https://example.com/f" '
             '</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>'
             '<w:r><w:t>field link</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>',
    "tracked": '<w:ins w:id="1" w:author="a"><w:r><w:t xml:space="preserve"> new</w:t></w:r>'
               '</w:ins><w:del w:id="2" w:author="a"><w:r><w:delText xml:space="preserve"> old'
               '</w:delText></w:r></w:del>',
    "tab": '<w:r><w:tab/><w:t>after a tab</w:t></w:r>',
    "break": '<w:r><w:t>line</w:t><w:br/><w:t>next</w:t></w:r>',
    "content control": '<w:sdt><w:sdtContent><w:r><w:t xml:space="preserve"> in a control'
                       '</w:t></w:r></w:sdtContent></w:sdt>',
    "smart tag": '<w:smartTag w:element="place"><w:r><w:t xml:space="preserve"> smart</w:t>'
                 '</w:r></w:smartTag>',
    "bookmark": '<w:bookmarkStart w:id="5" w:name="mark"/><w:r><w:t xml:space="preserve">'
                ' marked</w:t></w:r>',
    "missing note": '<w:r><w:footnoteReference w:id="7"/></w:r>',
    "missing link": '<w:hyperlink r:id="rId999"><w:r><w:t xml:space="preserve"> broken</w:t>'
                    '</w:r></w:hyperlink>',
    "empty text between code": f'<w:r>{MONO}<w:t xml:space="preserve"> a</w:t></w:r>'
                               '<w:r><w:t></w:t></w:r>'
                               f'<w:r>{MONO}<w:t>b</w:t></w:r>',
    "two texts in a run": '<w:r><w:t xml:space="preserve"> one</w:t><w:t>two</w:t></w:r>',
}
SLOW_MARKDOWN = {
    "field": "Before **bold**[field link](https://example.com/f) after.",
    "tracked": "Before **bold** new after.",
    "tab": "Before **bold** after a tab after.",
    "break": "Before **bold**line\\\nnext after.",
    "content control": "Before **bold** in a control after.",
    "smart tag": "Before **bold** smart after.",
    "bookmark": 'Before **bold**<a id="mark"></a> marked after.',
    "missing note": "Before **bold**\\[note 7\\] after.",
    "missing link": "Before **bold** broken after.",
    "empty text between code": "Before **bold**` ab` after.",
    "two texts in a run": "Before **bold** onetwo after.",
}
# content the one-pass path reads (a hyperlink's relationship is added by _document)
FAST = {
    "plain": '<w:r><w:t xml:space="preserve"> plain</w:t></w:r>',
    "formats": '<w:r><w:rPr><w:i/></w:rPr><w:t xml:space="preserve"> italic </w:t></w:r>'
               '<w:r><w:t>and</w:t></w:r><w:r><w:rPr><w:strike/></w:rPr>'
               '<w:t xml:space="preserve"> struck</w:t></w:r>',
    "code": f'<w:r><w:t xml:space="preserve"> call </w:t></w:r><w:r>{MONO}<w:t>f(x)</w:t>'
            '</w:r>',
    "link": '<w:hyperlink r:id="{rid}"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
            '<w:t xml:space="preserve"> a link </w:t></w:r></w:hyperlink>',
    "internal link": '<w:hyperlink w:anchor="mark"><w:r><w:t>to the mark</w:t></w:r>'
                     '</w:hyperlink>',
    "note mark": '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/>'
                 '</w:r><w:r><w:t xml:space="preserve"> noted</w:t></w:r>',
}
FAST_MARKDOWN = {
    "plain": "Before **bold** plain after.",
    "formats": "Before **bold** *italic* and ~~struck~~ after.",
    "code": "Before **bold** call `f(x)` after.",
    "link": "Before **bold** [a link](https://example.com/l)  after.",
    "internal link": "Before **bold**[to the mark](#mark) after.",
    "note mark": "Before **bold** noted after.",
}


def _document(content: str) -> bytes:
    """A DOCX whose one paragraph is BEFORE, ``content`` and AFTER, with a hyperlink
    relationship for ``{rid}`` and a bookmark "mark" that a link refers to."""
    document = docx.Document()
    paragraph = document.add_paragraph()
    rid = document.part.relate_to("https://example.com/l", RT.HYPERLINK, is_external=True)
    xml = BEFORE + content.replace("{rid}", rid) + AFTER
    for child in parse_xml(f"<w:p {nsdecls('w', 'r')}>{xml}</w:p>"):
        paragraph._p.append(child)
    if "mark" in content and "anchor" not in content:  # a link makes the bookmark matter
        other = document.add_paragraph()
        other._p.append(parse_xml(f'<w:hyperlink {nsdecls("w")} w:anchor="mark"><w:r>'
                                  '<w:t>back</w:t></w:r></w:hyperlink>'))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _first_paragraph_pieces(data: bytes) -> simple_inlines.Pieces | None:
    """What the one-pass path collects of the document's first paragraph."""
    reader = DocxReader(data, False, "accept")
    paragraph = next(reader.main_root.iter(W + "p"))
    return simple_inlines.collect(reader, paragraph[:])


def _first_block(data: bytes) -> str:
    return convert_document(data, "markdown").content.split("\n\n")[0].strip()


@pytest.mark.parametrize("shape", sorted(SLOW))
def test_other_shapes_take_the_general_walk(shape: str) -> None:
    data = _document(SLOW[shape])
    assert _first_paragraph_pieces(data) is None
    assert _first_block(data) == SLOW_MARKDOWN[shape]


@pytest.mark.parametrize("shape", sorted(FAST))
def test_ordinary_shapes_are_read_in_one_pass(shape: str) -> None:
    data = _document(FAST[shape])
    assert _first_paragraph_pieces(data) is not None
    assert _first_block(data) == FAST_MARKDOWN[shape]


def test_a_missing_link_and_a_missing_note_still_warn() -> None:
    for shape in ("missing link", "missing note"):
        assert convert_document(_document(SLOW[shape]), "markdown").warnings


_TEXTS = ("a", " ", "b ", " c", "\t", "  ", "x y", " d\t")
_FORMATS = [frozenset(f) for f in ((), (), ("b",), ("i",), ("u",), ("s",), ("sub",), ("sup",),
                                   ("code",), ("code",), ("b", "i"), ("code", "b"))]
_LINKS = (None, None, ("https://example.com/1", ""), ("#two", "a title"))


def _random_pieces(rng: random.Random) -> simple_inlines.Pieces:
    """Pieces as the reader collects them: a text joined to a text before it of the same
    format and link, note references between."""
    pieces = simple_inlines.Pieces()
    for _ in range(rng.randint(0, 8)):
        link = rng.choice(_LINKS)
        if rng.random() < 0.12:
            pieces.nodes.append(NoteRef("fn1"))
            pieces.fmts.append(frozenset())
            pieces.links.append(link)
            continue
        text, fmt = rng.choice(_TEXTS), rng.choice(_FORMATS)
        last = pieces.nodes[-1] if pieces.nodes else None
        if isinstance(last, str) and pieces.links[-1] == link and pieces.fmts[-1] == fmt:
            pieces.nodes[-1] = last + text
        else:
            pieces.nodes.append(text)
            pieces.fmts.append(fmt)
            pieces.links.append(link)
    return pieces


def test_one_pass_build_matches_the_general_tree() -> None:
    rng = random.Random(34)
    built = 0
    for _ in range(4000):
        pieces = _random_pieces(rng)
        got = simple_inlines.build(pieces)
        if got is None:  # two formats on a piece: the reader builds the general tree
            continue
        built += 1
        segs = pieces.segments()
        want = _plain_inlines(segs, heading=False)
        if want is None:
            want = simple_inlines.trimmed(build_inlines(DocxReader._clean_segs(segs)))
        assert got == want, (pieces.nodes, pieces.fmts, pieces.links)
    assert built > 1000


def test_a_paragraph_without_runs_collects_nothing() -> None:
    """A paragraph without runs collects to no pieces (and no output)."""
    reader = DocxReader(_document(""), False, "accept")
    empty = etree.Element(W + "p")
    pieces = simple_inlines.collect(reader, empty[:])
    assert pieces is not None and not pieces.nodes
