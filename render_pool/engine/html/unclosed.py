"""Elements left open in HTML, found before libxml2 parses it, so the text after them is kept.

Why: libxml2's HTML parser takes everything after an element that is never closed as that
element's content. For the elements the HTML reader leaves out (``<object>``, ``<iframe>``,
``<noscript>``, ``<template>``, ``<textarea>``, ``<script>``...) that silently dropped the rest
of the page, and the raw-text ones that are kept (``<title>``, ``<xmp>``, ``<noembed>``,
``<plaintext>``) turned it into one run of literal markup. ``<embed>`` is worse: it is void
in HTML (it never has content) but libxml2 2.14 still opens it as a container, so everything
after any ``<embed src=...>`` was lost, closed or not.

:func:`close_open_elements` tokenizes the page the way the parser does (comments, quoted
attribute values, raw-text elements running to their end tag), in one pass that looks at
each character a bounded number of times, and rewrites the source: a void element that
libxml2 would open is closed at once, and the start tag of an element that is never closed is
taken out, so what follows it is read as the page's own content; each such element is named
in a warning. An unclosed comment hides the rest of the page in browsers too: it is kept
hidden, with a warning.
"""

from __future__ import annotations

import re

# void in HTML, opened as containers by libxml2 2.14 (their "content" is what follows them)
_VOID = frozenset({"embed", "source", "track", "wbr", "keygen", "bgsound"})
# raw text: the parser reads text up to the element's own end tag (``plaintext``: none)
_RAW_TEXT = frozenset({"script", "style", "iframe", "noembed", "noframes", "xmp", "textarea",
                       "title", "plaintext"})
# containers whose content the HTML reader leaves out
_DROPPED = frozenset({"object", "noscript", "template", "svg", "canvas", "button", "select"})
_TAG = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)|[!?/])")
_ATTRIBUTE = re.compile(r"[\t\n\f\r /]*([^\t\n\f\r />][^\t\n\f\r />=]*)?"  # name
                        r"[\t\n\f\r ]*(=[\t\n\f\r ]*)?")  # and = when a value follows
_UNQUOTED = re.compile(r"[^\t\n\f\r >]*")
_COMMENT_END = re.compile(r"--!?>")
_END_TAGS = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.I) for name in _RAW_TEXT}


def _tag_end(html: str, pos: int) -> tuple[int, bool]:
    """The position after the ``>`` of the tag whose name ends at ``pos`` (attribute values
    in quotes may hold ``>``), or -1 when the page ends inside the tag; and whether the tag
    closes itself (``/>``, which libxml2 honours on any element, but not after an unquoted
    value: ``src=x/>`` is the value ``x/``)."""
    size = len(html)
    while pos < size:
        attribute = _ATTRIBUTE.match(html, pos)
        assert attribute is not None  # every part of the pattern may match nothing
        pos = attribute.end()
        if pos >= size:
            break
        if attribute.group(2) is not None:  # a value follows
            if html[pos] in "\"'":
                close = html.find(html[pos], pos + 1)
                if close < 0:
                    break
                pos = close + 1
            else:
                unquoted = _UNQUOTED.match(html, pos)
                assert unquoted is not None  # a starred pattern matches at every position
                pos = unquoted.end()
        elif html[pos] == ">":
            return pos + 1, attribute.start() < pos and html[pos - 1] == "/"
    return -1, False


def _comment_end(html: str, pos: int) -> int:
    """The position after the comment whose ``<!--`` ends at ``pos``, or -1 if unclosed."""
    if html.startswith(">", pos) or html.startswith("->", pos):  # <!--> and <!---> are empty
        return html.index(">", pos) + 1
    end = _COMMENT_END.search(html, pos)
    return end.end() if end is not None else -1


def close_open_elements(html: str) -> tuple[str, list[str]]:
    """``html`` rewritten so no element swallows what follows it (see the module doc), and
    the warnings to give; the same text when nothing is open."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in order
    unclosed: dict[str, int] = {}
    open_tags: dict[str, list[tuple[int, int]]] = {}
    endless = {"plaintext"}  # raw-text elements with no end tag after the current position
    hidden = False
    pos = 0
    while (tag := _TAG.search(html, pos)) is not None:
        if tag.group(1):
            pos = _comment_end(html, tag.end())
            if pos < 0:
                hidden = True
                break
            continue
        if tag.group(3) is None:  # <!DOCTYPE>, <?...>, </ > and the like: up to the next >
            pos = html.find(">", tag.end()) + 1
            if pos == 0:
                break
            continue
        name = tag.group(3).lower()
        end, closed = _tag_end(html, tag.end())
        if end < 0:
            break  # the page ends inside a tag: nothing follows it
        pos = end
        if tag.group(2):  # an end tag
            if open_tags.get(name):
                open_tags[name].pop()
        elif closed:
            continue
        elif name in _VOID:
            edits.append((end, end, f"</{name}>"))
        elif name in _RAW_TEXT:
            close = None if name in endless else _END_TAGS[name].search(html, end)
            if close is None:  # the rest of the page would be this element's text
                endless.add(name)  # and no later one of these ends either
                edits.append((tag.start(), end, ""))
                unclosed[name] = unclosed.get(name, 0) + 1
            else:
                pos = close.end()
        elif name in _DROPPED:
            open_tags.setdefault(name, []).append((tag.start(), end))
    for name, starts in open_tags.items():
        for start, end in starts:
            edits.append((start, end, ""))
            unclosed[name] = unclosed.get(name, 0) + 1
    warnings = [f"The page leaves <{name}> unclosed"
                f"{f' ({count} times)' if count > 1 else ''}; the text after it was kept "
                "as the page's own text." for name, count in sorted(unclosed.items())]
    if hidden:
        warnings.append("The page has a comment (<!--) that is never closed; the text after "
                        "it is hidden, as in a browser, and was left out.")
    if not edits:
        return html, warnings
    edits.sort()
    parts: list[str] = []
    last = 0
    for start, end, replacement in edits:
        parts.append(html[last:start])
        parts.append(replacement)
        last = end
    parts.append(html[last:])
    return "".join(parts), warnings
