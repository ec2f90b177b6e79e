"""Real Word list numbering for the DOCX writer.

Two abstract definitions (bullets and decimal/letter/roman numbers, nine levels each) go into
numbering.xml; every list of the document gets its own ``w:num`` instance with a
``lvlOverride/startOverride`` for its level. Without that, Word (and python-docx's "List Number"
style) keeps counting across separate lists: the second list would start at 4 instead of 1.
"""

from __future__ import annotations

import secrets
from typing import Any

from docx.oxml.ns import qn
from docx.oxml.numbering import CT_Num

from render_pool.engine.docx.writer_xml import el

LEVELS = 9
INDENT_TWIPS = 720  # per nesting level
HANGING_TWIPS = 360
_BULLETS = ("\u2022", "\u25e6", "\u25aa")
_NUMBER_FORMATS = (("decimal", "%{n}."), ("lowerLetter", "%{n}."), ("lowerRoman", "%{n}."))


def _abstract(abstract_id: int, ordered: bool) -> Any:
    node = el("w:abstractNum", abstractNumId=str(abstract_id))
    node.append(el("w:nsid", val=secrets.token_hex(4).upper()))
    node.append(el("w:multiLevelType", val="hybridMultilevel"))
    for ilvl in range(LEVELS):
        lvl = el("w:lvl", ilvl=str(ilvl))
        lvl.append(el("w:start", val="1"))
        if ordered:
            fmt, text = _NUMBER_FORMATS[ilvl % len(_NUMBER_FORMATS)]
            lvl.append(el("w:numFmt", val=fmt))
            lvl.append(el("w:lvlText", val=text.format(n=ilvl + 1)))
        else:
            lvl.append(el("w:numFmt", val="bullet"))
            lvl.append(el("w:lvlText", val=_BULLETS[ilvl % len(_BULLETS)]))
        lvl.append(el("w:lvlJc", val="left"))
        ppr = el("w:pPr")
        ppr.append(el("w:ind", left=str(INDENT_TWIPS * (ilvl + 1)), hanging=str(HANGING_TWIPS)))
        lvl.append(ppr)
        node.append(lvl)
    return node


class ListNumbering:
    """Allocates numbering instances; one call to :meth:`new_list` per list in the document."""

    def __init__(self, document: Any) -> None:
        self._numbering = document.part.numbering_part.element
        existing = [int(v) for v in self._numbering.xpath("./w:abstractNum/@w:abstractNumId")]
        first_free = max(existing, default=-1) + 1
        self._abstract_ids: dict[bool, int] = {}
        for offset, ordered in enumerate((False, True)):
            abstract_id = first_free + offset
            node = _abstract(abstract_id, ordered)
            nums = self._numbering.findall(qn("w:num"))
            abstracts = self._numbering.findall(qn("w:abstractNum"))
            if abstracts:
                abstracts[-1].addnext(node)
            elif nums:
                nums[0].addprevious(node)
            else:
                self._numbering.insert(0, node)
            self._abstract_ids[ordered] = abstract_id
        used = [int(v) for v in self._numbering.xpath("./w:num/@w:numId")]
        self._next_num_id = max(used, default=0) + 1
        self._append_nums = self._numbering.find(qn("w:numIdMacAtCleanup")) is None

    def new_list(self, ordered: bool, level: int, start: int = 1) -> int:
        """A fresh ``numId`` for one list at nesting ``level``, numbered from ``start``."""
        # python-docx's add_num() rescans all w:num elements each time: quadratic
        num = CT_Num.new(  # type: ignore[no-untyped-call]  # python-docx leaves new() unannotated
            self._next_num_id, self._abstract_ids[ordered])
        self._next_num_id += 1
        if self._append_nums:
            self._numbering.append(num)
        else:
            self._numbering._insert_num(num)
        override = num.add_lvlOverride(ilvl=min(level, LEVELS - 1))
        override.add_startOverride(max(0, start) if ordered else 1)
        return int(num.numId)


def set_num_pr(paragraph: Any, num_id: int, level: int) -> None:
    """Attach a paragraph to list ``num_id`` at ``level`` (``w:numPr`` with ilvl and numId)."""
    ppr = paragraph._p.get_or_add_pPr()
    num_pr = ppr.get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = min(level, LEVELS - 1)
    num_pr.get_or_add_numId().val = num_id


def indent_twips(level: int) -> int:
    """Left indent of list content at ``level`` (continuation paragraphs line up with text)."""
    return INDENT_TWIPS * (min(level, LEVELS - 1) + 1)
