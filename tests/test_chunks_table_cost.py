"""Chunks cost in proportion to the input (the guide: every scan of input linear in its
size), counted here rather than timed:

- a long table: each part is written in the form of the whole table (pipe or HTML), and
  that form was decided again for every part by looking at every cell of the whole table
  (a 6,199-row sheet took minutes); now once per table;
- a long word (an embedded image's data URI, a long link) cut into pieces of the budget:
  each piece was found by counting the whole rest of the word, shrinking it step by step;
  now by growing and bisecting from the budget's size."""

from __future__ import annotations

import random
import string

import pytest

from render_pool.engine.chunks import tables, tokens, units, writer
from render_pool.engine.chunks.writer import chunk_document
from render_pool.engine.markdown import render
from render_pool.engine.model import (
    Document,
    ListBlock,
    ListItem,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
)
from render_pool.engine.options import WriterOptions


def _cell(text: str) -> TableCell:
    return TableCell([Paragraph([Text(text)])])


def _table(rows: int, *, html: bool = False) -> Table:
    body = [TableRow([_cell(f"r{r}c{c}") for c in range(4)]) for r in range(rows)]
    if html:  # a list in a cell: the table is written as HTML
        body[0].cells[0] = TableCell([ListBlock(False, [ListItem([Paragraph([Text("x")])])])])
    return Table([TableRow([_cell(f"h{c}") for c in range(4)]), *body], 1)


@pytest.fixture
def form_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the cells of every table ``pipe_ok`` is asked about, under whichever chunks
    module asks."""
    looked: list[int] = [0]
    original = render.pipe_ok

    def counting(t: Table) -> bool:
        looked[0] += sum(len(row.cells) for row in t.rows)
        return original(t)

    for module in (tables, units, writer):
        if hasattr(module, "pipe_ok"):
            monkeypatch.setattr(module, "pipe_ok", counting)
    return looked


@pytest.mark.parametrize("html", [False, True], ids=["pipe", "html"])
def test_a_tables_form_is_decided_once_whatever_its_length(form_checks: list[int],
                                                           html: bool) -> None:
    table = _table(2000, html=html)
    chunks = chunk_document(Document(blocks=[table]), options=WriterOptions(chunk_tokens=64))
    assert len(chunks) > 100  # the table is cut into many parts
    cells = sum(len(row.cells) for row in table.rows)
    assert form_checks[0] <= 2 * cells, (form_checks[0], cells)


def test_every_row_is_in_the_chunks_once() -> None:
    table = _table(600)
    chunks = chunk_document(Document(blocks=[table]), options=WriterOptions(chunk_tokens=64))
    text = "\n".join(c["text"] for c in chunks)
    for r in range(600):
        assert text.count(f"| r{r}c0 |") == 1, r


def test_html_table_parts_stay_html() -> None:
    chunks = chunk_document(Document(blocks=[_table(300, html=True)]),
                            options=WriterOptions(chunk_tokens=64))
    assert len(chunks) > 5
    assert all("<table>" in c["text"] for c in chunks)


def test_a_long_word_is_cut_at_a_cost_linear_in_its_length(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "+/"
    word = "".join(rng.choice(alphabet) for _ in range(400_000))
    counted = [0]

    def counting(text: str) -> int:
        counted[0] += len(text)
        return tokens.count_chars(text)

    monkeypatch.setitem(tokens.TOKENIZERS, "chars", counting)
    chunks = chunk_document(Document(blocks=[Paragraph([Text(word)])]),
                            options=WriterOptions(chunk_tokens=256, chunk_tokenizer="chars"))
    assert "".join(c["text"] for c in chunks) == word  # every character once, in order
    assert all(tokens.count_chars(c["text"]) <= 256 for c in chunks)
    assert counted[0] <= 64 * len(word), counted[0] / len(word)
