"""The pieces a document is chunked from: units of Markdown, each with its heading path.

Why a module of its own: this is where the document model is read (headings, lists, tables,
notes, captions, provenance); the chunks writer (``chunks/writer.py``) only packs units.

A unit is the smallest piece a chunk boundary may not cut: a heading, a paragraph, a list
item, a table row (rows tied by a cell spanning them form one unit), a code block, a quote,
a formula, a footnote (its definition follows the block that first cites it). A unit larger
than the budget alone is cut: prose at sentence ends (a sentence larger than the budget at
words, a word larger than it at characters), code between lines, a quote into its blocks; a
table row is never cut (a chunk holding one row over the budget is reported). A heading is
glued to what follows it, and so is a caption ("Table 2: ...", "Figure 3 ...") to the table or
figure next to it, so no chunk ends with either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, is_dataclass

from render_pool.engine.chunks.tables import part_table
from render_pool.engine.chunks.tokens import Counter, join_floor, prefix_rule, within
from render_pool.engine.markdown.render import MarkdownRenderer, pipe_ok
from render_pool.engine.model import (
    Block,
    BlockQuote,
    CodeBlock,
    Document,
    Heading,
    HorizontalRule,
    Image,
    ListBlock,
    Location,
    NoteRef,
    Paragraph,
    Table,
    TableRow,
    plain_text,
    walk,
)
from render_pool.engine.provenance import merged

__all__ = ["TablePart", "Unit", "document_units", "repeated_header"]

_CAPTION = re.compile(r"^\s*(?:table|tab\.|figure|fig\.|chart|exhibit|listing|abbildung|"
                      r"tabelle|tableau|figura|tabla)\s*[A-Z]?[0-9IVX]+", re.IGNORECASE)
# where prose may be cut: whitespace after a sentence's end (kept as the join), or after a
# CJK full stop even without whitespace
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])[\"'\u201d\u2019)\]]*\s+|(?<=[\u3002\uff01\uff1f])\s*")
_STOP = re.compile(r"[.!?\u2026\u3002\uff01\uff1f]")  # what _SENTENCE_END looks behind for
_SPACE = re.compile(r"\s+")
_WORD_CHAR = re.compile(r"\w")
_WORD_RUN = re.compile(r"\w*")


@dataclass
class TablePart:
    """A table whose rows are units: its header (repeated in every chunk holding rows of it)
    and caption (with its first rows only)."""

    table: Table
    header: list[TableRow]
    header_tokens: int
    pipe: bool  # pipe_ok of the whole table: every part is written in its form


@dataclass
class Unit:
    """One piece of Markdown a chunk is built from (see the module doc)."""

    kind: str  # heading, text, item, row, code, note
    text: str  # Markdown; for a row unit, its rows rendered under the header
    tokens: int
    block: int  # the top-level block it comes from (-1: a note never cited)
    path: tuple[str, ...]  # heading path of its section (a heading's includes itself)
    section: int  # sections are numbered in order; every heading starts one
    prov: list[Location] = field(default_factory=list)
    glue: bool = False  # no chunk may end with this unit (a heading, a caption)
    group: object = None  # consecutive units of one group join with ``sep``, not a blank line
    sep: str = "\n\n"
    rows: list[TableRow] = field(default_factory=list)  # a row unit's rows
    first_rows: bool = False  # a row unit holding the table's first rows (with the caption)
    over: bool = False  # alone over the budget and not cut (a table row)
    # a note the reader gave no location: where it is cited, the location of a chunk that
    # holds nothing located but it (see ``_Builder.note``)
    cited_at: list[Location] = field(default_factory=list)


class _Builder:
    def __init__(self, doc: Document, renderer: MarkdownRenderer, count: Counter,
                 budget: int) -> None:
        self.doc = doc
        self.w = renderer
        self.count = count
        self.budget = budget
        self.units: list[Unit] = []
        self.path: list[tuple[int, str]] = []
        self.section = 0
        self.block = 0
        self.notes_placed: set[str] = set()

    # ------------------------------------------------------------ emit
    def add(self, kind: str, text: str, prov: list[Location], *, glue: bool = False,
            group: object = None, sep: str = "\n\n", code: CodeBlock | None = None,
            cited_at: list[Location] | None = None) -> None:
        """A unit of ``text`` (nothing for blank text), cut when over the budget."""
        if not text.strip():
            return
        unit = Unit(kind, text, 0, self.block, self.here(), self.section,
                    list(prov), glue=glue, group=group, sep=sep,
                    cited_at=list(cited_at or []))
        limit = self.budget - self.glued_tokens()
        if within(self.count, text, limit):  # a unit over it is cut, never counted whole
            unit.tokens = self.count(text)
            self.units.append(unit)
        elif code is not None:
            self.units.extend(self.cut_code(unit, code, max(limit, 1)))
        else:
            self.units.extend(self.cut(unit, max(limit, 1)))

    def here(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.path)

    def glued_tokens(self) -> int:
        """Tokens of the glued units just before (a heading): what the next unit must leave
        room for in its chunk."""
        total = 0
        for u in reversed(self.units):
            if not u.glue:
                break
            total += u.tokens
        return total if total < self.budget // 2 else 0

    def cut(self, unit: Unit, limit: int) -> list[Unit]:
        """``unit`` cut into pieces of at most ``limit`` tokens: at sentence ends, then at
        words, then at characters."""
        pieces: list[tuple[str, str]] = []  # (separator before it, text)
        for sep, sentence in _split(unit.text, _sentence_ends(unit.text)):
            if within(self.count, sentence, limit):
                pieces.append((sep, sentence))
                continue
            for i, (wsep, word) in enumerate(_split(sentence, _SPACE.finditer(sentence))):
                wsep = sep if i == 0 else wsep
                if within(self.count, word, limit):
                    pieces.append((wsep, word))
                else:
                    pieces.extend((wsep if k == 0 else "", part) for k, part in
                                  enumerate(_by_chars(word, limit, self.count)))
        out: list[Unit] = []
        group = object()
        for sep, text, tokens in _pack_pieces(pieces, limit, self.count):
            out.append(Unit(unit.kind, text, tokens, unit.block, unit.path,
                            unit.section, unit.prov, group=group, sep=sep or " ",
                            cited_at=unit.cited_at))
        return out

    def cut_code(self, unit: Unit, block: CodeBlock, limit: int) -> list[Unit]:
        """A code block cut between lines (a line over ``limit`` at characters), each piece
        fenced again."""
        lines: list[tuple[str, str]] = []
        for line in block.text.split("\n"):
            if within(self.count, line, limit - 8):
                lines.append(("\n", line))
            else:
                lines.extend(("\n" if k == 0 else "", part) for k, part in
                             enumerate(_by_chars(line, max(limit - 8, 1), self.count)))
        out: list[Unit] = []
        for _, text, _ in _pack_pieces(lines, max(limit - 8, 1), self.count, fence=True):
            md = self.w.block(CodeBlock(text, block.language))
            out.append(Unit("code", md, self.count(md), unit.block, unit.path, unit.section,
                            unit.prov))
        return out

    # ------------------------------------------------------------ blocks
    def heading(self, h: Heading) -> None:
        text = " ".join(plain_text(h.children).split())
        while self.path and self.path[-1][0] >= h.level:
            self.path.pop()
        self.path.append((h.level, text))
        self.section += 1
        self.add("heading", self.w.block(h), h.prov, glue=True)

    def list_block(self, lb: ListBlock) -> None:
        tight = self.w.list_block(lb, "." if lb.ordered else "-").count("\n\n") == 0
        group = object()
        for i, item in enumerate(lb.items):
            one = ListBlock(lb.ordered, [item], lb.start + i)
            text = self.w.list_block(one, "." if lb.ordered else "-")
            first = item.blocks[0] if item.blocks else None
            prov = getattr(first, "prov", None) or lb.prov
            self.add("item", text, prov, group=group, sep="\n" if tight else "\n\n")

    def table(self, t: Table) -> None:
        if not t.rows:
            return
        pipe = pipe_ok(t)
        header, header_tokens = repeated_header(t, self.w, self.count, self.budget, pipe)
        hr = len(header)
        part = TablePart(t, header, header_tokens, pipe)
        body = t.rows[hr:]
        groups = _row_groups(body)
        if not groups:  # only header rows: the table is one unit
            self.add("text", self.w.block(t), t.prov)
            return
        for i, rows in enumerate(groups):  # tokens: the table with these rows less its header
            text = part_table(self.w, Table([*header, *rows], hr,
                                            t.caption if i == 0 else []), pipe)
            tokens = max(1, self.count(text) - header_tokens)
            prov = merged(*(c.prov for r in rows for c in r.cells)) or t.prov
            unit = Unit("row", text, tokens, self.block, self.here(), self.section,
                        prov, group=part, sep="\n", rows=rows, first_rows=i == 0)
            unit.over = unit.tokens + header_tokens > self.budget
            self.units.append(unit)

    def blocks(self, blocks: list[Block]) -> None:
        for pos, b in enumerate(blocks):
            self.block = pos
            nxt = blocks[pos + 1] if pos + 1 < len(blocks) else None
            if isinstance(b, Heading):
                self.heading(b)
            elif isinstance(b, ListBlock):
                self.list_block(b)
            elif isinstance(b, Table):
                self.table(b)
                if _is_caption(nxt) and self.units and self.units[-1].kind == "row":
                    self.units[-1].glue = True  # the caption below stays with the last rows
            elif isinstance(b, CodeBlock):
                self.add("code", self.w.block(b), b.prov, code=b)
            elif isinstance(b, HorizontalRule):
                pass  # no words; a rule between chunks says nothing
            elif isinstance(b, BlockQuote) and not within(self.count, self.w.block(b),
                                                          self.budget):
                for inner in b.blocks:  # a long quote: its blocks, each quoted
                    self.add("text", self.w.block(BlockQuote([inner])),
                             getattr(inner, "prov", None) or b.prov)
            else:
                glue = (_is_caption(b) and (isinstance(nxt, Table) or _is_figure(nxt))) or (
                    _is_figure(b) and _is_caption(nxt))
                self.add("text", self.w.block(b), b.prov, glue=glue)
            self.notes_of(b)
        self.block = -1
        for nid in self.doc.notes:  # notes no block cites (or cited from notes only)
            if nid not in self.notes_placed:
                self.note(nid)

    # ------------------------------------------------------------ notes
    def notes_of(self, block: Block) -> None:
        """The definitions of the notes ``block`` cites first, right after it."""
        cited = [node.note_id for node in walk([block])
                 if isinstance(node, NoteRef) and node.note_id in self.doc.notes
                 and node.note_id not in self.notes_placed]
        if not cited:
            return
        where = _citations(block)
        for nid in cited:
            if nid not in self.notes_placed:
                self.note(nid, where.get(nid, []))

    def note(self, nid: str, cited_at: list[Location] | None = None) -> None:
        """The definition of note ``nid`` as a unit, located where the reader read the note
        (the locations of its blocks). Where the reader recorded none (the PDF reader keeps
        no boxes for the notes it takes from a page's foot), the unit keeps ``cited_at``,
        the location of the block citing the note (its innermost node with a location), for
        a chunk holding nothing located but notes: it would otherwise have no pages. Only
        for those: in a chunk with located text, the box of the citing block (often in the
        chunk before) would widen the chunk's box over text it does not hold."""
        self.notes_placed.add(nid)
        blocks = self.doc.notes.get(nid, [])
        body = self.w.blocks(blocks)
        lines = body.split("\n") if body else [""]
        number = self.w.notes.number(nid)
        text = "\n".join([f"[^{number}]: {lines[0]}".rstrip(),
                          *("    " + ln if ln else "" for ln in lines[1:])])
        prov = merged(*(_prov(node) for node in walk(blocks)))
        self.add("note", text, prov, cited_at=[] if prov else cited_at)


def _prov(node: object) -> list[Location]:
    """The locations a node of the model was read at (blocks and table cells have them)."""
    prov = getattr(node, "prov", None)
    return prov if isinstance(prov, list) else []


def _citations(block: Block) -> dict[str, list[Location]]:
    """For each note ``block`` cites, the location of the innermost node around its first
    citation that has one (a paragraph in a list item, a table cell; else ``block``'s)."""
    out: dict[str, list[Location]] = {}
    # depth first, in document order (as ``walk``), each node with the location in effect
    stack: list[tuple[object, list[Location]]] = [(block, _prov(block))]
    while stack:
        node, where = stack.pop()
        if isinstance(node, NoteRef):
            out.setdefault(node.note_id, where)
            continue
        if not is_dataclass(node):
            continue
        kids: list[tuple[object, list[Location]]] = []
        for f in fields(node):
            value = getattr(node, f.name)
            if f.name != "prov" and isinstance(value, list):
                kids.extend((kid, _prov(kid) or where) for kid in value)
        stack.extend(reversed(kids))
    return out


def repeated_header(t: Table, renderer: MarkdownRenderer, count: Counter, budget: int,
                    pipe: bool) -> tuple[list[TableRow], int]:
    """The rows every part of ``t`` repeats, and their tokens: its header rows (the first row
    of a pipe table without any, which Markdown shows as its header) and the rows their
    cells span down into (a two-line header with merged cells: repeated without those rows,
    a header cell would cover each part's first row and push its cells under the wrong
    columns), unless they take more than half the budget (a header that would crowd out
    every part is not repeated)."""
    hr = min(t.header_rows or (1 if pipe else 0), len(t.rows))
    if hr:  # the first boundary no cell's row span crosses, at or after the header rows
        end = 0
        for group in _row_groups(t.rows):
            end += len(group)
            if end >= hr:
                break
        hr = end
    header = t.rows[:hr]
    tokens = count(part_table(renderer, Table(header, hr), pipe)) if header else 0
    return ([], 0) if tokens > budget // 2 else (header, tokens)


def _split(text: str, matches: Iterable[re.Match[str]]) -> list[tuple[str, str]]:
    """``text`` cut at ``matches`` (a pattern's, in order): (the matched separator before,
    piece)."""
    out: list[tuple[str, str]] = []
    sep, start = "", 0
    for m in matches:
        if m.start() > start:
            out.append((sep, text[start:m.start()]))
            sep, start = m.group(0), m.end()
        elif m.end() > start:
            sep, start = sep + m.group(0), m.end()
    if start < len(text):
        out.append((sep, text[start:]))
    return out


def _sentence_ends(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_SENTENCE_END`` in ``text``, as its ``finditer`` finds them, tried
    only right after a sentence's end mark (every match looks behind for one). Why: the
    lookbehinds tried at every character made a long run without any (an embedded image's
    data URI) cost far more than the search for the marks."""
    end = 0
    for stop in _STOP.finditer(text):
        if stop.end() < end:
            continue
        found = _SENTENCE_END.match(text, stop.end())
        if found is not None:
            end = found.end()
            yield found


def _by_chars(word: str, limit: int, count: Counter) -> list[str]:
    """``word`` cut into pieces of at most ``limit`` tokens, each cut between a run of
    letters and digits and a mark where the piece has one (a long link is cut at ``&`` or
    ``%``, not inside ``oid``: a cut inside a run leaves a word in no chunk). Pieces are
    taken by position, never by cutting off the rest of the word (a copy of the rest per
    piece cost the square of a data URI's length)."""
    rule = prefix_rule(count, word)
    out: list[str] = []
    pos = 0
    while pos < len(word):
        if rule is None:
            end = pos + _longest_within(word[pos:], limit, count)
        else:
            end = rule(pos, limit)
        if end < len(word) and _WORD_CHAR.match(word[end]):
            run = _WORD_RUN.match(word[pos:end][::-1])  # the piece's last run, read back
            cut = end - (run.end() if run else 0)
            end = cut if cut > pos else end
        out.append(word[pos:end])
        pos = end
    return out


def _longest_within(word: str, limit: int, count: Counter) -> int:
    """The length of the longest start of ``word`` of at most ``limit`` tokens (at least 1),
    for a counter without a prefix rule (``tokens.prefix_rule``; the built-in ones have one):
    grown by doubling from ``limit`` characters, then bisected. Why not shrinking from the
    whole word: each step counted the whole rest of the word, so a long run (a data URI of
    an image) cost the square of its length."""
    size = len(word)
    good = min(size, max(1, limit))
    while good > 1 and count(word[:good]) > limit:
        good = max(1, good * 3 // 4)
    if good == size or count(word[:good]) > limit:
        return good
    bad = size + 1  # the shortest start known to be over, or past the end
    while bad - good > 1:
        probe = min(good * 2, size) if bad > size else (good + bad) // 2
        if count(word[:probe]) <= limit:
            good = probe
            if good == size:
                return good
        else:
            bad = probe
    return good


def _pack_pieces(pieces: list[tuple[str, str]], limit: int, count: Counter,
                 fence: bool = False) -> list[tuple[str, str, int]]:
    """Consecutive pieces joined (with their separators) while within ``limit``, each with
    its tokens. Two pieces whose tokens alone are over it by more than a join can take away
    (:func:`join_floor`) are not joined to be counted: the pieces of a data URI are each
    near the limit."""
    floor = join_floor(count)
    out: list[tuple[str, str, int]] = []
    for sep, text in pieces:
        tokens = count(text)
        if out:
            first, prev, prev_tokens = out[-1]
            if not (floor and prev_tokens + tokens - 1 > limit):
                joined = prev + sep + text
                joined_tokens = count(joined)
                if joined_tokens <= limit:
                    out[-1] = (first, joined, joined_tokens)
                    continue
        out.append(("" if fence else sep, text, tokens))
    return out


def _row_groups(rows: list[TableRow]) -> list[list[TableRow]]:
    """``rows`` in groups that no cell's row span crosses (a table is cut only between)."""
    groups: list[list[TableRow]] = []
    reach = -1
    for i, row in enumerate(rows):
        if i > reach:
            groups.append([])
        groups[-1].append(row)
        reach = max(reach, i + max((c.rowspan for c in row.cells), default=1) - 1)
    return groups


def _is_caption(block: Block | None) -> bool:
    return isinstance(block, Paragraph) and bool(_CAPTION.match(plain_text(block.children))) \
        and len(plain_text(block.children)) < 400


def _is_figure(block: Block | None) -> bool:
    """A paragraph holding images and no text (a figure)."""
    return isinstance(block, Paragraph) and any(isinstance(n, Image) for n in block.children) \
        and not plain_text([n for n in block.children if not isinstance(n, Image)]).strip()


def document_units(doc: Document, renderer: MarkdownRenderer, count: Counter,
                   budget: int) -> list[Unit]:
    """The units of ``doc``'s body (and notes) in order, each at most ``budget`` tokens
    except table rows that alone are larger (``over``)."""
    builder = _Builder(doc, renderer, count, budget)
    builder.blocks(doc.blocks)
    return builder.units
