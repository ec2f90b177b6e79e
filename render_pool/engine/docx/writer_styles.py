"""Styles the DOCX writer adds to python-docx's default template.

Real named styles (not direct formatting) so a user can restyle the whole document in Word:
"Code" (paragraph) and "Inline Code" (character) in a monospace font with shading,
"Hyperlink", "Footnote Text" / "Footnote Reference", "Block Quote", and the cover styles.
"""

from __future__ import annotations

from typing import Any

from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor

from render_pool.engine.docx.writer_xml import el

MONO = "Consolas"
MONO_FALLBACK = "DejaVu Sans Mono"
CODE_SHADE = "F2F2F2"


def _mono(font: Any) -> None:
    font.name = MONO  # sets ascii + hAnsi
    rfonts = font.element.rPr.rFonts
    rfonts.set(qn("w:cs"), MONO)


def _shade(style_element: Any, fill: str, in_ppr: bool) -> None:
    container = style_element.get_or_add_pPr() if in_ppr else style_element.get_or_add_rPr()
    shd = el("w:shd", val="clear", color="auto", fill=fill)
    container.append(shd)


def _get_or_add(styles: Any, name: str, kind: WD_STYLE_TYPE) -> tuple[Any, bool]:
    try:
        return styles[name], False
    except KeyError:
        return styles.add_style(name, kind), True


def ensure_styles(document: Any) -> None:
    """Add (once) every style the writer refers to by name."""
    styles = document.styles

    code, new = _get_or_add(styles, "Code", WD_STYLE_TYPE.PARAGRAPH)
    if new:
        code.base_style = styles["Normal"]
        code.quick_style = True
        _mono(code.font)
        code.font.size = Pt(9.5)
        pf = code.paragraph_format
        pf.space_before = Pt(4)
        pf.space_after = Pt(8)
        pf.line_spacing = 1.0
        pf.left_indent = Pt(4)
        pf.right_indent = Pt(4)
        pf.keep_together = False
        _shade(code.element, CODE_SHADE, in_ppr=True)

    inline, new = _get_or_add(styles, "Inline Code", WD_STYLE_TYPE.CHARACTER)
    if new:
        inline.quick_style = True
        _mono(inline.font)
        inline.font.size = Pt(9.5)
        _shade(inline.element, CODE_SHADE, in_ppr=False)

    link, new = _get_or_add(styles, "Hyperlink", WD_STYLE_TYPE.CHARACTER)
    if new:
        link.font.color.rgb = RGBColor(0x05, 0x63, 0xC1)
        link.font.underline = True
        link.unhide_when_used = True

    ft, new = _get_or_add(styles, "Footnote Text", WD_STYLE_TYPE.PARAGRAPH)
    if new:
        ft.base_style = styles["Normal"]
        ft.font.size = Pt(9)
        ft.paragraph_format.space_after = Pt(0)
        ft.paragraph_format.line_spacing = 1.0
    fr, new = _get_or_add(styles, "Footnote Reference", WD_STYLE_TYPE.CHARACTER)
    if new:
        fr.font.superscript = True

    quote, new = _get_or_add(styles, "Block Quote", WD_STYLE_TYPE.PARAGRAPH)
    if new:
        quote.base_style = styles["Quote"]
        quote.quick_style = True
        quote.font.italic = False
        quote.font.color.rgb = RGBColor(0x59, 0x59, 0x59)
        quote.paragraph_format.left_indent = Pt(18)
        quote.paragraph_format.space_after = Pt(6)

    for name, size, bold, align in (
        ("Cover Title", 30, True, WD_ALIGN_PARAGRAPH.CENTER),
        ("Cover Subtitle", 16, False, WD_ALIGN_PARAGRAPH.CENTER),
        ("Cover Small", 9, False, WD_ALIGN_PARAGRAPH.CENTER),
    ):
        st, new = _get_or_add(styles, name, WD_STYLE_TYPE.PARAGRAPH)
        if new:
            st.base_style = styles["Normal"]
            st.font.size = Pt(size)
            st.font.bold = bold
            st.paragraph_format.alignment = align
            st.paragraph_format.space_after = Pt(size * 0.6)


def ensure_toc_styles(document: Any, levels: int) -> None:
    """Word's built-in "toc 1".."toc N" entry styles (indented per level), for the table of
    contents the writer fills in itself."""
    styles = document.styles
    for level in range(1, levels + 1):
        st, new = _get_or_add(styles, f"toc {level}", WD_STYLE_TYPE.PARAGRAPH)
        if new:
            st.base_style = styles["Normal"]
            st.unhide_when_used = True
            st.paragraph_format.left_indent = Pt(11 * (level - 1))
            st.paragraph_format.space_after = Pt(4)


_FONT_ENTRY = (
    '<w:font xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'w:name="Consolas"><w:altName w:val="DejaVu Sans Mono"/><w:charset w:val="00"/>'
    '<w:family w:val="modern"/><w:pitch w:val="fixed"/></w:font>'
)


def register_mono_font(document: Any) -> None:
    """Declare Consolas as a fixed-pitch font with DejaVu Sans Mono as its alternative.

    Readers without Consolas (LibreOffice on Linux) then substitute a monospace font instead
    of a proportional one, so code stays aligned.
    """
    from lxml import etree

    for part in document.part.package.iter_parts():
        if str(part.partname) != "/word/fontTable.xml":
            continue
        root = etree.fromstring(part.blob)
        w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
        if any(f.get(f"{w}name") == "Consolas" for f in root.iter(f"{w}font")):
            return
        root.append(etree.fromstring(_FONT_ENTRY))
        part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                    standalone=True)
        return
