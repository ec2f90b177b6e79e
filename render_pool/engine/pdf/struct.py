"""A tagged PDF page's structure tree, copied out of pdfium into plain Python nodes.

pdfium builds the tree for one page from the document's StructTreeRoot and ParentTree;
marked-content references to other pages come back as ``-1`` and are dropped here. The
walk is iterative with a depth cap, a node cap and a visited set, so a tree with cycles or
ten thousand levels cannot recurse without bound: such a tree is reported as broken
(:class:`BrokenTree`) and the caller reads the page by layout instead.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

# Not settings: JOB_TIMEOUT_SECONDS and POOL_WORKER_MEMORY_MB bound every job; these only
# turn a hostile document into a clear error early, far above what real documents need.
MAX_DEPTH = 64
MAX_NODES = 50_000
_ATTRS = ("ListNumbering", "RowSpan", "ColSpan", "Scope")

# an FPDF_STRUCTELEMENT: pypdfium2's raw bindings hand elements out as ctypes pointers
_Element: TypeAlias = "ctypes._Pointer[Any]"


class BrokenTree(Exception):
    """The page's structure tree is too deep, too big or otherwise unusable."""


@dataclass(slots=True)
class StructNode:
    """One structure element: its role-mapped type, texts, attributes and kids.

    ``kids`` holds child nodes and marked-content ids (ints) in document order.
    """

    type: str
    alt: str = ""
    actual: str = ""
    attrs: dict[str, str | float] = field(default_factory=dict)
    kids: list[StructNode | int] = field(default_factory=list)


def _wide(fn: Callable[[_Element, ctypes.Array[ctypes.c_char] | None, int], int],
          handle: _Element) -> str:
    """A UTF-16LE string read with pdfium's two-call pattern (size, then fill)."""
    n = fn(handle, None, 0)
    if n <= 2 or n > 1 << 20:
        return ""
    buf = ctypes.create_string_buffer(n)
    fn(handle, buf, n)
    return buf.raw[: n - 2].decode("utf-16-le", "replace")


def _attrs(el: _Element) -> dict[str, str | float]:
    """List numbering and table cell spans from the element's attribute objects."""
    out: dict[str, str | float] = {}
    count = pdfium_c.FPDF_StructElement_GetAttributeCount(el)
    for i in range(max(0, min(count, 8))):
        attr = pdfium_c.FPDF_StructElement_GetAttributeAtIndex(el, i)
        if not attr:
            continue
        for name in _ATTRS:
            value = pdfium_c.FPDF_StructElement_Attr_GetValue(attr, name.encode())
            if not value:
                continue
            kind = pdfium_c.FPDF_StructElement_Attr_GetType(value)
            if kind == pdfium_c.FPDF_OBJECT_NUMBER:
                num = ctypes.c_float(0)
                if pdfium_c.FPDF_StructElement_Attr_GetNumberValue(value, ctypes.byref(num)):
                    out[name] = float(num.value)
            elif kind in (pdfium_c.FPDF_OBJECT_NAME, pdfium_c.FPDF_OBJECT_STRING):
                size = ctypes.c_ulong(0)
                pdfium_c.FPDF_StructElement_Attr_GetStringValue(value, None, 0,
                                                                ctypes.byref(size))
                if 2 < size.value < 256:
                    buf = ctypes.create_string_buffer(size.value)
                    if pdfium_c.FPDF_StructElement_Attr_GetStringValue(
                            value, buf, size.value, ctypes.byref(size)):
                        out[name] = buf.raw[: size.value - 2].decode("utf-16-le", "replace")
    return out


def _fill(node: StructNode, el: _Element) -> None:
    node.type = _wide(pdfium_c.FPDF_StructElement_GetType, el) or "NonStruct"
    node.alt = _wide(pdfium_c.FPDF_StructElement_GetAltText, el).strip()
    node.actual = _wide(pdfium_c.FPDF_StructElement_GetActualText, el)
    if node.type in ("L", "TH", "TD"):
        node.attrs = _attrs(el)


def page_tree(page: pdfium.PdfPage) -> list[StructNode] | None:
    """The page's structure elements (roots first), or None when the page is not tagged.

    Raises :class:`BrokenTree` when the tree exceeds ``MAX_DEPTH`` or ``MAX_NODES`` or
    an element is reached twice (a cycle or a shared kid).
    """
    tree = pdfium_c.FPDF_StructTree_GetForPage(page.raw)
    if not tree:
        return None
    try:
        roots: list[StructNode] = []
        stack: list[tuple[_Element, StructNode, int]] = []  # (element, its node, depth)
        for i in range(max(0, pdfium_c.FPDF_StructTree_CountChildren(tree))):
            el = pdfium_c.FPDF_StructTree_GetChildAtIndex(tree, i)
            if el:
                roots.append(StructNode(""))
                stack.append((el, roots[-1], 0))
        stack.reverse()
        seen: set[int] = set()
        while stack:
            el, node, depth = stack.pop()
            key = ctypes.cast(el, ctypes.c_void_p).value or 0
            if key in seen:
                raise BrokenTree("an element of the structure tree is reached twice")
            seen.add(key)
            if depth > MAX_DEPTH or len(seen) > MAX_NODES:
                raise BrokenTree("the structure tree is too deep or too large")
            _fill(node, el)
            children: list[tuple[_Element, StructNode, int]] = []
            for k in range(max(0, pdfium_c.FPDF_StructElement_CountChildren(el))):
                child = pdfium_c.FPDF_StructElement_GetChildAtIndex(el, k)
                if child:
                    kid = StructNode("")
                    node.kids.append(kid)
                    children.append((child, kid, depth + 1))
                else:
                    mcid = pdfium_c.FPDF_StructElement_GetChildMarkedContentID(el, k)
                    if mcid >= 0:
                        node.kids.append(mcid)
            stack.extend(reversed(children))
        return roots or None
    finally:
        pdfium_c.FPDF_StructTree_Close(tree)


def dump(nodes: list[StructNode]) -> str:
    """Indented outline of a tree (for debugging and test failure messages)."""
    out: list[str] = []
    stack: list[tuple[StructNode | int, int]] = [(n, 0) for n in reversed(nodes)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, int):
            out.append("  " * depth + f"mcid {node}")
            continue
        out.append("  " * depth + node.type + (f" alt={node.alt!r}" if node.alt else ""))
        stack.extend((k, depth + 1) for k in reversed(node.kids))
    return "\n".join(out)
