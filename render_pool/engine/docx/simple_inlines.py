"""The inline content of an ordinary DOCX paragraph, read and built in one pass.

Why: most paragraphs of a report are runs of text, each with at most one format (bold,
italics, a typewriter face...), some in hyperlinks, some ending in a note reference. The
general walk (``DocxReader._inlines``) makes a segment object per piece, then
``build_inlines`` groups the segments format by format; for this shape the result is known
in one pass: each piece of one format wrapped on its own, whitespace at its edges moved out,
the texts beside each other joined. ``collect`` reads a paragraph's children only when every
one of them has that shape (a run of properties and a text, a note reference or a note's own
mark; a hyperlink of such runs; a proofing mark or a bookmark's end) and answers None for
anything else, so fields, tracked changes, content controls, drawings, bookmarks, tabs,
breaks and math always take the general walk. ``build`` answers None when a piece carries
two formats; the reader then builds its segments the general way.
"""

from __future__ import annotations

from typing import Protocol

from lxml import etree

from render_pool.engine.common.inlines import WRAP, Seg, wrap_peeled
from render_pool.engine.docx.package import NS, Package
from render_pool.engine.model import Code, Inline, Link, NoteRef, Text


class DocxReader(Protocol):
    """What this module reads of the DOCX reader (``reader.DocxReader``), named here so the
    reader, which calls this module, is not imported by it."""

    pkg: Package
    part: str
    internal_links: bool
    notes_src: dict[str, tuple[str, dict[str, etree._Element]]]

    def run_fmt(self, rpr: etree._Element | None) -> tuple[frozenset[str], str | None]: ...

    def hyperlink_target(self, h: etree._Element) -> tuple[str, str] | None: ...

_W = f"{{{NS['w']}}}"
_R = f"{{{NS['r']}}}"
_WR = _W + "r"
_WT = _W + "t"
_WRPR = _W + "rPr"
_WPPR = _W + "pPr"
_WHYPERLINK = _W + "hyperlink"
_NOTE_KINDS = {_W + "footnoteReference": "fn", _W + "endnoteReference": "en"}
# a note's own number mark, at the start of its first paragraph: the general walk shows nothing
_NOTE_MARKS = frozenset({_W + "footnoteRef", _W + "endnoteRef"})
# children of a paragraph the general walk passes over without a trace
_PASSED = frozenset({_WPPR, _W + "proofErr", _W + "bookmarkEnd"})
_RID = _R + "id"
_WID = _W + "id"
_NO_FMT: frozenset[str] = frozenset()
Link_ = tuple[str, str] | None


class Pieces:
    """A paragraph's content as the general walk would segment it: texts (a ``str``, pieces
    of one format and link joined) and note references, with their formats and links; the
    fonts of the texts that show, and the notes referred to, in order."""

    __slots__ = ("fmts", "fonts", "links", "nodes", "notes", "parts", "prose")

    def __init__(self) -> None:
        self.nodes: list[str | NoteRef] = []
        self.fmts: list[frozenset[str]] = []
        self.links: list[Link_] = []
        self.fonts: set[str | None] = set()
        self.notes: list[tuple[str, str]] = []  # (kind prefix, note id)
        self.prose = False  # whether a text that shows is in no typewriter face
        # the parts of the last text while runs of one format extend it, joined once by
        # join_last (extending the text run by run copied it each time: quadratic)
        self.parts: list[str] = []

    def join_last(self) -> None:
        """Give the last text its whole length: before another node follows it, and once
        the paragraph is read."""
        if self.parts:
            self.nodes[-1] = "".join(self.parts)
            self.parts.clear()

    def segments(self) -> list[Seg]:
        """The segments the general walk would have made of these pieces."""
        return [Seg(n if isinstance(n, NoteRef) else Text(n), f, link)
                for n, f, link in zip(self.nodes, self.fmts, self.links, strict=True)]


def collect(reader: DocxReader, kids: list[etree._Element]) -> Pieces | None:
    """The pieces of a paragraph whose children are ``kids``, or None when one of them is
    of a shape the general walk must read (then nothing was changed)."""
    pieces = Pieces()
    if not _runs(reader, kids, pieces, None, True):
        return None
    pieces.join_last()
    return pieces


def _runs(reader: DocxReader, children: list[etree._Element], pieces: Pieces, link: Link_,
          top: bool) -> bool:
    """The pieces of ``children`` (a paragraph's when ``top``, else a hyperlink's, whose
    children must all be runs) onto ``pieces``; False at the first child of another shape.
    A run is a text, a note reference or a note's own mark, with or without properties
    first. A text is joined to the piece before when that one is a text of the same format
    and link (what ``reader._add_text`` does), in line: this loop meets every run of the
    document. An empty text is left to the general walk: there an empty piece can part two
    pieces of code."""
    nodes, fmts, links, fonts, parts = (pieces.nodes, pieces.fmts, pieces.links,
                                        pieces.fonts, pieces.parts)
    run_fmt = reader.run_fmt
    for c in children:
        tag = c.tag
        if tag == _WR:
            # its last child, and what comes before it: nothing, or properties and nothing
            # (two steps to a neighbour cost less than lxml's count of the children)
            try:
                t = c[-1]
            except IndexError:  # an empty run
                return False
            rpr = t.getprevious()
            if rpr is not None and (rpr.tag != _WRPR or rpr.getprevious() is not None):
                return False
            if t.tag != _WT:
                if t.tag not in _NOTE_MARKS and not _note(reader, t, pieces, link):
                    return False
                continue
            text = t.text
            if not text:
                return False
            if rpr is None:  # most runs
                fmt, font = _NO_FMT, None
            else:
                fmt, font = run_fmt(rpr)
            if nodes and type(nodes[-1]) is str and links[-1] == link and (
                    fmts[-1] is fmt or fmts[-1] == fmt):
                if not parts:
                    parts.append(nodes[-1])  # checked above: a str
                parts.append(text)
            else:
                if parts:  # what pieces.join_last does, in line
                    nodes[-1] = "".join(parts)
                    parts.clear()
                nodes.append(text)
                fmts.append(fmt)
                links.append(link)
            if not text.isspace():  # it shows (text.strip(), without a copy: not empty)
                fonts.add(font)
                if "code" not in fmt:
                    pieces.prose = True
        elif not top:
            return False
        elif tag == _WHYPERLINK:
            if not _hyperlink(reader, c, pieces):
                return False
        elif tag not in _PASSED and isinstance(tag, str):
            return False
    return True


def _hyperlink(reader: DocxReader, h: etree._Element, pieces: Pieces) -> bool:
    """A hyperlink all of whose children are simple runs, to a target that resolves (a
    missing relationship is warned about by the general walk)."""
    rid = h.get(_RID)
    if rid and rid not in reader.pkg.rels(reader.part):
        return False
    link = reader.hyperlink_target(h)
    if link is not None and link[0].startswith("#"):
        reader.internal_links = True
    return _runs(reader, h[:], pieces, link, False)


def _note(reader: DocxReader, ref: etree._Element, pieces: Pieces, link: Link_) -> bool:
    """A footnote or endnote reference to a note that exists (a missing one becomes a
    placeholder and a warning, by the general walk)."""
    tag = ref.tag
    kind = _NOTE_KINDS.get(tag) if isinstance(tag, str) else None
    if kind is None:
        return False
    nid = ref.get(_WID, "")
    if nid not in reader.notes_src.get(kind, ("", {}))[1]:
        return False
    pieces.join_last()
    pieces.nodes.append(NoteRef(f"{kind}{nid}"))
    pieces.fmts.append(_NO_FMT)
    pieces.links.append(link)
    pieces.notes.append((kind, nid))
    return True


def build(pieces: Pieces) -> list[Inline] | None:
    """The inlines of ``pieces`` with their edges trimmed: what ``build_inlines`` makes of
    their segments (tabs as spaces), or None when a piece carries more than one format or
    one it does not wrap. Texts side by side are joined as they are placed: a text is held
    (``pending``) until something else comes."""
    nodes, fmts, links = pieces.nodes, pieces.fmts, pieces.links
    if len(nodes) == 1 and type(text := nodes[0]) is str and not fmts[0] and links[0] is None:
        text = (text.replace("\t", " ") if "\t" in text else text).strip()  # most cells
        return [Text(text)] if text else []
    out: list[Inline] = []
    pending = ""
    start, end = 0, len(nodes)
    while start < end:
        link = links[start]
        stop = start + 1
        while stop < end and links[stop] == link:
            stop += 1
        if link is None:
            left = _place(out, pending, nodes, fmts, start, stop)
        else:
            left = _place_link(out, pending, nodes, fmts, start, stop, link)
        if left is None:
            return None
        pending = left
        start = stop
    if pending:
        out.append(Text(pending))
    return trimmed(out)


def _place(out: list[Inline], pending: str, nodes: list[str | NoteRef],
           fmts: list[frozenset[str]], start: int, stop: int) -> str | None:
    """The inlines of ``nodes[start:stop]`` onto ``out``, after the text ``pending``; the
    text left pending, or None for a piece :func:`build` leaves to ``build_inlines``. A
    piece of one format is wrapped on its own, its edges' whitespace outside (what
    ``wrap_peeled`` does to one text); code is joined to code right before it."""
    for i in range(start, stop):
        node = nodes[i]
        if isinstance(node, NoteRef):
            if pending:
                out.append(Text(pending))
                pending = ""
            out.append(node)
            continue
        if "\t" in node:
            node = node.replace("\t", " ")
        fmt = fmts[i]
        if not fmt:
            pending += node
            continue
        if len(fmt) > 1:
            return None
        (f,) = fmt
        if f == "code":
            if pending:
                out.append(Text(pending))
                pending = ""
            elif out and type(last := out[-1]) is Code:
                out[-1] = Code(last.text + node)
                continue
            out.append(Code(node))
            continue
        wrap = WRAP.get(f)
        if wrap is None:
            return None
        left = node.lstrip()
        core = left.rstrip()
        pending += node[:len(node) - len(left)]
        if core:
            if pending:
                out.append(Text(pending))
                pending = ""
            out.append(wrap([Text(core)]))
        pending += left[len(core):]
    return pending


def _place_link(out: list[Inline], pending: str, nodes: list[str | NoteRef],
                fmts: list[frozenset[str]], start: int, stop: int,
                link: tuple[str, str]) -> str | None:
    """One link's pieces onto ``out`` as :func:`_place` does, in a link whose edges'
    whitespace goes outside it; the text left pending, or None."""
    children: list[Inline] = []
    rest = _place(children, "", nodes, fmts, start, stop)
    if rest is None:
        return None
    if rest:
        children.append(Text(rest))
    target, title = link
    placed: list[Inline] = []
    wrap_peeled(placed, children, lambda inner: Link(inner, target, title))
    for node in placed:
        if type(node) is Text:
            pending += node.text
        else:
            if pending:
                out.append(Text(pending))
                pending = ""
            out.append(node)
    return pending


def trimmed(nodes: list[Inline]) -> list[Inline]:
    """``strip_edges`` of inlines whose texts are joined already (no two texts side by
    side, so at most one blank text goes at each end), in place; a text is made anew only
    when trimming changes it."""
    if nodes and type(first := nodes[0]) is Text and not first.text.strip():
        del nodes[0]
    if nodes and type(last := nodes[-1]) is Text and not last.text.strip():
        del nodes[-1]
    if nodes and type(first := nodes[0]) is Text and first.text[:1].isspace():
        nodes[0] = Text(first.text.lstrip())
    if nodes and type(last := nodes[-1]) is Text and last.text[-1:].isspace():
        nodes[-1] = Text(last.text.rstrip())
    return nodes
