"""The Markdown writer's short paths write what its general paths write (issue 34, item 1).

Most paragraphs need no normalising (:func:`_normal_texts`) and most tables hold a text per
cell (:func:`_cell_texts`); the renderer writes those in one pass. These tests write random
inline lists and tables both ways, each with a renderer of its own (anchors, notes and
images are written once per renderer), and compare.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from render_pool.engine.markdown.render import (
    _BODY,
    _HEADING,
    _NEWLINES,
    _TABLE_CELL,
    _TEXT_SPECIAL,
    MarkdownRenderer,
    _cell_texts,
    _escape_special,
    _escape_text,
    _needs_escape,
    _normal_texts,
)
from render_pool.engine.model import (
    Anchor,
    Code,
    Document,
    Emph,
    Image,
    Inline,
    LineBreak,
    Link,
    NoteRef,
    Paragraph,
    Strike,
    Strong,
    Subscript,
    Table,
    TableCell,
    TableRow,
    Text,
    Underline,
)

# words with the characters escaping, emphasis flanking and line starts care about
_WORDS = ["plan", "a", " ", "  ", "", "x*y", "_u_", "[b]", "<i>", "p|q", "$5", "&amp;",
          "R&D", "`t`", "~s~", "back\\", "\n", "\r\n", "#", "1.", "- ", '"q"', "(", ")",
          ".", ",", "é", "—", "!", "**"]


def _text(rng: random.Random) -> Text:
    return Text("".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 4))))


def _inline(rng: random.Random, depth: int) -> Inline:
    roll = rng.random()
    if roll < 0.4 or depth > 2:
        return _text(rng)
    kids = [_inline(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.7:  # most emphasis: one text, often trimmed
        body: list[Inline] = [Text(rng.choice(["w", "plan", "x*", "é", "(a)"]))] \
            if roll < 0.6 else kids
        emphasis: list[Callable[[list[Inline]], Inline]] = [Emph, Strong, Strike]
        return rng.choice(emphasis)(body)
    makers: list[Callable[[], Inline]] = [
        lambda: Code(rng.choice(["f()", "a`b", " x ", ""])),
        lambda: Link([Text(rng.choice(["site", " s", "x"]))] if roll < 0.8 else kids,
                     rng.choice(["https://e.com/a?b=1&c=2", "javascript:x", "a b"])),
        lambda: NoteRef(rng.choice(["n1", "n2"])),
        lambda: LineBreak(),
        lambda: Anchor(rng.choice(["a1", "a2", ""])),
        lambda: Image("media/a.png", rng.choice(["alt", "*a*", ""])),
        lambda: Underline([_text(rng)] if roll < 0.9 else kids),
        lambda: Subscript([_text(rng)]),
    ]
    return rng.choice(makers)()


def _inlines(rng: random.Random) -> list[Inline]:
    return [_inline(rng, 0) for _ in range(rng.randint(1, 7))]


def _renderer() -> MarkdownRenderer:
    return MarkdownRenderer(Document([]), lambda src: src)


def test_normal_inlines_write_what_the_general_path_writes() -> None:
    rng = random.Random(34)
    compared = 0
    for _ in range(4000):
        nodes = _inlines(rng)
        texts = _normal_texts(nodes)
        if texts is None:
            continue
        for ctx in (_BODY, _HEADING, _TABLE_CELL):
            general = _renderer()._normalized_inlines(nodes, ctx)
            assert _renderer()._normal_inlines(nodes, ctx, plain=False) == general, nodes
            if not any(ch in "".join(texts) for ch in "`~\\*_[]<|$&\r\n"):
                assert _renderer()._normal_inlines(nodes, ctx, plain=True) == general
            assert _renderer().inlines(nodes, ctx) == general
        compared += 1
    assert compared > 1000  # the generator reaches the short path often


def test_normal_texts_refuses_what_normalising_changes() -> None:
    assert _normal_texts([Text("a"), Emph([Text("b")]), Text("c")]) == ["a", "b", "c"]
    assert _normal_texts([Emph([Text(" b")])]) is None  # edge space hoisted out
    assert _normal_texts([Emph([Text("a")]), Text(""), Emph([Text("b")])]) is None  # merged
    assert _normal_texts([Code("a"), Code("b")]) is None
    assert _normal_texts([Link([Text("a"), Text("b")], "u")]) is None
    assert _normal_texts([Underline([Emph([Text("a")])])]) is None


def _cell(rng: random.Random) -> TableCell:
    roll = rng.random()
    if roll < 0.7:
        return TableCell([Paragraph([_text(rng)])])
    if roll < 0.75:
        return TableCell([])
    if roll < 0.8:
        return TableCell([Paragraph([])])
    if roll < 0.85:
        return TableCell([Paragraph([_text(rng)])], rowspan=2)
    return TableCell([Paragraph(_inlines(rng))])


def test_text_tables_write_what_the_grid_path_writes() -> None:
    rng = random.Random(6)
    compared = 0
    for _ in range(1500):
        rows = [TableRow([_cell(rng) for _ in range(rng.randint(0, 4))])
                for _ in range(rng.randint(1, 4))]
        table = Table(rows, caption=[Text("Cap")] if rng.random() < 0.2 else [])
        if _cell_texts(table) is None:
            continue
        general = _renderer()._grid_table(table)
        assert _renderer().table(table) == general, table
        compared += 1
    assert compared > 300


def test_a_text_escaping_changes_is_a_text_the_check_catches() -> None:
    """The short paths (and :func:`_escape_text` itself) skip the escaping substitutions
    for texts :func:`_needs_escape` passes: any text those substitutions change, it
    catches."""
    for code in range(0x3000):
        for text in (chr(code), f"a{chr(code)}amp;", f"{chr(code)}#96;"):
            if _TEXT_SPECIAL.sub(_escape_special, _NEWLINES.sub(" ", text)) != text:
                assert _needs_escape(text), repr(text)
                assert _escape_text(text) != text, repr(text)
