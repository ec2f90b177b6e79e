"""Nesting limits for Markdown, checked in one linear pass before the parser runs.

Why: the Markdown parser's time grows faster than the input for deep nesting (2,000 ``[``
followed by 2,000 ``]`` take seconds; 200 nested quotes take six), and very deep nesting ends
in a recursion error. Real documents stay far below these limits; hostile ones get a clear
40003 at once instead of occupying a worker. Fenced code is not Markdown and is skipped.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from render_pool.errors import CorruptDocument

MAX_CONTAINER_DEPTH = 32  # block quotes and lists inside each other
MAX_BRACKET_DEPTH = 64  # [ inside [ within one paragraph
MAX_DELIMITER_RUN = 64  # a run of * _ or ~ (emphasis delimiters)

_MARKER = r"(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))[ \t]*"
_DEEP_MARKERS = re.compile(rf"[ \t]*(?:{_MARKER}){{{MAX_CONTAINER_DEPTH + 1}}}")
_MARKER_START = frozenset(">-+*0123456789")
_LONG_RUNS = tuple(c * (MAX_DELIMITER_RUN + 1) for c in "*_~")
_THEMATIC_BREAK = re.compile(r"[ \t]*(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BRACKET_OR_ESCAPE = re.compile(r"\\.|[\[\]]")


def _too_deep(what: str, limit: int) -> CorruptDocument:
    return CorruptDocument(f"the Markdown nests {what} deeper than {limit} levels; "
                           f"the limit is {limit}")


def check_nesting(text: str) -> None:
    """Raise :class:`CorruptDocument` (40003) when ``text`` nests quotes/lists, brackets or
    emphasis delimiters past the limits."""
    fence = ""
    brackets = 0
    for line in text.split("\n"):
        head = line.lstrip(" \t")
        indent = len(line) - len(head)
        if head.startswith(("```", "~~~")) and indent <= 3:
            mark = head[:len(head) - len(head.lstrip(head[0]))]
            if not fence:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not head[len(mark):].strip():
                fence = ""
            continue
        if fence:
            continue
        if not head:
            brackets = 0  # brackets never pair across paragraphs
            continue
        if (head[0] in _MARKER_START or indent > 2 * MAX_CONTAINER_DEPTH) and (
                indent // 2 > MAX_CONTAINER_DEPTH or _DEEP_MARKERS.match(line)):
            raise _too_deep("quotes or lists", MAX_CONTAINER_DEPTH)
        if any(run in line for run in _LONG_RUNS) and not _THEMATIC_BREAK.match(line):
            raise CorruptDocument(f"the Markdown has a run of more than {MAX_DELIMITER_RUN} "
                                  f"emphasis characters (* _ ~); the limit is "
                                  f"{MAX_DELIMITER_RUN}")
        if "[" in line or "]" in line:
            for part in _BRACKET_OR_ESCAPE.findall(line):  # an escaped bracket is text
                if part == "[":
                    brackets += 1
                    if brackets > MAX_BRACKET_DEPTH:
                        raise _too_deep("brackets", MAX_BRACKET_DEPTH)
                elif part == "]" and brackets:
                    brackets -= 1


# ------------------------------------------------------------------ parsing cost
#
# What makes the Markdown parser (marko) slow, measured (one parse; /md/convert parses twice):
# - link openers "](" whose destination runs on without a space: each rescans the run, so
#   "[a](" * 4000 takes 5 s and * 25000 minutes; in runs of 64 it is linear (100,000
#   openers: 3-4 s, what a legitimate document of that size takes too);
# - footnote definitions: 4000 take 3 s, 25000 take 8-12 s (superlinear);
# - reference definitions in one block: 4000 take 6 s (quadratic), 1000 take 0.5 s; five
#   blocks of 1000 take 2.5 s;
# - emphasis delimiter runs are linear (25000: 0.12 s) but still counted;
# - nesting: :func:`check_nesting`.
# A legitimate document stays far below every limit (a 2 MB README with thousands of
# links and hundreds of footnotes passes, see tests/test_markdown_cost.py).


@dataclass(frozen=True)
class MarkdownLimits:
    """Most of each costly construct a Markdown input may hold (the service's settings)."""

    link_openers: int = 100_000  # "](" in the whole text
    link_openers_per_run: int = 64  # "](" in one run of text without whitespace
    footnotes: int = 2_000  # footnote definitions "[^x]:"
    reference_definitions: int = 5_000  # "[x]: url" in the whole text
    reference_definitions_per_block: int = 1_000  # ... in one block (no blank line)
    delimiter_runs: int = 300_000  # runs of * _ ~


_LINK_OPENER = re.compile(r"\]\(")
_SPACE = re.compile(r"\s")
_FOOTNOTE_DEF = re.compile(r"^[ ]{0,3}\[\^[^\]\n]+\]:", re.M)
_REFERENCE_DEF = re.compile(r"^[ ]{0,3}\[(?!\^)[^\]\n]+\]:", re.M)
_BLANK = re.compile(r"\n[ \t]*(?=\n)")
_DELIMITER_RUN = re.compile(r"\*+|_+|~+")


def _most_per_run(text: str, positions: list[int]) -> int:
    """Largest number of ``positions`` (link openers) inside one run without whitespace;
    linear: only the text between consecutive openers is searched, once."""
    most = run = 0
    for k, pos in enumerate(positions):
        if k and _SPACE.search(text, positions[k - 1] + 2, pos):
            run = 0
        run += 1
        most = max(most, run)
    return most


def _most_per_block(text: str, positions: list[int]) -> int:
    """Largest number of ``positions`` inside one block (text between blank lines)."""
    blanks = [m.start() for m in _BLANK.finditer(text)]
    counts: dict[int, int] = {}
    for pos in positions:
        block = bisect.bisect_left(blanks, pos)
        counts[block] = counts.get(block, 0) + 1
    return max(counts.values(), default=0)


def markdown_costs(text: str) -> dict[str, int]:
    """The counts :class:`MarkdownLimits` bounds, measured in one linear pass per count."""
    openers = [m.start() for m in _LINK_OPENER.finditer(text)]
    references = [m.start() for m in _REFERENCE_DEF.finditer(text)]
    return {
        "link_openers": len(openers),
        "link_openers_per_run": _most_per_run(text, openers),
        "footnotes": sum(1 for _ in _FOOTNOTE_DEF.finditer(text)),
        "reference_definitions": len(references),
        "reference_definitions_per_block": _most_per_block(text, references),
        "delimiter_runs": _DELIMITER_RUN.subn("", text)[1],
    }


_WHAT = {
    "link_openers": "link openers ('](')",
    "link_openers_per_run": "link openers ('](') in one run of text without spaces",
    "footnotes": "footnote definitions",
    "reference_definitions": "link reference definitions",
    "reference_definitions_per_block": "link reference definitions in one block",
    "delimiter_runs": "emphasis delimiter runs (* _ ~)",
}


def check_cost(text: str, limits: MarkdownLimits | None = None, *,
               raise_error: bool = True) -> str:
    """Refuse Markdown that would take the parser too long, before it is parsed: raises
    :class:`CorruptDocument` (40003) naming the figure and the limit, e.g. "Markdown has
    25000 link openers ('](') in one run of text without spaces; the limit is 64".
    Returns that message instead of raising when ``raise_error`` is false ("" when fine)."""
    limits = limits or MarkdownLimits()
    for name, value in markdown_costs(text).items():
        limit = getattr(limits, name)
        if value > limit:
            message = f"Markdown has {value} {_WHAT[name]}; the limit is {limit}"
            if raise_error:
                raise CorruptDocument(message)
            return message
    return ""


def check_markdown(text: str, limits: MarkdownLimits | None = None) -> None:
    """Pool job: the cost check then the nesting check (both 40003), so hostile Markdown
    is refused in well under a second, before the parser runs."""
    check_cost(text, limits)
    check_nesting(text)
