"""Raw HTML (from Markdown) to model blocks the DOCX writer can render.

Word has no HTML: the writer keeps all visible text, paragraph breaks at block tags, line breaks,
bold/italic/underline/strike/sub/sup/code, links and ``<img>`` (when its source is a resource).
Scripts, styles and comments are dropped. Tables become one line per row, cells split by " | ".
"""

from __future__ import annotations

import html
import re
from typing import Any

import lxml.html
from lxml import etree

from render_pool.model import (
    Block,
    Code,
    CodeBlock,
    Emph,
    HorizontalRule,
    Image,
    Inline,
    LineBreak,
    Link,
    Paragraph,
    Strike,
    Strong,
    Subscript,
    Superscript,
    Text,
    Underline,
)

_BLOCK = {
    "p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "h1", "h2",
    "h3", "h4", "h5", "h6", "li", "tr", "table", "thead", "tbody", "tfoot", "ul", "ol",
    "blockquote", "dl", "dt", "dd", "figure", "figcaption", "center", "details", "summary",
    "address", "caption", "form", "fieldset", "legend",
}
_SKIP = {"script", "style", "head", "title", "template", "noscript", "iframe", "object"}
_WRAP: dict[str, Any] = {
    "b": Strong, "strong": Strong, "i": Emph, "em": Emph, "cite": Emph, "u": Underline,
    "ins": Underline, "s": Strike, "del": Strike, "strike": Strike, "sub": Subscript,
    "sup": Superscript, "h1": Strong, "h2": Strong, "h3": Strong, "h4": Strong, "h5": Strong,
    "h6": Strong, "th": Strong, "dt": Strong,
}
_WS = re.compile(r"\s+")


class _Collector:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.current: list[Inline] = []

    def flush(self) -> None:
        inl = self.current
        while inl and isinstance(inl[0], Text) and not inl[0].text.strip():
            inl.pop(0)
        while inl and isinstance(inl[-1], Text) and not inl[-1].text.strip():
            inl.pop()
        if inl:
            if isinstance(inl[0], Text):
                inl[0] = Text(inl[0].text.lstrip())
            if isinstance(inl[-1], Text):
                inl[-1] = Text(inl[-1].text.rstrip())
            self.blocks.append(Paragraph(inl))
        self.current = []

    def text(self, raw: str | None, wrappers: list[Any]) -> None:
        if not raw:
            return
        text = _WS.sub(" ", raw)
        if not text.strip() and (not self.current or _ends_space(self.current)):
            return
        if _ends_space(self.current) and text.startswith(" "):
            text = text[1:]
        if text:
            self.current.append(_wrap(Text(text), wrappers))

    def walk(self, node: Any, wrappers: list[Any]) -> None:
        for child in node:
            if not isinstance(child.tag, str):  # comment or processing instruction
                self.text(child.tail, wrappers)
                continue
            tag = child.tag.lower()
            if tag in _SKIP:
                pass
            elif tag == "br":
                self.current.append(LineBreak())
            elif tag == "hr":
                self.flush()
                self.blocks.append(HorizontalRule())
            elif tag == "img":
                self.current.append(_wrap(_image(child), wrappers))
            elif tag == "pre":
                self.flush()
                self.blocks.append(CodeBlock(child.text_content().strip("\n")))
            elif tag in ("code", "kbd", "samp", "tt"):
                self.current.append(_wrap(Code(_WS.sub(" ", child.text_content())), wrappers))
            elif tag in ("td", "th"):
                if self.current:
                    self.current.append(Text(" | "))
                self.text(child.text, wrappers + ([Strong] if tag == "th" else []))
                self.walk(child, wrappers + ([Strong] if tag == "th" else []))
            else:
                inner = list(wrappers)
                if tag in _WRAP:
                    inner.append(_WRAP[tag])
                if tag == "a" and child.get("href"):
                    inner.append(("link", child.get("href"), child.get("title") or ""))
                block = tag in _BLOCK
                if block:
                    self.flush()
                if tag == "li":
                    self.current.append(Text("\u2022 "))
                self.text(child.text, inner)
                self.walk(child, inner)
                if block:
                    self.flush()
            self.text(child.tail, wrappers)


def _ends_space(inl: list[Inline]) -> bool:
    if not inl:
        return True
    last = inl[-1]
    while not isinstance(last, (Text, LineBreak)) and getattr(last, "children", None):
        last = last.children[-1]  # type: ignore[union-attr]
    return isinstance(last, LineBreak) or (isinstance(last, Text) and last.text.endswith(" "))


def _wrap(node: Inline, wrappers: list[Any]) -> Inline:
    for w in reversed(wrappers):
        if isinstance(w, tuple):
            node = Link([node], w[1], w[2])
        else:
            node = w([node])
    return node


def _image(node: Any) -> Image:
    def dim(name: str) -> int | None:
        v = (node.get(name) or "").strip().removesuffix("px")
        return int(v) if v.isdigit() and int(v) > 0 else None

    return Image(src=node.get("src") or "", alt=node.get("alt") or "",
                 title=node.get("title") or "", width_px=dim("width"), height_px=dim("height"))


def html_to_blocks(raw: str) -> list[Block]:
    """Visible content of an HTML fragment as paragraphs (never loses text)."""
    if not raw.strip():
        return []
    try:
        root = lxml.html.fragment_fromstring(raw, create_parent="div")
    except (etree.ParserError, ValueError):
        text = html.unescape(re.sub(r"<[^>]*>", " ", raw))
        text = _WS.sub(" ", text).strip()
        return [Paragraph([Text(text)])] if text else []
    collector = _Collector()
    collector.text(root.text, [])
    collector.walk(root, [])
    collector.flush()
    return collector.blocks
