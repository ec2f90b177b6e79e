"""A generated source as pandoc's JSON AST (API 1.22, pandoc 2.17 and later), the input of
every pandoc writer: unlike pandoc's Markdown reader it carries merged header cells and
table captions exactly as the model has them."""

from __future__ import annotations

import json
from typing import Any

from bench.generated.model import Code, Heading, Inlines, ListBlock, Para, Quote, Source, Table

API_VERSION = [1, 22, 2, 1]
_ATTR: list[Any] = ["", [], []]


def _words(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, word in enumerate(text.split(" ")):
        if n:
            out.append({"t": "Space"})
        if word:
            out.append({"t": "Str", "c": word})
    return out


def inlines(spans: Inlines) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for span in spans:
        kind, text = span[0], span[1]
        if kind == "bold":
            out.append({"t": "Strong", "c": _words(text)})
        elif kind == "italic":
            out.append({"t": "Emph", "c": _words(text)})
        elif kind == "code":
            out.append({"t": "Code", "c": [_ATTR, text]})
        elif kind == "link":
            out.append({"t": "Link", "c": [_ATTR, _words(text), [span[2], ""]]})
        elif kind == "note":
            out.append({"t": "Note", "c": [{"t": "Para", "c": _words(text)}]})
        else:
            out.extend(_words(text))
    while out and out[-1]["t"] == "Space":
        out.pop()
    return out


def _list(block: ListBlock) -> dict[str, Any]:
    items = []
    for item in block.items:
        blocks: list[dict[str, Any]] = [{"t": "Plain", "c": inlines(item.inlines)}]
        if item.children:
            blocks.append(_list(item.children))
        items.append(blocks)
    if block.ordered:
        return {"t": "OrderedList", "c": [[1, {"t": "Decimal"}, {"t": "Period"}], items]}
    return {"t": "BulletList", "c": items}


def _cell(text: str, rowspan: int = 1, colspan: int = 1) -> list[Any]:
    return [_ATTR, {"t": "AlignDefault"}, rowspan, colspan,
            [{"t": "Plain", "c": _words(text)}]]


def _table(table: Table) -> dict[str, Any]:
    columns = len(table.body[0])
    # long texts get wide columns, the rest share what is left: short headers wrap
    weights = [3.0 if max(len(row[i]) for row in table.body) > 30 else 1.0
               for i in range(columns)]
    specs = [[{"t": "AlignDefault"}, {"t": "ColWidth", "c": 0.95 * w / sum(weights)}]
             for w in weights]
    head = [[_ATTR, [_cell(c.text, c.rowspan, c.colspan) for c in row]] for row in table.header]
    body = [[_ATTR, [_cell(text) for text in row]] for row in table.body]
    caption = [None, [{"t": "Plain", "c": _words(table.caption)}] if table.caption else []]
    return {"t": "Table", "c": [_ATTR, caption, specs, [_ATTR, head],
                                [[_ATTR, 0, [], body]], [_ATTR, []]]}


def to_pandoc_json(source: Source) -> str:
    """The source as pandoc JSON (``pandoc -f json``)."""
    blocks: list[dict[str, Any]] = []
    for block in source.blocks:
        if isinstance(block, Heading):
            blocks.append({"t": "Header", "c": [block.level, _ATTR, _words(block.text)]})
        elif isinstance(block, Para):
            blocks.append({"t": "Para", "c": inlines(block.inlines)})
        elif isinstance(block, ListBlock):
            blocks.append(_list(block))
        elif isinstance(block, Table):
            blocks.append(_table(block))
        elif isinstance(block, Code):
            classes = [block.language] if block.language else []
            blocks.append({"t": "CodeBlock", "c": [["", classes, []], block.text]})
        elif isinstance(block, Quote):
            blocks.append({"t": "BlockQuote", "c": [{"t": "Para", "c": inlines(p)}
                                                    for p in block.paragraphs]})
    return json.dumps({"pandoc-api-version": API_VERSION, "meta": {}, "blocks": blocks})
