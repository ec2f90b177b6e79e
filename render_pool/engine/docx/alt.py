"""The ``alt_engine`` reader: DOCX -> semantic HTML -> the HTML reader -> the document model.

Why a second engine: when the structured ``word2markdown`` reader gives an odd result for an
unusual document, a simpler, more forgiving route is useful. This walk looks only at
paragraphs, headings (by style), lists (by numbering), tables (with spans), links, basic
formatting, images and notes; every element it fails on is reported
as a warning and skipped instead of failing the whole conversion. The HTML then goes through
the same HTML reader as any HTML, so every export is written by the ordinary writers (with
their link allow-list). Input safety (zip bombs, encrypted or non-DOCX files) is shared with
the main reader through ``package``.

Images: :func:`docx_to_html` inlines each as a data URI (encoded once per picture). The
reader itself names each picture by its part instead (``media/image1.png``, as the main
reader does) and hands the bytes over as one resource, so a picture the document shows
3,000 times is read and kept once, not written into the HTML and decoded 3,000 times.
"""

from __future__ import annotations

import base64
import html as htmlmod
from collections.abc import Iterator
from dataclasses import dataclass

from lxml import etree

from render_pool.engine.docx.numbering import Numbering
from render_pool.engine.docx.omml import omml_to_latex
from render_pool.engine.docx.package import NS, Package, mime_for
from render_pool.engine.docx.styles import Style, Styles
from render_pool.engine.html.build import read_html
from render_pool.engine.model import Document, Image, Resource, walk_document
from render_pool.errors import CorruptDocument

_W = f"{{{NS['w']}}}"
_R = f"{{{NS['r']}}}"
_M = f"{{{NS['m']}}}"
_A = f"{{{NS['a']}}}"
_MC = f"{{{NS['mc']}}}"
_FMT_TAGS = (("b", "strong"), ("i", "em"), ("strike", "del"), ("u", "u"))


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _on(el: etree._Element | None) -> bool:
    return el is not None and el.get(_W + "val", "1").lower() not in ("0", "false", "off", "none")


@dataclass
class _AltCell:
    """One table cell being collected: its HTML and how many grid columns / rows it spans."""

    html: str
    colspan: int
    rowspan: int = 1


class _AltWalker:
    def __init__(self, data: bytes, *, inline_images: bool = True) -> None:
        self.inline_images = inline_images  # False: pictures by part name, see ``media``
        self.media: dict[str, Resource] = {}  # key (part name without word/) -> picture
        self.inlined: dict[str, str] = {}  # part -> its data URI, encoded once
        self.pkg = Package(data)
        self.part = self.pkg.main_part
        root = self.pkg.xml(self.part)
        self.body = root.find(_W + "body") if root is not None else None
        if self.body is None:
            raise CorruptDocument("Not a DOCX document: the main part has no w:body.")
        rel = self.pkg.rel_by_type(self.part, "styles")
        self.styles = Styles(self.pkg.xml(rel[0].target) if rel else None)
        rel = self.pkg.rel_by_type(self.part, "numbering")
        self.numbering = Numbering(self.pkg.xml(rel[0].target) if rel else None)
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.note_ids: dict[str, int] = {}

    def warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    # ------------------------------------------------------------ blocks
    def blocks(self, container: etree._Element) -> str:
        out: list[str] = []
        lists: list[tuple[int, str]] = []  # open lists: (level, tag)

        def close_to(level: int) -> None:
            while lists and lists[-1][0] > level:
                out.append(f"</li></{lists.pop()[1]}>")

        for el in self._children(container):
            try:
                local = _local(el)
                if local == "p":
                    item = self._list_info(el)
                    html, after = self.paragraph(el)
                    if item is not None and html:
                        level, tag = item
                        close_to(level)
                        if lists and lists[-1][0] == level and lists[-1][1] != tag:
                            close_to(level - 1)
                        if lists and lists[-1][0] == level:
                            out.append("</li><li>")
                        else:
                            out.append(f"<{tag}><li>")
                            lists.append((level, tag))
                        out.append(_strip_p(html))
                    elif html:
                        close_to(-1)
                        out.append(html)
                    out.extend(after)
                elif local == "tbl":
                    close_to(-1)
                    out.append(self.table(el))
            except Exception as exc:  # lenient by design: one bad element must not stop us
                self.warn(f"Skipped an element the alt engine could not read ({exc!s:.80}).")
        close_to(-1)
        return "\n".join(out)

    def _children(self, container: etree._Element) -> Iterator[etree._Element]:
        for el in container:
            local = _local(el)
            if local in ("p", "tbl"):
                yield el
            elif local == "sdt":
                content = el.find(_W + "sdtContent")
                if content is not None:
                    yield from self._children(content)
            elif local in ("customXml", "ins", "txbxContent"):
                yield from self._children(el)

    def _list_info(self, p: etree._Element) -> tuple[int, str] | None:
        ppr = p.find(_W + "pPr")
        num_id = ilvl = None
        if ppr is not None and ppr.find(_W + "numPr") is not None:
            numpr = ppr.find(_W + "numPr")
            nid = numpr.find(_W + "numId")
            lvl = numpr.find(_W + "ilvl")
            num_id = nid.get(_W + "val") if nid is not None else None
            ilvl = int(lvl.get(_W + "val", "0")) if lvl is not None else 0
        else:
            style = self._style(ppr)
            if style is not None and style.num_id:
                num_id, ilvl = style.num_id, style.ilvl or 0
        if not num_id or not self.numbering.is_list(num_id):
            return None
        lvl_def = self.numbering.level(num_id, ilvl or 0)
        ordered = lvl_def is not None and lvl_def.fmt not in ("bullet", "none")
        return (ilvl or 0, "ol" if ordered else "ul")

    def _style(self, ppr: etree._Element | None) -> Style | None:
        sid = None
        if ppr is not None and ppr.find(_W + "pStyle") is not None:
            sid = ppr.find(_W + "pStyle").get(_W + "val")
        return self.styles.get(sid) or self.styles.get(self.styles.default_para)

    def paragraph(self, p: etree._Element) -> tuple[str, list[str]]:
        after: list[str] = []
        inner = self.inlines(p, after).strip()
        if not inner:
            return "", after
        style = self._style(p.find(_W + "pPr"))
        if style is not None and (style.heading or style.title):
            level = min(style.heading or 1, 6)
            return f"<h{level}>{inner}</h{level}>", after
        if style is not None and style.code:
            return f"<pre><code>{inner}</code></pre>", after
        if style is not None and style.quote:
            return f"<blockquote><p>{inner}</p></blockquote>", after
        return f"<p>{inner}</p>", after

    # ------------------------------------------------------------ inlines
    def inlines(self, el: etree._Element, after: list[str]) -> str:
        out: list[str] = []
        for c in el:
            local = _local(c)
            ns = etree.QName(c).namespace if isinstance(c.tag, str) else None
            if ns == NS["m"] and local in ("oMath", "oMathPara"):
                tex = omml_to_latex(c)
                out.append(f"<code>${htmlmod.escape(tex)}$</code>")
            elif local == "r":
                out.append(self.run(c, after))
            elif local == "hyperlink":
                href = ""
                rid = c.get(_R + "id")
                if rid and rid in self.pkg.rels(self.part):
                    href = self.pkg.rels(self.part)[rid].target
                if c.get(_W + "anchor"):
                    href += "#" + c.get(_W + "anchor", "")
                text = self.inlines(c, after)
                out.append(f'<a href="{htmlmod.escape(href)}">{text}</a>' if href else text)
            elif local in ("ins", "smartTag", "customXml", "sdtContent", "fldSimple"):
                out.append(self.inlines(c, after))
            elif local == "sdt":
                content = c.find(_W + "sdtContent")
                if content is not None:
                    out.append(self.inlines(content, after))
        return "".join(out)

    def run(self, r: etree._Element, after: list[str]) -> str:
        rpr = r.find(_W + "rPr")
        parts: list[str] = []
        for c in r:
            local = _local(c)
            if local == "t":
                parts.append(htmlmod.escape(c.text or ""))
            elif local == "tab":
                parts.append(" ")
            elif local in ("br", "cr"):
                parts.append("<br>")
            elif local == "drawing":
                parts.extend(self.images(c))
                for box in c.iter(_W + "txbxContent"):
                    after.append(self.blocks(box))
            elif local == "pict":
                for box in c.iter(_W + "txbxContent"):
                    after.append(self.blocks(box))
            elif local == "AlternateContent":
                choice = c.find(_MC + "Choice")
                if choice is not None:
                    for d in choice.iter(_W + "drawing"):
                        parts.extend(self.images(d))
                        for box in d.iter(_W + "txbxContent"):
                            after.append(self.blocks(box))
            elif local in ("footnoteReference", "endnoteReference"):
                parts.append(self.note(local[:-9], c.get(_W + "id", "")))
        text = "".join(parts)
        if not text or rpr is None:
            return text
        for prop, tag in _FMT_TAGS:
            el = rpr.find(_W + prop)
            if _on(el) and (prop != "u" or el.get(_W + "val", "single") != "none"):
                text = f"<{tag}>{text}</{tag}>"
        va = rpr.find(_W + "vertAlign")
        if va is not None and va.get(_W + "val") in ("superscript", "subscript"):
            tag = "sup" if va.get(_W + "val") == "superscript" else "sub"
            text = f"<{tag}>{text}</{tag}>"
        return text

    def images(self, drawing: etree._Element) -> list[str]:
        out = []
        for blip in drawing.iter(_A + "blip"):
            doc_pr = next(drawing.iter(f"{{{NS['wp']}}}docPr"), None)
            alt = htmlmod.escape(" ".join((doc_pr.get("descr", "") if doc_pr is not None
                                           else "").split()))
            rid = blip.get(_R + "embed") or blip.get(_R + "link")
            rel = self.pkg.rels(self.part).get(rid or "")
            if rel is None:
                self.warn("An image points to a missing part and was skipped.")
                continue
            if rel.external:
                out.append(f'<img src="{htmlmod.escape(rel.target)}" alt="{alt}">')
                continue
            if not self.pkg.has(rel.target):
                self.warn("An image points to a missing part and was skipped.")
                continue
            out.append(f'<img src="{self._picture(rel.target)}" alt="{alt}">')
        return out

    def _picture(self, target: str) -> str:
        """The ``src`` of the picture in part ``target``: its data URI (made once), or
        its key in ``media`` (read once)."""
        if self.inline_images:
            uri = self.inlined.get(target)
            if uri is None:
                mime = mime_for(target, self.pkg.content_type(target))
                b64 = base64.b64encode(self.pkg.read(target)).decode("ascii")
                uri = self.inlined[target] = f"data:{mime};base64,{b64}"
            return uri
        key = target[5:] if target.startswith("word/") else target
        if key not in self.media:
            self.media[key] = Resource(self.pkg.read(target),
                                       mime_for(target, self.pkg.content_type(target)))
        return htmlmod.escape(key)

    def note(self, kind: str, nid: str) -> str:
        key = f"{kind}{nid}"
        if key not in self.note_ids:
            rels = self.pkg.rel_by_type(self.part, kind + "s")
            root = self.pkg.xml(rels[0].target) if rels else None
            text = ""
            if root is not None:
                for n in root:
                    if n.get(_W + "id") == nid:
                        text = " ".join("".join(p.itertext()).strip()
                                        for p in n.iter(_W + "p")).strip()
            self.notes.append(htmlmod.escape(text))
            self.note_ids[key] = len(self.notes)
        n = self.note_ids[key]
        return f'<sup><a href="#note-{n}">[{n}]</a></sup>'

    # ------------------------------------------------------------ tables
    def table(self, tbl: etree._Element) -> str:
        grid: list[list[_AltCell]] = []
        active: dict[int, _AltCell] = {}
        for tr in tbl.iter(_W + "tr"):
            if tr.getparent() is None or _nearest_tbl(tr) is not tbl:
                continue
            row: list[_AltCell] = []
            col = 0
            for tc in tr.iter(_W + "tc"):
                if _nearest_tbl(tc) is not tbl:
                    continue
                tcpr = tc.find(_W + "tcPr")
                span_el = tcpr.find(_W + "gridSpan") if tcpr is not None else None
                span = int(span_el.get(_W + "val", "1")) if span_el is not None else 1
                vm = tcpr.find(_W + "vMerge") if tcpr is not None else None
                merged = vm is not None and vm.get(_W + "val", "continue") == "continue"
                if merged and col in active:
                    active[col].rowspan += 1
                    col += span
                    continue
                cell = _AltCell(self.blocks(tc), span)
                if vm is not None:
                    active[col] = cell
                else:
                    active.pop(col, None)
                row.append(cell)
                col += span
            grid.append(row)
        rows = []
        for i, row in enumerate(grid):
            tag = "th" if i == 0 else "td"
            cells = []
            for cell in row:
                attrs = ""
                if cell.colspan > 1:
                    attrs += f' colspan="{cell.colspan}"'
                if cell.rowspan > 1:
                    attrs += f' rowspan="{cell.rowspan}"'
                cells.append(f"<{tag}{attrs}>{_strip_p(cell.html)}</{tag}>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        if not rows:
            return ""
        return "<table>\n<thead>" + rows[0] + "</thead>\n<tbody>" + "\n".join(rows[1:]) + \
            "</tbody>\n</table>"


def _nearest_tbl(el: etree._Element) -> etree._Element | None:
    anc = el.getparent()
    while anc is not None and anc.tag != _W + "tbl":
        anc = anc.getparent()
    return anc


def _strip_p(html: str) -> str:
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        return html[3:-4]
    return html


def docx_to_html(data: bytes) -> tuple[str, list[str]]:
    """Semantic HTML of a DOCX (images as data URIs) and the warnings of the lenient walk.

    Raises ``CorruptDocument``/``UnsupportedFormat``/``TooLarge`` for unusable input.
    """
    return _walk(_AltWalker(data))


def _walk(walker: _AltWalker) -> tuple[str, list[str]]:
    """The HTML page of ``walker``'s document and the walk's warnings."""
    body = walker.blocks(walker.body)
    if walker.notes:
        items = "".join(f'<li id="note-{i}">{t}</li>' for i, t in enumerate(walker.notes, 1))
        body += f"\n<hr>\n<ol>{items}</ol>"
    html = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n"
            f"{body}\n</body></html>\n")
    return html, walker.warnings


def read_docx_alt(data: bytes) -> Document:
    """The document model of a DOCX through the lenient walk's HTML (pictures by part name,
    see the module doc) and the HTML reader, with the walk's warnings."""
    walker = _AltWalker(data, inline_images=False)
    html, warnings = _walk(walker)
    doc = read_html(html)
    shown = {n.src for n in walk_document(doc) if isinstance(n, Image)}
    for key, picture in walker.media.items():
        if key in shown:
            doc.resources.setdefault(key, picture)
    for w in warnings:
        doc.warn(w)
    return doc
