"""The generated documents' model: a few block kinds and inline spans, written once as the
truth Markdown (:mod:`bench.generated.markdown`) and once as pandoc's AST
(:mod:`bench.generated.pandoc_ast`), from which every writer starts. Keeping one model
and two small renderers means the Markdown and the written documents cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# an inline span: (kind, text) or ("link", text, url); kinds: text, bold, italic, code, note
Span = tuple[str, ...]
Inlines = list[Span]


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    inlines: Inlines


@dataclass
class Item:
    """A list item: its text and an optional nested list."""

    inlines: Inlines
    children: ListBlock | None = None


@dataclass
class ListBlock:
    ordered: bool
    items: list[Item]


@dataclass
class Cell:
    text: str
    colspan: int = 1
    rowspan: int = 1


@dataclass
class Table:
    """A table: one or more header rows (cells may span), plain body rows, a caption."""

    header: list[list[Cell]]
    body: list[list[str]]
    caption: str = ""

    @property
    def merged(self) -> bool:
        """Whether the header spans cells (GFM cannot write it: HTML in the truth)."""
        return len(self.header) > 1 or any(c.colspan > 1 or c.rowspan > 1
                                           for row in self.header for c in row)


@dataclass
class Code:
    language: str
    text: str


@dataclass
class Quote:
    paragraphs: list[Inlines]


Block = Heading | Para | ListBlock | Table | Code | Quote


@dataclass
class Source:
    """One generated document: its name, subject, the table style and column count its
    writers use, and its blocks."""

    name: str
    subject: str
    table_style: str
    columns: int
    blocks: list[Block] = field(default_factory=list)
