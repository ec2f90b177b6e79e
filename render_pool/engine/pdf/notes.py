"""Footnotes of untagged PDF pages: raised note markers tied to the note text at the page foot.

A marker is one to three digits set clearly smaller than the character before it and raised
above its baseline ("thousand.¹"). A note is a line in the lower part of the same page that
starts with the same number, below every marker line of its column (LibreOffice sets a
column's notes at that column's foot, and the next column's text may run lower); the lines
under it (until the next note or the page end) continue it. Only a marker with its note is
taken: a lone small digit (a chemical formula, an exponent) stays text. The marker becomes a
stand-in character that :func:`place_notes` turns into a NoteRef once the blocks are built;
the note lines leave the page flow and become ``Document.notes``, without the link back to
their marker.

Endnotes (:func:`take_endnotes`): a numbered list that ends the document (pandoc's notes
section as a browser prints it: "1. Text.↩"), numbered 1, 2, 3... in order, whose numbers
the raised markers of the text before it use (or every note of which ends with a
back-reference arrow), is read as the document's notes in the same way, wherever the
markers stand.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from render_pool.engine.model import Block, Inline, NoteRef, Paragraph, Text, map_inlines
from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import Item, Line
from render_pool.engine.pdf.links import INTERNAL

MARK = "\ue000"  # stands for a footnote reference inside a character stream
_NOTE_START = re.compile(r"^(\d{1,3})[.)]?\s+\S")
FOOT_ZONE = 0.55  # notes sit below this share of the page height


def _raised(c: Char, prev: Char, loose: bool) -> bool:
    """True when ``c`` is set clearly smaller than ``prev`` and raised above its baseline;
    ``loose``, also when only a little smaller (a browser's ``<sup>``, five sixths of the
    size) and raised by a quarter em."""
    rise = prev.baseline - c.baseline
    return (c.size < 0.8 * prev.size and rise > 0.2 * prev.size) or (
        loose and c.size < 0.9 * prev.size and rise > 0.25 * prev.size)


def _markers(line: Line, loose: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, number) of raised small digit runs in the line's characters (``loose``:
    see :func:`_raised`); a space put between the word and its mark (they are segments of
    their own) starts the run."""
    out: list[tuple[int, int, str]] = []
    chars = line.chars
    i = 1
    while i < len(chars):
        c, prev, begin = chars[i], chars[i - 1], i
        if prev.text == " " and prev.x1 - prev.x0 < 0.5 and i > 1:
            prev, begin = chars[i - 2], i - 1  # the space Line puts between segments
        if c.text.isdigit() and prev.text.strip() and not prev.text.isdigit() \
                and _raised(c, prev, loose):
            j = i
            while j < len(chars) and chars[j].text.isdigit() and chars[j].size < 0.9 * prev.size:
                j += 1
            number = "".join(ch.text for ch in chars[i:j])
            if len(number) <= 3:
                out.append((begin, j, number))
            i = j
            continue
        i += 1
    return out


def _mark(line: Line, begin: int, end: int, number: str) -> None:
    """Replace the marker's characters by the stand-in ``MARK`` + number."""
    c = line.chars[end - 1]
    line.chars[begin:end] = [Char(MARK + number, c.x0, c.x1, c.top, c.bottom, c.baseline,
                                  c.size, False, False)]


def _same_column(a: Line, b: Line) -> bool:
    return abs(a.col_x0 - b.col_x0) < 2 and abs(a.col_x1 - b.col_x1) < 2


def _listed(line: Line) -> bool:
    """True when the line's number is followed by "." or ")", as a list item's is."""
    m = _NOTE_START.match(line.text)
    return m is not None and line.text[len(m.group(1)):][:1] in ".)"


def _lowest_marker_above(note: Line, found: list[tuple[Line, tuple[int, int, str]]]) -> float:
    """The bottom of the lowest marker line that shares ``note``'s column span: a note sits
    below the markers of its own column (a column's notes stand at that column's foot, as
    LibreOffice sets them, while the next column's text may run lower); a note across the
    page sits below every marker."""
    return max((ln.bottom for ln, _ in found
                if ln.col_x0 < note.col_x1 - 1 and note.col_x0 < ln.col_x1 - 1), default=0.0)


def _unlinked_back(chars: list[Char], page: int) -> list[Char]:
    """The note's characters without the link back to its marker: an internal link to the
    note's own page (LibreOffice links a note's text to its marker), which would otherwise
    be read as a link to the heading nearest the marker."""
    back = f"{INTERNAL}{page}:"
    return [dataclasses.replace(c, link="") if c.link.startswith(back) else c for c in chars]


def _run_on(note: list[Line], items: list[Item], taken: set[int], foot: float) -> list[Line]:
    """The lines at the foot of the next column that go on with ``note`` when it breaks
    off mid-sentence at its own column's foot (LibreOffice runs a long note on there): a
    run of lines set apart from that column's text above, going on in lower case and ending
    level with the note or right above that column's own notes. None when there is no such
    run."""
    last = note[-1]
    page, band, column = last.region
    if column < 0 or last.text.rstrip().endswith((".", "!", "?", "\u3002")):
        return []
    col = sorted((it for it in items if it.region == (page, band, column + 1)),
                 key=lambda it: it.top)
    size = max(last.size, 1.0)
    end = next((i for i, it in enumerate(col) if id(it) in taken), len(col)) - 1
    below = col[end] if end >= 0 else None
    if not isinstance(below, Line) or (
            end == len(col) - 1 and abs(below.bottom - last.bottom) > size):
        return []
    run: list[Line] = [below]
    at = end - 1
    while at >= 0:
        above = col[at]
        if not isinstance(above, Line) or run[0].top - above.bottom >= 0.6 * size:
            break  # the gap before the notes, or the column's text
        run.insert(0, above)
        at -= 1
    first = next((c for c in run[0].text if c.isalpha()), "")
    if at < 0 or run[0].top < foot or not first.islower() \
            or any(id(ln) in taken for ln in run) or _NOTE_START.match(run[0].text):
        return []
    return run


def take_notes(items: list[Item], height: float, page: int,
               notes: dict[str, list[Block]]) -> None:
    """Tie the page's markers to its notes, in place (see the module docstring)."""
    lines = [it for it in items if isinstance(it, Line)]
    found = [(ln, m) for ln in lines for m in _markers(ln)]
    if not found:
        return
    wanted = {m[2] for _, m in found}
    lowest = max(ln.bottom for ln, _ in found)
    starts: dict[str, Line] = {}
    for ln in lines:
        if ln.top < max(_lowest_marker_above(ln, found), FOOT_ZONE * height):
            continue
        if ln.top < lowest and _listed(ln):
            continue  # beside a lower marker, only a note's own "2 Text" opens a note
        m = _NOTE_START.match(ln.text)
        if m and m.group(1) in wanted and (m.group(1) not in starts or (
                _listed(starts[m.group(1)]) and not _listed(ln))):
            starts[m.group(1)] = ln  # "2 Text" outranks a list item's "2. Text"
    if not starts:
        return
    # each note: its first line and the lines below it in the same column, up to the next
    # note's first line (a two-column page goes on beside the notes)
    body: dict[str, list[Line]] = {}
    for number, start in starts.items():
        body[number] = [start]
    for ln in sorted(lines, key=lambda ln: ln.top):
        owner = max((s for s in starts.values() if s.top < ln.top and _same_column(s, ln)),
                    key=lambda s: s.top, default=None)
        if owner is not None and not any(s is ln for s in starts.values()):
            number = next(n for n, s in starts.items() if s is owner)
            body[number].append(ln)
    taken = {id(ln) for note_lines in body.values() for ln in note_lines}
    for note_lines in body.values():
        more = _run_on(note_lines, items, taken, FOOT_ZONE * height)
        note_lines.extend(more)
        taken.update(id(ln) for ln in more)
    drop: set[int] = set()
    for number, note_lines in body.items():
        first = note_lines[0]
        chars = list(first.chars)
        while chars and not chars[0].text.isdigit():
            chars.pop(0)
        while chars and (chars[0].text.isdigit() or chars[0].text in ".) "):
            chars.pop(0)
        parts = [chars, *(ln.chars for ln in note_lines[1:])]
        inl = to_inlines(join_lines([_unlinked_back(part, page) for part in parts]))
        notes[f"p{page + 1}-{number}"] = [Paragraph(inl)] if inl else []
        drop.update(id(ln) for ln in note_lines)
    for ln, (begin, end, number) in sorted(found, key=lambda f: -f[1][0]):
        if number in body:
            _mark(ln, begin, end, number)
    items[:] = [it for it in items if id(it) not in drop]


def _note_runs(lines: list[Line]) -> dict[int, list[Line]] | None:
    """The notes ending ``lines``: number -> its lines, or None when the lines do not end
    with notes numbered 1, 2, 3... in order. A note's lines are its first line ("2. Text")
    and the lines under it indented past its number; lines in between that are neither (a
    table row beside them in another column) stay in the flow."""
    starts = [i for i, ln in enumerate(lines) if (m := _NOTE_START.match(ln.text))
              and m.group(1) == "1"]
    for first in reversed(starts[-3:]):
        notes: dict[int, list[Line]] = {}
        stray = 0
        for ln in lines[first:]:
            m = _NOTE_START.match(ln.text)
            if m and int(m.group(1)) == len(notes) + 1 and ln.text[len(m.group(1))] in ".)":
                notes[len(notes) + 1] = [ln]
                continue
            if not notes:
                break
            last = notes[len(notes)][-1]
            em = max(ln.size, 1.0)
            if ln.page == last.page and ln.region[2] == last.region[2] \
                    and 0 < ln.baseline - last.baseline < 2.5 * em \
                    and ln.x0 > notes[len(notes)][0].x0 + 0.5 * em:
                notes[len(notes)].append(ln)
            else:
                stray += 1
        if notes and stray <= len(notes):
            return notes
    return None


_BACK_REFS = "\u21a9\ufe0e\ufe0f"  # the arrow back to the mark (and its variation selectors)


def take_endnotes(pages: list[list[Item]], notes: dict[str, list[Block]]) -> None:
    """Read the numbered notes that end the document as its notes, tied to the raised
    markers before them on any page (see the module docstring); in place, like
    :func:`take_notes`. Each page's own notes are to be taken first."""
    lines = [it for items in pages for it in items if isinstance(it, Line)]
    runs = _note_runs(lines)
    if not runs:
        return
    first = next(i for i, ln in enumerate(lines) if ln is runs[1][0])
    found = [(ln, m) for ln in lines[:first] for m in _markers(ln, loose=True)
             if int(m[2]) in runs]
    marked = {int(m[2]) for _, m in found}
    backed = all(_BACK_REFS[0] in ln[-1].text for ln in runs.values())
    if not backed and len(marked) * 2 < len(runs):
        return  # a numbered list at the end, not notes
    drop: set[int] = set()
    for number, note_lines in runs.items():
        chars = list(note_lines[0].chars)
        while chars and (chars[0].text.isdigit() or chars[0].text in ".) "):
            chars.pop(0)
        parts = [chars, *(ln.chars for ln in note_lines[1:])]
        parts = [[c for c in part if c.text not in _BACK_REFS] for part in parts]
        inl = to_inlines(join_lines(parts))
        notes[f"end-{number}"] = [Paragraph(inl)] if inl else []
        drop.update(id(ln) for ln in note_lines)
    for ln, (begin, end, mark) in sorted(found, key=lambda f: -f[1][0]):
        _mark(ln, begin, end, mark)
    for items in pages:
        items[:] = [it for it in items if id(it) not in drop]


def place_marks(where: list[Block], note_for: Callable[[str], str], *,
                numbered: bool = True) -> None:
    """Replace every marker character in the inlines under ``where`` by a NoteRef, in
    document order. ``note_for(number)`` gives the marker's note id, or "" to keep the
    number as text; ``numbered`` markers are ``MARK`` and the digits after it (untagged
    pages), the others ``MARK`` alone (tagged pages, whose ids come in marker order).
    One walk for both readers, :func:`render_pool.engine.model.map_inlines`."""

    def split(node: Inline) -> list[Inline] | None:
        if not isinstance(node, Text) or MARK not in node.text:
            return None
        head, *rest = node.text.split(MARK)
        out: list[Inline] = [Text(head)] if head else []
        for part in rest:
            digits = len(part) - len(part.lstrip("0123456789")) if numbered else 0
            number, tail = part[:digits], part[digits:]
            note_id = note_for(number)
            if note_id:
                out.append(NoteRef(note_id))
            elif number:
                out.append(Text(number))
            if tail:
                out.append(Text(tail))
        return out

    map_inlines(where, split)


def place_notes(blocks: list[Block], note_ids: list[str]) -> None:
    """Turn marker characters into NoteRefs throughout the blocks, in document order.

    Markers carry their number; the note id is the first unused id with that number
    (``p<page>-<number>``), so notes numbered anew on each page stay apart.
    """
    queue: dict[str, list[str]] = {}
    for note_id in note_ids:
        queue.setdefault(note_id.rsplit("-", 1)[-1], []).append(note_id)

    def next_id(number: str) -> str:
        ids = queue.get(number)
        return ids.pop(0) if ids else ""

    place_marks(blocks, next_id)
