"""Footnotes part for the DOCX writer (python-docx 1.2 has no footnote API).

Adds ``/word/footnotes.xml`` (content type ``...wordprocessingml.footnotes+xml``) related from
the document part, with the two separator footnotes Word expects (ids -1 and 0) and a
``w:footnotePr`` in settings.xml. Note content is built with python-docx's paragraph API in a
scratch ``w:hdr`` container whose ``part`` is the footnotes part (so hyperlink and image
relationships land in footnotes.xml.rels), then moved into a ``w:footnote`` element.
"""

from __future__ import annotations

from typing import Any

from docx.blkcntnr import BlockItemContainer
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import nsdecls, qn
from docx.parts.story import StoryPart

from render_pool.engine.docx.writer_xml import el, settings_footnote_pr

_FOOTNOTES_XML = (
    f"<w:footnotes {nsdecls('w', 'r')}>"
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:pPr>'
    '<w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>'
    "<w:r><w:separator/></w:r></w:p></w:footnote>"
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:pPr>'
    '<w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>'
    "<w:r><w:continuationSeparator/></w:r></w:p></w:footnote>"
    "</w:footnotes>"
)


class _PartHolder:
    """Minimal ``ProvidesStoryPart`` parent for containers living in the footnotes part."""

    def __init__(self, part: StoryPart) -> None:
        self.part = part


class Footnotes:
    """Creates footnotes on demand; nothing is added to the package until the first one."""

    def __init__(self, document: Any) -> None:
        self._document = document
        self._part: StoryPart | None = None
        self._next_id = 1
        self._ref_style_id = document.styles["Footnote Reference"].style_id

    def _ensure_part(self) -> StoryPart:
        if self._part is None:
            doc_part = self._document.part
            element = parse_xml(_FOOTNOTES_XML)
            self._part = StoryPart(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, element,
                                   doc_part.package)
            doc_part.relate_to(self._part, RT.FOOTNOTES)
            settings_footnote_pr(self._document.settings.element)
        return self._part

    def new_container(self) -> BlockItemContainer:
        """A scratch container for one note's blocks; pass it to :meth:`commit` when filled."""
        part = self._ensure_part()
        return BlockItemContainer(OxmlElement("w:hdr"), _PartHolder(part))

    def commit(self, container: BlockItemContainer) -> int:
        """Move the container's content into a new ``w:footnote``; return its id.

        The first paragraph gets the ``w:footnoteRef`` mark (the number Word prints in the
        note) in the "Footnote Reference" character style.
        """
        part = self._ensure_part()
        scratch = container._element
        paragraphs = scratch.findall(qn("w:p"))
        if not paragraphs or scratch[0].tag != qn("w:p"):
            first = OxmlElement("w:p")
            scratch.insert(0, first)
        else:
            first = paragraphs[0]
        mark = OxmlElement("w:r")
        rpr = OxmlElement("w:rPr")
        rpr.append(el("w:rStyle", val=self._ref_style_id))
        mark.append(rpr)
        mark.append(OxmlElement("w:footnoteRef"))
        space = OxmlElement("w:r")
        t = el("w:t")
        t.set(qn("xml:space"), "preserve")
        t.text = " "
        space.append(t)
        ppr = first.find(qn("w:pPr"))
        if ppr is not None:
            ppr.addnext(mark)
        else:
            first.insert(0, mark)
        mark.addnext(space)
        if scratch[-1].tag != qn("w:p"):  # a note must end with a paragraph
            scratch.append(OxmlElement("w:p"))
        note_id = self._next_id
        self._next_id += 1
        footnote = el("w:footnote", id=str(note_id))
        for child in list(scratch):
            footnote.append(child)
        part.element.append(footnote)
        return note_id


def add_reference(run: Any, note_id: int, style_id: str) -> None:
    """Turn ``run`` into a footnote reference mark for note ``note_id``."""
    r = run._r
    rpr = r.get_or_add_rPr()
    rpr.insert(0, el("w:rStyle", val=style_id))
    r.append(el("w:footnoteReference", id=str(note_id)))
