"""Markdown writer, tested by round trip: marko (GFM) must read back the structure we wrote."""

from __future__ import annotations

import html

import marko
import pytest
from lxml import html as lxml_html

from render_pool.engine.common.writing import table_grid
from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.model import (
    Anchor,
    Code,
    CodeBlock,
    Document,
    Emph,
    Heading,
    Image,
    LineBreak,
    Link,
    ListBlock,
    ListItem,
    Math,
    MathBlock,
    NoteRef,
    Paragraph,
    Placeholder,
    RawHtml,
    Resource,
    Strike,
    Strong,
    Table,
    TableCell,
    TableRow,
    Text,
)
from tests.model_samples import NASTY, PNG, P, cell, full_document, rich_table, simple_table
from tests.tree_walk import marko_nodes


def parse(text: str):
    return marko.Markdown(extensions=["gfm", "footnote"]).parse(text)


def render(text: str) -> str:
    return marko.Markdown(extensions=["gfm", "footnote"]).convert(text)


def kind(node) -> str:
    return type(node).__name__


def find(node, name: str) -> list:
    return [n for n in marko_nodes(node) if kind(n) == name]


def text(node) -> str:
    """Visible text of a marko node (escapes resolved)."""
    children = getattr(node, "children", None)
    if isinstance(children, str):
        # marko keeps entity references (&#96;) undecoded in RawText; render would decode them
        return html.unescape(children) if kind(node) == "RawText" else children
    if kind(node) == "LineBreak":
        return "\n"
    if isinstance(children, list):
        return "".join(text(c) for c in children)
    return ""


def blocks(tree) -> list:
    return [c for c in tree.children if kind(c) != "BlankLine"]


# ----------------------------------------------------------------- structure
def test_headings_levels_and_text():
    md = write_markdown(full_document())
    heads = find(parse(md), "Heading")
    assert [(h.level, text(h).replace('<a id="lists-anchor"></a>', "")) for h in heads] == [
        (1, "Main Title"), (2, "Lists"), (2, "Tables"), (3, "Code"), (4, "Lists")]
    assert find(heads[0], "Emphasis")
    # a heading whose anchor is not its slug carries the anchor as an id
    assert '<a id="lists-anchor"></a>' in md


def test_heading_ending_with_hash_keeps_it():
    md = write_markdown(Document([Heading(2, [Text("C#")]), Heading(1, [Text("#tag #")])]))
    heads = find(parse(md), "Heading")
    assert [text(h) for h in heads] == ["C#", "#tag #"]


def test_emphasis_kinds_survive():
    md = write_markdown(full_document())
    tree = parse(md)
    para = blocks(tree)[1]
    assert text(find(para, "Emphasis")[0]) == "em"
    assert text(find(para, "StrongEmphasis")[0]) == "strong"
    assert text(find(para, "Strikethrough")[0]) == "gone"
    assert "<u>under</u>" in md and "H<sub>2</sub>O" in md and "x<sup>2</sup>" in md
    assert [text(c) for c in find(para, "CodeSpan")] == ["a`b"]


def test_emphasis_with_edge_spaces_and_neighbours():
    doc = Document([
        P("a", Strong([Text(" spaced ")]), "b"),
        P(Emph([Text("one")]), Emph([Text("two")])),
        P(Strong([Text("bold")]), Emph([Text("italic")])),
        P("word", Strong([Text('"quoted"')]), "word"),
        P(Strong([Emph([Text("both")])])),
    ])
    out = render(write_markdown(doc))
    root = lxml_html.fragment_fromstring(out, create_parent="div")
    ps = root.findall("p")
    assert ps[0].findtext("strong") == "spaced"
    assert ps[0].text_content() == "a spaced b"
    assert ps[1].findtext("em") == "onetwo"
    assert ps[2].findtext("strong") == "bold" and ps[2].findtext("em") == "italic"
    assert ps[3].findtext("strong") == '"quoted"'
    assert ps[4].xpath("string(.//strong//em | .//em//strong)") == "both"


def test_lists_nesting_numbering_and_tasks():
    tree = parse(write_markdown(full_document()))
    lists = [b for b in blocks(tree) if kind(b) == "List"]
    assert len(lists) == 2
    bullets, numbered = lists
    assert not bullets.ordered and numbered.ordered and numbered.start == 5
    items = bullets.children
    assert [text(i.children[0]).strip() for i in items] == ["first", "second", "done", "todo"]
    nested = [c for c in items[1].children if kind(c) == "List"]
    assert nested and nested[0].ordered and nested[0].start == 3
    assert [text(i) for i in nested[0].children] == ["sub one", "sub two"]
    assert getattr(items[2].children[0], "checked", None) is True
    assert getattr(items[3].children[0], "checked", None) is False


def test_adjacent_lists_stay_separate():
    doc = Document([
        ListBlock(False, [ListItem([P("a")])]), ListBlock(False, [ListItem([P("b")])]),
        ListBlock(True, [ListItem([P("c")])], start=7), ListBlock(True, [ListItem([P("d")])]),
    ])
    lists = [b for b in blocks(parse(write_markdown(doc))) if kind(b) == "List"]
    assert [(lst.ordered, text(lst)) for lst in lists] == [
        (False, "a"), (False, "b"), (True, "c"), (True, "d")]
    assert lists[2].start == 7


def test_loose_items_with_code_and_paragraphs():
    item = ListItem([P("para one"), P("para two"), CodeBlock("x = 1", "py")])
    doc = Document([ListBlock(True, [item, ListItem([P("next")])], start=10)])
    tree = parse(write_markdown(doc))
    lst = blocks(tree)[0]
    assert lst.start == 10 and len(lst.children) == 2
    first = [c for c in lst.children[0].children if kind(c) != "BlankLine"]
    assert [kind(c) for c in first] == ["Paragraph", "Paragraph", "FencedCode"]
    assert first[2].lang == "py"


def test_pipe_table_cells_spans_and_escapes():
    md = write_markdown(Document([simple_table()]))
    tree = parse(md)
    caption, table = blocks(tree)[:2]
    assert text(caption) == "Table 1: sample"
    rows = [[text(c) for c in r.children] for r in table.children]
    assert rows == [
        ["Name", "Value", "Value"],  # colspan repeated
        ["alpha", "a|b", "x|y"],
        ["alpha", "bold", "two<br>lines"],  # rowspan repeated; <br> is inline HTML
    ]
    assert all(c.header for c in table.children[0].children)
    assert find(table.children[1].children[2], "CodeSpan")


def test_table_without_header_rows_promotes_first_row():
    t = Table(rows=[TableRow([cell("a"), cell("b")]), TableRow([cell("c"), cell("d")])])
    table = blocks(parse(write_markdown(Document([t]))))[0]
    assert kind(table) == "Table"
    assert [[text(c) for c in r.children] for r in table.children] == [["a", "b"], ["c", "d"]]


def test_multi_paragraph_cell_joined_with_br():
    t = Table(rows=[TableRow([cell("h")]), TableRow([TableCell([P("one"), P("two")])])],
              header_rows=1)
    md = write_markdown(Document([t]))
    assert "| one<br>two |" in md


def test_rich_table_falls_back_to_html():
    md = write_markdown(Document([rich_table(), P("after")]))
    tree = parse(md)
    kinds = [kind(b) for b in blocks(tree)]
    assert kinds == ["HTMLBlock", "Paragraph"]
    root = lxml_html.fragment_fromstring(md.split("\n\nafter")[0])
    assert root.tag == "table"
    assert root.xpath("count(.//table)") == 1  # the nested table
    assert [li.text for li in root.iter("li")] == ["item a", "item b"]


def test_html_table_with_blank_lines_in_code_stays_one_block():
    t = Table(rows=[TableRow([TableCell([CodeBlock("a\n\n\nb")])])])
    md = write_markdown(Document([t, P("after")]))
    assert [kind(b) for b in blocks(parse(md))] == ["HTMLBlock", "Paragraph"]
    root = lxml_html.fragment_fromstring(md.split("\n\nafter")[0])
    assert root.findtext(".//code") == "a\n\n\nb"


def test_links_images_and_titles():
    tree = parse(write_markdown(full_document(), lambda src: f"https://cdn.test/{src}.png"))
    link = find(tree, "Link")[0]
    assert link.dest == "https://example.com/a_b" and link.title == 'say "hi"'
    assert text(link) == "site"
    image = find(tree, "Image")[0]
    assert image.dest == "https://cdn.test/img1.png" and image.title == "pic title"
    assert text(image) == "a pic"
    internal = [n for n in find(tree, "Link") if n.dest == "#bm1"]
    assert internal and text(internal[0]) == "back"


def test_link_targets_with_spaces_and_parens():
    doc = Document([P(Link([Text("x")], "a b(c).html", "t")), P(Link([Text("y")], "u<v>"))])
    links = find(parse(write_markdown(doc)), "Link")
    assert [(lk.dest, lk.title) for lk in links] == [("a b(c).html", "t"), ("u<v>", None)]


def test_default_images_are_data_uris():
    doc = Document([P(Image("k", alt="dot"))], resources={"k": Resource(PNG, "image/png")})
    image = find(parse(write_markdown(doc)), "Image")[0]
    assert image.dest.startswith("data:image/png;base64,")


def test_code_block_language_and_long_fence():
    tree = parse(write_markdown(full_document()))
    code = find(tree, "FencedCode")[0]
    assert code.lang == "python"
    assert text(code) == "print('```')\nx = 1\n"


def test_inline_code_with_backticks():
    for sample in ["a`b", "``x``", "`", " lead", "x|y"]:
        tree = parse(write_markdown(Document([P(Code(sample))])))
        assert [text(c) for c in find(tree, "CodeSpan")] == [sample]


def test_footnotes_numbered_and_defined_at_end():
    md = write_markdown(full_document())
    tree = parse(md)
    refs = find(tree, "FootnoteRef")
    assert [r.label for r in refs] == ["1", "2"]
    defs = find(tree, "FootnoteDef")
    assert [d.label for d in defs] == ["1", "2"]
    assert text(defs[0]).strip() == "First note with emphasis."
    assert find(defs[0], "Emphasis")
    assert "Second paragraph." in text(defs[1])
    assert md.index("[^1]:") > md.index("#### Lists")


def test_unreferenced_note_still_written():
    doc = Document([P("body")], notes={"lonely": [P("orphan note")]})
    assert "[^1]: orphan note" in write_markdown(doc)


def test_math_placeholder_anchor_rawhtml():
    md = write_markdown(full_document())
    assert "$a^2+b^2$" in md and "$$E=mc^2$$" in md
    assert "$$\n\\int_0^1 x\\,dx\n$$" in md
    assert "[unsupported: SmartArt]" in text(parse(md))
    assert '<a id="bm1"></a>' in md
    assert '<div class="raw">raw <b>html</b></div>' in md


def test_hard_break():
    tree = parse(write_markdown(Document([P("one", LineBreak(), "two", LineBreak())])))
    para = blocks(tree)[0]
    assert [kind(c) for c in para.children] == ["RawText", "LineBreak", "RawText"]
    assert para.children[1].soft is False


# ----------------------------------------------------------------- escaping
@pytest.mark.parametrize("nasty", NASTY)
def test_nasty_text_round_trips_as_one_paragraph(nasty):
    tree = parse(write_markdown(Document([P(nasty)])))
    got = blocks(tree)
    assert [kind(b) for b in got] == ["Paragraph"], write_markdown(Document([P(nasty)]))
    assert text(got[0]) == nasty.strip()
    assert not find(got[0], "Emphasis") and not find(got[0], "StrongEmphasis")
    assert not find(got[0], "Link") and not find(got[0], "Image")
    assert not find(got[0], "InlineHTML") and not find(got[0], "CodeSpan")


def test_nasty_text_everywhere():
    nasty = "*a* _b_ [c](d) <e> `f` | g \\ h ~~i~~ &amp;"
    doc = Document([
        Heading(2, [Text(nasty)]),
        ListBlock(False, [ListItem([P(nasty)])]),
        Table(rows=[TableRow([cell(nasty)]), TableRow([cell("x")])], header_rows=1),
        P(Link([Text(nasty)], "https://e.test")),
        P(Strong([Text(nasty)])),
    ])
    tree = parse(write_markdown(doc))
    got = blocks(tree)
    assert text(got[0]) == nasty
    assert text(got[1].children[0]) == nasty
    assert text(got[2].children[0].children[0]) == nasty
    assert text(find(got[3], "Link")[0]) == nasty
    assert text(find(got[4], "StrongEmphasis")[0]) == nasty


def test_table_grid_layout():
    grid = table_grid(simple_table())
    assert [[s[2] is not None for s in row] for row in grid] == [[True] * 3] * 3
    assert grid[0][1][:2] == grid[0][2][:2] == (0, 1)
    assert grid[2][0][:2] == (1, 0)


def test_everything_else_parses():
    doc = Document([
        MathBlock("a\\\\b"), RawHtml("<p>x</p>"), P(Placeholder("OLE"), Anchor("z")),
        P(NoteRef("q"), Math("x", display=True), Strike([Text("s")])),
        P(Image("https://e.test/i.png", alt="[x]", title='t "q"')),
    ], notes={"q": [P("n")]})
    md = write_markdown(doc)
    tree = parse(md)
    img = find(tree, "Image")[0]
    assert text(img) == "[x]" and img.title == 't "q"'
    assert find(tree, "FootnoteDef")
    assert write_markdown(Document()) == ""
    assert isinstance(write_markdown(Document([Paragraph([])])), str)


def _random_inlines(rng, depth: int = 0) -> list:
    pool = ["a", "b", " ", "*", "_", "`", "[", "]", "(", ")", "<", ">", "#", "1.", "\\", "|",
            "~", "!", "&amp;", "$", '"', "-", "x y", ".", "\u00e9", "\u4e2d"]
    out = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.55 or depth > 2:
            out.append(Text("".join(rng.choice(pool) for _ in range(rng.randint(1, 5)))))
        elif r < 0.7:
            out.append(Emph(_random_inlines(rng, depth + 1)))
        elif r < 0.85:
            out.append(Strong(_random_inlines(rng, depth + 1)))
        elif r < 0.93:
            out.append(Strike(_random_inlines(rng, depth + 1)))
        else:
            out.append(Code("".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))))
    return out


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_random_inline_text_round_trips():
    """Whatever the mix of emphasis and special characters, the visible text survives."""
    import random
    import re

    from render_pool.engine.model import plain_text

    rng = random.Random(20240501)
    for _ in range(2000):
        nodes = _random_inlines(rng)
        md = write_markdown(Document([Paragraph(nodes)]))
        root = lxml_html.fragment_fromstring(render(md) or "<p></p>", create_parent="div")
        got = re.sub(r"\s+", " ", root.text_content()).strip()
        want = re.sub(r"\s+", " ", plain_text(nodes)).strip()
        assert got == want, f"{nodes!r}\n{md}"


def test_repeated_headings_keep_their_text_free_of_anchors_a_renderer_would_give():
    # readers number a repeated heading's id the way GitHub does (intro, intro-1): those ids
    # come with the heading, so no <a id> goes into its text; an id of another shape still does
    doc = Document(blocks=[
        Heading(level=2, children=[Text("Results")], anchor="results"),
        Heading(level=2, children=[Text("Results")], anchor="results-1"),
        Heading(level=2, children=[Text("Results")], anchor="results-2"),
        Heading(level=2, children=[Text("Results")], anchor="results-summary"),
    ])
    md = write_markdown(doc)
    assert md.split("\n\n")[:3] == ["## Results"] * 3
    assert '## <a id="results-summary"></a>Results' in md
    assert md.count("<a id=") == 1
