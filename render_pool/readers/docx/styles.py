"""Style sheet of a DOCX: which paragraph styles are headings, quotes or code.

Word documents carry meaning in style names, and those names are localized ("Überschrift 1",
"Titre 2"), custom ("My Heading" based on "Heading 2") or only marked by an outline level.
This module resolves each style through its ``basedOn`` chain once, so the body walker asks a
simple question: what kind of paragraph is this style?
"""
# ruff: noqa: RUF001  (tables of Unicode symbols and localized names)

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from render_pool.readers.docx.package import W

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


def is_mono_font(name: str | None) -> bool:
    """Whether a font name is a monospace face (used to detect code)."""
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


class Styles:
    """Resolved styles of a document (empty when styles.xml is missing)."""

    def __init__(self, root: etree._Element | None) -> None:
        self.by_id: dict[str, Style] = {}
        self.default_para: str | None = None
        self.default_font: str | None = None
        if root is None:
            return
        fonts = root.find(f"{_W}docDefaults/{_W}rPrDefault/{_W}rPr/{_W}rFonts")
        if fonts is not None:
            self.default_font = fonts.get(_W + "ascii") or fonts.get(_W + "hAnsi")
        for el in root.iter(_W + "style"):
            sid = el.get(_W + "styleId") or ""
            name_el = el.find(_W + "name")
            name = name_el.get(_W + "val", "") if name_el is not None else sid
            based = el.find(_W + "basedOn")
            st = Style(sid=sid, name=name, kind=el.get(_W + "type", "paragraph"),
                       based_on=based.get(_W + "val") if based is not None else None)
            ppr = el.find(_W + "pPr")
            if ppr is not None:
                ol = ppr.find(_W + "outlineLvl")
                if ol is not None:
                    try:
                        st.outline = int(ol.get(_W + "val", "9"))
                    except ValueError:
                        st.outline = None
                numpr = ppr.find(_W + "numPr")
                if numpr is not None:
                    nid = numpr.find(_W + "numId")
                    lvl = numpr.find(_W + "ilvl")
                    st.num_id = nid.get(_W + "val") if nid is not None else None
                    if lvl is not None:
                        try:
                            st.ilvl = int(lvl.get(_W + "val", "0"))
                        except ValueError:
                            st.ilvl = 0
            rpr = el.find(_W + "rPr")
            if rpr is not None:
                st.bold = on(rpr.find(_W + "b"))
                st.italic = on(rpr.find(_W + "i"))
                st.strike = on(rpr.find(_W + "strike"))
                u = rpr.find(_W + "u")
                if u is not None:
                    st.underline = u.get(_W + "val", "single") != "none"
                va = rpr.find(_W + "vertAlign")
                if va is not None:
                    st.vert = va.get(_W + "val")
                rf = rpr.find(_W + "rFonts")
                if rf is not None:
                    st.font = rf.get(_W + "ascii") or rf.get(_W + "hAnsi")
            if el.get(_W + "default") in ("1", "true", "on") and st.kind == "paragraph":
                self.default_para = sid
            self.by_id[sid] = st
        for st in self.by_id.values():
            self._resolve(st)

    def _resolve(self, st: Style) -> None:
        chain: list[Style] = []
        cur: Style | None = st
        seen: set[str] = set()
        while cur is not None and cur.sid not in seen and len(chain) < 20:
            seen.add(cur.sid)
            chain.append(cur)
            cur = self.by_id.get(cur.based_on) if cur.based_on else None
        st.chain = [c.sid for c in chain]
        for c in chain:  # nearest definition wins
            label = c.name.strip().lower()
            sid = c.sid.lower()
            if st.heading is None and not st.title:
                m = _HEADING_RE.match(label) or _HEADING_RE.match(sid)
                if m:
                    st.heading = int(m.group(1))
                elif label in _TITLE_NAMES or sid == "title":
                    st.title = True
                elif c.outline is not None and 0 <= c.outline < 9:
                    st.heading = c.outline + 1
            if label in _QUOTE_NAMES or sid in ("quote", "intensequote", "blocktext"):
                st.quote = True
            if c.kind == "paragraph" and _CODE_RE.search(label):
                st.code = True
            if c.kind == "character" and (label in _CODE_CHAR_NAMES or _CODE_RE.search(label)):
                st.inline_code = True
            for attr in ("bold", "italic", "strike", "underline", "vert", "font", "num_id",
                         "ilvl"):
                if getattr(st, attr) is None and getattr(c, attr) is not None:
                    setattr(st, attr, getattr(c, attr))
        if st.font and is_mono_font(st.font) and st.kind == "character":
            st.inline_code = True

    def get(self, sid: str | None) -> Style | None:
        """Style by id (falls back to the default paragraph style for paragraphs)."""
        if sid is None:
            return None
        return self.by_id.get(sid)
