"""Turn the characters of consecutive PDF lines into model inlines.

Soft line breaks become spaces; a word hyphenated at a line end ("inter-" + "national") is
joined without the hyphen when both halves are letters and the next part starts in lower
case. Runs of bold or italic characters become Strong / Emph; spaces at the edge of a styled
run are kept outside it so writers do not produce ``**word **``.
"""

from __future__ import annotations

import re

from render_pool.model import Emph, Inline, Strong, Text
from render_pool.readers.pdf_chars import HYPHENS, Char

_SPACES = re.compile(r"\s+")
Styled = list[tuple[str, bool, bool]]  # (character, bold, italic)


def join_lines(lines: list[list[Char]]) -> Styled:
    """Characters of several lines as one styled character stream with line ends resolved."""
    out: Styled = []
    for chars in lines:
        cur = [(c.text, c.bold, c.italic) for c in chars]
        while cur and not cur[-1][0].strip():
            cur.pop()
        while cur and not cur[0][0].strip():
            cur.pop(0)
        if not cur:
            continue
        if out:
            if (out[-1][0] in HYPHENS and len(out) >= 2 and out[-2][0].isalpha()
                    and cur[0][0].isalpha() and cur[0][0].islower()):
                out.pop()
            elif out[-1][0] == "\u00ad":
                out.pop()
            else:
                out.append((" ", out[-1][1] and cur[0][1], out[-1][2] and cur[0][2]))
        out.extend(cur)
    return [x for x in out if x[0] != "\u00ad"]


def plain(styled: Styled) -> str:
    """Text of a styled stream with whitespace collapsed."""
    return _SPACES.sub(" ", "".join(t for t, _, _ in styled)).strip()


def to_inlines(styled: Styled, keep_style: bool = True) -> list[Inline]:
    """Styled characters as Text / Strong / Emph inlines (whitespace collapsed)."""
    runs: list[tuple[str, bool, bool]] = []
    for t, b, i in styled:
        if not keep_style:
            b = i = False
        if not t.strip():
            t = " "
            if runs and runs[-1][0].endswith(" "):
                continue
            # a space takes the style of the run it sits in only if the style continues
            if runs:
                b, i = runs[-1][1], runs[-1][2]
        if runs and runs[-1][1] == b and runs[-1][2] == i:
            runs[-1] = (runs[-1][0] + t, b, i)
        else:
            runs.append((t, b, i))
    out: list[Inline] = []

    def emit(text: str, b: bool, i: bool) -> None:
        if not text:
            return
        node: Inline = Text(text)
        if not (b or i) or not text.strip():
            if out and isinstance(out[-1], Text):
                out[-1] = Text(out[-1].text + text)
            else:
                out.append(node)
            return
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()):]
        core = text.strip()
        if lead:
            emit(lead, False, False)
        node = Text(core)
        if i:
            node = Emph([node])
        if b:
            node = Strong([node])
        out.append(node)
        if trail:
            emit(trail, False, False)

    for text, b, i in runs:
        emit(text, b, i)
    # trim outer whitespace
    if out and isinstance(out[0], Text):
        out[0] = Text(out[0].text.lstrip())
        if not out[0].text:
            out.pop(0)
    if out and isinstance(out[-1], Text):
        out[-1] = Text(out[-1].text.rstrip())
        if not out[-1].text:
            out.pop()
    return out
