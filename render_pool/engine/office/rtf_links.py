"""RTF: fields and objects that make LibreOffice open other files, neutralised before it
reads the document; and the pictures an RTF carries, for the output check.

One linear pass over the RTF's groups (no recursion; ``\\binN`` data skipped; only braces,
escapes and the control words below cost a step, everything else is skipped by the regular
expression engine) finds:

- field instructions (a group with ``\\fldinst`` anywhere at its own level, as LibreOffice
  switches destination wherever the word stands) whose first word is not on a short list
  of fields that read nothing from outside (``HYPERLINK``, ``PAGE``, ``DATE``, ``TOC``,
  ``REF``, ``SEQ``, form fields...), or that name ``INCLUDEPICTURE``, ``INCLUDETEXT``,
  ``IMPORT``, ``LINK``, ``DDE``, ``DDEAUTO``, ``FILENAME``, ``TEMPLATE`` and the like
  anywhere: the field is replaced by its result (``\\fldrslt``), the text Word last showed;
- linked OLE objects (``\\objlink``, ``\\objautlink``): replaced by their ``\\result``;
- shape properties naming a linked picture (``pibName``, ``fillBlipName`` and their flags)
  and destinations naming other files (``\\*\\template``, mail-merge data sources): removed.

An instruction's text is read as LibreOffice reads it (``\\'hh``, ``\\uN``, escaped braces;
formatting words add nothing, so ``{\\b INCLUDE}PICTURE`` is ``INCLUDEPICTURE``), once with
its ``\\*`` groups and once without; either reading may refuse the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# fields that show something about the document itself and read no file
ALLOWED_FIELDS = frozenset((
    "HYPERLINK PAGE NUMPAGES SECTIONPAGES SECTION DATE TIME CREATEDATE SAVEDATE PRINTDATE "
    "EDITTIME TITLE SUBJECT AUTHOR LASTSAVEDBY KEYWORDS COMMENTS NUMWORDS NUMCHARS REF "
    "PAGEREF NOTEREF STYLEREF SEQ TOC TC TA TOA XE INDEX SYMBOL EQ FORMTEXT FORMCHECKBOX "
    "FORMDROPDOWN MERGEFIELD MERGEREC DOCPROPERTY LISTNUM QUOTE SET ASK FILLIN ADVANCE "
    "BIDIOUTLINE GOTOBUTTON").split())
# words that refuse a field wherever they stand in its instruction
DENIED_WORDS = frozenset((
    "INCLUDEPICTURE INCLUDETEXT INCLUDE IMPORT LINK DDE DDEAUTO FILENAME TEMPLATE DATABASE "
    "AUTOTEXT AUTOTEXTLIST MACROBUTTON PRINT RD").split())
_SHAPE_LINKS = frozenset(("pibname", "pibflags", "fillblipname", "fillblipflags"))
_REMOVED_DESTINATIONS = ("template", "mmconnectstr", "mmdatasource", "mmquery",
                         "mmheadersource", "mmodsoudldata")
_WORDS = ("fldinst", "fldrslt", "field", "objautlink", "objlink", "object", "result", "pict",
          "sp", "sn", *_REMOVED_DESTINATIONS)
# the structure pass: \binN, escaped braces and backslashes, braces, the words above
_STRUCT = re.compile(rb"\\bin(-?\d{1,10}) ?|\\[\\{}]|([{}])|\\(\*|"
                     + "|".join(_WORDS).encode() + rb")(?![a-zA-Z])(?:-?\d{1,10})? ?", re.I)
_INTERESTING = re.compile(rb"\\(fldinst|objlink|objautlink|sn|template|mm[a-z]+)(?![a-z])",
                          re.I)
# every token, for the text of one instruction, shape property or picture
_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])"
                    rb"|([^\\{}]+)", re.S)
_BLANK_WORDS = frozenset(("par", "line", "tab", "sect", "page", "emspace", "enspace",
                          "qmspace", "cell", "row"))
_SLOW_TEXT = re.compile(rb"\\'|\\u|\\bin|[\x80-\xff]", re.I)
_FLAT_STAR = re.compile(rb"\{\\\*[^{}]*\}")
_CONTROL = re.compile(rb"\\[a-zA-Z]{1,32}(?:-?\d{1,10})? ?|\\.|[{}\r\n]", re.S)
_SYMBOLS = {b"\\": "\\", b"{": "{", b"}": "}", b"~": " ", b"_": "-", b"\n": " ", b"\r": " "}


@dataclass
class Scan:
    """What one pass found: edits to make (start, end, replacement) and picture data."""

    edits: list[tuple[int, int, bytes]] = field(default_factory=list)
    pictures: list[bytes] = field(default_factory=list)
    fields: int = 0  # fields and objects neutralised
    removed: int = 0  # shape links and destinations removed


class _Open:
    """A group being read: where it starts, the listed words at its own level (each with
    the offset just after its first occurrence), the span its result keeps, refused."""

    __slots__ = ("bad", "keep", "start", "words")

    def __init__(self, start: int) -> None:
        self.start = start
        self.words: dict[str, int] | None = None
        self.keep: tuple[int, int] | None = None
        self.bad = False


def field_allowed(text: str, visible: str) -> bool:
    """Whether a field instruction reads nothing from outside the document."""
    words = visible.split()
    if not words or words[0].upper().lstrip("\\") not in ALLOWED_FIELDS:
        return False
    tokens = {t.upper() for t in re.split(r'[\s"]+', f"{text} {visible}") if t}
    return not tokens & DENIED_WORDS


def group_text(data: bytes, start: int, end: int) -> tuple[str, str]:
    """The text of ``data[start:end]`` as LibreOffice reads it: all of it, and what is
    outside ``\\*`` groups. Without escapes, Unicode or binary data, and with flat ``\\*``
    groups only (a Word hyperlink's ``\\*\\datafield``), the control words are stripped in
    one substitution; a word then joins the next, which can only refuse more."""
    span = data[start:end]
    if not _SLOW_TEXT.search(span):
        inner = span[1:] if span.startswith(b"{") else span
        shown = _FLAT_STAR.sub(b"", inner)
        if b"{\\*" not in shown:
            return (_CONTROL.sub(b"", inner).decode("latin-1"),
                    _CONTROL.sub(b"", shown).decode("latin-1"))
    return _token_text(data, start, end)


def _token_text(data: bytes, start: int, end: int) -> tuple[str, str]:
    text: list[str] = []
    visible: list[str] = []
    hidden: list[bool] = [False]  # per open group
    own = 2 if data[start:start + 1] == b"{" else 1  # the level of the group itself
    uc: list[int] = [1]
    skip = 0
    pos = start
    while pos < end:
        m = _TOKEN.match(data, pos, end)
        if m is None:
            break
        pos = m.end()
        word, hexa, symbol, brace, raw = m.group(1), m.group(3), m.group(4), m.group(5), \
            m.group(6)
        piece = ""
        if brace == b"{":
            hidden.append(hidden[-1])
            uc.append(uc[-1])
            continue
        if brace == b"}":
            if len(hidden) > 1:
                hidden.pop()
                uc.pop()
            continue
        if word is not None:
            name = word.lower()
            param = int(m.group(2)) if m.group(2) else None
            if name == b"bin" and param and param > 0:
                pos += param
            elif name == b"uc" and param is not None:
                uc[-1] = max(0, param)
            elif name == b"u" and param is not None:
                piece, skip = chr(param % 0x10000), uc[-1]
                text.append(piece)
                if not hidden[-1]:
                    visible.append(piece)
                continue
            elif name.decode() in _BLANK_WORDS:
                piece = " "
        elif symbol == b"*":
            hidden[-1] = hidden[-1] or len(hidden) > own  # the group itself is no \* part
            continue
        elif symbol is not None:
            piece = _SYMBOLS.get(symbol, "")
        elif hexa is not None:
            piece = chr(int(hexa, 16))
        elif raw is not None:
            piece = raw.replace(b"\r", b"").replace(b"\n", b"").decode("latin-1")
        if skip and piece:
            cut = min(skip, len(piece)) if raw is not None else 1
            piece, skip = piece[cut:], skip - cut
        text.append(piece)
        if not hidden[-1]:
            visible.append(piece)
    return "".join(text), "".join(visible)


def picture_bytes(data: bytes, start: int, end: int) -> bytes:
    """The data of a ``\\pict`` group: the hex digits (or ``\\bin`` bytes) at its own level."""
    out: list[bytes] = []
    depth = 0
    pos = start
    while pos < end:
        m = _TOKEN.match(data, pos, end)
        if m is None:
            break
        pos = m.end()
        if m.group(5) == b"{":
            depth += 1
        elif m.group(5) == b"}":
            depth -= 1
        elif depth == 0 and m.group(1) == b"bin" and m.group(2):
            size = max(0, int(m.group(2)))
            out.append(data[pos:pos + size].hex().encode())
            pos += size
        elif depth == 0 and m.group(6) is not None:
            out.append(m.group(6))
    digits = re.sub(rb"[^0-9a-fA-F]", b"", b"".join(out))
    return bytes.fromhex(digits[:len(digits) // 2 * 2].decode("ascii"))


class _Scanner:
    def __init__(self, data: bytes, pictures: bool) -> None:
        self.data = data
        self.want_pictures = pictures
        self.scan = Scan()

    def run(self) -> Scan:
        data, stack = self.data, []
        search = _STRUCT.search
        pos = 0
        while (m := search(data, pos)) is not None:
            pos = m.end()
            kind = m.lastindex
            if kind == 2:
                if data[pos - 1] == 0x7B:  # {
                    stack.append(_Open(pos - 1))
                elif stack:
                    group = stack.pop()
                    if group.words is not None:
                        self._close(group, pos, stack[-1] if stack else None)
            elif kind == 3:
                if stack:
                    top = stack[-1]
                    if top.words is None:
                        top.words = {}
                    top.words.setdefault(m.group(3).decode().lower(), pos)
            elif kind == 1:  # \binN: its bytes are data, never structure
                pos += max(0, int(m.group(1)))
        while stack:  # groups left open at the end close there
            group = stack.pop()
            if group.words is not None:
                self._close(group, len(data), stack[-1] if stack else None)
        return self.scan

    def _close(self, g: _Open, end: int, parent: _Open | None) -> None:
        words = g.words
        if words is None:
            return
        data, scan = self.data, self.scan
        in_field = parent is not None and parent.words is not None and "field" in parent.words
        if "fldinst" in words and not field_allowed(*group_text(data, g.start, end)):
            if in_field and "field" not in words:
                assert parent is not None
                parent.bad = True
            else:
                scan.fields += 1
                scan.edits.append((g.start, end, b""))
            return
        kept = words.get("fldrslt", words.get("result"))
        if kept is not None and parent is not None:
            parent.keep = (kept, max(kept, end - 1))
        if "sn" in words and parent is not None:
            name = group_text(data, words["sn"], end - 1)[0].strip().lower()
            parent.bad = parent.bad or name in _SHAPE_LINKS
        if "object" in words and ("objlink" in words or "objautlink" in words):
            g.bad = True
        if ("field" in words or "object" in words) and g.bad:
            scan.fields += 1
            if g.keep is not None:
                scan.edits += [(g.start, g.keep[0], b"{"), (g.keep[1], end, b"}")]
            else:
                scan.edits.append((g.start, end, b""))
        elif ("sp" in words and g.bad) or ("*" in words and any(
                d in words for d in _REMOVED_DESTINATIONS)):
            scan.removed += 1
            scan.edits.append((g.start, end, b""))
        elif "pict" in words and self.want_pictures:
            scan.pictures.append(picture_bytes(data, words["pict"], end - 1))


def scan(data: bytes, pictures: bool = False) -> Scan:
    """One pass over ``data``: the edits that neutralise its links (and, if asked, the bytes
    of its ``\\pict`` pictures)."""
    if not pictures and not _INTERESTING.search(data):
        return Scan()
    return _Scanner(data, pictures).run()


def apply(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """``data`` with the edits made; an edit inside a span already replaced is dropped (the
    spans of one scan either nest or are apart)."""
    out: list[bytes] = []
    cursor = 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], -e[1])):
        if start < cursor:
            continue
        out += [data[cursor:start], replacement]
        cursor = end
    out.append(data[cursor:])
    return b"".join(out)


def neutralise_rtf(data: bytes) -> tuple[bytes, int]:
    """``data`` without the links LibreOffice would follow; the number neutralised."""
    found = scan(data)
    if not found.edits:
        return data, 0
    return apply(data, found.edits), found.fields + found.removed


def rtf_pictures(data: bytes) -> list[bytes]:
    """The bytes of every ``\\pict`` picture ``data`` holds (hex or ``\\bin``)."""
    return scan(data, pictures=True).pictures
