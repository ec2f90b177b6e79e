"""Nesting limits for Markdown, checked in one linear pass before the parser runs.

Why: the Markdown parser's time grows faster than the input for deep nesting (2,000 ``[``
followed by 2,000 ``]`` take seconds; 200 nested quotes take six), and very deep nesting ends
in a recursion error. Real documents stay far below these limits; hostile ones get a clear
40003 at once instead of occupying a worker. Fenced code is not Markdown and is skipped.
"""

from __future__ import annotations

import re

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
    return CorruptDocument(f"the Markdown nests {what} deeper than {limit} levels")


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
                                  "emphasis characters (* _ ~)")
        if "[" in line or "]" in line:
            for part in _BRACKET_OR_ESCAPE.findall(line):  # an escaped bracket is text
                if part == "[":
                    brackets += 1
                    if brackets > MAX_BRACKET_DEPTH:
                        raise _too_deep("brackets", MAX_BRACKET_DEPTH)
                elif part == "]" and brackets:
                    brackets -= 1
