"""Table styles and page columns for the generated documents: post-edits of the WordprocessingML
pandoc writes (explicit borders and shading per table and cell, ``w:cols`` in the section)
and the CSS of the HTML that Chromium prints.

Styles: ``none`` (no rules), ``header-rule`` (one rule under the header, as most reports
print), ``zebra`` (shaded alternate rows, no rules), ``grid`` (every cell ruled).
"""

from __future__ import annotations

import re

_NO_BORDERS = "".join(f'<w:{side} w:val="nil"/>' for side in
                      ("top", "left", "bottom", "right", "insideH", "insideV"))
_ALL_BORDERS = "".join(f'<w:{side} w:val="single" w:sz="4" w:space="0" w:color="000000"/>'
                       for side in ("top", "left", "bottom", "right", "insideH", "insideV"))
_RULE_BELOW = '<w:tcBorders><w:bottom w:val="single" w:sz="8" w:space="0" w:color="000000"/>' \
              '</w:tcBorders>'
_SHADE = '<w:shd w:val="clear" w:color="auto" w:fill="{fill}"/>'
_TABLE = re.compile(r"<w:tbl>.*?</w:tbl>", re.DOTALL)
_ROW = re.compile(r"<w:tr>.*?</w:tr>|<w:tr .*?</w:tr>", re.DOTALL)
_CELL_PROPS = re.compile(r"<w:tcPr\s*/>|<w:tcPr>(.*?)</w:tcPr>", re.DOTALL)


def _cell_props(row: str, extra: str) -> str:
    def fix(match: re.Match[str]) -> str:
        return f"<w:tcPr>{match.group(1) or ''}{extra}</w:tcPr>"
    return _CELL_PROPS.sub(fix, row)


def _style_table(table: str, style: str) -> str:
    borders = _ALL_BORDERS if style == "grid" else _NO_BORDERS
    table = table.replace("<w:tblLook", f"<w:tblBorders>{borders}</w:tblBorders><w:tblLook", 1)
    rows = _ROW.findall(table)
    last_header = max((i for i, r in enumerate(rows) if "<w:tblHeader" in r), default=-1)
    body = 0
    for index, row in enumerate(rows):
        header = "<w:tblHeader" in row
        extra = ""
        if style == "header-rule" and index == last_header:
            extra = _RULE_BELOW
        elif style == "zebra":
            if header:
                extra = _SHADE.format(fill="C8C8C8")
            else:
                body += 1
                extra = _SHADE.format(fill="E6E6E6") if body % 2 == 0 else ""
        if extra:
            table = table.replace(row, _cell_props(row, extra), 1)
    return table


def style_docx_xml(document_xml: str, style: str, columns: int) -> str:
    """``word/document.xml`` with every table in ``style`` and the body set in ``columns``."""
    document_xml = _TABLE.sub(lambda m: _style_table(m.group(0), style), document_xml)
    if columns > 1:
        cols = f'<w:cols w:num="{columns}" w:space="454"/>'
        document_xml = re.sub(r"<w:cols\b[^>]*/>", "", document_xml)
        last = document_xml.rfind("</w:sectPr>")
        if last >= 0:
            document_xml = document_xml[:last] + cols + document_xml[last:]
        else:
            document_xml = document_xml.replace(
                "</w:body>", f"<w:sectPr>{cols}</w:sectPr></w:body>", 1)
    return document_xml


_CSS_BASE = """
@page { size: A4; margin: 18mm 16mm; }
body { font-family: "DejaVu Serif", serif; font-size: 10pt; line-height: 1.35; }
main { column-count: %(columns)d; column-gap: 8mm; }
h1 { column-span: all; font-size: 20pt; }
h2 { font-size: 14pt; break-after: avoid; }
h3 { font-size: 11.5pt; break-after: avoid; }
pre, code { font-family: "DejaVu Sans Mono", monospace; font-size: 8.5pt; }
pre { white-space: pre-wrap; }
blockquote { margin-left: 6mm; font-style: italic; color: #333; }
/* a table spans the columns, as papers set wide tables: in one narrow column it would
   overflow into its neighbour */
table { column-span: all; width: 100%%; border-collapse: collapse; margin: 4mm 0;
        font-size: 9pt; }
th, td { text-align: left; vertical-align: top; padding: 1mm 2mm; }
caption { caption-side: bottom; font-size: 9pt; font-style: italic; text-align: left; }
"""
_CSS_TABLES = {
    "none": "",
    "header-rule": "thead tr:last-child th { border-bottom: 1px solid #000; }",
    "zebra": "thead th { background: #c8c8c8; } tbody tr:nth-child(even) td "
             "{ background: #e6e6e6; }",
    "grid": "th, td { border: 0.6pt solid #000; }",
}


def css(style: str, columns: int) -> str:
    """The stylesheet of a source's HTML printed by Chromium."""
    return (_CSS_BASE % {"columns": columns}) + _CSS_TABLES[style]
