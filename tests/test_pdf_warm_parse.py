"""The Markdown reader's quicker inline scan and line-prefix reuse (issue 34, item 3) read every
document as marko's stock parser does. A guard of identical output on inputs that exercise what
the short cuts touch: escapes, code spans and backtick runs, brackets, emphasis runs, links and
images, and lines inside lists, quotes and their mixes (tabs, lazy lines, fences)."""

from __future__ import annotations

import marko
import pytest
from marko.parser import Parser

from render_pool.engine.markdown import reader
from render_pool.engine.model import to_dict

INLINE = [
    r"a \*not em\* and \\*em*\\ and \` tick and trailing \\",
    "``code with ` inside`` and `a` `` ` `` and ```unclosed and `x``y`",
    "*a **b** c* __d _e_ f__ ***g*** _x*y_z* **a*b**c",
    "[link](http://x.test 'T') ![img](i.png \"t\") [ref][r] [r] [collapsed][] [[nested]](u)",
    "[a *b [c](d) e*](f) ![a [b](c)](d) ] stray ] [ open [",
    "![x]( <a b> ) [x](<> ) [not a link] (x) text] [x]\n[r]: http://r.test",
    "_foo_bar_ snake_case_word *foo*bar foo**bar**baz !!! ![ ! [ ]",
    "$x_1 * y_2$ and $$a_b$$ with *em* and `co$de` and \\$5 and $10",
    "line ends with backslash\\\nnext `code\nspan` and *em\nover lines*",
    "<b>bold *em*</b> <span>`c`</span> <a href='x'>[l](y)</a> &amp; &#42;x&#42;",
]
BLOCKS = [
    "- a\n  - b `c`\n    - d *e*\n\n      para in d\n\n  back in b?\n- f",
    "> q1\n> > q2 *em*\n> lazy\ncontinuation\n>\n> - list in quote\n>   more\n> ```\n> fence\n> ```",
    "1. one\n   ```python\n   code\n   ```\n2. two\n\n   > quote in item\n   > more\n3) other",
    "- a\n\t- tab nested\n\t\tdeep\n-\tb\n\n    indented code\n\n* [ ] task\n* [x] done",
    "> - a\n>   - b\n>     > c\n>     > d\n> e\n\n| a | `|` |\n|---|---|\n| *x* | [y](z) |",
    "  - two-space\n    1. nested\n       - deeper `c`\n         text\n\n       para\n\n10. ten\n    x",
    "- a\n\n  ```\n  fenced\n\n  still\n  ```\n- b\n  ~~~\n  tilde\n  ~~~\n\n---\n- c",
    "> # heading in quote\n> ***\n> para\n>> nested no space\n\nSetext in list?\n- x\n  ===",
]


def _stock() -> marko.Markdown:
    return marko.Markdown(parser=Parser, extensions=["gfm", "footnote", reader._MATH])


@pytest.mark.parametrize("text", INLINE + BLOCKS + [
    "\n\n".join(INLINE), "\n\n".join(BLOCKS), "- " + "\n  - ".join(INLINE),
    "> " + "\n> ".join(INLINE)])
def test_documents_read_as_marko_reads_them(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = to_dict(reader.read_markdown(text))
    monkeypatch.setattr(reader, "_PARSER", _stock())
    assert to_dict(reader.read_markdown(text)) == ours


def _tree(element: object) -> object:
    """A marko element as nested plain data: its type, its fields and its children."""
    if isinstance(element, list):
        return [_tree(child) for child in element]
    if isinstance(element, dict):
        return {key: _tree(value) for key, value in element.items()}
    if not hasattr(element, "__dict__"):
        return element
    fields = {k: _tree(v) for k, v in vars(element).items() if not k.startswith("_")}
    return type(element).__name__, fields


@pytest.mark.parametrize("text", INLINE + BLOCKS)
def test_the_parse_tree_is_the_same(text: str) -> None:
    """Both parse trees whole (every element, field and source span), not only what the model
    keeps."""
    ours = _tree(reader._parser().parse(text))
    assert ours == _tree(_stock().parse(text))
    assert ours != _tree(_stock().parse(text + " x"))  # the comparison sees a difference
