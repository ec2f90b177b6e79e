"""The Markdown writer's short cuts agree with the rules they skip (issue 34, item 1).

Emphasis flanking, code-span fences and link destinations each take a short path for the
common case (a run with letters at both edges, a span without backticks, a destination
without ``&`` or line breaks). Each test compares the writer's function with the rule as
written before the short cut (a reference copy here) over many inputs.
"""

from __future__ import annotations

import itertools
import random
import re
import string
import unicodedata

from render_pool.engine.markdown.render import (
    _ASCII_ALNUM,
    _code_span,
    _flanks_ok,
    _link_dest,
    _needs_escape,
)


def _punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def _space(ch: str | None) -> bool:
    return ch is None or ch.isspace()


def _flanks_reference(mark: str, body: str, before: str | None, after: str | None) -> bool:
    """CommonMark flanking as the writer decided it before its short cut."""
    ch = mark[0]
    if not body or before == ch or after == ch:
        return False
    first, last = body[0], body[-1]
    if last == "\\":
        return False
    if first in "*~" or last in "*~" or before in ("*", "~") or after in ("*", "~"):
        return False
    if ch == "~" and (_punct(first) or _punct(last)):
        return False
    left_ok = not first.isspace() and (not _punct(first) or _space(before)
                                       or _punct(before))  # type: ignore[arg-type]
    right_ok = not last.isspace() and (not _punct(last) or _space(after)
                                       or _punct(after))  # type: ignore[arg-type]
    return left_ok and right_ok


def test_emphasis_flanking_short_cut_agrees_with_the_rule() -> None:
    edges = ["a", "Z", "7", " ", "*", "~", "\\", ".", "(", "é", "_", "\u00a0", "€"]
    neighbours: list[str | None] = [None, *edges]
    bodies = ["", *edges, *("".join(p) for p in itertools.product(edges, repeat=2))]
    for mark, body, before, after in itertools.product(
            ("*", "**", "~~"), bodies, neighbours, neighbours):
        assert _flanks_ok(mark, body, before, after) == _flanks_reference(
            mark, body, before, after), (mark, body, before, after)


def test_short_cut_edges_are_neither_space_punctuation_nor_delimiters() -> None:
    """What the short cut takes for granted of an edge in :data:`_ASCII_ALNUM`."""
    for ch in _ASCII_ALNUM:
        assert not ch.isspace() and not _punct(ch) and ch not in "*~\\"


def _code_span_reference(text: str, in_table: bool) -> str:
    text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or (
        text.startswith(" ") and text.endswith(" ") and text.strip()
    ):
        text = f" {text} "
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}"


_DEST_AMP = re.compile(r"&(?=#|[A-Za-z][A-Za-z0-9]{1,31};)")


def _link_dest_reference(url: str, in_table: bool) -> str:
    url = _DEST_AMP.sub("&amp;", url.replace("\n", "%0A").replace("\r", "%0D"))
    if url == "" or re.search(r"[\s<>()\\\x00-\x1f]", url):
        url = "<" + re.sub(r"([\\<>])", r"\\\1", url) + ">"
    if in_table:
        url = url.replace("|", "\\|")
    return url


def test_code_spans_and_destinations_agree_with_the_rule() -> None:
    rng = random.Random(34)
    parts = ["a", "f()", "`", "``", " ", "|", "\n", "\r\n", "&", "amp;", "#9;", "<", ">",
             "\\", "(", ")", "\t", "\x01", "é", "https://e.com/x?a=1", "%20", "javascript:"]
    for _ in range(20000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))
        for in_table in (False, True):
            assert _code_span(text, in_table) == _code_span_reference(text, in_table), text
            assert _link_dest(text, in_table) == _link_dest_reference(text, in_table), text


def test_the_escape_check_knows_every_character_escaping_rewrites() -> None:
    for ch in "`~\\*_[]<|$&\r\n":
        assert _needs_escape(f"plain {ch} text")
    assert not _needs_escape(string.ascii_letters + string.digits + " .,;:!?#+-=>()'\"{}%@^/")
