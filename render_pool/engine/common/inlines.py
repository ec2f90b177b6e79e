"""Turning a flat run of formatted pieces into nested inline nodes.

Why: DOCX formatting is flat (each run says bold/italic/...), the document model is a tree
(``Strong([Emph([...])])``). Segments carry a set of formats and an optional link; grouping
consecutive segments by each format in a fixed order builds the smallest sensible tree, and
whitespace at the edge of a formatted group moves outside it (``**a **`` is not Markdown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from render_pool.engine.model import (
    Block,
    Code,
    Emph,
    Inline,
    Link,
    Strike,
    Strong,
    Subscript,
    Superscript,
    Text,
    Underline,
)

ORDER = ("b", "i", "u", "s", "sub", "sup")
WRAP: dict[str, Callable[[list[Inline]], Inline]] = {
    "b": Strong, "i": Emph, "u": Underline, "s": Strike, "sub": Subscript,
    "sup": Superscript}


_FORMATS_FROM = [frozenset(ORDER[k:]) for k in range(len(ORDER) + 1)]  # left at level k


@dataclass(slots=True)
class Seg:
    """One piece of paragraph content with its formatting and enclosing link."""

    node: Inline
    fmt: frozenset[str] = frozenset()
    link: tuple[str, str] | None = None


def merge_texts(nodes: list[Inline]) -> list[Inline]:
    """Join adjacent Text (and adjacent Code) nodes."""
    out: list[Inline] = []
    prev: Inline | None = None  # out[-1]
    empty = False  # whether an empty text went in (a join of two is empty only if both are)
    for n in nodes:  # type() rather than isinstance: Text and Code have no subclasses
        if type(n) is Text:
            if type(prev) is Text:
                out[-1] = prev = Text(prev.text + n.text)
                continue
            if not n.text:
                empty = True
        elif type(n) is Code and type(prev) is Code:
            out[-1] = prev = Code(prev.text + n.text)
            continue
        out.append(n)
        prev = n
    if not empty:
        return out
    return [n for n in out if not (type(n) is Text and n.text == "")]


def _leaves(segs: list[Seg]) -> list[Inline]:
    out: list[Inline] = []
    for s in segs:
        node = s.node
        if type(node) is Text and "code" in s.fmt:
            out.append(Code(node.text))
        else:
            out.append(node)
    return merge_texts(out)


def _peel(inner: list[Inline]) -> tuple[list[Inline], list[Inline], list[Inline]]:
    lead: list[Inline] = []
    trail: list[Inline] = []
    inner = list(inner)
    if inner and isinstance(inner[0], Text):
        t = inner[0].text
        s = t.lstrip()
        if s != t:
            lead = [Text(t[: len(t) - len(s)])]
            inner[0] = Text(s)
    if inner and isinstance(inner[-1], Text):
        t = inner[-1].text
        s = t.rstrip()
        if s != t:
            trail = [Text(t[len(s):])]
            inner[-1] = Text(s)
    inner = [n for n in inner if not (isinstance(n, Text) and n.text == "")]
    return lead, inner, trail


def _leaf(seg: Seg) -> list[Inline]:
    """What :func:`_build` makes of one segment with no format left to group by: its node
    (a text in a typewriter face as code), nothing for an empty text."""
    node = seg.node
    if type(node) is Text:
        if "code" in seg.fmt:
            return [Code(node.text)]
        return [node] if node.text else []
    return [node]


def _build(segs: list[Seg], k: int, present: frozenset[str]) -> list[Inline]:
    """The tree of ``segs`` from format ``ORDER[k]`` down. Levels whose format no segment
    of the paragraph carries (``present``) are skipped: grouping there yields one group and
    only joins texts again, which is what the extra :func:`merge_texts` at the leaves does
    (a second pass joins Code pieces an empty Text kept apart; a third changes nothing).
    One segment none of whose formats is left (most groups) is a leaf at once."""
    if len(segs) == 1 and not segs[0].fmt & _FORMATS_FROM[k]:
        return _leaf(segs[0])
    start = k
    while k < len(ORDER) and ORDER[k] not in present:
        k += 1
    if k == len(ORDER):
        leaves = _leaves(segs)
        return merge_texts(leaves) if k > start else leaves
    f = ORDER[k]
    out: list[Inline] = []
    i, end = 0, len(segs)
    while i < end:  # the runs of segments with and without f (groupby, without a key call
        has = f in segs[i].fmt  # per segment)
        j = i + 1
        while j < end and (f in segs[j].fmt) is has:
            j += 1
        inner = _build(segs[i:j] if i or j < end else segs, k + 1, present)
        i = j
        if has:
            wrap_peeled(out, inner, WRAP[f])
        else:
            out += inner
    return merge_texts(out)


def _single_formats(segs: list[Seg]) -> list[str | None] | None:
    """The one format of each segment (None for none), when every segment carries at most
    one of :data:`ORDER`'s and no code: then the tree has one level of formats, which
    :func:`_flat` builds without grouping level by level. None for any other paragraph (a
    ``Code`` node too: joining code pieces may take :func:`_build`'s second pass)."""
    keys: list[str | None] = []
    for s in segs:
        fmt = s.fmt
        if type(s.node) is Code:
            return None
        if not fmt:
            keys.append(None)
        elif len(fmt) == 1:
            (f,) = fmt
            if f not in WRAP:
                return None
            keys.append(f)
        else:
            return None
    return keys


def wrap_peeled(out: list[Inline], inner: list[Inline],
                wrap: Callable[[list[Inline]], Inline]) -> None:
    """``inner`` wrapped (by ``wrap``) onto ``out``, whitespace at its edges outside (also
    what the DOCX reader's one-pass builder wraps with)."""
    lead, inner, trail = _peel(inner)
    out += lead
    if inner:
        out.append(wrap(inner))
    out += trail


def _linked(out: list[Inline], children: list[Inline], link: tuple[str, str]) -> None:
    """A link's ``children`` as a link to its target and title onto ``out``, whitespace at
    their edges outside (nothing when there are none)."""
    wrap_peeled(out, children, lambda inner: Link(inner, link[0], link[1]))


def _flat(segs: list[Seg], keys: list[str | None], start: int, end: int) -> list[Inline]:
    """The inlines of ``segs[start:end]`` (one link's, or none's) whose formats are
    ``keys`` (see :func:`_single_formats`): each run of segments of one format joined and
    wrapped once; what :func:`_build` makes of them, as texts join the same at any level."""
    out: list[Inline] = []
    i = start
    while i < end:
        f = keys[i]
        j = i + 1
        while j < end and keys[j] == f:
            j += 1
        nodes = _leaf(segs[i]) if j == i + 1 else merge_texts([s.node for s in segs[i:j]])
        if f is None:
            out += nodes
        else:
            wrap_peeled(out, nodes, WRAP[f])
        i = j
    return merge_texts(out)  # a wrapped run's edge spaces join the texts beside it


def _flat_inlines(segs: list[Seg], keys: list[str | None]) -> list[Inline]:
    """:func:`build_inlines` of segments of one format each (``keys``): runs of one link,
    each built by :func:`_flat`."""
    out: list[Inline] = []
    i, end = 0, len(segs)
    while i < end:
        link = segs[i].link
        j = i + 1
        while j < end and segs[j].link == link:
            j += 1
        children = _flat(segs, keys, i, j)
        if link is None:
            out += children
        else:
            _linked(out, children, link)
        i = j
    return merge_texts(out)


def build_inlines(segs: list[Seg]) -> list[Inline]:
    """Nested inline nodes for a paragraph's segments (links outermost)."""
    keys = _single_formats(segs)
    if keys is not None:  # most paragraphs: no segment with two formats
        return _flat_inlines(segs, keys)
    for s in segs:
        if s.link is not None:
            break
    else:
        if segs:
            # no link: the tree is the result (its texts are joined already: a last
            # merge_texts would change nothing)
            return _build(segs, 0, frozenset().union(*[s.fmt for s in segs]))
    groups = [(link, list(group)) for link, group in groupby(segs, key=lambda s: s.link)]
    out: list[Inline] = []
    for link, members in groups:
        present = frozenset().union(*[s.fmt for s in members])
        children = _build(members, 0, present)
        if link is None:
            out.extend(children)
        else:
            _linked(out, children, link)
    return merge_texts(out)


def strip_edges(nodes: list[Inline]) -> list[Inline]:
    """Trim whitespace at the start and end of a paragraph's inlines."""
    nodes = list(nodes)
    while nodes and isinstance(nodes[0], Text) and not nodes[0].text.strip():
        nodes.pop(0)
    while nodes and isinstance(nodes[-1], Text) and not nodes[-1].text.strip():
        nodes.pop()
    if nodes and isinstance(nodes[0], Text):
        nodes[0] = Text(nodes[0].text.lstrip())
    if nodes and isinstance(nodes[-1], Text):
        nodes[-1] = Text(nodes[-1].text.rstrip())
    return nodes


@dataclass(slots=True)
class ParaState:
    """What the inline walk of one paragraph collects."""

    segs: list[Seg] = field(default_factory=list)
    links: list[tuple[str, str] | None] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    fields: list[dict[str, Any]] = field(default_factory=list)
    pending: list[Block] = field(default_factory=list)
    bookmarks: list[str] = field(default_factory=list)
    fonts: set[str | None] = field(default_factory=set)  # of the texts that show
    in_delete: bool = False
    # while runs of one format extend the last text segment: that segment and its text's
    # parts, joined once by join_texts (extending the text run by run copied it each time,
    # quadratic in a long paragraph)
    growing: Seg | None = None
    parts: list[str] = field(default_factory=list)

    def extend_text(self, seg: Seg, text: str) -> None:
        """Add ``text`` to the end of text segment ``seg``'s text (see :meth:`join_texts`)."""
        if self.growing is not seg:
            self.join_texts()
            self.growing = seg
            self.parts.append(seg.node.text)  # type: ignore[union-attr]  # a Text segment
        self.parts.append(text)

    def join_texts(self) -> None:
        """Give the segment that :meth:`extend_text` extended its whole text: before the
        segments are read."""
        if self.growing is not None:
            self.growing.node.text = "".join(self.parts)  # type: ignore[union-attr]
            self.growing = None
            self.parts.clear()

    def add(self, node: Inline, fmt: frozenset[str] = frozenset(), font: str | None = "") -> None:
        link = None
        for lk in reversed(self.links):
            if lk is not None:
                link = lk
                break
        if self.extra:
            fmt = fmt | frozenset(self.extra)
        self.segs.append(Seg(node, fmt, link))
        if type(node) is Text and node.text.strip():
            self.fonts.add(font)

    @property
    def hidden(self) -> bool:
        """Inside a field's instruction part: text there is not shown."""
        return bool(self.fields) and any(f["phase"] == "instr" for f in self.fields)
