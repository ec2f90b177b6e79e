"""Block entries of a DOCX container, and their assembly into model blocks.

Why: Word has no list, quote or code-block containers; it has paragraphs with numbering or a
style. The DOCX reader first lists what each paragraph is (an entry), then this module groups
consecutive entries into lists (by level and numbering instance), block quotes and code
blocks, and attaches block-level bookmarks to the block that follows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from render_pool.engine.model import (
    Anchor,
    Block,
    BlockQuote,
    CodeBlock,
    Heading,
    ListBlock,
    ListItem,
    Location,
    Paragraph,
)
from render_pool.engine.provenance import locate, merged


@dataclass(slots=True)
class BlockEntry:
    """A block that stands as it is."""

    block: Block


@dataclass(slots=True)
class AnchorEntry:
    """A bookmark between blocks: it names the next block."""

    name: str


@dataclass(slots=True)
class CodeEntry:
    """One line (paragraph) of a code block; consecutive lines join."""

    text: str
    prov: list[Location] = field(default_factory=list)


@dataclass(slots=True)
class QuoteEntry:
    """A paragraph in a quote style; consecutive ones share a block quote."""

    paragraph: Paragraph


@dataclass(slots=True)
class ItemEntry:
    """A list paragraph: its level, the list it belongs to (``key``), whether it is ordered,
    its start value, its blocks and its checkbox state (None when it has none)."""

    level: int
    key: str
    ordered: bool
    start: int
    blocks: list[Block]
    checked: bool | None


Entry = BlockEntry | AnchorEntry | CodeEntry | QuoteEntry | ItemEntry


def assemble(entries: list[Entry], bookmark_heading: dict[str, str]) -> list[Block]:
    """The blocks of ``entries``; a bookmark before a heading is recorded in
    ``bookmark_heading`` (bookmark name -> heading anchor) for internal links."""
    if len(entries) == 1 and type(entries[0]) is BlockEntry:  # a cell's or note's paragraph
        return [entries[0].block]
    out: list[Block] = []
    stack: list[tuple[int, str, ListBlock]] = []
    anchors: list[str] = []
    open_kind: type | None = None
    for e in entries:
        if type(e) is BlockEntry and not anchors:  # most entries: the block as it is
            stack.clear()
            out.append(e.block)
            open_kind = BlockEntry
            continue
        if isinstance(e, AnchorEntry):
            anchors.append(e.name)
            continue
        if anchors:  # block-level bookmark: attach to the next paragraph-like block
            _attach_anchors(e, anchors, bookmark_heading)
            anchors = []
        if isinstance(e, ItemEntry):
            while stack and stack[-1][0] > e.level:
                stack.pop()
            if stack and stack[-1][0] == e.level and (
                    stack[-1][1] != e.key or stack[-1][2].ordered != e.ordered):
                stack.pop()
            if not stack or stack[-1][0] < e.level:
                lb = ListBlock(ordered=e.ordered, items=[], start=e.start if e.ordered else 1)
                if stack and stack[-1][2].items:
                    stack[-1][2].items[-1].blocks.append(lb)
                else:
                    out.append(lb)
                stack.append((e.level, e.key, lb))
            stack[-1][2].items.append(ListItem(blocks=e.blocks, checked=e.checked))
            open_kind = None
            continue
        stack.clear()
        if isinstance(e, CodeEntry):
            if open_kind is CodeEntry and isinstance(out[-1], CodeBlock):
                out[-1].text += "\n" + e.text
                out[-1].prov = merged(out[-1].prov, e.prov)
            else:
                out.append(CodeBlock(e.text, prov=list(e.prov)))
        elif isinstance(e, QuoteEntry):
            if open_kind is QuoteEntry and isinstance(out[-1], BlockQuote):
                out[-1].blocks.append(e.paragraph)
            else:
                out.append(BlockQuote([e.paragraph]))
        else:
            out.append(e.block)
        open_kind = type(e)
    if anchors:
        out.append(Paragraph([Anchor(a) for a in anchors]))
    return out


def locate_entries(entries: list[Entry], where: Location) -> None:
    """Give the blocks of ``entries`` that have no location ``where`` (a code line keeps it
    for the code block it joins)."""
    for e in entries:
        if type(e) is BlockEntry:  # most entries; what provenance.locate does, in place
            if not e.block.prov:
                e.block.prov = [where]
        elif isinstance(e, QuoteEntry):
            locate([e.paragraph], where)
        elif isinstance(e, ItemEntry):
            locate(e.blocks, where)
        elif isinstance(e, CodeEntry) and not e.prov:
            e.prov = [where]


def _attach_anchors(entry: Entry, anchors: list[str], bookmark_heading: dict[str, str]
                    ) -> None:
    target: object = None
    if isinstance(entry, ItemEntry):
        first = entry.blocks[0] if entry.blocks else None
        target = first if isinstance(first, Paragraph) else None
    elif isinstance(entry, BlockEntry):
        target = entry.block
    elif isinstance(entry, QuoteEntry):
        target = entry.paragraph
    if isinstance(target, Heading):
        for a in anchors:
            bookmark_heading.setdefault(a, target.anchor)
    elif isinstance(target, Paragraph):
        target.children[:0] = [Anchor(a) for a in anchors]
