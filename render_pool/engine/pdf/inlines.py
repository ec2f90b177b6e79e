"""Turn the characters of consecutive PDF lines into model inlines.

Soft line breaks become spaces; a word hyphenated at a line end ("inter-" + "national") is
joined without the hyphen when both halves are letters and the next part starts in lower
case. Runs of bold or italic characters become Strong / Emph; spaces at the edge of a styled
run are kept outside it so writers do not produce ``**word **``. Characters inside a link
area become a Link; runs in a fixed-pitch font (ASCII only: CJK fonts are often flagged
fixed-pitch) become Code spans when the surrounding text is not monospaced too.
"""

from __future__ import annotations

import re
from itertools import groupby

from render_pool.engine.model import Code, Emph, Inline, Link, Strong, Text
from render_pool.engine.pdf.chars import HYPHENS, Char, is_cjk, mono_glyph

_SPACES = re.compile(r"\s+")
StyledChar = tuple[str, bool, bool, str, bool]  # (character, bold, italic, link, mono)
Styled = list[StyledChar]


def join_lines(lines: list[list[Char]]) -> Styled:
    """Characters of several lines as one styled character stream with line ends resolved."""
    out: Styled = []
    for chars in lines:
        cur = [(c.text, c.bold, c.italic, c.link, mono_glyph(c))
               for c in chars]
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
            elif is_cjk(out[-1][0][-1:]) and is_cjk(cur[0][0]):
                pass  # CJK text runs on over a line break without a space
            else:
                out.append((" ", out[-1][1] and cur[0][1], out[-1][2] and cur[0][2],
                            out[-1][3] if out[-1][3] == cur[0][3] else "",
                            out[-1][4] and cur[0][4]))
        out.extend(cur)
    return [x for x in out if x[0] != "\u00ad"]


def plain(styled: Styled) -> str:
    """Text of a styled stream with whitespace collapsed."""
    return _SPACES.sub(" ", "".join(x[0] for x in styled)).strip()


def _spread(styled: Styled) -> Styled:
    """Give a space the link and monospace of its neighbours when both sides share them."""
    out = list(styled)
    for i, x in enumerate(out):
        if x[0].strip() or i == 0 or i == len(out) - 1:
            continue
        prev, nxt = out[i - 1], out[i + 1]
        link = prev[3] if prev[3] == nxt[3] else ""
        mono = prev[4] and nxt[4]
        if link != x[3] or mono != x[4]:
            out[i] = (x[0], x[1], x[2], link, mono)
    return out


def to_inlines(styled: Styled, keep_style: bool = True) -> list[Inline]:
    """Styled characters as Text / Strong / Emph / Code / Link inlines (whitespace collapsed).

    A paragraph set entirely in a monospaced font gives no Code span: block-level code is
    the caller's decision.
    """
    styled = _spread(styled)
    visible = [x for x in styled if x[0].strip()]
    all_mono = bool(visible) and all(x[4] for x in visible)
    out: list[Inline] = []
    for (link, mono), group in groupby(styled, key=lambda x: (x[3], x[4] and not all_mono)):
        chars = list(group)
        text = "".join(x[0] for x in chars)
        if not text.strip():
            _append_text(out, " ")
            continue
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()):]
        if lead:
            _append_text(out, " ")
        if mono:
            inner: list[Inline] = [Code(_SPACES.sub(" ", text.strip()))]
        else:
            inner = _styled_inlines(chars, keep_style)
            inner = _trim(inner)
        if link:
            out.append(Link(inner, link))
        else:
            for node in inner:
                if isinstance(node, Text):
                    _append_text(out, node.text)
                else:
                    out.append(node)
        if trail:
            _append_text(out, " ")
    return _trim(out)


def _append_text(out: list[Inline], text: str) -> None:
    if out and isinstance(out[-1], Text):
        merged = out[-1].text + text
        out[-1] = Text(_SPACES.sub(" ", merged) if not merged.strip() else merged.replace(
            "  ", " "))
    else:
        out.append(Text(text))


def _trim(out: list[Inline]) -> list[Inline]:
    """Drop outer whitespace of an inline list."""
    if out and isinstance(out[0], Text):
        out[0] = Text(out[0].text.lstrip())
        if not out[0].text:
            out.pop(0)
    if out and isinstance(out[-1], Text):
        out[-1] = Text(out[-1].text.rstrip())
        if not out[-1].text:
            out.pop()
    return out


def _styled_inlines(styled: Styled, keep_style: bool) -> list[Inline]:
    """Text / Strong / Emph for characters with bold and italic flags."""
    runs: list[tuple[str, bool, bool]] = []
    for t, b, i, _link, _mono in styled:
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
    return out
