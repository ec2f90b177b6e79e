"""The author block of a paper: the lines between its title and its first section.

Why: authors and affiliations are set a little bigger than the body and stand apart, which
is how the heading rules of ``blocks.py`` see a heading, so every author line of a paper
came out as a level-2 or level-3 heading. A line below the title that reads as names
(a list of capitalised names, affiliation marks), an affiliation (university, institute,
company), an address or a date is front matter: a paragraph, its marks superscripts.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from itertools import groupby

from render_pool.engine.common.inlines import merge_texts, strip_edges
from render_pool.engine.model import Inline, Superscript, Text
from render_pool.engine.pdf.chars import Char
from render_pool.engine.pdf.inlines import join_lines, to_inlines
from render_pool.engine.pdf.layout import Item, Line
from render_pool.engine.pdf.links import INTERNAL
from render_pool.engine.pdf.notes import MARK

Key = tuple[float, bool] | None
MAX_FRONT_LINES = 30  # lines looked at below the title
_MARKS = "*\u2217\u2020\u2021\u00a7\u00b6#$\u2016+\u22c6\u2666\u2663\u2660\u2665"
_AFFILIATION = re.compile(
    r"\b(universit\w*|univ\.|institut\w*|college|school|department|dept\.|faculty|"
    r"laborator\w*|lab|labs|research|corporation|corp\.|inc\.?|ltd\.?|gmbh|centre|center|"
    r"academy|hospital|foundation|ai|google|microsoft|facebook|meta|amazon|ibm)\b",
    re.IGNORECASE)
_DATE = re.compile(r"\b(january|february|march|april|may|june|july|august|september|october|"
                   r"november|december)\b.*\b(1[89]|20)\d\d\b", re.IGNORECASE)
_NAME = re.compile(r"^(?:[A-Z][\w'\u2019.-]*|[a-z]{1,3}|[A-Z]\.)$")
_SPLIT = re.compile(r",|\band\b|&|;")


def raised(mark: Char, size: float, baseline: float) -> bool:
    """A character set smaller than the line and above its baseline (a superscript)."""
    return mark.size < 0.85 * size and baseline - mark.baseline > 0.15 * max(size, 1.0)


def _line_marks(line: Line) -> list[bool]:
    """Which characters of ``line`` are raised marks."""
    vis = line.visible
    if not vis:
        return [False] * len(line.chars)
    size = Counter(round(c.size, 1) for c in vis).most_common(1)[0][0]
    base = sorted(c.baseline for c in vis if abs(c.size - size) < 0.2)
    baseline = base[len(base) // 2] if base else line.baseline
    # a footnote's mark (``notes.MARK``) becomes a note reference, not a superscript
    return [bool(c.text.strip()) and MARK not in c.text and raised(c, size, baseline)
            for c in line.chars]


def _names(text: str) -> bool:
    """A list of personal names: parts of one to five capitalised words between commas or
    ``and``, at least one of two words or more."""
    parts = [p.split() for p in _SPLIT.split(text) if p.strip()]
    return bool(parts) and any(len(p) >= 2 for p in parts) and all(
        1 <= len(p) <= 5 and all(_NAME.match(w) for w in p) for p in parts)


def author_like(line: Line) -> int:
    """How surely a line reads as front matter: 2 for a list of names with affiliation
    marks or of several people, or an e-mail address; 1 for one name, an affiliation
    (university, institute, company) or a date; 0 for anything else."""
    marks = _line_marks(line)
    text = "".join(c.text for c, m in zip(line.chars, marks, strict=True) if not m)
    has_marks = any(marks) or any(m in text for m in _MARKS + MARK)
    text = re.sub(MARK + r"\d*", " ", text)  # a footnote's mark after the name
    text = " ".join(text.translate({ord(m): " " for m in _MARKS}).split())
    if not text:
        return 1 if any(marks) else 0
    if "@" in text:
        return 2
    if _AFFILIATION.search(text) or _DATE.search(text):
        return 1
    names = _names(text)
    if names and (has_marks or len(_SPLIT.split(text)) > 1):
        return 2
    return 1 if names else 0


def front_matter(items: list[Item], keys: list[Key]) -> set[int]:
    """Positions of the author block's lines: after the first heading (the title) of the
    first page, up to the first heading that is no front matter or the first body line;
    none unless one line surely is (names with marks, several names, an address). A
    heading style that marks one author line marks the block's other lines set in it
    (``Facebook AI`` under ``University of Washington``)."""
    start = next((i for i, k in enumerate(keys) if k is not None), None)
    title = items[start] if start is not None else None
    if start is None or not isinstance(title, Line):
        return set()
    block: list[int] = []
    maybe: list[int] = []  # headings in an author line's style that read as nothing
    sure = False
    end = start + 1
    for end in range(start + 1, min(len(items), start + 1 + MAX_FRONT_LINES)):
        line = items[end]
        if not isinstance(line, Line) or line.page != title.page:
            break
        if keys[end] == keys[start] and not block:
            continue  # the title's second line
        how = author_like(line)
        sure = sure or how == 2
        if how:
            block.append(end)
        elif keys[end] is not None and keys[end] in {keys[p] for p in block}:
            maybe.append(end)
        elif keys[end] is None and len(line.text.split()) <= 3:
            continue  # a stray short line (a lone mark, a word of an address)
        else:
            break
    if not sure:
        return set()
    # a style the paper's sections use too is theirs (``Abstract`` set like the authors)
    later = set(keys[end:])
    return set(block) | {p for p in maybe if keys[p] not in later}


def starts_new(prev: Line, line: Line) -> bool:
    """Whether a front-matter line starts a paragraph of its own after ``prev``: it opens
    with an affiliation mark, or reads as another kind (names, then an affiliation)."""
    marks = _line_marks(line)
    first = next((m for c, m in zip(line.chars, marks, strict=True) if c.text.strip()), False)
    return first or author_like(prev) != author_like(line)


def front_inlines(lines: list[Line]) -> list[Inline]:
    """The inlines of front-matter lines, raised marks as superscripts (not links, not
    part of the name's text)."""
    out: list[Inline] = []
    for line in lines:
        if out:
            out.append(Text(" "))
        marks = _line_marks(line)
        # a jump inside the paper (a mark linked to its footnote) is no link of the names
        pairs = [(replace(c, link="") if c.link.startswith(("#", INTERNAL)) else c, m)
                 for c, m in zip(line.chars, marks, strict=True)]
        opening = True  # no text of the line yet: a mark here opens an affiliation
        for is_mark, group in groupby(pairs, key=lambda p: p[1]):
            run = [c for c, _ in group]
            if is_mark:
                if out and isinstance(out[-1], Text):
                    out[-1] = Text(out[-1].text.rstrip())
                out.append(Superscript([Text("".join(c.text for c in run))]))
                continue
            if opening and out and isinstance(out[-1], Superscript):
                run = run[next((k for k, c in enumerate(run) if c.text.strip()), len(run)):]
                if not run:
                    continue
            opening = opening and not any(c.text.strip() for c in run)
            if run[0].text == " " and out:
                out.append(Text(" "))
            out.extend(to_inlines(join_lines([run]), keep_style=False))
            if run[-1].text == " ":
                out.append(Text(" "))
    return strip_edges(merge_texts(out))
