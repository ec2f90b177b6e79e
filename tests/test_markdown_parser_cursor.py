"""The Markdown reader's parser (marko's ``Parser.parse`` with a cheaper cursor, issue 34) must
read every document exactly as marko's own parser does. Why a test: the reader repeats marko
2.2's ``Parser.parse`` to swap the cursor class, so a marko upgrade that changes either must
show up here rather than as a silently different document."""

from __future__ import annotations

from pathlib import Path

import marko
import pytest
from marko.parser import Parser

from render_pool.engine.markdown import reader
from render_pool.engine.model import to_dict

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent

HAND_MADE = [
    "# Title\n\nPara with *em*, **strong**, `code`, [link](http://x.test) and $x^2$.\n",
    "> quote\n> > nested\n\n- a\n  - b\n    1. c\n\n```python\nprint(1)\n```\n",
    "| a | b |\n|:--|--:|\n| 1 | 2 |\n\nnote[^n]\n\n[^n]: the note with ![i](i.png)\n",
    "    indented code\n\n***\n\nSetext\n======\n\n<div>raw *html*</div>\n",
    "- [ ] task\n- [x] done\n\nhttps://autolink.test and ~~strike~~\n",
    "---\ntitle: T\n---\n1) one\n2) two\n\n[ref]: http://r.test\n[ref] link\n",
]


def _samples() -> list[tuple[str, str]]:
    found = [*sorted(DATA.rglob("*.md")), ROOT / "README.md"]
    named = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in found]
    return named + [(f"hand-made {i}", text) for i, text in enumerate(HAND_MADE)]




def test_the_reader_uses_its_own_cursor() -> None:
    parser = reader._parser()
    parser.parse("x")  # marko builds its parser (with the extensions' mixins) on first use
    assert isinstance(parser.parser, reader._Parser)


@pytest.mark.parametrize(("name", "text"), _samples(), ids=lambda v: v if len(v) < 60 else "")
def test_documents_read_as_marko_reads_them(name: str, text: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ours = to_dict(reader.read_markdown(text))
    sources = reader.markdown_image_sources(text)
    stock = marko.Markdown(parser=Parser, extensions=["gfm", "footnote", reader._MATH])
    monkeypatch.setattr(reader, "_PARSER", stock)
    assert to_dict(reader.read_markdown(text)) == ours, name
    assert reader.markdown_image_sources(text) == sources, name
