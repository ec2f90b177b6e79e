"""Style sheet of a DOCX: which paragraph styles are headings, quotes or code.

Word documents carry meaning in style names, and those names are localized ("Überschrift 1",
"Titre 2"), custom ("My Heading" based on "Heading 2") or only marked by an outline level.
This module resolves each style through its ``basedOn`` chain once, so the body walker asks a
simple question: what kind of paragraph is this style?
"""
# ruff: noqa: RUF001  (tables of Unicode symbols and localized names)

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from lxml import etree

from render_pool.engine.docx.package import W

_W = f"{{{W}}}"

# "heading 1" in many languages (w:name is usually English for built-ins, but documents made
# by other tools or custom styles use localized names). Style ids drop non-ASCII letters, so
# "Überschrift1" has the id "berschrift1": both forms are listed.
_HEADING_WORDS = (
    "heading", "überschrift", "berschrift", "titre", "titolo", "título", "titulo", "kop",
    "rubrik", "overskrift", "otsikko", "nagłówek", "naglowek", "nadpis", "заголовок",
    "címsor", "başlık", "baslik", "cabeçalho", "encabezado", "標題", "标题", "見出し",
    "제목", "εpikεφαλίδα", "επικεφαλίδα", "kopregel", "antraštė", "virsraksts", "pealkiri",
    "naslov", "titulek", "judul", "tiêu đề",
)
_HEADING_RE = re.compile(
    r"^(?:" + "|".join(re.escape(w) for w in _HEADING_WORDS) + r")\s*([1-9])$", re.IGNORECASE
)
_TITLE_NAMES = {"title", "titel", "titre", "titolo", "título", "titulo", "заголовок документа",
                "标题", "表題"}
_QUOTE_NAMES = {"quote", "intense quote", "block text", "blockquote", "block quote",
                "quotation", "zitat", "intensives zitat", "citation", "citazione", "cita"}
_CODE_RE = re.compile(r"\b(code|source\s*code|preformatted|verbatim|macro text|listing code)\b",
                      re.IGNORECASE)
_CODE_CHAR_NAMES = {"html code", "code char", "verbatim char", "source code char",
                    "inline code", "code", "html typewriter", "html keyboard", "html sample",
                    "html variable"}

MONO_FONTS = ("courier", "consolas", "menlo", "monaco", "lucida console", "mono",
              "inconsolata", "fira code", "source code", "andale", "ocr a", "letter gothic",
              "fixedsys", "prestige elite")


@functools.lru_cache(maxsize=256)
def is_mono_font(name: str | None) -> bool:
    """Whether a font name is a monospace face (used to detect code); kept per name, as
    it is asked for every run of every paragraph."""
    if not name:
        return False
    low = name.lower()
    return any(m in low for m in MONO_FONTS)


def on(el: etree._Element | None) -> bool | None:
    """Value of an OOXML on/off property element (None when absent)."""
    if el is None:
        return None
    val = el.get(_W + "val")
    return val is None or val.lower() not in ("0", "false", "off", "none")


@dataclass
class Style:
    """One style, with the values it inherits already resolved."""

    sid: str
    name: str
    kind: str
    based_on: str | None
    outline: int | None = None  # 0-based outline level from the style itself
    bold: bool | None = None
    italic: bool | None = None
    strike: bool | None = None
    underline: bool | None = None
    vert: str | None = None
    font: str | None = None
    num_id: str | None = None
    ilvl: int | None = None
    # resolved
    heading: int | None = None
    title: bool = False
    quote: bool = False
    code: bool = False
    inline_code: bool = False
    chain: list[str] = field(default_factory=list)


def first_children(el: etree._Element) -> dict[object, etree._Element]:
    """The first child of each tag: ``el.find(tag)`` for every tag in one pass over the
    children (each ``find`` goes through lxml's path machinery; a styles part has hundreds
    of styles with a dozen lookups each)."""
    found: dict[object, etree._Element] = {}
    for child in el:
        found.setdefault(child.tag, child)
    return found


def _int_val(el: etree._Element | None, default: str) -> int | None:
    """``w:val`` of ``el`` as an int; None when absent or not a number."""
    if el is None:
        return None
    try:
        return int(el.get(_W + "val", default))
    except ValueError:
        return None


@dataclass(frozen=True)
class _Own:
    """What one style says by itself (name, id, kind, outline level), before inheritance."""

    heading: int | None  # from a heading name or id ("Heading 2", "Überschrift 2")
    title: bool
    outline_heading: int | None  # from the outline level 0-8
    quote: bool
    code: bool
    inline_code: bool


_INHERITED = ("bold", "italic", "strike", "underline", "vert", "font", "num_id", "ilvl")


class Styles:
    """Resolved styles of a document (empty when styles.xml is missing)."""

    def __init__(self, root: etree._Element | None) -> None:
        self.by_id: dict[str, Style] = {}
        self.default_para: str | None = None
        self.default_font: str | None = None
        # style id -> the numId its paragraphs are numbered by, for styles that number them
        # (numbering style links resolve through it); kept with the cached style sheet
        self.numbered: dict[str, str] = {}
        if root is None:
            return
        fonts = root.find(f"{_W}docDefaults/{_W}rPrDefault/{_W}rPr/{_W}rFonts")
        if fonts is not None:
            self.default_font = fonts.get(_W + "ascii") or fonts.get(_W + "hAnsi")
        for el in root.iter(_W + "style"):
            sid = el.get(_W + "styleId") or ""
            kids = first_children(el)
            name_el = kids.get(_W + "name")
            name = name_el.get(_W + "val", "") if name_el is not None else sid
            based = kids.get(_W + "basedOn")
            st = Style(sid=sid, name=name, kind=el.get(_W + "type", "paragraph"),
                       based_on=based.get(_W + "val") if based is not None else None)
            ppr = kids.get(_W + "pPr")
            if ppr is not None:
                pkids = first_children(ppr)
                st.outline = _int_val(pkids.get(_W + "outlineLvl"), "9")
                numpr = pkids.get(_W + "numPr")
                if numpr is not None:
                    nkids = first_children(numpr)
                    nid = nkids.get(_W + "numId")
                    lvl = nkids.get(_W + "ilvl")
                    st.num_id = nid.get(_W + "val") if nid is not None else None
                    if lvl is not None:
                        ilvl = _int_val(lvl, "0")
                        st.ilvl = 0 if ilvl is None else ilvl
            rpr = kids.get(_W + "rPr")
            if rpr is not None:
                rkids = first_children(rpr)
                st.bold = on(rkids.get(_W + "b"))
                st.italic = on(rkids.get(_W + "i"))
                st.strike = on(rkids.get(_W + "strike"))
                u = rkids.get(_W + "u")
                if u is not None:
                    st.underline = u.get(_W + "val", "single") != "none"
                va = rkids.get(_W + "vertAlign")
                if va is not None:
                    st.vert = va.get(_W + "val")
                rf = rkids.get(_W + "rFonts")
                if rf is not None:
                    st.font = rf.get(_W + "ascii") or rf.get(_W + "hAnsi")
            if el.get(_W + "default") in ("1", "true", "on") and st.kind == "paragraph":
                self.default_para = sid
            self.by_id[sid] = st
        own = {sid: self._own(st) for sid, st in self.by_id.items()}
        for st in self.by_id.values():
            self._resolve(st, own)
        self.numbered = {sid: st.num_id for sid, st in self.by_id.items() if st.num_id}

    @staticmethod
    def _own(c: Style) -> _Own:
        """The facts a style's own name, id, kind and outline level give (computed once per
        style, not once per style that inherits from it)."""
        label = c.name.strip().lower()
        sid = c.sid.lower()
        m = _HEADING_RE.match(label) or _HEADING_RE.match(sid)
        outline = c.outline + 1 if c.outline is not None and 0 <= c.outline < 9 else None
        return _Own(
            heading=int(m.group(1)) if m else None,
            title=label in _TITLE_NAMES or sid == "title",
            outline_heading=outline,
            quote=label in _QUOTE_NAMES or sid in ("quote", "intensequote", "blocktext"),
            code=c.kind == "paragraph" and _CODE_RE.search(label) is not None,
            inline_code=c.kind == "character" and (label in _CODE_CHAR_NAMES
                                                   or _CODE_RE.search(label) is not None))

    def _resolve(self, st: Style, own: dict[str, _Own]) -> None:
        chain: list[Style] = []
        cur: Style | None = st
        seen: set[str] = set()
        while cur is not None and cur.sid not in seen and len(chain) < 20:
            seen.add(cur.sid)
            chain.append(cur)
            cur = self.by_id.get(cur.based_on) if cur.based_on else None
        st.chain = [c.sid for c in chain]
        for c in chain:  # nearest definition wins
            facts = own[c.sid]
            if st.heading is None and not st.title:
                if facts.heading is not None:
                    st.heading = facts.heading
                elif facts.title:
                    st.title = True
                elif facts.outline_heading is not None:
                    st.heading = facts.outline_heading
            st.quote = st.quote or facts.quote
            st.code = st.code or facts.code
            st.inline_code = st.inline_code or facts.inline_code
        for attr in _INHERITED:
            if getattr(st, attr) is None:
                for c in chain[1:]:
                    value = getattr(c, attr)
                    if value is not None:
                        setattr(st, attr, value)
                        break
        if st.font and is_mono_font(st.font) and st.kind == "character":
            st.inline_code = True

    def get(self, sid: str | None) -> Style | None:
        """Style by id (falls back to the default paragraph style for paragraphs)."""
        if sid is None:
            return None
        return self.by_id.get(sid)
