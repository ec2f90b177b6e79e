"""Find and rewrite asset references in Markdown and HTML (pure: text in, text out).

Markdown: inline links and images (angle-bracket destinations, titles), reference definitions,
autolinks, and HTML ``<img>``/``<a>``/``<source>``... tags written inside Markdown. Code spans,
fenced and indented code blocks and HTML comments are never read or rewritten.

HTML: ``img src/srcset``, ``a href``, ``link href``, ``source src/srcset``, ``video src/poster``,
``audio``/``track``/``embed``/``iframe`` ``src``, ``object data`` and CSS ``url()`` in ``style``
attributes. The document is edited in place (only the URL text changes), never re-serialised.

Rewriting takes ``mapping``: raw target -> new URL. Lookup order for a reference, first hit wins:

1. the raw target exactly as written: the new URL is used verbatim;
2. the target without its ``#fragment``: the fragment is appended to the new URL;
3. the target without ``?query`` and ``#fragment`` (raw, then percent-decoded): the fragment is
   appended, and the query too when the new URL has none of its own (a presigned URL has one,
   and an extra parameter would break its signature, so the query is dropped there).

Only local references are listed by default: ``scheme:`` URLs (``http:``, ``mailto:``,
``data:``...), ``//host`` and pure ``#anchor`` links are remote. Rewriting considers every
reference, so a mapping may also replace remote URLs (a link map).
"""

from __future__ import annotations

import bisect
import functools
import html as html_lib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from urllib.parse import unquote

from render_pool.engine.common.data_uri import decode_data_uri

# --------------------------------------------------------------------------- references


@dataclass(frozen=True)
class Reference:
    """One reference found in a text.

    ``target`` is the raw text between ``start`` and ``end`` (for ``<dest>`` the part inside
    the brackets); ``path`` is the decoded local path (escapes, entities and %-encoding undone)
    without ``query`` (``?...``) and ``fragment`` (``#...``), which keep their raw text.
    ``kind``: ``link``, ``image``, ``definition``, ``autolink`` or ``html``; ``attr`` names the
    HTML attribute (``src``, ``href``, ``srcset``, ``style``...).
    """

    kind: str
    target: str
    path: str
    query: str
    fragment: str
    start: int
    end: int
    local: bool
    image: bool = False
    attr: str = ""
    quoted: bool = True
    optional: bool = False
    alias: str = ""


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MD_ESCAPE = re.compile(r"\\([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def is_local(target: str) -> bool:
    """True for a path reference: not ``scheme:`` (a one-letter "scheme" is a Windows drive,
    hence local), not ``//host``, not a pure ``#anchor``, not empty."""
    t = target.strip()
    if not t or t.startswith("#") or t.startswith("//"):
        return False
    m = _SCHEME.match(t)
    return not (m and len(m.group(0)) > 2)


def split_target(target: str) -> tuple[str, str, str]:
    """``(raw_path, "?query", "#fragment")`` of a raw target (empty strings when absent)."""
    path, hash_, frag = target.partition("#")
    path, q, query = path.partition("?")
    return path, (q + query), (hash_ + frag)


def decode_path(raw_path: str, *, markdown: bool) -> str:
    """Undo Markdown backslash escapes (when ``markdown``), HTML entities and %-encoding."""
    text = _MD_ESCAPE.sub(r"\1", raw_path) if markdown else raw_path
    return unquote(html_lib.unescape(text))


def _ref(kind: str, text: str, start: int, end: int, *, markdown: bool, image: bool = False,
         attr: str = "", quoted: bool = True, optional: bool = False) -> Reference:
    target = text[start:end]
    value = target if markdown else html_lib.unescape(target)
    raw_path, query, fragment = split_target(value)
    return Reference(kind, target, decode_path(raw_path, markdown=markdown), query, fragment,
                     start, end, is_local(value), image, attr, quoted, optional)


# --------------------------------------------------------------------------- masking


_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^([ \t]*)([-+*]|\d{1,9}[.)])([ \t]+|$)")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_RAW_OPEN = re.compile(r"<(script|style)\b", re.I)
_RAW_CLOSE = re.compile(r"</(script|style)\s*>", re.I)


def _delimited_spans(text: str, opener: str, closer: str) -> list[tuple[int, int]]:
    """Spans ``opener ... closer`` (the nearest closer, like a lazy ``.*?`` regex) found in
    one pass: once an opener has no closer after it, no later one has either, so the scan
    stops instead of rescanning the rest of the text for every opener (linear)."""
    spans = []
    pos = 0
    while (start := text.find(opener, pos)) >= 0:
        end = text.find(closer, start + len(opener))
        if end < 0:
            break
        pos = end + len(closer)
        spans.append((start, pos))
    return spans


def _comment_spans(text: str) -> list[tuple[int, int]]:
    """HTML comments ``<!-- ... -->``."""
    return _delimited_spans(text, "<!--", "-->")


@dataclass(frozen=True)
class _RawText:
    """A ``<script>`` or ``<style>`` element: ``name`` (lower case), the span of its text."""

    name: str
    start: int
    end: int


def _raw_text_elements(text: str) -> list[_RawText]:
    """``<script ...>text</script>`` and ``<style ...>text</style>`` (case-insensitive), each
    closed by the nearest closing tag of its name, in linear time: closing tags are indexed
    once, and the ``>`` ending an opening tag is found with a pointer that only moves
    forward (a regex rescans the rest of the text for every unclosed ``<script``)."""
    closers: dict[str, list[tuple[int, int]]] = {"script": [], "style": []}
    for m in _RAW_CLOSE.finditer(text):
        closers[m.group(1).lower()].append(m.span())
    out: list[_RawText] = []
    pos = 0
    gt = -1  # the first ">" at or after the last position asked about (-2: none left)
    for m in _RAW_OPEN.finditer(text):
        if m.start() < pos:
            continue
        if gt != -2 and gt < m.end():
            gt = text.find(">", m.end())
            if gt < 0:
                gt = -2
        if gt == -2:
            break
        name = m.group(1).lower()
        ends = closers[name]
        k = bisect.bisect_left(ends, (gt + 1, -1))
        if k == len(ends):
            continue  # no closing tag of this name: the other name may still close
        out.append(_RawText(name, gt + 1, ends[k][0]))
        pos = ends[k][1]
    return out


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace every span by spaces (newlines kept) so offsets stay valid."""
    if not spans:
        return text
    out = []
    last = 0
    for start, end in sorted(spans):
        if start < last:
            start = last
        if end <= start:
            continue
        out.append(text[last:start])
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def _list_content_indent(body: str) -> int | None:
    """Column where a list item's content starts, or None when ``body`` is no list item."""
    m = _LIST_ITEM.match(body)
    if not m:
        return None
    gap = _indent(m.group(3)) if m.group(3) else 1
    return _indent(m.group(1)) + len(m.group(2)) + (gap if 1 <= gap <= 4 else 1)


def _code_block_spans(text: str) -> list[tuple[int, int]]:
    """Fenced and indented code blocks (line based). Inside a list, an indented code block
    needs 4 columns more than the item's content."""
    spans: list[tuple[int, int]] = []
    fence: tuple[str, int] | None = None
    prev_blank = True
    in_code = False
    list_indent: int | None = None  # content column of the current list item
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        if fence:
            spans.append((start, offset))
            m = _FENCE.match(body)
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= fence[1] \
                    and not m.group(3).strip():
                fence = None
            continue
        width = _indent(body)
        base = list_indent or 0
        m = _FENCE.match(body)
        if m and width - base <= 3 and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            fence = (m.group(2)[0], len(m.group(2)))
            spans.append((start, offset))
            prev_blank = in_code = False
            continue
        if not body.strip():
            prev_blank = True
            continue
        if width >= base + 4 and (in_code or prev_blank):
            spans.append((start, offset))
            in_code, prev_blank = True, False
            continue
        in_code = False
        item = _list_content_indent(body) if width < base + 4 else None
        if item is not None and (width <= 3 or list_indent is not None):
            list_indent = item
        elif width < base and prev_blank:
            list_indent = None  # a paragraph left of the item's content ends the list
        # an indented code block may follow a heading directly (it cannot follow a paragraph)
        prev_blank = bool(_ATX_HEADING.match(body))
    return spans


def _escaped(text: str, i: int) -> bool:
    """True when ``text[i]`` is preceded by an odd number of backslashes."""
    n = 0
    while i - n - 1 >= 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _code_span_spans(text: str) -> list[tuple[int, int]]:
    """Inline code spans: a backtick run closed by the next run of the same length
    (O(n log n): runs are indexed by length, no rescanning)."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    by_len: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(i)
    # a blank line between an opening run and its closer ends the span: blank lines are
    # indexed once (start, end), so each test is a bisection, not a scan of the text between
    blanks = [(m.start(), text.index("\n", m.start() + 1) + 1)
              for m in re.finditer(r"\n(?=[ \t]*\n)", text)]
    blank_starts = [a for a, _ in blanks]
    spans = []
    pos = 0
    for i, (a, b) in enumerate(runs):
        if a < pos:
            continue
        start = a
        if _escaped(text, a):  # "\``" : the first backtick is literal
            start += 1
            if start == b:
                continue
        run = b - start
        same = by_len.get(run, [])
        k = bisect.bisect_right(same, i)
        if k < len(same):
            c_start, c_end = runs[same[k]]
            k = bisect.bisect_left(blank_starts, b)
            if k == len(blanks) or blanks[k][1] > c_start:
                spans.append((start, c_end))
                pos = c_end
    return spans


_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?(---|\+\+\+)[ \t]*\r?\n.*?^(?:\1|\.\.\.)[ \t]*\r?$",
                           re.S | re.M)


def _mask_markdown(text: str) -> str:
    masked = _blank(text, [m.span() for m in _FRONT_MATTER.finditer(text)])
    masked = _blank(masked, _code_block_spans(masked))
    masked = _blank(masked, _comment_spans(masked))
    return _blank(masked, _code_span_spans(masked))


def _mask_html(text: str) -> str:
    spans = _comment_spans(text)
    spans += [(r.start, r.end) for r in _raw_text_elements(text)]
    spans += _delimited_spans(text, "<![CDATA[", "]]>")
    return _blank(text, spans)


# --------------------------------------------------------------------------- Markdown scanning


def _bracket_pairs(masked: str) -> dict[int, int]:
    """Map each unescaped ``]`` to its matching ``[`` (one forward pass with a stack; a blank
    line closes every open bracket)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in re.finditer(r"[\[\]]|\n[ \t]*\n", masked):
        ch = m.group(0)
        if ch.startswith("\n"):
            stack.clear()
        elif _escaped(masked, m.start()):
            continue
        elif ch == "[":
            stack.append(m.start())
        elif stack:
            pairs[m.start()] = stack.pop()
    return pairs


def _skip_ws(text: str, i: int, newline: bool = True) -> int:
    seen_nl = False
    while i < len(text) and text[i] in " \t\n\r":
        if text[i] == "\n":
            if seen_nl or not newline:
                break
            seen_nl = True
        i += 1
    return i


def _destination(text: str, i: int) -> tuple[int, int, int, bool] | None:
    """Parse a link destination at ``i``: ``(start, end, after, angle)`` or None."""
    n = len(text)
    if i < n and text[i] == "<":
        j = i + 1
        while j < n:
            ch = text[j]
            if ch == "\n" or (ch == "<" and not _escaped(text, j)):
                return None
            if ch == ">" and not _escaped(text, j):
                return i + 1, j, j + 1, True
            j += 1
        return None
    j = i
    depth = 0
    while (m := _DESTINATION_STOP.search(text, j)) is not None:
        j = m.start()
        ch = m.group()
        if ch == "\\":
            j += 2 if j + 1 < n else 1
            continue
        if ch == "(":
            depth += 1
            if depth > 32:  # CommonMark's nesting limit; also bounds hostile "](((((..."
                return None
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        else:  # whitespace or a control character ends the destination
            break
        j += 1
    else:
        j = n
    if depth != 0:
        return None
    return i, j, j, False


# what a raw destination stops at or counts (the rest is skipped by the regex, not by Python)
_DESTINATION_STOP = re.compile(r"[\\()\s\x00-\x1f]")


class _Titles:
    """Where link titles can end in one text: the unescaped ``"``, ``'`` and ``)`` and the
    blank lines (``\\n\\n``), indexed once so that each title is looked up by bisection
    instead of a scan to the end of the text (``![](a (`` repeated was quadratic)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.closers: dict[str, list[int]] = {'"': [], "'": [], ")": []}
        for m in re.finditer(r"[\"')]", text):
            if not _escaped(text, m.start()):
                self.closers[m.group()].append(m.start())
        self.blank = [m.start() for m in re.finditer(r"\n(?=\n)", text)]

    @staticmethod
    def _next(positions: list[int], i: int) -> int | None:
        k = bisect.bisect_left(positions, i)
        return positions[k] if k < len(positions) else None

    def end(self, i: int) -> int | None:
        """End of a link title starting at ``i`` ("...", '...' or (...)): just past the first
        unescaped closer before any blank line, or None."""
        text = self.text
        if i >= len(text) or text[i] not in "\"'(":
            return None
        closer = self._next(self.closers[")" if text[i] == "(" else text[i]], i + 1)
        if closer is None:
            return None
        blank = self._next(self.blank, i + 1)
        return None if blank is not None and blank < closer else closer + 1


_TYPORA_MAX = 1024  # longest raw destination read (bounds a hostile line's scan; not a tunable)


def _balanced_close(text: str, i: int) -> int | None:
    """Index of the ``)`` closing a destination that starts at ``i`` with parentheses
    balanced, on the same line (Typora's reading), or None."""
    stop = min(len(text), i + _TYPORA_MAX)
    newline = text.find("\n", i, stop)
    depth = 0
    for m in _PARENS.finditer(text, i, stop if newline < 0 else newline):
        if m.group() == "(":
            depth += 1
            if depth > 3:  # no file name nests this deep: a run of links, not a path
                return None
        elif depth == 0:
            return m.start()
        else:
            depth -= 1
    return None


_PARENS = re.compile(r"[()]")


def _trailing_title(text: str, start: int, stop: int) -> int | None:
    """Start of the whitespace before a quoted title ending at ``stop``, or None."""
    quote = text[stop - 1] if stop - start >= 2 else ""
    if quote not in ("'", '"'):
        return None
    opening = text.rfind(quote, start, stop - 1)
    if opening <= start or text[opening - 1] not in " \t":
        return None
    j = opening
    while j > start and text[j - 1] in " \t":
        j -= 1
    return j if j > start else None


def _typora_links(text: str, masked: str, open_: int, close: int, image: bool
                  ) -> Iterator[Reference]:
    """Typora's destinations: raw spaces and balanced parentheses (``![](a b (1).png)``), with
    or without a trailing quoted title. Optional: used only when the reading names a file."""
    end = _balanced_close(masked, close + 2)
    if end is None:
        return
    start = _skip_ws(masked, close + 2, newline=False)
    stop = end
    while stop > start and masked[stop - 1] in " \t":
        stop -= 1
    if stop <= start or masked[start] == "<" or not re.search(r"\s", masked[start:stop]):
        return
    kind = "image" if image else "link"
    yield _ref(kind, text, start, stop, markdown=True, image=image, optional=True)
    title = _trailing_title(masked, start, stop)
    if title is not None:
        yield _ref(kind, text, start, title, markdown=True, image=image, optional=True)


def _inline_links(text: str, masked: str) -> Iterator[Reference]:
    pairs = _bracket_pairs(masked)
    titles = _Titles(masked)
    consumed = 0  # end of the last link's destination: a "](" inside it starts no link
    for m in re.finditer(r"\]\(", masked):
        close = m.start()
        open_ = pairs.get(close, -1)
        if open_ < 0 or close < consumed:
            continue
        image = open_ > 0 and masked[open_ - 1] == "!" and not _escaped(masked, open_ - 1)
        loose = list(_typora_links(text, masked, open_, close, image))
        yield from loose
        if loose:
            consumed = loose[0].end
        i = _skip_ws(masked, close + 2)
        dest = _destination(masked, i)
        if dest is None:
            continue
        start, end, after, _angle = dest
        j = _skip_ws(masked, after)
        if j > after:
            t_end = titles.end(j)
            if t_end is not None:
                j = _skip_ws(masked, t_end)
        if j >= len(masked) or masked[j] != ")":
            continue
        consumed = max(consumed, j)
        if start == end:
            continue
        yield _ref("image" if image else "link", text, start, end, markdown=True, image=image)


_DEFINITION = re.compile(
    r"^[ ]{0,3}\[(?!\^)((?:[^\[\]\\\n]|\\.){1,999})\]:[ \t]*(?:\n[ \t]*)?", re.M)


def _definitions(text: str, masked: str) -> Iterator[Reference]:
    titles = _Titles(masked)
    for m in _DEFINITION.finditer(masked):
        dest = _destination(masked, m.end())
        if dest is None:
            continue
        start, end, after, _angle = dest
        if start == end and not _angle:
            continue
        rest_end = masked.find("\n", after)
        rest = masked[after:] if rest_end < 0 else masked[after:rest_end]
        stripped = rest.strip()
        if stripped:
            if rest[:1] not in (" ", "\t"):
                continue
            t_start = after + (len(rest) - len(rest.lstrip()))
            t_end = titles.end(t_start)
            if t_end is None or masked[t_end:after + len(rest)].strip():
                continue
        yield _ref("definition", text, start, end, markdown=True)


AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")


def _autolinks(text: str, masked: str) -> Iterator[Reference]:
    for m in AUTOLINK.finditer(masked):
        yield _ref("autolink", text, m.start(1), m.end(1), markdown=False)


_WIKI = re.compile(r"(!?)\[\[([^\[\]\n|#^]*)((?:[#^][^\[\]\n|]*)?)(?:\|([^\[\]\n]*))?\]\]")


def _wiki_links(text: str, masked: str) -> Iterator[Reference]:
    """Obsidian embeds and wiki-links: ``![[file.ext|300]]``, ``![[file#heading]]``,
    ``[[note]]``, ``[[note|label]]``. ``target`` is the whole construct (it is replaced
    whole), ``path`` the file part as written, ``fragment`` the ``#heading``, ``alias``
    the part after ``|``."""
    for m in _WIKI.finditer(masked):
        if _escaped(masked, m.start()) or not m.group(2).strip():
            continue
        path = text[m.start(2):m.end(2)].strip()
        fragment = text[m.start(3):m.end(3)].strip()
        alias = text[m.start(4):m.end(4)].strip() if m.group(4) is not None else ""
        yield Reference("wiki", text[m.start():m.end()], path, "", fragment, m.start(),
                        m.end(), is_local(path), bool(m.group(1)), alias=alias)


_FRONT_PATH = re.compile(
    r"^[ \t]*(?:-[ \t]+|[\w.-]+[ \t]*:[ \t]+)"
    r"(?:\"([^\"\n]+)\"|'([^'\n]+)'|([^\s\"'#|>&*!%@`{\[][^\n#]*?))[ \t]*\r?$", re.M)


def _front_matter_paths(text: str) -> Iterator[Reference]:
    """Front matter values that may be paths (``cover: images/a.png``, a list item): optional,
    so only a value naming an existing file is rewritten; any other value is never touched."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return
    for v in _FRONT_PATH.finditer(text, text.index("\n") + 1, m.end()):
        g = next(g for g in (1, 2, 3) if v.group(g) is not None)
        value = v.group(g)
        if "." in value and "://" not in value and len(value) < 1024:
            ref = _ref("frontmatter", text, v.start(g), v.end(g), markdown=False,
                       quoted=g != 3, optional=True)
            yield dataclass_replace(ref, attr="'" if g == 2 else '"')


@functools.lru_cache(maxsize=2)
def _all_markdown(text: str) -> tuple[Reference, ...]:
    """Every reading of every reference, in document order (cached: planning, data URI
    extraction and rewriting of one document read the same text)."""
    masked = _mask_markdown(text)
    found: dict[tuple[int, int], Reference] = {}
    for ref in (*_front_matter_paths(text), *_wiki_links(text, masked),
                *_inline_links(text, masked),
                *_definitions(text, masked), *_autolinks(text, masked),
                *_html_refs(text, masked)):
        key = (ref.start, ref.end)
        if key not in found or (found[key].optional and not ref.optional):
            found[key] = ref
    # at one position: optional (Typora) readings first, longest first, then the strict one
    return tuple(sorted(found.values(), key=lambda r: (r.start, not r.optional, -r.end)))


def markdown_references(text: str, *, include_remote: bool = False,
                        include_optional: bool = False) -> list[Reference]:
    """References in Markdown, in document order (local ones unless ``include_remote``).
    ``include_optional`` adds Typora's readings (raw spaces, ``optional=True``), listed
    before the CommonMark reading at the same position; a resolver keeps the one that
    names a file (``render_pool.batch.plan``)."""
    return [r for r in _all_markdown(text)
            if (include_remote or r.local) and (include_optional or not r.optional)]


# --------------------------------------------------------------------------- HTML scanning


URL_ATTRS: dict[str, tuple[str, ...]] = {
    "img": ("src", "srcset"),
    "a": ("href",),
    "link": ("href",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "iframe": ("src",),
    "input": ("src",),
    "object": ("data",),
}
IMAGE_ATTRS = {("img", "src"), ("img", "srcset"), ("source", "srcset"), ("video", "poster"),
               ("input", "src")}
_TAG = re.compile(
    r"<([A-Za-z][A-Za-z0-9-]*)((?:\s+[^\s\"'<>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|"
    r"[^\s\"'=<>`]+))?)*)\s*/?>")
_ATTR = re.compile(r"([^\s\"'<>/=]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?")
# an unquoted url() value holds no "(" (CSS syntax): each attempt stops at the next "(", so
# "url(url(url(..." is read in linear time
_CSS_URL = re.compile(r"url\(\s*(?:\"([^\"]*)\"|'([^']*)'|([^()\s'\"]*))\s*\)", re.I)


def _srcset_urls(value: str) -> Iterator[tuple[int, int]]:
    """Spans of the URLs in a ``srcset`` value (descriptors skipped)."""
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i].isspace() or value[i] == ","):
            i += 1
        if i >= n:
            break
        j = i
        while j < n and not value[j].isspace():
            j += 1
        end = j
        while end > i and value[end - 1] == ",":
            end -= 1
        if end > i:
            yield i, end
        if end < j:  # URL ended with a comma: no descriptors
            i = j
            continue
        depth = 0
        while j < n and not (value[j] == "," and depth == 0):
            depth += value[j] == "("
            depth -= value[j] == ")" and depth > 0
            j += 1
        i = j + 1


def _html_refs(text: str, masked: str) -> Iterator[Reference]:
    for tag in _TAG.finditer(masked):
        name = tag.group(1).lower()
        wanted = URL_ATTRS.get(name, ())
        for attr in _ATTR.finditer(masked, tag.start(2), tag.end(2)):
            key = attr.group(1).lower()
            group = next((g for g in (2, 3, 4) if attr.group(g) is not None), None)
            if group is None:
                continue
            v_start, v_end = attr.span(group)
            quoted = group != 4
            if key == "style":
                for css in _CSS_URL.finditer(masked, v_start, v_end):
                    g = next(g for g in (1, 2, 3) if css.group(g) is not None)
                    if css.end(g) > css.start(g):
                        yield _ref("html", text, css.start(g), css.end(g), markdown=False,
                                   image=True, attr="style", quoted=True)
            elif key in wanted:
                image = (name, key) in IMAGE_ATTRS
                if key == "srcset":
                    for s, e in _srcset_urls(text[v_start:v_end]):
                        yield _ref("html", text, v_start + s, v_start + e, markdown=False,
                                   image=True, attr=key, quoted=True)
                elif v_end > v_start:
                    yield _ref("html", text, v_start, v_end, markdown=False, image=image,
                               attr=key, quoted=quoted)


_CSS_IMPORT = re.compile(r"@import\s+(?:\"([^\"\n]*)\"|'([^'\n]*)')", re.I)


def _css_refs(text: str, start: int = 0, end: int | None = None) -> Iterator[Reference]:
    """``url(...)`` and ``@import "..."`` in CSS text between ``start`` and ``end``
    (comments skipped)."""
    window = text[start:len(text) if end is None else end]  # only this part is read
    masked = _blank(window, _delimited_spans(window, "/*", "*/"))
    for pattern, groups in ((_CSS_URL, (1, 2, 3)), (_CSS_IMPORT, (1, 2))):
        for m in pattern.finditer(masked):
            g = next(g for g in groups if m.group(g) is not None)
            if m.end(g) > m.start(g):
                quoted = m.start(g) > 0 and masked[m.start(g) - 1] in "\"'"
                yield _ref("css", text, start + m.start(g), start + m.end(g), markdown=True,
                           image=True, attr="url", quoted=quoted)


def _style_block_refs(text: str) -> Iterator[Reference]:
    """References inside ``<style>`` elements (embedded CSS)."""
    masked = _blank(text, _comment_spans(text))
    for element in _raw_text_elements(masked):
        if element.name == "style":
            yield from _css_refs(text, element.start, element.end)


def css_references(css: str, *, include_remote: bool = False) -> list[Reference]:
    """References of a CSS file (``url()``, ``@import``), in document order."""
    refs = sorted(_css_refs(css), key=lambda r: r.start)
    return [r for r in refs if include_remote or r.local]


def rewrite_css(css: str, mapping: Mapping[str, str]) -> str:
    """Replace the ``url()``/``@import`` targets of a CSS file that ``mapping`` knows."""
    if not mapping:
        return css
    return _apply(css, sorted(_css_refs(css), key=lambda r: r.start), mapping)


def _all_html(html: str) -> list[Reference]:
    refs = [*_html_refs(html, _mask_html(html)), *_style_block_refs(html)]
    return sorted(refs, key=lambda r: r.start)


def html_reference_list(html: str, *, include_remote: bool = False) -> list[Reference]:
    """References in HTML as :class:`Reference` objects (local ones unless asked)."""
    return [r for r in _all_html(html) if include_remote or r.local]


def html_references(html: str, *, include_remote: bool = False) -> list[str]:
    """URLs referenced by HTML (entity-decoded, document order, each once): local paths
    unless ``include_remote``. ``data:`` URIs are remote here; see :func:`data_uri_images`."""
    seen: dict[str, None] = {}
    for ref in html_reference_list(html, include_remote=include_remote):
        seen.setdefault(html_lib.unescape(ref.target), None)
    return list(seen)


# --------------------------------------------------------------------------- rewriting


def _with_parts(new: str, query: str, fragment: str) -> str:
    if query and "?" not in new:
        new += query
    if fragment and "#" not in new:
        new += fragment
    return new


def lookup(ref: Reference, mapping: Mapping[str, str]) -> str | None:
    """The new URL for ``ref`` following the module's lookup order, or None."""
    value = ref.target if ref.kind != "html" else html_lib.unescape(ref.target)
    for key in dict.fromkeys((ref.target, value)):
        if key in mapping:
            return mapping[key]
    no_frag = value.partition("#")[0]
    if ref.fragment and no_frag in mapping:
        return _with_parts(mapping[no_frag], "", ref.fragment)
    raw_path = split_target(value)[0]
    for key in dict.fromkeys((raw_path, ref.path)):
        if key and key in mapping:
            return _with_parts(mapping[key], ref.query, ref.fragment)
    return None


def _attr_escape(url: str) -> str:
    return url.replace("&", "&amp;").replace('"', "&quot;").replace("'", "&#39;")


def markdown_destination(url: str, angle: bool) -> str:
    if angle:
        return url.replace("<", "%3C").replace(">", "%3E").replace("\n", "%0A")
    balanced = url.count("(") == url.count(")")
    if not url or any(c.isspace() for c in url) or not balanced or url.startswith("<"):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _yaml_string(url: str, quote: str, quoted: bool) -> str:
    """``url`` as a YAML scalar in place of a front matter value (double-quoted when it was
    plain, so ``:`` or ``#`` in a URL cannot change the document)."""
    if quote == "'" and quoted:
        return url.replace("'", "''")
    escaped = url.replace("\\", "\\\\").replace('"', '\\"')
    return escaped if quoted else f'"{escaped}"'


def css_url(url: str, quoted: bool) -> str:
    """``url`` written inside a CSS ``url()`` or string (quotes, parentheses and spaces
    percent-encoded so the value cannot end early)."""
    table = {'"': "%22", "'": "%27", "\\": "%5C", "\n": "%0A"}
    if not quoted:
        table.update({"(": "%28", ")": "%29", " ": "%20"})
    return "".join(table.get(c, c) for c in url)


IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp", ".avif",
                              ".ico", ".tif", ".tiff"})
_SIZE = re.compile(r"^(\d{1,5})(?:x(\d{1,5}))?$")


def _label(text: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", text)


def wiki_markdown(ref: Reference, url: str) -> str:
    """Standard Markdown for an Obsidian embed or wiki-link pointing at ``url``.

    - ``![[a.png]]`` -> ``![a.png](url)``; ``![[a.png|alt]]`` -> ``![alt](url)``;
    - ``![[a.png|300]]`` / ``![[a.png|300x200]]`` -> ``<img src="url" alt="a.png"
      width="300" height="200">`` (CommonMark has no image size; raw HTML keeps it and
      every CommonMark renderer shows it);
    - a note or any other file (``[[note]]``, ``[[note|label]]``, ``![[note#part]]``,
      ``![[doc.pdf]]``) -> ``[label](url#part)``, the label being the alias or the text
      as written (``note > part`` for a heading, as Obsidian shows it).
    """
    name = ref.path.rsplit("/", 1)[-1]
    ext = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
    if ref.fragment and "#" not in url:
        slug = re.sub(r"\s+", "-", ref.fragment[1:].strip().lower())
        url = url + "#" + "".join(c if c.isalnum() or c in "-_" else "" for c in slug)
    if ref.image and ext in IMAGE_EXTENSIONS:
        size = _SIZE.match(ref.alias)
        if size:
            dims = f' width="{size.group(1)}"'
            if size.group(2):
                dims += f' height="{size.group(2)}"'
            return f'<img src="{_attr_escape(url)}" alt="{_attr_escape(name)}"{dims}>'
        return f"![{_label(ref.alias or name)}]({markdown_destination(url, False)})"
    label = ref.alias or (ref.path + (" > " + ref.fragment[1:] if ref.fragment else ""))
    return f"[{_label(label)}]({markdown_destination(url, False)})"


def _apply(text: str, refs: Sequence[Reference], mapping: Mapping[str, str]) -> str:
    out: list[str] = []
    last = 0
    for ref in refs:
        if ref.start < last:
            continue
        new = lookup(ref, mapping)
        if new is None:
            continue
        if ref.kind == "html":
            piece = _attr_escape(new) if ref.quoted else f'"{_attr_escape(new)}"'
        elif ref.kind == "css":
            piece = css_url(new, ref.quoted)
        elif ref.kind == "wiki":
            piece = wiki_markdown(ref, new)
        elif ref.kind == "frontmatter":
            piece = _yaml_string(new, ref.attr, ref.quoted)
        elif ref.kind == "autolink":
            piece = new.replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")
        else:
            angle = ref.start > 0 and text[ref.start - 1] == "<" and text[ref.end:ref.end + 1] \
                == ">"
            piece = markdown_destination(new, angle)
        out.append(text[last:ref.start])
        out.append(piece)
        last = ref.end
    out.append(text[last:])
    return "".join(out)


def rewrite_markdown(text: str, mapping: Mapping[str, str]) -> str:
    """Replace reference targets found by :func:`markdown_references` (remote ones too) that
    ``mapping`` knows; titles, link text and everything else stay byte for byte."""
    if not mapping:
        return text
    return _apply(text, _all_markdown(text), mapping)


def rewrite_html(html: str, mapping: Mapping[str, str]) -> str:
    """Replace URL attribute values (and style ``url()``) that ``mapping`` knows; the new URL
    is entity-escaped for the attribute. The rest of the document is left untouched."""
    if not mapping:
        return html
    return _apply(html, _all_html(html), mapping)


# --------------------------------------------------------------------------- data URIs


def data_uri_images(text: str, *, markdown: bool = False) -> list[tuple[str, bytes, str]]:
    """Images embedded as ``data:image/...`` URIs in HTML (or Markdown when ``markdown``,
    raw HTML inside it included): ``(uri as written, bytes, mime)``, each once, so they can
    be uploaded and replaced with :func:`rewrite_html` / :func:`rewrite_markdown` (key: the
    uri as written)."""
    out: dict[str, tuple[str, bytes, str]] = {}
    for ref in (_all_markdown(text) if markdown else _all_html(text)):
        value = ref.target if ref.kind != "html" else html_lib.unescape(ref.target)
        if not value[:11].lower().startswith("data:image/") or ref.target in out:
            continue
        decoded = decode_data_uri(value)
        if decoded and decoded[0]:
            out[ref.target] = (ref.target, decoded[0], decoded[1])
    return list(out.values())
