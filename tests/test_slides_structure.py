"""The structure a slide shows, read back as such (issue 32, item 4): footnotes kept on a
notes slide, quotations set off from the margin, slides that continue the one before,
sub-points whose outline level LibreOffice dropped, speaker notes in text boxes, titles
set in bold runs, and a column of text read before what stands higher beside it.

Decks are made here with python-pptx (the XML the writers put on the slide, written the
same way), and once by pandoc and LibreOffice from Markdown (scored against the source).
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from bench.fidelity import Score
from render_pool.engine import registry
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import (
    BlockQuote,
    Heading,
    ListBlock,
    NoteRef,
    Paragraph,
    Superscript,
    plain_text,
    walk,
)
from tests.office_fixtures import has_libreoffice, pandoc, soffice_convert

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
RT_SLIDE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _save(prs: Any) -> bytes:
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def _raise(run: Any, target: Any = None, source: Any = None) -> None:
    """Set a run above the baseline; with ``target``, make a click on it jump there."""
    rpr = run._r.get_or_add_rPr()
    rpr.set("baseline", "30000")
    if target is not None:
        rid = source.part.relate_to(target.part, RT_SLIDE)
        click = etree.SubElement(rpr, f"{{{A}}}hlinkClick")
        click.set(R_ID, rid)
        click.set("action", "ppaction://hlinksldjump")


def _ppr(paragraph: Any, **attrs: str) -> Any:
    ppr = paragraph._p.get_or_add_pPr()
    for name, value in attrs.items():
        ppr.set(name, value)
    return ppr


def _notes_deck(numbers: tuple[str, ...] = ("1", "2")) -> bytes:
    """A content slide with two raised marks jumping to a closing "Notes" slide that lists
    paragraphs numbered ``numbers`` (pandoc's PPTX writer sets footnotes so)."""
    from pptx import Presentation

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    notes = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Findings"
    body = slide.placeholders[1].text_frame
    para = body.paragraphs[0]
    for text, mark in (("The rate rose", "1"), (" and then fell", "2"), (".", None)):
        para.add_run().text = text
        if mark:
            run = para.add_run()
            run.text = mark
            _raise(run, notes, slide)
    _ppr(para, marL="0", indent="0")
    etree.SubElement(para._p.get_or_add_pPr(), f"{{{A}}}buNone")
    more = body.add_paragraph()
    more.text = "Ten to the power 3: 10"
    _raise(more.add_run())  # a raised digit that jumps nowhere is no note
    more.runs[-1].text = "3"
    notes.shapes.title.text = "Notes"
    frame = notes.placeholders[1].text_frame
    texts = {"1": "Measured in March.", "2": "After the second survey.", "3": "Unused."}
    for i, number in enumerate(numbers):
        p = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        p.text = f"{number}. {texts[number]}"
    return _save(prs)


def test_raised_marks_jumping_to_a_slide_of_numbered_paragraphs_are_footnotes() -> None:
    doc = registry.read(_notes_deck())
    refs = [n for n in walk(doc.blocks) if isinstance(n, NoteRef)]
    assert [plain_text(doc.notes[r.note_id]) for r in refs] == [
        "Measured in March.",
        "After the second survey.",
    ]
    assert "Notes" not in [plain_text(b.children) for b in doc.blocks if isinstance(b, Heading)]
    raised = [plain_text(n.children) for n in walk(doc.blocks) if isinstance(n, Superscript)]
    assert raised == ["3"]  # no jump: it stays a superscript
    markdown = convert_document(_notes_deck(), "markdown").content
    assert "The rate rose[^1] and then fell[^2]." in markdown
    assert "[^1]: Measured in March." in markdown and "[^2]: After the second survey." in markdown
    assert "<!-- slide 2 -->" not in markdown
    doc = registry.read(_notes_deck(("1", "2", "3")))  # "3." has no mark: not only notes
    assert not doc.notes
    assert "Notes" in [plain_text(b.children) for b in doc.blocks if isinstance(b, Heading)]
    assert "3. Unused." in plain_text(doc.blocks)


def _body_deck(
    paragraphs: list[tuple[str, dict[str, str], str | None, int | None]],
    title: bool = True,
    bold_first: bool = False,
) -> bytes:
    """A slide before, then a "Title and Content" slide (without its title unless
    ``title``) whose body holds ``paragraphs``: (text, pPr attributes, bullet element or
    None, size in hundredths of a point or None); ``bold_first`` sets the first in bold."""
    from pptx import Presentation

    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[1])
    first.shapes.title.text = "Before"
    first.placeholders[1].text_frame.text = "A point on the slide before."
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    if title:
        slide.shapes.title.text = "Results"
    else:
        slide.shapes._spTree.remove(slide.shapes.title._element)
    frame = slide.placeholders[1].text_frame
    for i, (text, attrs, bullet, size) in enumerate(paragraphs):
        p = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        run = p.add_run()
        run.text = text
        run.font.bold = (bold_first and i == 0) or None
        if size:
            run._r.get_or_add_rPr().set("sz", str(size))
        ppr = _ppr(p, **attrs)
        if bullet:
            mark = etree.SubElement(ppr, f"{{{A}}}{bullet}")
            if bullet == "buAutoNum":
                mark.set("type", "arabicPeriod")
    return _save(prs)


def test_a_paragraph_set_off_an_inch_without_a_bullet_is_a_block_quote() -> None:
    deck = _body_deck(
        [
            ("The chair opened the meeting.", {"marL": "0", "indent": "0"}, "buNone", None),
            ("We shall meet again in spring.", {"marL": "1270000", "indent": "0"}, "buNone", None),
            (
                "A sub-point without a bullet.",
                {"lvl": "1", "marL": "1270000", "indent": "0"},
                "buNone",
                None,
            ),
        ]
    )
    doc = registry.read(deck)
    quotes = [b for b in doc.blocks if isinstance(b, BlockQuote)]
    assert [plain_text(q.blocks) for q in quotes] == ["We shall meet again in spring."]
    paragraphs = [plain_text(b.children) for b in doc.blocks if isinstance(b, Paragraph)]
    assert "A sub-point without a bullet." in paragraphs  # a deeper level is no quotation
    assert "> We shall meet again in spring." in convert_document(deck, "markdown").content


def test_a_slide_without_a_title_continues_the_one_before() -> None:
    deck = _body_deck(
        [
            ("Decisions", {"marL": "0", "indent": "0"}, "buNone", None),
            (
                "The budget was approved by all members present.",
                {"marL": "0", "indent": "0"},
                "buNone",
                None,
            ),
        ],
        title=False,
        bold_first=True,
    )
    headings = [
        (b.level, plain_text(b.children))
        for b in registry.read(deck).blocks
        if isinstance(b, Heading)
    ]
    assert headings == [(2, "Before"), (3, "Decisions")]


def test_unbulleted_smaller_lines_under_a_numbered_point_are_its_sub_points() -> None:
    point = {"marL": "343080", "indent": "-343080"}
    under = {"marL": "343080", "indent": "0"}
    deck = _body_deck(
        [
            ("Budget approved", point, "buAutoNum", 1050),
            ("Capital items", under, "buNone", 900),
            ("Running costs", under, "buNone", 900),
            ("Minutes signed", point, "buAutoNum", 1050),
            ("A closing remark in body type.", under, "buNone", 1050),
        ]
    )
    doc = registry.read(deck)
    lists = [b for b in doc.blocks if isinstance(b, ListBlock) and b.ordered]
    assert len(lists) == 1
    first, second = lists[0].items
    assert plain_text(first.blocks[:1]) == "Budget approved"
    nested = first.blocks[1]
    assert isinstance(nested, ListBlock)
    assert [plain_text(i.blocks) for i in nested.items] == ["Capital items", "Running costs"]
    assert plain_text(second.blocks) == "Minutes signed"
    assert "A closing remark in body type." in [
        plain_text(b.children) for b in doc.blocks if isinstance(b, Paragraph)
    ]


def test_speaker_notes_in_a_text_box_of_the_notes_page_are_read() -> None:
    from pptx import Presentation
    from pptx.oxml.shapes.autoshape import CT_Shape
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Who am I"
    notes = slide.notes_slide
    notes.notes_text_frame.text = "Say hello."
    # a text box of its own on the notes page, as LibreOffice writes an ODP's notes
    notes.shapes._spTree.append(
        CT_Shape.new_textbox_sp(  # type: ignore[no-untyped-call]
            90, "TextBox 89", Inches(1), Inches(8), Inches(5), Inches(1)
        )
    )
    notes.shapes[-1].text_frame.text = "Chairing the committee since spring."
    markdown = convert_document(_save(prs), "markdown").content
    assert "> Notes: Say hello." in markdown
    assert "> Chairing the committee since spring." in markdown


def test_a_title_set_in_several_bold_runs_is_plain_heading_text() -> None:
    from pptx import Presentation

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    para = slide.shapes.title.text_frame.paragraphs[0]
    for text in ("Collaborated Editing", " ", "on ODF"):
        run = para.add_run()
        run.text = text
        run.font.bold = bool(text.strip()) or None
    markdown = convert_document(_save(prs), "markdown").content
    assert "# Collaborated Editing on ODF" in markdown
    assert "**" not in markdown


def test_a_column_of_text_is_read_before_a_table_set_higher_beside_it() -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])  # blank
    slide.shapes.add_textbox(Inches(0.5), Inches(2), Inches(4), Inches(1)).text = "Left first."
    slide.shapes.add_textbox(Inches(0.5), Inches(3), Inches(4), Inches(1)).text = "Left second."
    table = slide.shapes.add_table(1, 1, Inches(5), Inches(1), Inches(4), Inches(3)).table
    table.cell(0, 0).text = "Right table"
    slide.shapes.add_textbox(Inches(0.5), Inches(6), Inches(9), Inches(1)).text = "Below all."
    markdown = convert_document(_save(prs), "markdown").content
    order = [
        markdown.index(t) for t in ("Left first.", "Left second.", "Right table", "Below all.")
    ]
    assert order == sorted(order), markdown


SOURCE_MD = """# Committee Minutes

The chair opened the meeting. This was checked[^1]. The treasurer reported the budget.

## Attendance

All members were present[^2]. The secretary kept the minutes.

> We shall meet again in spring. The date is to be agreed.

1. Budget approved
2. Minutes signed

[^1]: Checked against the register.
[^2]: Two joined by telephone.
"""


@pytest.mark.slow  # pandoc and LibreOffice are processes
@pytest.mark.skipif(shutil.which("pandoc") is None, reason="needs pandoc")
@pytest.mark.parametrize("kind", ["pptx", "odp"])
def test_pandoc_slides_keep_footnotes_and_block_quotes(tmp_path: Path, kind: str) -> None:
    if kind == "odp" and not has_libreoffice():
        pytest.skip("needs LibreOffice")
    (tmp_path / "deck.md").write_text(SOURCE_MD, encoding="utf-8")
    path = pandoc(tmp_path / "deck.md", tmp_path / "deck.pptx")
    if kind == "odp":
        soffice_convert([path], "odp", tmp_path, tmp_path / "profile")
        path = tmp_path / "deck.odp"
    out = convert_document(
        path.read_bytes(), "markdown", options=ConvertOptions(read=ReadRequest(office_timeout=120))
    ).content
    wanted = ("footnotes", "block quotes", "paragraphs", "headings")
    score = Score(categories=wanted)
    score.add(out, SOURCE_MD)
    assert {c: score.tallies[c].f1 for c in wanted} == dict.fromkeys(wanted, 1.0), out
