"""The truth of a generated source: its Markdown (GFM with footnotes; a table whose header
spans cells is written as HTML, which GFM cannot express and ``bench.fidelity`` scores the
same as a pipe table)."""

from __future__ import annotations

import html
import re

from bench.generated.model import Code, Heading, Inlines, ListBlock, Para, Quote, Source, Table

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text)


def inline_markdown(spans: Inlines, notes: list[str]) -> str:
    """Spans as Markdown; footnote texts are appended to ``notes`` and referenced."""
    out = []
    for span in spans:
        kind, text = span[0], span[1]
        if kind == "bold":
            out.append(f"**{_escape(text)}**")
        elif kind == "italic":
            out.append(f"*{_escape(text)}*")
        elif kind == "code":
            out.append(f"`{text}`")
        elif kind == "link":
            out.append(f"[{_escape(text)}]({span[2]})")
        elif kind == "note":
            notes.append(text)
            out.append(f"[^{len(notes)}]")
        else:
            out.append(_escape(text))
    return "".join(out).strip()


def _list(block: ListBlock, notes: list[str], indent: str = "") -> list[str]:
    lines = []
    for n, item in enumerate(block.items, 1):
        marker = f"{n}. " if block.ordered else "- "
        lines.append(indent + marker + inline_markdown(item.inlines, notes))
        if item.children:
            lines += _list(item.children, notes, indent + " " * len(marker))
    return lines


def _cell(text: str) -> str:
    return _escape(text).replace("\\|", "\\|")


def _table(table: Table) -> str:
    if not table.merged:
        header = [c.text for c in table.header[0]]
        lines = ["| " + " | ".join(_cell(h) for h in header) + " |",
                 "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.body]
        return "\n".join(lines)
    rows = []
    for row in table.header:
        cells = "".join(
            "<th" + (f' colspan="{c.colspan}"' if c.colspan > 1 else "")
            + (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + f">{html.escape(c.text)}</th>"
            for c in row)
        rows.append(f"<tr>{cells}</tr>")
    body = ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in table.body]
    return ("<table>\n<thead>\n" + "\n".join(rows) + "\n</thead>\n<tbody>\n"
            + "\n".join(body) + "\n</tbody>\n</table>")


def to_markdown(source: Source) -> str:
    """The source's truth Markdown."""
    notes: list[str] = []
    parts = []
    for block in source.blocks:
        if isinstance(block, Heading):
            parts.append("#" * block.level + " " + _escape(block.text))
        elif isinstance(block, Para):
            parts.append(inline_markdown(block.inlines, notes))
        elif isinstance(block, ListBlock):
            parts.append("\n".join(_list(block, notes)))
        elif isinstance(block, Table):
            parts.append(_table(block))
            if block.caption:
                parts.append(_escape(block.caption))
        elif isinstance(block, Code):
            parts.append(f"```{block.language}\n{block.text}\n```")
        elif isinstance(block, Quote):
            parts.append("\n>\n".join("> " + inline_markdown(p, notes) for p in block.paragraphs))
    parts += [f"[^{n}]: {_escape(text)}" for n, text in enumerate(notes, 1)]
    return "\n\n".join(parts) + "\n"
