"""Low-level WordprocessingML helpers for the DOCX writer (things python-docx has no API for).

Fields (TOC, PAGE, NUMPAGES), bookmarks, hyperlinks, paragraph borders, repeating table header
rows, settings flags, and text cleaning (XML 1.0 forbids most control characters, and
python-docx raises on them).
"""

from __future__ import annotations

import re
from typing import Any

from docx.oxml import OxmlElement
from docx.oxml.ns import qn

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def clean(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (NUL, vertical tab, lone surrogates ...)."""
    return _INVALID_XML.sub("", text)


def el(tag: str, **attrs: str) -> Any:
    """New ``w:`` element with ``w:``-qualified attributes (``val="x"`` -> ``w:val="x"``)."""
    node = OxmlElement(tag)
    for key, value in attrs.items():
        node.set(qn(key if ":" in key else f"w:{key}"), value)
    return node


def _append_run(paragraph: Any, child: Any) -> None:
    r = OxmlElement("w:r")
    r.append(child)
    paragraph._p.append(r)


def field_begin(paragraph: Any, instr: str, dirty: bool = False) -> None:
    """Open a complex field: begin (``dirty``: Word refreshes it on opening), its
    instruction and the separator; the result runs follow, then :func:`field_end` (in the
    same paragraph or, for a field spanning paragraphs such as a table of contents, a later
    one)."""
    begin = el("w:fldChar", fldCharType="begin")
    if dirty:
        begin.set(qn("w:dirty"), "true")
    _append_run(paragraph, begin)
    text = el("w:instrText")
    text.set(qn("xml:space"), "preserve")
    text.text = f" {instr} "
    _append_run(paragraph, text)
    _append_run(paragraph, el("w:fldChar", fldCharType="separate"))


def field_end(paragraph: Any) -> None:
    """Close the field :func:`field_begin` opened."""
    _append_run(paragraph, el("w:fldChar", fldCharType="end"))


def add_field(paragraph: Any, instr: str, placeholder: str = "", dirty: bool = False) -> None:
    """Append a complex field (begin / instrText / separate / result / end) to a paragraph."""
    field_begin(paragraph, instr, dirty)
    result = el("w:t")
    result.set(qn("xml:space"), "preserve")
    result.text = clean(placeholder)
    _append_run(paragraph, result)
    field_end(paragraph)


def add_bookmark(paragraph: Any, name: str, bookmark_id: int) -> None:
    """Wrap the paragraph's current content in a bookmark named ``name``."""
    p = paragraph._p
    start = el("w:bookmarkStart", id=str(bookmark_id), name=name)
    ppr = p.find(qn("w:pPr"))
    if ppr is not None:
        ppr.addnext(start)
    else:
        p.insert(0, start)
    p.append(el("w:bookmarkEnd", id=str(bookmark_id)))


def new_hyperlink(paragraph: Any, *, r_id: str = "", anchor: str = "", tooltip: str = "") -> Any:
    """Append an empty ``w:hyperlink`` (external by relationship id or internal by anchor)."""
    link = OxmlElement("w:hyperlink")
    if r_id:
        link.set(qn("r:id"), r_id)
    if anchor:
        link.set(qn("w:anchor"), anchor)
    if tooltip:
        link.set(qn("w:tooltip"), clean(tooltip)[:255])
    link.set(qn("w:history"), "1")
    paragraph._p.append(link)
    return link


def set_border(paragraph: Any, side: str, size: int = 6, color: str = "A0A0A0",
               space: int = 4) -> None:
    """Give a paragraph a single-line border on ``side`` (top, left, bottom, right)."""
    ppr = paragraph._p.get_or_add_pPr()
    bdr = ppr.find(qn("w:pBdr"))
    if bdr is None:
        bdr = OxmlElement("w:pBdr")
        # pBdr comes after pStyle/keepNext/keepLines/pageBreakBefore/framePr/widowControl/numPr
        anchor = None
        for tag in ("w:shd", "w:tabs", "w:suppressAutoHyphens", "w:kinsoku", "w:wordWrap",
                    "w:overflowPunct", "w:topLinePunct", "w:autoSpaceDE", "w:autoSpaceDN",
                    "w:bidi", "w:adjustRightInd", "w:snapToGrid", "w:spacing", "w:ind",
                    "w:contextualSpacing", "w:mirrorIndents", "w:suppressOverlap", "w:jc",
                    "w:textDirection", "w:textAlignment", "w:textboxTightWrap",
                    "w:outlineLvl", "w:divId", "w:cnfStyle", "w:rPr", "w:sectPr",
                    "w:pPrChange"):
            anchor = ppr.find(qn(tag))
            if anchor is not None:
                break
        if anchor is not None:
            anchor.addprevious(bdr)
        else:
            ppr.append(bdr)
    bdr.append(el(f"w:{side}", val="single", sz=str(size), space=str(space), color=color))


def repeat_header_row(row: Any) -> None:
    """Mark a table row as a header row that Word repeats at the top of each page."""
    tr_pr = row._tr.get_or_add_trPr()
    if tr_pr.find(qn("w:tblHeader")) is None:
        tr_pr.append(el("w:tblHeader"))


def cant_split_row(row: Any) -> None:
    """Keep a (header) row on one page."""
    tr_pr = row._tr.get_or_add_trPr()
    if tr_pr.find(qn("w:cantSplit")) is None:
        tr_pr.insert(0, el("w:cantSplit"))


_SETTINGS_AFTER_UPDATE_FIELDS = (
    "w:hdrShapeDefaults", "w:footnotePr", "w:endnotePr", "w:compat", "w:docVars", "w:rsids",
    "m:mathPr", "w:attachedSchema", "w:themeFontLang", "w:clrSchemeMapping",
    "w:doNotIncludeSubdocsInStats", "w:doNotAutoCompressPictures", "w:forceUpgrade",
    "w:captions", "w:readModeInkLockDown", "w:smartTagType", "w:schemaLibrary",
    "w:shapeDefaults", "w:doNotEmbedSmartTags", "w:decimalSymbol", "w:listSeparator",
)


def _insert_before_first(parent: Any, child: Any, successors: tuple[str, ...]) -> None:
    for tag in successors:
        found = parent.find(qn(tag))
        if found is not None:
            found.addprevious(child)
            return
    parent.append(child)


def settings_update_fields(settings_element: Any) -> None:
    """Ask Word to refresh fields (the TOC) when the document is opened."""
    if settings_element.find(qn("w:updateFields")) is None:
        _insert_before_first(settings_element, el("w:updateFields", val="true"),
                             _SETTINGS_AFTER_UPDATE_FIELDS)


def settings_footnote_pr(settings_element: Any) -> None:
    """Point the settings at the separator footnotes (ids -1 and 0), as Word writes them."""
    if settings_element.find(qn("w:footnotePr")) is not None:
        return
    pr = el("w:footnotePr")
    pr.append(el("w:footnote", id="-1"))
    pr.append(el("w:footnote", id="0"))
    _insert_before_first(settings_element, pr, _SETTINGS_AFTER_UPDATE_FIELDS[2:])


def settings_east_asian_language(settings_element: Any, lang: str) -> None:
    """Pick the East Asian theme font language (zh-CN, ja-JP, ko-KR) for CJK text."""
    node = settings_element.find(qn("w:themeFontLang"))
    if node is None:
        node = el("w:themeFontLang", val="en-US")
        _insert_before_first(settings_element, node, ("w:clrSchemeMapping",
                                                      "w:doNotIncludeSubdocsInStats",
                                                      "w:doNotAutoCompressPictures",
                                                      "w:shapeDefaults", "w:decimalSymbol"))
    node.set(qn("w:eastAsia"), lang)


def remove_preview_picture(settings_element: Any) -> None:
    """Drop ``w:savePreviewPicture`` (the template's thumbnail is removed too)."""
    node = settings_element.find(qn("w:savePreviewPicture"))
    if node is not None:
        settings_element.remove(node)
