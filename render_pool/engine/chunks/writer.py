"""Chunks writer (``export=chunks``): the document as pieces that fit a language model.

The output is a JSON array; each chunk is ``{"text", "headings", "pages", "tokens",
"blocks", "prov"}``: its Markdown, the path of headings it sits under, the PDF pages it
comes from, its size in tokens (``chunk_tokenizer``, see ``chunks/tokens.py``), the
positions of the top-level blocks it holds and where those were read (``prov``).

The rules (the units are ``chunks/units.py``'s):

- A chunk holds at most ``chunk_tokens`` tokens. The only chunks over it hold a single table
  row (with its header) larger than the budget; they are counted in a warning.
- Every heading starts a chunk (save one right under a heading with no text of its own: a
  chapter heading directly above a section heading opens that section's chunk): no chunk
  crosses a section boundary, unless ``chunk_merge`` (the default) lets small neighbouring
  sections (each at most half the budget) under the same heading share one when together
  within the budget: a parent's opening text and its subsections, or sibling sections
  (top-level sections too), each whole, never a subsection's tail with its parent's next
  sibling; its ``headings`` are then the path they share. An empty section (a heading and
  nothing else) never joins the chunk before it: no chunk ends with a heading. A section
  larger than the budget is cut between units: paragraphs, list items, table rows (every
  part of a table repeats its header rows; the caption stays with the first), code lines; a
  sentence is never cut unless it alone is over the budget.
- No chunk ends with a heading or with a caption apart from its table or figure.
- Nothing is lost and nothing is written twice, except ``chunk_overlap``: up to that many
  tokens from the end of a chunk (whole sentences where they fit) open the next chunk of the
  same section (its budget leaves room for them).

Like every writer it knows nothing of readers: a chunk's pages and locations come from the
blocks' ``prov`` (a footnote's from its own blocks'; a chunk holding only notes read without
a location takes where they are cited).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from render_pool.engine.chunks.tables import part_table
from render_pool.engine.chunks.tokens import TOKENIZERS, Counter
from render_pool.engine.chunks.units import TablePart, Unit, document_units
from render_pool.engine.common.image_links import ImageResolver, data_uri_resolver
from render_pool.engine.markdown.render import MarkdownRenderer
from render_pool.engine.model import Document, Location, PageBox, Table, location_to_dict
from render_pool.engine.options import WriterOptions
from render_pool.engine.provenance import merged
from render_pool.errors import InvalidOption

__all__ = ["MAX_TOKENS", "MIN_TOKENS", "Chunk", "chunk_document", "write_chunks"]

MIN_TOKENS = 16  # a smaller budget cannot hold a heading and a sentence
MAX_TOKENS = 65_536
_SENTENCE = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+")


@dataclass
class Chunk:
    """One chunk being built: its units, the common heading path, whether it is made of whole
    sections (only those merge), whether ``chunk_merge`` joined sections into it, and the
    overlap text opening it."""

    units: list[Unit]
    headings: tuple[str, ...]
    whole: bool
    text: str = ""
    tokens: int = 0
    overlap: str = ""
    sections: set[int] = field(default_factory=set)
    joined: bool = False


def check_options(options: WriterOptions) -> Counter:
    """The token counter the options name; :class:`InvalidOption` (40001) for a budget out of
    range, an overlap of half the budget or more, or an unknown tokenizer."""
    if not MIN_TOKENS <= options.chunk_tokens <= MAX_TOKENS:
        raise InvalidOption(f"chunk_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}")
    if not 0 <= options.chunk_overlap < options.chunk_tokens // 2:
        raise InvalidOption("chunk_overlap must be at least 0 and less than half of "
                            "chunk_tokens")
    counter = TOKENIZERS.get(options.chunk_tokenizer)
    if counter is None:
        raise InvalidOption(f"unknown chunk_tokenizer {options.chunk_tokenizer!r}; use one "
                            f"of {', '.join(TOKENIZERS)}")
    return counter


class _Chunker:
    def __init__(self, doc: Document, renderer: MarkdownRenderer, count: Counter,
                 options: WriterOptions) -> None:
        self.w = renderer
        self.count = count
        self.budget = options.chunk_tokens
        self.overlap = options.chunk_overlap
        self.room = self.budget - self.overlap  # what a chunk's own units may take
        self.merge = options.chunk_merge
        self.units = document_units(doc, renderer, count, self.room)

    # ------------------------------------------------------------ text
    def render(self, units: list[Unit]) -> str:
        """The Markdown of ``units``: rows of one table as one table (header repeated),
        units of one group (a list, a cut paragraph) joined by their separator."""
        pieces: list[str] = []
        i = 0
        while i < len(units):
            u = units[i]
            if u.kind == "row" and isinstance(u.group, TablePart):
                part = u.group
                rows = []
                j = i
                while j < len(units) and units[j].group is part:
                    rows.extend(units[j].rows)
                    j += 1
                t = part.table
                pieces.append(part_table(self.w, Table(
                    [*part.header, *rows], len(part.header),
                    t.caption if u.first_rows else []), part.pipe))
                i = j
                continue
            if pieces and i and u.group is not None and units[i - 1].group is u.group:
                pieces[-1] += u.sep + u.text
            else:
                pieces.append(u.text)
            i += 1
        return "\n\n".join(pieces)

    def estimate(self, units: list[Unit]) -> int:
        """Tokens of ``units`` as one chunk: their own, and each table's header once."""
        headers = {id(u.group): u.group.header_tokens for u in units
                   if isinstance(u.group, TablePart)}
        return sum(u.tokens for u in units) + sum(headers.values())

    # ------------------------------------------------------------ packing
    def sections(self) -> list[list[Unit]]:
        """The units by section; a section that is only its heading opens its first
        subsection (a chapter heading right above a section heading) rather than stand
        alone. Only a subsection: an empty section followed by a sibling, even one of the
        same title (a heading written twice), stays a section of its own, so the sibling's
        heading still starts a chunk."""
        out: list[list[Unit]] = []
        for u in self.units:
            if not out or out[-1][-1].section != u.section:
                prev = out[-1] if out else []
                if prev and all(p.kind == "heading" for p in prev) \
                        and _under(u.path, prev[-1].path):
                    prev.append(u)
                    continue
                out.append([])
            out[-1].append(u)
        return out

    def pack(self, units: list[Unit]) -> list[list[Unit]]:
        """One section's units in chunks within the room: greedy, never ending a chunk with
        a glued unit, and checked on the rendered text (a unit that does not fit after all
        moves to the next chunk)."""
        out: list[list[Unit]] = []
        cur: list[Unit] = []
        for u in units:
            if cur and self.estimate([*cur, u]) > self.room:
                carry: list[Unit] = []
                while len(cur) > 1 and cur[-1].glue:
                    carry.insert(0, cur.pop())
                out.append(cur)
                cur = carry
            cur.append(u)
        if cur:
            out.append(cur)
        checked: list[list[Unit]] = []
        pending = list(reversed(out))
        while pending:
            chunk = pending.pop()
            while len(chunk) > 1 and self.count(self.render(chunk)) > self.room:
                moved = [chunk.pop()]
                while len(chunk) > 1 and chunk[-1].glue:
                    moved.insert(0, chunk.pop())
                if pending:
                    pending[-1][:0] = moved
                else:
                    pending.append(moved)
            checked.append(chunk)
        return checked

    def chunks(self) -> list[Chunk]:
        out: list[Chunk] = []
        for units in self.sections():
            parts = self.pack(units)
            sections = {u.section for u in units}  # once per section, not per part
            for part in parts:
                chunk = Chunk(part, units[-1].path, whole=len(parts) == 1,
                              sections=set(sections))
                if self.merge and out and self.mergeable(out[-1], chunk):
                    prev = out[-1]
                    prev.units.extend(chunk.units)
                    prev.headings = _common(prev.headings, chunk.headings)
                    prev.sections |= chunk.sections
                    prev.joined = True
                else:
                    out.append(chunk)
        for i, chunk in enumerate(out):
            chunk.text = self.render(chunk.units)
            if self.overlap and i and not out[i - 1].sections.isdisjoint(chunk.sections):
                chunk.overlap = self.tail(out[i - 1].text)
                if chunk.overlap:
                    chunk.text = chunk.overlap + "\n\n" + chunk.text
            chunk.tokens = self.tokens_of(chunk)
        return out

    def tokens_of(self, chunk: Chunk) -> int:
        """Tokens of ``chunk.text``: a chunk of one unit other than table rows (whose text is
        the unit's own) has its unit's, counted already (a piece of a data URI is not
        counted again); any other is counted."""
        units = chunk.units
        if not chunk.overlap and len(units) == 1 and units[0].kind != "row":
            return units[0].tokens
        return self.count(chunk.text)

    def mergeable(self, a: Chunk, b: Chunk) -> bool:
        """Whether ``a`` and ``b``, small whole sections (each at most half the room), may
        share a chunk: neighbours under the same heading, together within the room.

        ``b`` joins ``a`` when ``a`` starts at ``b``'s parent (its opening text, ``b`` its
        next subsection) or at a sibling of ``b``: a chunk is then its parent's opening and
        whole sibling sections in a row. Where ``a`` starts matters, not the path its
        sections share: two subsections (1.1.1, 1.1.2) share the path of 1.1, yet 1.1
        itself opens in an earlier chunk; joining 1.2 to them would cross the boundary of
        1.1 and 1.2, a heading of a higher level than any in the chunk. ``a``'s own size is
        checked unless it already joins sections (then the total is what counts): a section
        under an empty chapter heading is two sections yet one of the document's."""
        if all(u.kind == "heading" for u in b.units):
            return False  # an empty section ends no chunk: it stands alone
        if not (a.whole and b.whole) or self.estimate(b.units) > self.room // 2 \
                or (not a.joined and self.estimate(a.units) > self.room // 2):
            return False
        parent = b.headings[:-1]  # b's own section's parent, past an empty chapter heading
        start = a.units[0].path
        if start != parent and start[:-1] != parent:
            return False
        return self.count(self.render([*a.units, *b.units])) <= self.room

    def tail(self, text: str) -> str:
        """The end of ``text`` within the overlap: whole sentences when the last fits, else
        its last words; nothing after a table or code (their rows and lines would be cut)."""
        last = text.rsplit("\n\n", 1)[-1]
        if last.startswith(("|", "```", "<table", "~~~")):
            return ""
        sentences = _SENTENCE.split(last)
        out = ""
        for sentence in reversed(sentences):
            joined = f"{sentence} {out}".strip()
            if self.count(joined) > self.overlap:
                break
            out = joined
        if out:
            return out
        words = last.split()
        while words and self.count(" ".join(words)) > self.overlap:
            words = words[max(1, len(words) // 8):]
        return " ".join(words)


def _under(path: tuple[str, ...], parent: tuple[str, ...]) -> bool:
    """Whether a section of heading path ``path`` is a subsection of ``parent``'s: deeper,
    not a sibling of the same title (paths hold titles only)."""
    return len(path) > len(parent) and path[:len(parent)] == parent


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def chunk_document(doc: Document, resolve_image: ImageResolver | None = None,
                   options: WriterOptions | None = None) -> list[dict[str, Any]]:
    """The chunks of ``doc`` as JSON-ready dicts (see the module doc); a warning in
    ``doc.warnings`` counts the chunks over the budget."""
    opts = options or WriterOptions()
    count = check_options(opts)
    renderer = MarkdownRenderer(doc, resolve_image or data_uri_resolver(doc))
    chunker = _Chunker(doc, renderer, count, opts)
    out: list[dict[str, Any]] = []
    over = 0
    for chunk in chunker.chunks():
        if not chunk.text.strip():
            continue
        # a chunk of notes read without a location: where they are cited (chunks/units.py)
        prov: list[Location] = merged(*(u.prov for u in chunk.units)) \
            or merged(*(u.cited_at for u in chunk.units))
        over += chunk.tokens > opts.chunk_tokens
        out.append({
            "text": chunk.text,
            "headings": list(chunk.headings),
            "pages": sorted({p.page for p in prov if isinstance(p, PageBox)}),
            "tokens": chunk.tokens,
            "blocks": sorted({u.block for u in chunk.units if u.block >= 0}),
            "prov": [location_to_dict(p) for p in prov],
        })
    if over:
        doc.warn(f"{over} chunk(s) are over the budget of {opts.chunk_tokens} tokens: each "
                 "holds a single table row (with the table's header) larger than it")
    return out


def write_chunks(doc: Document, resolve_image: ImageResolver | None = None,
                 options: WriterOptions | None = None) -> str:
    """``doc`` as a JSON array of chunks (pretty-printed UTF-8, as the JSON export)."""
    return json.dumps(chunk_document(doc, resolve_image, options), ensure_ascii=False,
                      indent=2) + "\n"
