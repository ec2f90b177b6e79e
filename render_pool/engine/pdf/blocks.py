"""From ordered PDF lines to model blocks: headings, paragraphs, lists and tables.

* Body size = the most common character size. Short lines clearly bigger than it, or bold
  at body size, are headings; their levels (1..4) follow the distinct heading styles,
  largest first.
* A paragraph ends at a vertical gap larger than the usual line pitch, a font size change,
  a first-line indent, or a line that ends early (the next word would have fitted) after
  a full stop.
* Lines opening with a bullet or a number marker start list items; the marker's x position
  gives the nesting level; indented lines continue the item.
* Paragraphs indented like block quotes become BlockQuote blocks (quotes).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from render_pool.engine.model import (
    Block,
    CodeBlock,
    Heading,
    Inline,
    ListBlock,
    ListItem,
    Paragraph,
    Text,
)
from render_pool.engine.pdf.chars import Char, mono_glyph, reads_as_prose
from render_pool.engine.pdf.front import front_inlines, front_matter, starts_new
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import Block as FlowBlock
from render_pool.engine.pdf.layout import Item, Line
from render_pool.engine.pdf.prov import items_prov
from render_pool.engine.pdf.quotes import gather_quotes
from render_pool.engine.pdf.table_edges import caption_chars
from render_pool.engine.pdf.tables import aligned_table
from render_pool.engine.provenance import merged, roll_up

# bullets (• ◦ ▪ ‣ ● ○ ■ □ ▫ ◾ ◽ hyphen-bullet ∙ · ❖ ➢ ► ▶ ✓ ✔), or - en/em dash * + space
_BULLET = re.compile("^([\u2022\u25e6\u25aa\u2023\u25cf\u25cb\u25a0\u25a1\u25ab\u25fe"
                     "\u25fd\u2043\u2219\u00b7\u2756\u27a2\u25ba\u25b6\u2713\u2714]\\s*"
                     "|[-\u2013\u2014*]\\s+)(?=\\S)")
_NUMBER = re.compile(r"^\(?(\d{1,3}|[a-z]|[ivx]{1,5})[.)]\s+(?=\S)|^\(?([A-Z])\)\s+(?=\S)")
_ROMAN = {"i": 1, "v": 5, "x": 10}
_END = (".", "!", "?", ":", "\u3002", "\uff01", "\uff1f", "\"", "\u201d")
MAX_HEADING_WORDS = 20
# a caption's opening ("Table 2: ..."): such a line set apart in bold or italics at body size
# is a caption, never a heading; a caption set wholly in italics or bold has no emphasis
_CAPTION = re.compile(r"^(figure|fig\.|table|tab\.|listing|chart|exhibit)\s*\d{1,3}[.:]\s",
                      re.IGNORECASE)


@dataclass
class _Item:
    level: int
    ordered: bool
    start: int
    marker_x: float
    text_x: float
    paras: list[list[list[Char]]]
    last: Line
    para_lines: list[list[Line]]  # the lines of each para
    glyph: str = ""  # the bullet, or "1" for a number (see _glyph)


def body_size(items: list[Item]) -> float:
    """The most common character size (rounded to half points), weighted by characters."""
    counts: Counter[float] = Counter()
    for it in items:
        if isinstance(it, Line):
            for c in it.visible:
                counts[round(c.size * 2) / 2] += 1
    return counts.most_common(1)[0][0] if counts else 10.0


def _typical_pitch(items: list[Item]) -> float:
    """Lower quartile of line pitch / size between consecutive lines of one region."""
    ratios: list[float] = []
    prev: Line | None = None
    for it in items:
        if not isinstance(it, Line):
            prev = None
            continue
        if prev is not None and prev.region == it.region and abs(prev.size - it.size) < 0.5:
            r = (it.baseline - prev.baseline) / max(it.size, 1.0)
            if 0.8 <= r <= 3.0:
                ratios.append(r)
        prev = it
    if len(ratios) < 4:
        return 1.25
    ratios.sort()
    return ratios[len(ratios) // 4]


def _marker(line: Line) -> tuple[str, bool, int] | None:
    """(marker text, ordered, number) when the line opens with a list marker."""
    text = line.text
    m = _BULLET.match(text)
    if m:
        return m.group(0), False, 1
    m = _NUMBER.match(text)
    if not m:
        return None
    token = m.group(1) or m.group(2)
    if token.isdigit():
        return m.group(0), True, int(token)
    low = token.lower()
    if len(low) > 1 or low == "i":
        total, prev = 0, 0
        for ch in reversed(low):
            val = _ROMAN.get(ch, 0)
            total += -val if val < prev else val
            prev = max(prev, val)
        return m.group(0), True, max(total, 1)
    return m.group(0), True, ord(low) - ord("a") + 1


def _glyph(marker: str, ordered: bool) -> str:
    """The kind of a list marker: its bullet character, or "1" for any number or letter."""
    return "1" if ordered else marker.strip()[:1]


def _strip_marker(line: Line, marker: str) -> tuple[list[Char], float]:
    """Characters of the line after its marker, and the x where the item text starts."""
    want = "".join(marker.split())
    got = ""
    chars = line.chars
    i = 0
    while i < len(chars) and got != want:
        if chars[i].text.strip():
            got += chars[i].text
        i += 1
    while i < len(chars) and not chars[i].text.strip():
        i += 1
    rest = chars[i:]
    return rest, (rest[0].x0 if rest else line.x1)


def _bold_start(line: Line) -> bool:
    """True when the line's first word with letters is bold: a heading is bold from its
    start, while "Note **bold words**" ending a line is a bold phrase in a sentence."""
    word: list[Char] = []
    for c in line.chars:
        if c.text.isspace():
            if any(ch.text.isalpha() for ch in word):
                break
            word = []
        else:
            word.append(c)
    letters = [c for c in word if c.text.isalpha()]
    return not letters or all(c.bold for c in letters)


def _first_word_width(line: Line) -> float:
    vis = line.chars
    start = next((c for c in vis if c.text.strip()), None)
    if start is None:
        return 0.0
    end = start
    for c in vis[vis.index(start):]:
        if not c.text.strip():
            break
        end = c
    return end.x1 - start.x0


def _bold_body(items: list[Item], body: float) -> bool:
    """True when most characters at the body size are bold (a document set in bold)."""
    total = bold = 0
    for it in items:
        if isinstance(it, Line):
            for c in it.visible:
                if abs(c.size - body) < 0.5:
                    total += 1
                    bold += c.bold
    return total > 0 and bold > 0.6 * total


def _fills_column(run: list[Line], edges: dict[tuple[int, int, int], float]) -> bool:
    """True when most lines of the run (the last aside) end near the right edge of their
    column's text, as typewritten prose wraps at the margin; a listing's lines end where
    their code ends, at any width."""
    body = run[:-1] or run
    full = sum(1 for ln in body if edges.get(ln.region, ln.col_x1) - ln.x1
               <= 0.15 * max(ln.col_x1 - ln.col_x0, 1.0))
    return 2 * full >= len(body)


def _monospaced_prose(items: list[Item], edges: dict[tuple[int, int, int], float]) -> set[int]:
    """ids of the lines of runs of monospaced lines that read as prose (chars) and wrap
    like prose (short lines of words, ``Vote 12: 4 for``, are still a listing)."""
    out: set[int] = set()
    run: list[Line] = []

    def close() -> None:
        if reads_as_prose([ln.text for ln in run]) and _fills_column(run, edges):
            out.update(id(ln) for ln in run)
        run.clear()

    for it in items:
        if isinstance(it, Line) and it.visible and all(mono_glyph(c) for c in it.visible):
            run.append(it)
        else:
            close()
    close()
    return out


class _Builder:
    """State machine over the ordered lines of the whole document."""

    def __init__(self, items: list[Item]) -> None:
        self.items = items
        self.body = body_size(items)
        self.bold_body = _bold_body(items, self.body)
        self.pitch = _typical_pitch(items)
        self.edges: dict[tuple[int, int, int], float] = {}
        for it in items:
            if isinstance(it, Line):
                self.edges[it.region] = max(self.edges.get(it.region, 0.0), it.x1)
        self.mono_prose = _monospaced_prose(items, self.edges)
        self.keys = [self._heading_key(i) for i in range(len(items))]
        # a paper's author block: paragraphs with superscript marks, not headings
        self.front = {id(items[p]) for p in front_matter(items, self.keys)}
        self.keys = [None if id(it) in self.front else k
                     for it, k in zip(items, self.keys, strict=True)]
        self._number_tails()
        self.levels = self._heading_levels()
        self.blocks: list[Block] = []
        self.para: list[Line] = []
        self.list_items: list[_Item] = []
        self.stack: list[float] = []
        self.last_heading: Line | None = None
        self.next_item: Item | None = None
        self.code: list[Line] = []
        self.code_end: Line | None = None
        self.para_lines: dict[int, list[Line]] = {}  # id(Paragraph) -> its lines (quotes)
        self.places: list[tuple[int, float | None, Heading]] = []  # where headings start

    # ------------------------------------------------------------ headings
    def _heading_key(self, pos: int) -> tuple[float, bool] | None:
        """Style key (size, bold) when the line at ``pos`` looks like a heading."""
        line = self.items[pos]
        if not isinstance(line, Line):
            return None
        text = line.text
        words = text.split()
        if not words or len(words) > MAX_HEADING_WORDS or len(text) > 160:
            return None
        if not any(ch.isalpha() for ch in text):
            return None
        size = round(line.size * 2) / 2
        if size >= self.body * 1.15:
            return size, line.bold
        if size >= self.body * 1.05 and len(words) <= 14 and not text.endswith(".") \
                and self._isolated(pos):
            return size, line.bold  # slightly bigger and standing apart: a minor heading
        if size < self.body * 0.95 or len(words) > 14 or _marker(line) is not None \
                or text.endswith((".", ",", ";", ":")):
            return None
        if _CAPTION.match(text):
            return None  # "Table 2: ..." at body size, set apart in bold or italics
        if line.bold:
            if self.bold_body or self._in_sentence(pos) or not _bold_start(line):
                return None  # bold as the body's face, or a bold phrase filling a line
            return None if self._bold_prose(pos) else (size, True)
        if line.italic and self._isolated(pos):
            return size, False
        return None

    def _number_tails(self) -> None:
        """Give a heading's wrapped last line that holds only a number ("Delivery Plan" /
        "2010" in a narrow column) the heading's key: a line without letters is never a
        heading by itself, but it can end one."""
        for pos in range(1, len(self.items)):
            line, prev, key = self.items[pos], self.items[pos - 1], self.keys[pos - 1]
            if self.keys[pos] is not None or key is None or not isinstance(line, Line) \
                    or not isinstance(prev, Line):
                continue
            text = line.text
            if any(ch.isalpha() for ch in text) or not any(ch.isdigit() for ch in text) \
                    or len(text.split()) > 3:
                continue
            if (round(line.size * 2) / 2, line.bold) == key and self._same_flow(prev, line) \
                    and not self._gap_break(prev, line):
                self.keys[pos] = key

    def _isolated(self, pos: int) -> bool:
        """True when the line stands apart: a gap (or nothing) above, a new style below."""
        line = self.items[pos]
        assert isinstance(line, Line)
        prev = self.items[pos - 1] if pos else None
        if isinstance(prev, Line) and not any(ch.isalnum() for ch in prev.text):
            prev = self.items[pos - 2] if pos > 1 else None  # stray dots, rules of text
        nxt = self.items[pos + 1] if pos + 1 < len(self.items) else None
        if isinstance(prev, Line) and self._same_flow(prev, line) \
                and not self._gap_break(prev, line):
            return False
        return not (isinstance(nxt, Line) and nxt.italic and self._same_flow(line, nxt))

    def _in_sentence(self, pos: int) -> bool:
        """True when the line at ``pos`` sits inside a sentence of the text around it: the
        line above, right above it in the same flow, ends mid-sentence and the line below,
        right under it, goes on in lower case ("Note" / **bold words** / "matters.")."""
        line = self.items[pos]
        prev = self.items[pos - 1] if pos else None
        nxt = self.items[pos + 1] if pos + 1 < len(self.items) else None
        return (isinstance(line, Line) and isinstance(prev, Line) and isinstance(nxt, Line)
                and self._same_flow(prev, line) and not self._gap_break(prev, line)
                and self._same_flow(line, nxt) and not self._gap_break(line, nxt)
                and not prev.text.endswith((*_END, ";", ","))
                and nxt.text[:1].islower())

    def _bold_prose(self, pos: int) -> bool:
        """True when the bold line at ``pos`` is part of a run of bold lines (no gap
        between them) that ends a sentence: a bold paragraph, such as a quote set in bold
        italics, not a heading."""
        run = [pos]
        for step in (-1, 1):
            at = pos
            while 0 <= at + step < len(self.items) and len(run) < 40:
                a, b = self.items[min(at, at + step)], self.items[max(at, at + step)]
                if not (isinstance(a, Line) and isinstance(b, Line) and a.bold and b.bold
                        and self._same_flow(a, b) and abs(a.size - b.size) < 0.5
                        and not self._gap_break(a, b)):
                    break
                at += step
                run.append(at)
        if len(run) < 2:
            return False
        last = self.items[max(run)]
        assert isinstance(last, Line)
        return last.text.endswith((".", "!", "?", "\u3002"))

    def _heading_levels(self) -> dict[tuple[float, bool], int]:
        keys = {k for k in self.keys if k is not None}
        ordered = sorted(keys, key=lambda k: (-k[0], not k[1]))
        return {k: min(i + 1, 4) for i, k in enumerate(ordered)}

    # ------------------------------------------------------------ helpers
    def _same_flow(self, a: Line, b: Line) -> bool:
        if a.region == b.region:
            return True
        return a.page == b.page and a.region[2] == -1 and b.region[2] == -1

    def _gap_break(self, prev: Line, line: Line) -> bool:
        pitch = line.baseline - prev.baseline
        size = max(prev.size, line.size, 1.0)
        return pitch < -0.5 * size or pitch > size * max(self.pitch * 1.28, self.pitch + 0.3)

    def _continues(self, prev: Line, line: Line) -> bool:
        """True when ``line`` continues the paragraph whose last line is ``prev``."""
        size = max(prev.size, line.size, 1.0)
        if abs(prev.size - line.size) > max(0.8, 0.08 * size):
            return False
        text_prev = prev.text
        text = line.text
        if not self._same_flow(prev, line):
            # next column or page: continue a sentence that was cut off, or a paragraph
            # whose full last line (the next line's first word would not have fitted) ends
            # a sentence, the next starting at the margin
            if not text_prev.endswith(_END):
                return text[:1].islower()
            edge = self.edges.get(prev.region, prev.col_x1)
            return (len(self.para) >= 2 and line.x0 - line.col_x0 < 0.5 * size
                    and abs(prev.x0 - self.para[-2].x0) < 0.5 * size
                    and prev.x1 + _first_word_width(line) + 0.5 * size >= edge)
        if self._gap_break(prev, line):
            return False
        if line.x0 > prev.x0 + 0.8 * size and line.x0 - line.col_x0 < 6 * size:
            nxt = self.next_item
            hanging = (isinstance(nxt, Line) and self._same_flow(line, nxt)
                       and not self._gap_break(line, nxt) and abs(nxt.x0 - line.x0) < 0.5 * size)
            if not hanging:
                return False  # first-line indent of a new paragraph
        edge = self.edges.get(prev.region, prev.col_x1)
        run = self.para[-2:] if self.para and self.para[-1] is prev else [prev]
        if len(run) == 2 and abs(run[0].x0 - prev.x0) < 0.5 * size \
                and line.x0 < prev.x0 - 1.5 * size:
            return False  # back to the margin after lines indented alike (a quote ends)
        if prev.x0 - prev.col_x0 >= 1.5 * size and abs(line.x0 - prev.x0) < 0.5 * size \
                and all(abs(ln.x0 - prev.x0) < 0.5 * size for ln in self.para[-3:]):
            edge = min(edge, max(ln.x1 for ln in self.para[-3:]) + 0.5 * size)  # a quote's
        fits = prev.x1 + _first_word_width(line) + 0.5 * size < edge
        return not (fits and (text_prev.endswith(_END) or text[:1].isupper()
                              or text[:1].isdigit()))

    # ------------------------------------------------------------ emitters
    def flush_para(self) -> None:
        if self.para:
            parts = [ln.chars for ln in self.para]
            if _CAPTION.match(self.para[0].text) and len(parts) <= 3:
                parts = [caption_chars(part) for part in parts]  # its style, not emphasis
            inl = (front_inlines(self.para) if all(id(ln) in self.front for ln in self.para)
                   else to_inlines(join_lines(parts)))
            if inl:
                para = Paragraph(inl, prov=items_prov(self.para))
                self.blocks.append(para)
                self.para_lines[id(para)] = self.para
            self.para = []

    def flush_list(self) -> None:
        if not self.list_items:
            return
        roots: list[Block] = []
        stack: list[tuple[int, ListBlock]] = []
        for it in self.list_items:
            while stack and stack[-1][0] > it.level:
                stack.pop()
            if stack and stack[-1][0] == it.level:
                lb = stack[-1][1]
                restart = it.ordered and it.start != lb.start + len(lb.items)
                if lb.ordered != it.ordered or restart:
                    stack.pop()
            if not stack or stack[-1][0] < it.level:
                lb = ListBlock(ordered=it.ordered, items=[], start=it.start)
                if stack and stack[-1][1].items:
                    stack[-1][1].items[-1].blocks.append(lb)
                else:
                    roots.append(lb)
                stack.append((it.level, lb))
            blocks: list[Block] = []
            for para, lines in zip(it.paras, it.para_lines, strict=True):
                inl = to_inlines(join_lines(para))
                if inl:
                    blocks.append(Paragraph(inl, prov=items_prov(lines)))
            stack[-1][1].items.append(ListItem(blocks))
        self.blocks.extend(roots)
        self.list_items = []
        self.stack = []

    def flush(self) -> None:
        self.flush_para()
        self.flush_list()
        self.flush_code()

    def flush_code(self) -> None:
        """A run of monospaced lines as one code block, indented by x position."""
        if not self.code:
            return
        vis = [c for ln in self.code for c in ln.visible]
        widths = sorted((c.x1 - c.x0) / max(len(c.text), 1) for c in vis if c.x1 > c.x0)
        cw = max(widths[len(widths) // 2] if widths else 6.0, 1.0)
        left = min(min(ln.x0 for ln in self.code), min(ln.col_x0 for ln in self.code))
        lines: list[str] = []
        prev: Line | None = None
        for ln in self.code:
            if prev is not None and ln.baseline - prev.baseline > 1.9 * max(ln.size, 1.0) \
                    * self.pitch:
                lines.append("")  # a blank line kept in the listing
            indent = min(round((ln.x0 - left) / cw), 80)
            lines.append(" " * indent + "".join(c.text for c in ln.chars).strip())
            prev = ln
        text = "\n".join(lines)
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, CodeBlock) and self.code_end is not None \
                and (self.code_end.page < self.code[0].page
                     or not self._same_flow(self.code_end, self.code[0])):
            last.text += "\n" + text  # the listing goes on after a page or column break
            last.prov = merged(last.prov, items_prov(self.code))
        else:
            self.blocks.append(CodeBlock(text, prov=items_prov(self.code)))
        self.code_end = self.code[-1]
        self.code = []

    def is_code(self, line: Line) -> bool:
        """Every visible character in a fixed-pitch font (ASCII: CJK fonts are flagged too)."""
        vis = line.visible
        if not vis or id(line) in self.mono_prose \
                or not all(mono_glyph(c) for c in vis):
            return False
        if self.code and not (self._same_flow(self.code[-1], line) and line.baseline
                              - self.code[-1].baseline < 3.5 * max(line.size, 1.0)):
            self.flush_code()
        return bool(self.code) or len(vis) >= 3

    def add_heading(self, line: Line, key: tuple[float, bool]) -> None:
        level = self.levels.get(key, 4)
        prev = self.last_heading
        last = self.blocks[-1] if self.blocks else None
        if (prev is not None and isinstance(last, Heading) and last.level == level
                and self._same_flow(prev, line) and not self.para and not self.list_items
                and 0 < line.baseline - prev.baseline <= 2.0 * line.size):
            last.children = to_inlines(
                [*_styled_of(last.children), (" ", False, False, "", False),
                 *join_lines([line.chars])], keep_style=False)
            last.prov = merged(last.prov, items_prov([line]))
        else:
            self.flush()
            inl = to_inlines(join_lines([line.chars]), keep_style=False)
            heading = Heading(level, inl, prov=items_prov([line]))
            self.blocks.append(heading)
            self.places.append((line.page, line.top, heading))
        self.last_heading = line

    def add_list_line(self, line: Line, marker: tuple[str, bool, int]) -> None:
        self.flush_para()
        text, ordered, number = marker
        chars, text_x = _strip_marker(line, text)
        em = max(line.size, 1.0)
        x = line.x0
        glyph = _glyph(text, ordered)
        if self.list_items and not self._same_flow(self.list_items[-1].last, line):
            shift = self._column_shift(line, glyph)
            if shift is None and self.list_items[-1].last.page == line.page:
                self.flush_list()
            elif shift is not None:  # the list goes on in the next column
                self.stack = [s + shift for s in self.stack]
                last = self.list_items[-1]
                last.marker_x, last.text_x = last.marker_x + shift, last.text_x + shift
        if not self.stack:
            self.stack = [x]
        elif x > self.stack[-1] + 0.7 * em:
            self.stack.append(x)
        else:
            while len(self.stack) > 1 and x < self.stack[-1] - 0.7 * em:
                self.stack.pop()
        level = len(self.stack) - 1
        item = _Item(level, ordered, number, x, text_x, [[chars]], line, [[line]], glyph)
        self.list_items.append(item)

    def _column_shift(self, line: Line, glyph: str) -> float | None:
        """How far right the open list moved when it goes on in another column: from the
        latest item with the same kind of marker (a sibling of it, most often) to ``line``;
        None when no item has that marker (a new list)."""
        for item in reversed(self.list_items):
            if item.glyph == glyph:
                return line.x0 - item.marker_x
        return None

    def continue_list(self, line: Line) -> bool:
        """Add a marker-less line to the open list item if it belongs there."""
        item = self.list_items[-1]
        prev = item.last
        size = max(line.size, 1.0)
        if abs(prev.size - line.size) > max(0.8, 0.08 * size):
            return False
        if not self._same_flow(prev, line):
            if prev.text.endswith(_END) or not line.text[:1].islower():
                return False
            item.paras[-1].append(line.chars)
            item.para_lines[-1].append(line)
        elif self._gap_break(prev, line):
            if line.x0 < item.text_x - 0.5 * size:
                return False
            item.paras.append([line.chars])
            item.para_lines.append([line])
        elif line.x0 > item.marker_x + 0.3 * size:
            item.paras[-1].append(line.chars)
            item.para_lines[-1].append(line)
        else:
            edge = self.edges.get(prev.region, prev.col_x1)
            if prev.x1 + _first_word_width(line) + 0.5 * size < edge:
                return False
            item.paras[-1].append(line.chars)
            item.para_lines[-1].append(line)
        item.last = line
        return True

    # ------------------------------------------------------------ main
    def run(self) -> list[Block]:
        for pos, it in enumerate(self.items):
            self.next_item = self.items[pos + 1] if pos + 1 < len(self.items) else None
            if isinstance(it, FlowBlock):
                self.flush()
                self.blocks.append(it.payload)
                if not it.payload.prov:
                    it.payload.prov = items_prov([it])
                if isinstance(it.payload, Heading):
                    self.places.append((it.page, it.top if it.bottom > it.top else None,
                                        it.payload))
                self.last_heading = None
                continue
            if self.is_code(it):
                if not self.code:
                    self.flush()
                self.code.append(it)
                self.last_heading = None
                continue
            self.flush_code()
            key = self.keys[pos]
            if key is not None and key in self.levels:
                self.add_heading(it, key)
                continue
            self.last_heading = None
            marker = _marker(it)
            if marker is not None:
                self.add_list_line(it, marker)
                continue
            if self.list_items and self.continue_list(it):
                continue
            self.flush_list()
            if self.para and self._continues(self.para[-1], it) and not (
                    id(it) in self.front and starts_new(self.para[-1], it)):
                self.para.append(it)
            else:
                self.flush_para()
                self.para = [it]
        self.flush()
        blocks = gather_quotes(self.blocks, self.para_lines, self.edges)
        roll_up(blocks)  # lists and quotes: the boxes of their paragraphs
        return blocks


def _styled_of(inlines: list[Inline]) -> list[tuple[str, bool, bool, str, bool]]:
    text = "".join(n.text for n in inlines if isinstance(n, Text))
    return [(ch, False, False, "", False) for ch in text]


def _wrapped_cell_line(run: list[Line], line: Line) -> bool:
    """True for the next line of cells that wrap: right under the run, first column
    empty, every segment starting where a column of the run starts."""
    prev = run[-1]
    em = max(line.size, 1.0)
    if line.region != prev.region or line.baseline - prev.baseline > 1.6 * em:
        return False
    first = min(s.x0 for ln in run for s in ln.segs)
    if line.x0 < first + 2 * em:
        return False
    starts = [s.x0 for ln in run for s in ln.segs]
    return all(any(abs(s.x0 - x) <= 0.8 * em for x in starts) for s in line.segs)


def _first_cell_line(run: list[Line], line: Line) -> bool:
    """True for a one-segment line right under a run of table rows, starting where the
    run's first column starts and shorter than the run: a row with one cell filled."""
    prev = run[-1]
    em = max(line.size, 1.0)
    first = min(s.x0 for ln in run for s in ln.segs)
    width = max(ln.x1 for ln in run) - first
    return (line.region == prev.region and len(line.segs) == 1 and _marker(line) is None
            and 0 < line.baseline - prev.baseline <= 2.5 * em
            and abs(line.x0 - first) <= 0.8 * em and line.x1 - line.x0 < 0.6 * width
            and len(line.text.split()) <= 8)


def detect_aligned_tables(items: list[Item]) -> list[Item]:
    """Replace runs of column-aligned multi-segment lines by table blocks."""
    out: list[Item] = []
    run: list[Line] = []

    def close() -> None:
        tail: list[Item] = []
        while run and len(run[-1].segs) < 2:
            tail.insert(0, run.pop())  # single-cell lines after the last row are text
        if len(run) >= 3:
            table = aligned_table(run)
            if table is not None:
                out.append(FlowBlock(min(ln.x0 for ln in run), max(ln.x1 for ln in run),
                                     run[0].top, run[-1].bottom, table, run[0].page,
                                     run[0].region))
                run.clear()
                out.extend(tail)
                return
        out.extend(run)
        out.extend(tail)
        run.clear()

    for it in items:
        if not isinstance(it, Line):  # a block ends the run
            close()
            out.append(it)
            continue
        ok = (len(it.segs) >= 2 and _marker(it) is None
              and not any(len(s.text.strip()) <= 1 for s in it.segs[:1]))
        if not ok and run and _first_cell_line(run, it):
            run.append(it)  # a row with only its first cell filled (a group label)
            continue
        if ok and run and (it.region != run[-1].region
                           or it.baseline - run[-1].baseline > 3.0 * max(it.size, 1.0)):
            close()
        if ok or (run and _wrapped_cell_line(run, it)):
            run.append(it)
        else:
            close()
            out.append(it)
    close()
    return out


def build_blocks(items: list[Item], places: list[tuple[int, float | None, Heading]] | None = None
                 ) -> list[Block]:
    """Model blocks for the ordered lines and blocks of the whole document; ``places``,
    when given, receives (page, top or None, heading) for every heading, in order."""
    builder = _Builder(detect_aligned_tables(items))
    blocks = builder.run()
    if places is not None:
        places.extend(builder.places)
    return blocks

