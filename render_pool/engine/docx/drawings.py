"""Drawings, pictures, charts and VML shapes of a DOCX paragraph (the DOCX reader's
``w:drawing`` and ``w:pict`` runs): images become ``Image`` nodes with their bytes in
``Document.resources``, charts become data tables, text boxes become blocks after the
paragraph, and anything else a visible placeholder with a warning.
"""

from __future__ import annotations

from typing import Protocol

from lxml import etree

from render_pool.engine.common.inlines import ParaState
from render_pool.engine.common.ooxml_charts import C as CHART_NS
from render_pool.engine.common.ooxml_charts import chart_table, chart_title
from render_pool.engine.docx.package import NS, Package, mime_for
from render_pool.engine.model import Block, Document, Image, Paragraph, Placeholder, Resource, Text

_W = f"{{{NS['w']}}}"
_R = f"{{{NS['r']}}}"
_WP = f"{{{NS['wp']}}}"
_A = f"{{{NS['a']}}}"
_PIC = f"{{{NS['pic']}}}"
_V = f"{{{NS['v']}}}"
_O = f"{{{NS['o']}}}"
EMU_PER_PX = 9525


class DrawingHost(Protocol):
    """What the drawings need of the reader: the package, the part being read (notes,
    headers and the body are different parts), the document and the block reader (for
    text boxes)."""

    pkg: Package
    part: str
    doc: Document

    def blocks(self, container: etree._Element) -> list[Block]: ...


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


class Drawings:
    """Reads the drawings of the part ``host`` is reading."""

    def __init__(self, host: DrawingHost) -> None:
        self.host = host

    def drawing(self, drawing: etree._Element, state: ParaState) -> None:
        for holder in drawing:
            if _local(holder) not in ("inline", "anchor"):
                continue
            doc_pr = holder.find(_WP + "docPr")
            alt = title = ""
            if doc_pr is not None:
                alt = " ".join((doc_pr.get("descr") or "").split())
                title = " ".join((doc_pr.get("title") or "").split())
            extent = holder.find(_WP + "extent")
            size = self._extent(extent)
            gdata = holder.find(f"{_A}graphic/{_A}graphicData")
            if gdata is None:
                continue
            uri = gdata.get("uri", "")
            pics = list(gdata.iter(_PIC + "pic"))
            boxes = list(gdata.iter(_W + "txbxContent"))
            if pics:
                for pic in pics:
                    blip = pic.find(".//" + _A + "blip")
                    pic_alt = alt
                    if len(pics) > 1 or not pic_alt:
                        cnv = pic.find(".//" + _PIC + "cNvPr")
                        if cnv is not None and cnv.get("descr"):
                            pic_alt = cnv.get("descr", "").strip()
                    self._image(blip, pic_alt, title, size if len(pics) == 1 else (None, None),
                                state)
            for box in boxes:
                state.pending.extend(self.host.blocks(box))
            if pics or boxes:
                continue
            if uri.endswith("/chart"):
                self._chart(gdata, alt, state)
            elif uri.endswith("/diagram"):
                self.host.doc.warn("A SmartArt diagram was not converted (kept as a placeholder).")
                state.add(Placeholder(f"[diagram{': ' + alt if alt else ''}]"))
            elif uri.endswith(("wordprocessingShape", "wordprocessingGroup",
                               "wordprocessingCanvas")):
                if alt:
                    state.add(Placeholder(f"[shape: {alt}]"))
            else:
                self.host.doc.warn(f"A drawing of an unsupported kind was not converted ({uri}).")
                state.add(Placeholder(f"[drawing{': ' + alt if alt else ''}]"))

    def _chart(self, gdata: etree._Element, alt: str, state: ParaState) -> None:
        ref = gdata.find(f"{{{CHART_NS}}}chart")
        rels = self.host.pkg.rels(self.host.part)
        rel = rels.get(ref.get(_R + "id", "")) if ref is not None else None
        root = self.host.pkg.xml(rel.target) if rel is not None and not rel.external else None
        table = chart_table(root) if root is not None else None
        if table is None:
            self.host.doc.warn("A chart was not converted (kept as a placeholder).")
            state.add(Placeholder(f"[chart{': ' + alt if alt else ''}]"))
            return
        title = chart_title(root) or alt
        if title:
            state.pending.append(Paragraph([Text(title)]))
        state.pending.append(table)

    @staticmethod
    def _extent(extent: etree._Element | None) -> tuple[int | None, int | None]:
        if extent is None:
            return None, None
        try:
            cx = int(extent.get("cx", "0")) // EMU_PER_PX
            cy = int(extent.get("cy", "0")) // EMU_PER_PX
        except ValueError:
            return None, None
        return (cx or None, cy or None)

    def _image(self, blip: etree._Element | None, alt: str, title: str,
               size: tuple[int | None, int | None], state: ParaState) -> None:
        if blip is None:
            self.host.doc.warn("An image without picture data was skipped (placeholder kept).")
            state.add(Placeholder(f"[image{': ' + alt if alt else ''}]"))
            return
        embed = blip.get(_R + "embed")
        link = blip.get(_R + "link")
        src = self._image_src(embed) if embed else None
        if src is None and link:
            src = self._image_src(link)
        if src is None:
            self.host.doc.warn("An image points to a missing part (placeholder kept).")
            state.add(Placeholder(f"[image{': ' + alt if alt else ''}]"))
            return
        state.add(Image(src=src, alt=alt, title=title, width_px=size[0], height_px=size[1]))

    def _image_src(self, rid: str) -> str | None:
        rel = self.host.pkg.rels(self.host.part).get(rid)
        if rel is None:
            return None
        if rel.external:
            return rel.target
        key = rel.target[5:] if rel.target.startswith("word/") else rel.target
        if key in self.host.doc.resources:
            return key
        if not self.host.pkg.has(rel.target):
            return None
        data = self.host.pkg.read(rel.target)
        mime = mime_for(rel.target, self.host.pkg.content_type(rel.target))
        if mime in ("image/emf", "image/wmf"):
            self.host.doc.warn("Some images are in EMF/WMF format (kept as is; browsers may not "
                          "display them).")
        self.host.doc.resources[key] = Resource(data=data, mime=mime)
        return key

    def vml(self, pict: etree._Element, state: ParaState) -> bool:
        found = False
        for box in pict.iter(_W + "txbxContent"):
            state.pending.extend(self.host.blocks(box))
            found = True
        for imd in pict.iter(_V + "imagedata"):
            rid = imd.get(_R + "id") or imd.get(_R + "href") or imd.get(
                _O + "relid")
            shape = imd.getparent()
            alt = (shape.get("alt") or imd.get(_O + "title") or "").strip() \
                if shape is not None else ""
            src = self._image_src(rid) if rid else None
            if src is None:
                self.host.doc.warn("A VML image points to a missing part (placeholder kept).")
                state.add(Placeholder(f"[image{': ' + alt if alt else ''}]"))
            else:
                state.add(Image(src=src, alt=alt))
            found = True
        return found
