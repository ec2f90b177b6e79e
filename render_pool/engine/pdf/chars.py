"""Characters of one PDF page with their boxes and font style, grouped into text segments.

pdfium reports font size 1 when a producer scales text through the text matrix, so the
effective size is the font size times the scale of the character's matrix. Style (font name,
bold, italic) is looked up once per text object and cached, which keeps the per-character
cost to a handful of cheap calls.

Coordinates are converted to a top-down system (``top`` grows downwards) so that reading
order code can sort by ``top`` directly.
"""

from __future__ import annotations

import ctypes
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_BOLD_WORDS = ("bold", "black", "heavy", "semibold", "demibold", "demi", "extrabold", "ultrabold")
_ITALIC_WORDS = ("italic", "oblique", "slanted", "-ital", "-it", "cmti", "sfti")
# TeX and URW names: cmbx10, sfbx1000, lmroman10-bold, nimbusromno9l-medi, ...-bd
_TEX_BOLD = re.compile(r"(^|[^a-z])(cmbx|sfbx|cmb|bx)\d|-(medi|bd|bol)\b|-bdit")
# a name that states a regular weight outranks the weight pdfium reports: without /FontWeight
# pdfium derives it from /StemV, and Chromium (Skia) writes NotoSans-Regular with StemV 125,
# which reads as 625
_REGULAR_NAME = re.compile(r"regular|book|light|thin|-roman\b|normal")
_FLAG_ITALIC = 64
_FLAG_FORCE_BOLD = 262144
HYPHENS = ("-", "\u00ad", "\u2010", "\u2011")
MAX_CHARS_PER_PAGE = 300_000  # bounds pathological pages; not a setting (see reader.MAX_PAGES)
NO_MCID = -1  # the character is not inside marked content with an MCID
ARTIFACT = -2  # the character is marked as an artifact (running header, page number...)
_FLAG_FIXED_PITCH = 1
_MONO_WORDS = ("mono", "courier", "consol", "menlo", "typewriter", "cmtt", "sfmono", "inconsolata",
               "liberationmono", "dejavusansmono", "lucidaconsole", "firacode", "cousine")
Style = tuple[bool, bool, int, bool]  # bold, italic, mcid, mono
# Symbol / Wingdings bullets that Word and LibreOffice write as private-use code points
# spacing accents (and the combining marks) that TeX and other producers draw as glyphs of
# their own over or under a letter, with the combining mark each stands for
_ACCENTS = {"\u02d8": "\u0306", "\u00b4": "\u0301", "\u0060": "\u0300", "\u02c6": "\u0302",
            "\u02dc": "\u0303", "\u00a8": "\u0308", "\u02c7": "\u030c", "\u02d9": "\u0307",
            "\u02da": "\u030a", "\u00af": "\u0304", "\u02c9": "\u0304", "\u02dd": "\u030b",
            "\u00b8": "\u0327", "\u02db": "\u0328"}
_RTL_CLASSES = ("R", "AL")  # bidirectional classes of right-to-left letters
_ACCENT_REACH = 12  # how many glyphs away in content order an accent's letter may be
_PUA_BULLETS = {0xF0B7: "\u2022", 0xF0A7: "\u25aa", 0xF0A8: "\u25e6", 0xF076: "\u2756",
                0xF0D8: "\u27a2", 0xF0FC: "\u2714", 0xF06F: "\u25e6", 0xF0A1: "\u25cb",
                0xF0E0: "\u27a2", 0xF02D: "-"}


@dataclass(slots=True)
class Char:
    """One visible glyph: text (several characters for a ligature such as "fi"), loose box
    (top-down), baseline, size and style."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    baseline: float
    size: float
    bold: bool
    italic: bool
    mcid: int = NO_MCID  # marked-content id (tagged PDFs), NO_MCID or ARTIFACT
    mono: bool = False  # set in a fixed-pitch font
    link: str = ""  # URL of the link area the character sits in
    generated: bool = False  # a space pdfium inferred from a gap (not in the content)
    turned: bool = False  # set at right angles (or upside down) to the page's text


@dataclass(slots=True)
class Segment:
    """A run of characters written together on one baseline without a wide gap."""

    chars: list[Char] = field(default_factory=list)
    x0: float = math.inf
    x1: float = -math.inf
    top: float = math.inf
    bottom: float = -math.inf

    def add(self, ch: Char) -> None:
        """Append a character and grow the box (spaces do not grow it)."""
        self.chars.append(ch)
        if ch.text.strip():  # comparisons, not min/max: this runs once per character
            if ch.x0 < self.x0:
                self.x0 = ch.x0
            if ch.x1 > self.x1:
                self.x1 = ch.x1
            if ch.top < self.top:
                self.top = ch.top
            if ch.bottom > self.bottom:
                self.bottom = ch.bottom

    @property
    def text(self) -> str:
        return "".join([c.text for c in self.chars])

    @property
    def size(self) -> float:
        sizes = sorted([c.size for c in self.chars if c.text.strip()])
        return sizes[len(sizes) // 2] if sizes else 0.0

    @property
    def baseline(self) -> float:
        base = sorted([c.baseline for c in self.chars if c.text.strip()])
        return base[len(base) // 2] if base else self.bottom

    @property
    def visible(self) -> bool:
        return self.x1 >= self.x0


def _mark_of(obj: ctypes._Pointer[Any]) -> int:
    """The text object's marked-content id, ARTIFACT inside /Artifact, else NO_MCID."""
    mcid: int = pdfium_c.FPDFPageObj_GetMarkedContentID(obj)
    if mcid >= 0:
        return mcid
    buf = ctypes.create_string_buffer(64)
    out_len = ctypes.c_ulong(0)
    for i in range(min(pdfium_c.FPDFPageObj_CountMarks(obj), 16)):
        mark = pdfium_c.FPDFPageObj_GetMark(obj, i)
        if mark and pdfium_c.FPDFPageObjMark_GetName(
                mark, ctypes.cast(buf, ctypes.POINTER(ctypes.c_ushort)), len(buf),
                ctypes.byref(out_len)):
            name = buf.raw[: max(0, min(out_len.value, len(buf)) - 2)].decode(
                "utf-16-le", "replace")
            if name == "Artifact":
                return ARTIFACT
    return NO_MCID


# FPDFText_GetTextObject returning a plain address: the cache key without a ctypes.cast
# per character (the cast was a tenth of the reading time of a text page)
_GET_TEXT_OBJECT = ctypes.cast(pdfium_c.FPDFText_GetTextObject, ctypes.c_void_p).value
assert _GET_TEXT_OBJECT is not None  # an exported symbol always has an address
_TEXT_OBJECT_ADDR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(
    _GET_TEXT_OBJECT)


def _style_of(textpage: pdfium.PdfTextPage, raw_textpage: int | None, index: int,
              buf: ctypes.Array[ctypes.c_char], cache: dict[int, Style]) -> Style:
    """(bold, italic, mcid, mono) of a character, from its font and its text object."""
    key = _TEXT_OBJECT_ADDR(raw_textpage, index) or 0
    hit = cache.get(key)
    if hit is not None:
        return hit
    obj = pdfium_c.FPDFText_GetTextObject(textpage, index)
    flags = ctypes.c_int(0)
    n = pdfium_c.FPDFText_GetFontInfo(textpage, index, buf, len(buf), ctypes.byref(flags))
    name = bytes(buf.raw[: max(0, min(n, len(buf)) - 1)]).decode("latin-1").lower()
    name = name.split("+", 1)[-1]  # subset prefix "ABCDEF+"
    weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
    named_bold = any(w in name for w in _BOLD_WORDS) or bool(_TEX_BOLD.search(name))
    bold = named_bold or bool(flags.value & _FLAG_FORCE_BOLD) or (
        weight >= 600 and not _REGULAR_NAME.search(name))
    italic = bool(flags.value & _FLAG_ITALIC) or any(w in name for w in _ITALIC_WORDS)
    mono = bool(flags.value & _FLAG_FIXED_PITCH) or any(w in name for w in _MONO_WORDS)
    mcid = _mark_of(obj) if obj else NO_MCID
    style = (bold, italic, mcid, mono)
    if obj:
        cache[key] = style
    return style


# what page_chars reads once per text object: (font size times the matrix's scale, the
# matrix's y offset (the baseline), set at right angles or mirrored, style). pdfium gives
# every character of a text object that object's matrix and font size, so two calls per
# character are saved (they were a third of the reading time of a text page).
_ObjectInfo = tuple[float, float, bool, Style]


def _object_info(raw: Any, textpage: pdfium.PdfTextPage, raw_tp: int | None, index: int,
                 mat: Any, buf: ctypes.Array[ctypes.c_char],
                 cache: dict[int, Style]) -> _ObjectInfo:
    """The :data:`_ObjectInfo` of the text object of character ``index``."""
    pdfium_c.FPDFText_GetMatrix(raw, index, mat)
    scale = math.sqrt(abs(mat.a * mat.d - mat.b * mat.c)) or 1.0
    size = pdfium_c.FPDFText_GetFontSize(raw, index) * scale
    turned = abs(mat.b) > abs(mat.a) + 1e-6 or mat.a < 0
    return size, mat.f, turned, _style_of(textpage, raw_tp, index, buf, cache)


def page_chars(textpage: pdfium.PdfTextPage, page_height: float) -> list[Char | None]:
    """All characters of a page in content order; ``None`` marks a generated line break.

    Characters turned against the page's text (margin stamps, vertical table headers,
    axis labels) are marked ``turned`` when they are a minority: line grouping cannot use
    them, :func:`take_turned` reads them as runs of their own. (A page whose text is mostly
    turned was turned upright before, by :mod:`rotation`.)
    """
    count = min(textpage.count_chars(), MAX_CHARS_PER_PAGE)
    out: list[Char | None] = []
    rotated: list[int] = []
    buf = ctypes.create_string_buffer(256)
    cache: dict[int, Style] = {}
    per_object: dict[int, _ObjectInfo] = {}
    # the raw handle and the C functions bound to locals: the wrapper's ``_as_parameter_``
    # property and the module look-ups cost as much as the calls on a text page
    raw = textpage.raw
    raw_tp = ctypes.cast(raw, ctypes.c_void_p).value
    rect = pdfium_c.FS_RECTF()
    mat = pdfium_c.FS_MATRIX()
    get_unicode = pdfium_c.FPDFText_GetUnicode
    is_generated = pdfium_c.FPDFText_IsGenerated
    loose_box = pdfium_c.FPDFText_GetLooseCharBox
    object_addr = _TEXT_OBJECT_ADDR
    pua = _PUA_BULLETS
    for i in range(count):
        code = get_unicode(raw, i)
        if code in (0xFFFE, 0xFFFF):
            continue
        if code == 3:
            # a font without a Unicode map whose codes are glyph ids: glyph 3 is the space
            # in TrueType fonts (pdftotext reads it so too); dropped, words ran together
            code = 0x20
        ch = pua.get(code) or (chr(code) if code < 0x110000 else "\ufffd")
        if ch in "\r\n":
            if not out or out[-1] is not None:
                out.append(None)
            continue
        if ch == "\x02":  # pdfium marks a hyphen it removed at a line end with STX
            ch = "-"
        if ch == " ":
            if is_generated(raw, i) == 1:
                # a space pdfium inferred from a gap: keep it as a word separator
                if out and out[-1] is not None and out[-1].text != " ":
                    before = out[-1]
                    out.append(Char(" ", before.x1, before.x1, before.top, before.bottom,
                                    before.baseline, before.size, before.bold, before.italic,
                                    before.mcid, before.mono, generated=True,
                                    turned=before.turned))
                continue
        elif not ch.isprintable():
            continue
        if not loose_box(raw, i, rect):
            continue
        if "\ufb00" <= ch <= "\ufb06":  # a ligature code point: its letters
            ch = unicodedata.normalize("NFKC", ch)
        left = rect.left
        right = rect.right
        top = page_height - rect.top
        prev = out[-1] if out else None
        if prev is not None and abs(prev.x0 - left) < 0.05 and abs(prev.x1 - right) < 0.05 \
                and abs(prev.top - top) < 0.05 and prev.text.strip() and ch.strip():
            # one glyph, several characters (pdfium expands "fi" into two chars with the
            # same box): keep them together so the line is not cut between them (the same
            # box, not only the same x range: the glyphs of sideways text share that)
            prev.text += ch
            continue
        # a space can carry a matrix of its own (pdfium gives one inserted into a
        # right-to-left run the identity matrix): read afresh, not from its object
        key = (object_addr(raw_tp, i) or 0) if ch != " " else 0
        got = per_object.get(key) if key else None
        if got is None:
            got = _object_info(raw, textpage, raw_tp, i, mat, buf, cache)
            if key:
                per_object[key] = got
        size, baseline_y, turned, style = got
        if size <= 0:
            size = max(1.0, (rect.top - rect.bottom) / 1.2)
        c = Char(ch, left, right, top, page_height - rect.bottom, page_height - baseline_y,
                 size, style[0], style[1], style[2], style[3])
        if turned:
            rotated.append(len(out))
            c.turned = True
        out.append(c)
    if any(c is not None and (c.text in _ACCENTS or unicodedata.combining(c.text[:1]))
           for c in out):
        out = _attach_accents(out, rotated)
    visible = sum(1 for c in out if c is not None and c.text.strip())
    if rotated and len(rotated) * 2 >= visible:
        for char in out:
            if char is not None:
                char.turned = False
    return out


def _accent_base(out: list[Char | None], i: int) -> int | None:
    """The index of the letter near the accent ``out[i]`` in content order (a few glyphs
    before or after it: TeX draws the accent before its letter, some producers after the
    word) that the accent sits over or under: its centre inside the letter's box, on the
    same line. None when there is none (a grave accent used as a backtick stands beside
    its neighbours, not over them)."""
    acc = out[i]
    assert acc is not None
    centre = (acc.x0 + acc.x1) / 2
    best: tuple[float, int] | None = None
    for j in range(max(0, i - _ACCENT_REACH), min(len(out), i + _ACCENT_REACH + 1)):
        c = out[j] if j != i else None
        if c is None or len(c.text) != 1 or not c.text.isalpha() or c.turned != acc.turned:
            continue
        margin = 0.1 * (c.x1 - c.x0)
        if not c.x0 + margin <= centre <= c.x1 - margin:
            continue
        if abs(c.baseline - acc.baseline) > max(c.size, acc.size):
            continue
        off = abs((c.x0 + c.x1) / 2 - centre)
        if best is None or off < best[0]:
            best = (off, j)
    return best[1] if best is not None else None


def _attach_accents(out: list[Char | None], rotated: list[int]) -> list[Char | None]:
    """Join each accent drawn as a glyph of its own to the letter it overlaps, composed
    (NFC: ``g`` and a spacing breve are ``ğ``; a dotless i under an accent is ``i``).
    Why: TeX and some other producers set accented letters as two glyphs, which read as
    ``Og˘uz`` and split words. ``rotated`` (indexes into ``out``) is kept in step."""
    drop: set[int] = set()
    for i, c in enumerate(out):
        if c is None or (c.text not in _ACCENTS and not (
                len(c.text) == 1 and unicodedata.combining(c.text))):
            continue
        j = _accent_base(out, i)
        if j is None or j in drop:
            continue
        base = out[j]
        assert base is not None
        mark = _ACCENTS.get(c.text, c.text)
        letter = "i" if base.text == "\u0131" and mark not in ("\u0327", "\u0328") else base.text
        base.text = unicodedata.normalize("NFC", letter + mark)
        drop.add(i)
    if not drop:
        return out
    kept = [k for k in range(len(out)) if k not in drop]
    moved = {old: new for new, old in enumerate(kept)}
    rotated[:] = [moved[k] for k in rotated if k in moved]
    return [out[k] for k in kept]


@dataclass(slots=True)
class TurnedRun:
    """Characters set in one turned line (content order, which is their reading order),
    with the box they cover on the page (top-down)."""

    chars: list[Char]
    x0: float
    x1: float
    top: float
    bottom: float

    def flat(self) -> list[Char]:
        """The run as one horizontal line of characters across the middle of its box, so
        that segments, lines and table cells read it in its own direction."""
        size = sorted(c.size for c in self.chars)[len(self.chars) // 2]
        cy = (self.top + self.bottom) / 2
        step = max(self.x1 - self.x0, size) / max(len(self.chars), 1)
        out = []
        for i, c in enumerate(self.chars):
            x0 = self.x0 + i * step
            out.append(Char(c.text, x0, x0 + (0.9 * step if c.text.strip() else 0.0),
                            cy - size / 2, cy + size / 2, cy + 0.3 * size, size, c.bold,
                            c.italic, c.mcid, c.mono, c.link, c.generated))
        return out


def take_turned(chars: list[Char | None]) -> tuple[list[Char | None], list[TurnedRun]]:
    """Split the turned characters off: (the others, the turned ones as runs).

    A run is a stretch of turned characters in content order, broken by a line break, an
    upright character or a jump of more than two ems."""
    rest: list[Char | None] = []
    runs: list[TurnedRun] = []
    cur: list[Char] = []

    def flush() -> None:
        vis = [c for c in cur if c.text.strip()]
        if vis:
            while cur and not cur[-1].text.strip():
                cur.pop()
            runs.append(TurnedRun(list(cur), min(c.x0 for c in vis), max(c.x1 for c in vis),
                                  min(c.top for c in vis), max(c.bottom for c in vis)))
        cur.clear()

    for c in chars:
        if c is None or not c.turned:
            if cur:
                flush()
            rest.append(c)
            continue
        if cur and c.text.strip():
            last = next((p for p in reversed(cur) if p.text.strip()), None)
            if last is not None and abs((c.x0 + c.x1) - (last.x0 + last.x1)) / 2 + abs(
                    (c.top + c.bottom) - (last.top + last.bottom)) / 2 > 3 * max(
                    c.size, last.size, 1.0):
                flush()
        if cur or c.text.strip():
            cur.append(c)
    flush()
    return rest, runs


def is_rtl(text: str) -> bool:
    """True for a right-to-left letter (Arabic, Hebrew...)."""
    return unicodedata.bidirectional(text[:1]) in _RTL_CLASSES if text else False


_CODE_SYMBOLS = set("{}[]();=<>+*/\\|&#$_~^`@%")


def reads_as_prose(lines: list[str]) -> bool:
    """True when monospaced lines read as prose (a typewritten letter, a court transcript):
    four words a line or more on average and almost no code symbols. A fixed-pitch font
    alone does not make code."""
    chars = [ch for ln in lines for ch in ln if not ch.isspace()]
    words = sum(len(ln.split()) for ln in lines)
    return bool(lines) and words >= 4 * len(lines) \
        and sum(ch in _CODE_SYMBOLS for ch in chars) <= 0.02 * len(chars)


def mono_glyph(c: Char) -> bool:
    """True for a glyph set in a fixed-pitch font that counts as monospaced text: CJK
    fonts are often flagged fixed-pitch, and right-to-left scripts are never code."""
    return c.mono and not is_cjk(c.text) and not is_rtl(c.text)


def is_cjk(text: str) -> bool:
    """True for a Chinese or Japanese character (written without spaces between words:
    Han, kana, CJK punctuation and full-width forms). Korean separates words with spaces,
    so Hangul is not included."""
    if not text:
        return False
    o = ord(text[0])
    return (0x2E80 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF
            or 0x20000 <= o <= 0x2FA1F) and o not in (0x3000, 0x3164) \
        and not 0x3130 <= o <= 0x318F


def _drop_letter_spacing(chars: list[Char]) -> None:
    """Remove the spaces pdfium inferred inside a letter-spaced word ("V i n s  a u")
    when the run also has real spaces: an inferred gap next to a lone letter and clearly
    narrower than every real word space is letter spacing, not a word break."""
    gaps: list[tuple[int, float, bool]] = []
    for i in range(1, len(chars) - 1):
        if chars[i].text == " " and chars[i - 1].text.strip() and chars[i + 1].text.strip():
            gaps.append((i, chars[i + 1].x0 - chars[i - 1].x1, chars[i].generated))
    real = [g for _, g, generated in gaps if not generated]
    if not real or all(not generated for _, _, generated in gaps):
        return
    limit = 0.6 * min(real)

    def lone(i: int, step: int) -> bool:  # a single letter on that side of the space
        j = i + step
        return chars[j].text.isalpha() and len(chars[j].text) == 1 and (
            not 0 <= j + step < len(chars) or not chars[j + step].text.strip())

    drop = [i for i, gap, generated in gaps
            if generated and gap < limit and (lone(i, -1) or lone(i, 1))]
    for i in reversed(drop):
        del chars[i]


def _glued(prev: Char, ch: Char) -> bool:
    """True when a space between ``prev`` and ``ch`` is no word break: Chinese/Japanese
    characters closer than half an em, or Hangul syllables that (nearly) touch."""
    gap = ch.x0 - prev.x1
    em = max(ch.size, 1.0)
    if is_cjk(ch.text) and is_cjk(prev.text[-1:]):
        return gap < 0.5 * em
    hangul = ("\uac00" <= ch.text[:1] <= "\ud7af") and ("\uac00" <= prev.text[-1:] <= "\ud7af")
    return hangul and gap < 0.05 * em


def _raised_mark(mark: Char, base: Char) -> bool:
    """``mark`` is set smaller than ``base`` and raised above its baseline (a superscript:
    an affiliation or note mark)."""
    em = max(base.size, 1.0)
    return mark.size < 0.85 * base.size and base.baseline - mark.baseline > 0.15 * em


def _mark_break(cur: list[Char], nxt: Char | None) -> bool:
    """True when the line break pdfium inferred before ``nxt`` only steps into or out of
    a superscript mark on the same line (``Karpukhin*, Oğuz*`` with raised marks): no
    break at all. Why: pdfium starts a new line at every baseline change, which cut an
    author line into pieces at each affiliation mark, read as headings and columns."""
    if nxt is None or not cur or not nxt.text.strip():
        return False
    last = cur[-1]
    if nxt.x0 < last.x0 - 0.1 * max(last.size, 1.0) or nxt.x0 - last.x1 > max(last.size, 1.0):
        return False
    if len(cur) >= 2 and _raised_mark(last, cur[-2]):  # out of a mark, back to the line
        return abs(nxt.baseline - cur[-2].baseline) < 0.1 * max(cur[-2].size, 1.0)
    return _raised_mark(nxt, last)  # into a mark after a word


def segments_of(chars: list[Char | None]) -> list[Segment]:
    """Split characters (content order) into segments at line breaks, jumps and wide gaps.

    Right-to-left text runs leftwards with embedded left-to-right words jumping about, so
    inside it only line breaks and baseline jumps split segments.
    """
    segs: list[Segment] = []
    cur = Segment()
    last: Char | None = None
    rtl = False
    bidirectional = unicodedata.bidirectional

    def flush() -> None:
        nonlocal cur, last, rtl
        while cur.chars and cur.chars[-1].text == " ":
            cur.chars.pop()
        _drop_letter_spacing(cur.chars)
        if cur.visible:
            segs.append(cur)
        cur = Segment()
        last = None
        rtl = False

    for k, ch in enumerate(chars):
        if ch is None:
            if not _mark_break(cur.chars, chars[k + 1] if k + 1 < len(chars) else None):
                flush()
            continue
        if ch.text == " ":
            if cur.chars and cur.chars[-1].text != " ":
                cur.chars.append(ch)
            continue
        # is_rtl inlined (once per character): it is read before and after a flush
        ch_rtl = bidirectional(ch.text[:1]) in _RTL_CLASSES if ch.text else False
        if last is not None:
            em = max(last.size, ch.size, 1.0)
            jump = abs(ch.baseline - last.baseline) > 0.5 * em and not (
                ch.top >= last.top - 0.2 * em and ch.bottom <= last.bottom + 0.2 * em)
            rtl = rtl or ch_rtl
            backwards = ch.x0 < last.x1 - 0.6 * em and not rtl
            gap = ch.x0 - last.x1 > 1.0 * em and not rtl
            if jump or backwards or gap:
                flush()
        rtl = rtl or ch_rtl
        if len(cur.chars) >= 2 and cur.chars[-1].text == " " and _glued(cur.chars[-2], ch):
            cur.chars.pop()  # a space set between CJK characters is not a word break
        cur.add(ch)
        last = ch
    flush()
    return _drop_overprint(segs)


def _drop_overprint(segs: list[Segment]) -> list[Segment]:
    """Leave out segments printed again over another one (fake bold by overprinting, a
    shadow): on the same baseline and ending where the other ends (within a fifth of an
    em), with the same text at the same start or the other's closing text."""
    # each segment's baseline, size and text without spaces, read once (not per pair)
    base = {id(sg): sg.baseline for sg in segs}
    compact = {id(sg): "".join(sg.text.split()) for sg in segs}
    by_line: dict[int, list[Segment]] = {}
    for sg in segs:
        by_line.setdefault(round(base[id(sg)]), []).append(sg)
    drop: set[int] = set()
    for sg in segs:
        if id(sg) in drop:
            continue
        size = sg.size
        tol = 0.2 * max(size, 1.0)
        text = compact[id(sg)]
        if len(text) < 2 or sg.bottom - sg.top > 2 * max(size, 1.0):
            continue  # a lone glyph, or a box taller than a line (rotated text)
        baseline = base[id(sg)]
        key = round(baseline)
        for other in by_line.get(key, []) + by_line.get(key - 1, []) + by_line.get(key + 1, []):
            if other is sg or id(other) in drop:
                continue
            full = compact[id(other)]
            if abs(base[id(other)] - baseline) > tol or abs(sg.x1 - other.x1) > tol \
                    or abs(sg.top - other.top) > tol or abs(sg.bottom - other.bottom) > tol \
                    or not full.endswith(text):
                continue
            # the same text on the same spot, or its tail printed again at its end
            if (text == full and abs(sg.x0 - other.x0) <= tol and id(sg) > id(other)) \
                    or (len(text) < len(full) and sg.x0 >= other.x0 - tol):
                drop.add(id(sg))
                break
    return [sg for sg in segs if id(sg) not in drop] if drop else segs
