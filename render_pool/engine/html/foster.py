"""Content a table holds outside its cells, which browsers show before the table.

Why: tag soup such as ``</td><tr><table>...`` (an unclosed row opening a table) leaves
libxml2 a tree where a whole table, text or paragraphs sit directly in a ``<tr>``, or in a
``<table>``/``<tbody>`` between rows. The table reader takes only cells, so all of that was
lost without a word (a page's footer table after such markup). A browser "foster-parents"
it: shows it just before the table. :func:`stray_content` finds it, in document order, for
the reader to read as blocks before the table.
"""

from __future__ import annotations

from lxml import etree

# the parts of a table's structure: what they hold besides these is stray
_SECTIONS = frozenset({"thead", "tbody", "tfoot"})
_STRUCTURE = frozenset({"tr", "caption", "colgroup", "col", *_SECTIONS})
_CELLS = frozenset({"td", "th"})


def _tag(el: etree._Element) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def _holds_rows(el: etree._Element, table: etree._Element) -> bool:
    """Whether ``el`` holds rows or cells of ``table`` itself (not of a table inside it)."""
    for part in el.iter("tr", "td", "th"):
        owner = next(part.iterancestors("table"), None)
        if owner is table:
            return True
    return False


def stray_content(table: etree._Element) -> list[etree._Element | str]:
    """Elements and non-blank text that ``table`` holds outside its cells (in the table
    itself, its sections and its rows; nested tables look after their own), in order."""
    found: list[etree._Element | str] = []

    def visit(part: etree._Element, allowed: frozenset[str]) -> None:
        if part.text and part.text.strip():
            found.append(f" {part.text.strip()}")  # apart from the text found before
        for child in part:
            tag = _tag(child)
            if tag in _SECTIONS and part is table:
                visit(child, frozenset({"tr"}))
            elif tag == "tr" and "tr" in allowed:
                visit(child, _CELLS)
            elif tag not in allowed and tag not in _STRUCTURE and tag:
                if _holds_rows(child, table):  # a wrapper (a <form> around rows): look inside
                    visit(child, allowed)
                else:
                    found.append(child)
            if child.tail and child.tail.strip():
                found.append(f" {child.tail.strip()}")

    visit(table, _STRUCTURE)
    return found
