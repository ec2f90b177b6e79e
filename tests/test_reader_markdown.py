"""Markdown reader: structure of the model built from GitHub-flavoured Markdown."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from render_pool.engine.markdown.reader import attach_images, markdown_image_sources, read_markdown
from render_pool.engine.model import (
    BlockQuote,
    Code,
    CodeBlock,
    Emph,
    Heading,
    HorizontalRule,
    Image,
    LineBreak,
    Link,
    ListBlock,
    Math,
    MathBlock,
    NoteRef,
    Paragraph,
    RawHtml,
    Resource,
    Strike,
    Strong,
    Subscript,
    Superscript,
    Table,
    Text,
    Underline,
    plain_text,
)

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PNG = Resource(b"\x89PNG fake", "image/png")


def blocks(text: str):
    return read_markdown(text).blocks


def test_headings_levels_and_unique_slugs():
    doc = read_markdown("# Intro\n\n## Intro\n\nSetext\n======\n\n### Ünïcode & *Stuff*!\n\n"
                        "## Intro\n\n# 中文 标题\n\n#\n")
    heads = [b for b in doc.blocks if isinstance(b, Heading)]
    assert [h.level for h in heads] == [1, 2, 1, 3, 2, 1, 1]
    assert [h.anchor for h in heads] == ["intro", "intro-1", "setext", "ünïcode--stuff",
                                        "intro-2", "中文-标题", "section"]
    assert heads[3].children[1] == Emph([Text("Stuff")])


def test_inline_formatting_links_and_code():
    (p,) = blocks("*em* **strong** ~~del~~ `co|de` [a *b*](https://x.example/p \"T\") "
                  "<https://auto.example> www.bare.example x &amp; \\* end  \nnext")
    c = p.children
    assert c[0] == Emph([Text("em")])
    assert c[2] == Strong([Text("strong")])
    assert c[4] == Strike([Text("del")])
    assert c[6] == Code("co|de")
    assert c[8] == Link([Text("a "), Emph([Text("b")])], "https://x.example/p", "T")
    assert c[10] == Link([Text("https://auto.example")], "https://auto.example")
    assert c[12] == Link([Text("www.bare.example")], "http://www.bare.example")
    assert c[13] == Text(" x & * end")
    assert c[14] == LineBreak()
    assert c[15] == Text("next")


def test_reference_links_and_images_keep_sources_as_written():
    (p,) = blocks("![logo][l] and ![A *b*](img/a%20b.png \"t\")\n\n[l]: ../logo.svg\n")
    images = [n for n in p.children if isinstance(n, Image)]
    assert images == [Image("../logo.svg", alt="logo"),
                      Image("img/a%20b.png", alt="A b", title="t")]


def test_lists_ordered_start_nested_and_tasks():
    (lst, other) = blocks("3. three\n4. four\n   - [x] done\n   - [ ] todo\n   - plain\n\n"
                          "text\n\n- [X] capital\n")[0:3:2]
    assert isinstance(lst, ListBlock) and lst.ordered and lst.start == 3
    assert [plain_text(i.blocks[:1]) for i in lst.items] == ["three", "four"]
    inner = lst.items[1].blocks[1]
    assert isinstance(inner, ListBlock) and not inner.ordered
    assert [i.checked for i in inner.items] == [True, False, None]
    assert inner.items[0].blocks == [Paragraph([Text("done")])]
    assert other.items[0].checked is True
    assert lst.items[0].checked is None


def test_task_syntax_outside_a_list_stays_text():
    (p,) = blocks("[x] not a task\n")
    assert plain_text([p]) == "[x] not a task"


def test_table_header_row_and_cells():
    (t,) = blocks("| a | b |\n|:--|--:|\n| 1 | `x\\|y` |\n| **3** |\n")
    assert isinstance(t, Table) and t.header_rows == 1
    assert [[plain_text(c.blocks) for c in r.cells] for r in t.rows] == [
        ["a", "b"], ["1", "x|y"], ["3", ""]]
    assert all(c.header for c in t.rows[0].cells)
    assert not any(c.header for c in t.rows[1].cells)
    assert t.rows[2].cells[0].blocks == [Paragraph([Strong([Text("3")])])]


def test_code_blocks_quotes_rules():
    b = blocks("```python title=x\ndef f():\n    return 1\n```\n\n    indented\n\n"
               "> quoted\n>\n> > nested\n\n---\n\n> [!WARNING]\n> careful\n")
    assert b[0] == CodeBlock("def f():\n    return 1", "python")
    assert b[1] == CodeBlock("indented", "")
    assert isinstance(b[2], BlockQuote) and isinstance(b[2].blocks[1], BlockQuote)
    assert isinstance(b[3], HorizontalRule)
    assert isinstance(b[4], BlockQuote)
    assert plain_text(b[4].blocks) == "Warningcareful"


def test_footnotes_in_reference_order():
    doc = read_markdown("B[^b] then A[^a] and B again[^b] and [^missing].\n\n"
                        "[^a]: Note **A** with a [link](https://n.example).\n"
                        "[^b]: Note B.\n\n    More B.\n[^unused]: never cited\n")
    (p,) = doc.blocks
    refs = [n.note_id for n in p.children if isinstance(n, NoteRef)]
    assert refs == ["b", "a", "b"]
    assert list(doc.notes) == ["b", "a", "unused"]
    assert plain_text(doc.notes["b"]) == "Note B.More B."
    assert len(doc.notes["b"]) == 2
    assert isinstance(doc.notes["a"][0].children[-2], Link)
    assert "[^missing]" in plain_text([p])


def test_inline_html_is_interpreted_and_html_blocks_kept_raw():
    b = blocks("H<sub>2</sub>O x<sup>2</sup> <b>bold <i>both</i></b> <u>u</u> <del>d</del> "
               "<kbd>Ctrl</kbd> <a href=\"https://a.example\">a</a><br>"
               "<img src=\"pic.png\" alt=\"P\" width=\"120\"> <span>kept</span> <!-- c -->\n\n"
               "<div align=\"center\">\n  <img src=\"logo.png\">\n</div>\n")
    c = b[0].children
    assert Subscript([Text("2")]) in c and Superscript([Text("2")]) in c
    assert Strong([Text("bold "), Emph([Text("both")])]) in c
    assert Underline([Text("u")]) in c and Strike([Text("d")]) in c
    assert Code("Ctrl") in c
    assert Link([Text("a")], "https://a.example") in c
    assert LineBreak() in c
    assert Image("pic.png", alt="P", width_px=120) in c
    assert "kept" in plain_text(c) and "<!--" not in plain_text(c)
    assert b[1] == RawHtml('<div align="center">\n  <img src="logo.png">\n</div>')


def test_unclosed_inline_html_keeps_text():
    (p,) = blocks("a <b>never closed and </i> stray\n")
    assert plain_text([p]) == "a never closed and  stray"


def test_math_inline_display_and_dollar_amounts():
    b = blocks("Cost $5 and $10, area $\\pi r^2$ and `$x$`.\n\n$$\n\\int_0^1 x\\,dx \\\\ y\n$$\n")
    c = b[0].children
    assert Math("\\pi r^2") in c
    assert Code("$x$") in c
    assert "$5 and $10" in plain_text([b[0]])
    assert b[1] == MathBlock("\\int_0^1 x\\,dx \\\\ y")


def test_front_matter_to_meta_only_when_it_is_key_values():
    doc = read_markdown("---\ntitle: \"Hello: World\"\nauthor: Ann\ntags:\n  - a\n---\n# Body\n")
    assert doc.meta == {"title": "Hello: World", "author": "Ann", "tags": ""}
    assert isinstance(doc.blocks[0], Heading)
    doc = read_markdown("---\nJust a paragraph\n---\n")
    assert doc.meta == {}
    assert doc.blocks  # kept as content (a rule and a setext heading)
    assert read_markdown("\ufeff---\ntitle: BOM\n---\nx\n").meta == {"title": "BOM"}


def test_cjk_soft_breaks_join_without_spaces_and_latin_with_space():
    (p,) = blocks("第一行\n第二行\nEnglish\nwords\n")
    assert plain_text([p]) == "第一行第二行 English words"


def test_nul_and_crlf_and_empty_input():
    (p,) = blocks("a\x00b\r\nc\r\n")
    assert plain_text([p]) == "a\ufffdb c"
    assert read_markdown("").blocks == []


# ------------------------------------------------------------------ image sources
def test_markdown_image_sources_everywhere_once():
    text = ("![a](one.png) ![b](https://h.example/two.png)\n\n| x |\n|---|\n| ![c](three.gif) |\n\n"
            "- ![d](one.png)\n\n<p><img alt=x src='four.jpg'></p>\n\nText <img src=\"five.png\"> "
            "[^n] ![e][ref] ![f](data:image/png;base64,AAAA)\n\n[^n]: ![g](six.png)\n\n"
            "[ref]: seven.png\n")
    assert markdown_image_sources(text) == [
        "one.png", "https://h.example/two.png", "three.gif", "four.jpg", "five.png",
        "seven.png", "six.png"]


def test_attach_images_rewrites_everywhere_and_explains_omissions():
    doc = read_markdown("![ok](a.png)\n\n| t |\n|---|\n| ![cell](a.png) |\n\n- ![li](b.png)\n\n"
                        "x[^n]\n\n[^n]: ![note](a.png)\n\n<div><img src=\"a.png\"> "
                        "<img src=\"bad.png\" alt=\"Bad &amp; gone\"></div>\n\n![gone](c.png)\n")
    attach_images(doc, {"a.png": PNG}, {"b.png": "private address refused"})
    images = [n for n in _all_nodes(doc) if isinstance(n, Image)]
    assert len(images) == 3 and len({i.src for i in images}) == 1
    assert images[0].src in doc.resources and doc.resources[images[0].src] is PNG
    assert not any(i.src == "a.png" for i in images)
    assert "image b.png left out: private address refused" in doc.warnings
    assert "image c.png left out: not fetched" in doc.warnings
    assert "image bad.png left out: not fetched" in doc.warnings
    raw = next(b for b in doc.blocks if isinstance(b, RawHtml)).html
    assert f'src="{images[0].src}"' in raw and "bad.png" not in raw and "Bad &amp; gone" in raw
    texts = plain_text(doc.blocks)
    assert "li" in texts and "gone" in texts  # alt text replaces the left-out images


def test_attach_images_decodes_data_uris_and_keeps_existing_resources():
    payload = base64.b64encode(b"GIF89a-fake").decode()
    doc = read_markdown(f"![d](data:image/gif;base64,{payload}) ![k](key1) "
                        "![broken](data:image/png;base64,@@@)\n")
    doc.resources["key1"] = PNG
    attach_images(doc, {})
    imgs = [n for n in doc.blocks[0].children if isinstance(n, Image)]
    assert len(imgs) == 2
    assert doc.resources[imgs[0].src].data == b"GIF89a-fake"
    assert doc.resources[imgs[0].src].mime == "image/gif"
    assert imgs[1].src == "key1"
    assert any("left out: not a readable data: image" in w for w in doc.warnings)


def _all_nodes(doc):
    from dataclasses import fields, is_dataclass

    out = []
    stack = list(doc.blocks) + [b for n in doc.notes.values() for b in n]
    while stack:
        node = stack.pop()
        out.append(node)
        if is_dataclass(node):
            for f in fields(node):
                v = getattr(node, f.name)
                if isinstance(v, list):
                    stack.extend(v)
    return out


def test_docling_markdown_ground_truth_parses():
    folder = CORPUS / "docling" / "docx" / "groundtruth"
    if not folder.is_dir():
        pytest.skip("../shared/corpus not present (a user's clone has none)")
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        doc = read_markdown(text)
        if text.strip():
            assert doc.blocks, path.name
        if "|---" in text or "| ---" in text:
            assert any(isinstance(b, Table) for b in _all_nodes(doc)), path.name
        assert "<!-- image -->" not in plain_text(doc.blocks)
