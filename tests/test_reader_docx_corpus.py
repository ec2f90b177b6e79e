"""DOCX reader over real documents: docling (with its Markdown ground truth), mammoth,
markitdown (copied into tests/data/docx) and, when present, pandoc's test files (GPL, read
from ../shared/corpus only)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from render_pool.engine.docx.reader import read_docx
from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.model import (
    CodeBlock,
    Heading,
    Image,
    Link,
    ListBlock,
    ListItem,
    MathBlock,
    NoteRef,
    Table,
    plain_text,
)
from render_pool.errors import CorruptDocument, UnsupportedFormat
from tests.docx_fixtures import body_words
from tests.tree_walk import model_nodes as walk

DATA = Path(__file__).parent / "data" / "docx"
DOCLING = sorted((DATA / "docling").glob("*.docx"))
OTHERS = sorted((DATA / "mammoth").glob("*.docx")) + sorted((DATA / "markitdown").glob("*.docx"))
SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _strip_number(text: str) -> str:
    return re.sub(r"^\d+(\.\d+)*\.?\s+", "", text).strip()


def md_structure(md: str):
    """Headings, table count, list item texts and link targets of a Docling Markdown file."""
    heads, tables, items, links = [], 0, [], []
    in_code = in_table = False
    for line in md.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        m = re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            heads.append((len(m.group(1)), _strip_number(m.group(2))))
        if line.startswith("|"):
            tables += 0 if in_table else 1
            in_table = True
        else:
            in_table = False
        m = re.match(r"^\s*(?:[-*]|\d+[.)])\s+(?:\[[ x]\]\s+)?(.*)$", line)
        if m and not line.startswith("|"):
            items.append(m.group(1))
        links += re.findall(r"\]\((https?://[^)\s]+)\)", line)
    return heads, tables, items, links


@pytest.mark.parametrize("path", DOCLING, ids=lambda p: p.name)
def test_docling_structure_matches_groundtruth(path):
    doc = read_docx(path.read_bytes())
    gt = DATA / "docling" / "groundtruth" / (path.name + ".md")
    heads, tables, items, links = md_structure(gt.read_text(encoding="utf-8"))
    nodes = walk(doc.blocks)
    mine = [(b.level, _strip_number(plain_text(b.children))) for b in nodes
            if isinstance(b, Heading)]
    # Docling writes the Title style as "#" and "Heading N" as N+1 hashes; we keep Heading N
    # at level N (Title is level 1 too).
    expected = [(1 if lvl == 1 else lvl - 1, text) for lvl, text in heads]
    assert [t for _, t in mine] == [t for _, t in expected]
    assert mine == expected
    assert sum(isinstance(b, Table) for b in doc.blocks) == tables
    targets = {n.target for n in nodes if isinstance(n, Link)}
    assert set(links) <= targets
    items_text = _alnum(" ".join(plain_text([n]) for n in nodes if isinstance(n, ListItem)))
    for item in items:
        # the start of every Docling list item (before any formula) is in one of our items
        head = _alnum(_strip_number(re.sub(r"<[^>]+>", "", item)).split("$")[0])[:12]
        assert head in items_text, item


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def test_docling_specific_features():
    def load(name):
        return read_docx((DATA / "docling" / name).read_bytes())

    code = load("docx_code_blocks.docx")
    blocks = [b.text for b in code.blocks if isinstance(b, CodeBlock)]
    assert len(blocks) == 3 and blocks[2].startswith("def fib(n):")
    assert "typewriter face" in plain_text(code.blocks)  # pure-Courier prose stays prose
    lists = load("docx_list_resumed_numbering.docx")
    ordered = [b for b in walk(lists.blocks) if isinstance(b, ListBlock) and b.ordered]
    assert any(b.start > 1 for b in ordered)  # numbering resumed after an interruption
    ext = load("docx_external_image.docx")
    assert any(isinstance(n, Image) and n.src.startswith("http") for n in walk(ext.blocks))
    eq = load("equations.docx")
    assert any(isinstance(b, MathBlock) and r"\sum" in b.tex for b in eq.blocks)
    boxes = load("textbox.docx")
    assert "Health Bureau" in plain_text(boxes.blocks)
    chart = load("drawingml.docx")
    assert any(isinstance(b, Table) for b in chart.blocks)  # chart data kept as a table
    checks = load("docx_checkboxes.docx")
    assert [i.checked for b in walk(checks.blocks) if isinstance(b, ListBlock)
            for i in b.items if i.checked is not None][-3:] == [True, True, False]


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_corpora_read(path):
    """Every file reads, and the words of its body text reach the Markdown a user gets."""
    data = path.read_bytes()
    doc = read_docx(data)
    words = body_words(data)
    assert doc.blocks or not words
    markdown = write_markdown(doc)
    missing = sorted(w for w in words if w not in markdown)
    assert len(missing) <= len(words) // 10, missing[:20]


def test_mammoth_notes_and_pictures():
    def load(name):
        return read_docx((DATA / "mammoth" / name).read_bytes())

    fn = load("footnotes.docx")
    refs = [n for n in walk(fn.blocks) if isinstance(n, NoteRef)]
    assert len(refs) == 2 and all(plain_text(fn.notes[r.note_id]).strip() for r in refs)
    en = load("endnotes.docx")
    assert any(isinstance(n, NoteRef) for n in walk(en.blocks)) and en.notes
    ext = load("external-picture.docx")
    assert [n.src for n in walk(ext.blocks) if isinstance(n, Image)]
    pic = load("tiny-picture.docx")
    imgs = [n for n in walk(pic.blocks) if isinstance(n, Image)]
    assert imgs and pic.resources[imgs[0].src].mime == "image/png"
    table = load("tables.docx")
    assert any(isinstance(b, Table) for b in table.blocks)


def test_pandoc_corpus_never_crashes():
    folder = SHARED / "pandoc" / "docx"
    if not folder.is_dir():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    failures = []
    for path in sorted(folder.glob("*.docx")):
        try:
            read_docx(path.read_bytes())
        except (CorruptDocument, UnsupportedFormat) as exc:
            failures.append(f"{path.name}: {exc}")
    # pandoc's test files are all well-formed; a refusal would be our bug
    assert failures == []
