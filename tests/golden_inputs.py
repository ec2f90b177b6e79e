"""Small inputs of every reader format for the golden tests (tests/test_golden_formats.py).

Why generated: the native formats (PPTX, XLSX, CSV, HTML, EPUB, Markdown) and the scans are
built here at test time from fixed content, so each input is a few KB of known structure
(headings, lists, tables, links, notes, formatted numbers) rather than a large file of
someone else's. The formats only LibreOffice writes are committed under
``tests/data/office_formats/`` (provenance in its SOURCES.md): ODT, DOC, RTF, ODS, XLS and
ODP are written again from :func:`report_docx`, :func:`sheet_xlsx` and :func:`deck_pptx` by
``.venv/bin/python -m tests.golden_inputs build`` with the LibreOffice on the machine, so the
golden tests read the same bytes everywhere and need LibreOffice only to read them. The PPT is
Apache POI's test file (LibreOffice writes 600 KB of PPT for three slides).
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from tests.office_fixtures import build_xlsx, soffice_convert
from tests.pdf_office_set import _png

DATA = Path(__file__).parent / "data"
OFFICE_FORMATS = DATA / "office_formats"
# the committed file of each LibreOffice-read kind and the generated source it was made from
OFFICE_FILES = {"odt": "report.odt", "doc": "report.doc", "rtf": "report.rtf",
                "ods": "sheet.ods", "xls": "sheet.xls", "odp": "deck.odp",
                "ppt": "poi_single_coloured_page.ppt"}
MADE_HERE = ("odt", "doc", "rtf", "ods", "xls", "odp")  # the others are copied, not built

MARKDOWN = """\
# Field notes

A paragraph with **bold**, *italic*, `code` and a [link](https://example.com/notes).

## Lists

- First point
- Second point
    - A nested point
- Third point

1. One
2. Two

## A table

| Site | Birds | Share |
|:-----|------:|:-----:|
| Marsh | 12 | 40% |
| Wood | 18 | 60% |

> A quoted line.

```python
def count(birds):
    return len(birds)
```

A claim with a note.[^1]

[^1]: The note's text.
"""

CSV_TEXT = """\
Name,City,Joined,Score
Anna,"Rome, Italy",2021-04-01,9.5
Luca,Milan,2022-11-30,7
José,Málaga,2020-01-15,8.25
"""

HTML_TEXT = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Harbour guide</title></head>
<body>
<h1>Harbour guide</h1>
<p>Boats leave <strong>every hour</strong> from <a href="https://example.com/pier">pier 3</a>.
<em>Tickets</em> are sold on board.</p>
<h2>Timetable</h2>
<table>
<thead><tr><th>Boat</th><th>Leaves</th><th>Arrives</th></tr></thead>
<tbody>
<tr><td>Morning</td><td>08:00</td><td>08:40</td></tr>
<tr><td colspan="2">Noon (no return)</td><td>12:45</td></tr>
</tbody>
</table>
<h2>Bring</h2>
<ul><li>A coat</li><li>Water<ul><li>at least a litre</li></ul></li></ul>
<ol><li>Board</li><li>Pay</li></ol>
<blockquote><p>The sea is calm in the morning.</p></blockquote>
<pre><code>route = ["pier 3", "island"]</code></pre>
<p><img src="data:image/png;base64,{png}" alt="Map of the harbour"></p>
</body></html>
"""


def html_bytes() -> bytes:
    """:data:`HTML_TEXT` with a small picture as a data URI (written out as an image)."""
    import base64

    return HTML_TEXT.replace("{png}", base64.b64encode(_png(16, 12)).decode()).encode()


def _zip(entries: dict[str, bytes]) -> bytes:
    """A zip of ``entries`` with fixed timestamps (the same bytes on every run)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return out.getvalue()


_XHTML = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
          'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>{title}</title></head>'
          '<body>{body}</body></html>')


def epub_bytes() -> bytes:
    """An EPUB 3 of two chapters (spine order differs from manifest order), a list, a table,
    a picture and an endnote in the second chapter referenced from the first."""
    chapters = {
        "one.xhtml": ("One", '<h1>The river</h1><p>The river is <em>long</em> and '
                      '<strong>wide</strong>.<a epub:type="noteref" href="two.xhtml#n1">1</a>'
                      '</p><ul><li>Source</li><li>Mouth</li></ul>'
                      '<p><img src="images/map.png" alt="River map"/></p>'),
        "two.xhtml": ("Two", '<h1>The towns</h1><table><tr><th>Town</th><th>People</th></tr>'
                      '<tr><td>Upper</td><td>1,200</td></tr><tr><td>Lower</td><td>860</td>'
                      '</tr></table><aside epub:type="endnote" id="n1"><p>Measured in 1990.'
                      '</p></aside>'),
    }
    manifest = ('<item id="two" href="two.xhtml" media-type="application/xhtml+xml"/>'
                '<item id="one" href="one.xhtml" media-type="application/xhtml+xml"/>'
                '<item id="map" href="images/map.png" media-type="image/png"/>'
                '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" '
                'properties="nav"/>')
    opf = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
           'version="3.0" unique-identifier="id"><metadata '
           'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">golden-river'
           '</dc:identifier><dc:title>A River Book</dc:title><dc:language>en</dc:language>'
           f'</metadata><manifest>{manifest}</manifest><spine><itemref idref="one"/>'
           '<itemref idref="two"/></spine></package>')
    nav = _XHTML.format(title="Contents", body='<nav epub:type="toc"><ol><li><a href="one.xhtml">'
                        'One</a></li><li><a href="two.xhtml">Two</a></li></ol></nav>')
    container = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:'
                 'opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/'
                 'content.opf" media-type="application/oebps-package+xml"/></rootfiles>'
                 '</container>')
    entries = {"mimetype": b"application/epub+zip",
               "META-INF/container.xml": container.encode(),
               "OEBPS/content.opf": opf.encode(), "OEBPS/nav.xhtml": nav.encode(),
               "OEBPS/images/map.png": _png(16, 12)}
    for name, (title, body) in chapters.items():
        entries[f"OEBPS/{name}"] = _XHTML.format(title=title, body=body).encode()
    return _zip(entries)


def deck_pptx() -> bytes:
    """Three slides: a title slide, bullets with a nested level and speaker notes, a table."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    first = prs.slides.add_slide(prs.slide_layouts[0])
    first.shapes.title.text = "Quarterly review"
    first.placeholders[1].text = "Sales and plans"
    bullets = prs.slides.add_slide(prs.slide_layouts[1])
    bullets.shapes.title.text = "Highlights"
    body = bullets.placeholders[1].text_frame
    body.text = "Revenue grew in the north"
    nested = body.add_paragraph()
    nested.text = "Travel costs fell"
    nested.level = 1
    body.add_paragraph().text = "Two engineers hired"
    bullets.notes_slide.notes_text_frame.text = "Mention the audit first."
    table_slide = prs.slides.add_slide(prs.slide_layouts[5])
    table_slide.shapes.title.text = "Figures"
    table = table_slide.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(1.5)).table
    for r, row in enumerate((("Region", "Q1", "Q2"), ("North", "10", "12"), ("South", "7", "9"))):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def sheet_xlsx() -> bytes:
    """The office set's workbook: merged title, formatted numbers, dates, a hidden sheet."""
    return build_xlsx()


def report_docx() -> bytes:
    """The source of the committed ODT, DOC and RTF: headings, inline formatting, a link,
    a bulleted and a numbered list and a table, in python-docx's default styles."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.add_heading("Annual report", level=1)
    para = document.add_paragraph("The year in short, with ")
    para.add_run("bold").bold = True
    para.add_run(" and ")
    para.add_run("italic").italic = True
    para.add_run(" words and a ")
    rel = document.part.relate_to("https://example.com/annual",
                                  "http://schemas.openxmlformats.org/officeDocument/2006/"
                                  "relationships/hyperlink", is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "link"
    run.append(text)
    link.append(run)
    para._p.append(link)
    para.add_run(".")
    document.add_heading("Results", level=2)
    for item in ("Revenue up", "Costs down", "Staff stable"):
        document.add_paragraph(item, style="List Bullet")
    table = document.add_table(rows=3, cols=3)
    table.style = "Table Grid"
    for r, row in enumerate((("Team", "Head count", "Budget"), ("Sales", "12", "1.5 M"),
                             ("Support", "8", "0.9 M"))):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Next steps", level=2)
    for item in ("Open a new office", "Hire engineers"):
        document.add_paragraph(item, style="List Number")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def scan(fmt: str) -> bytes:
    """The top of a generated report page (tests/data/pdf/generated/report.pdf) rendered at
    200 dpi and saved as ``fmt`` (PNG, JPEG, TIFF or WEBP): a scan to read by OCR."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument((DATA / "pdf" / "generated" / "report.pdf").read_bytes())
    image = pdf[0].render(scale=200 / 72).to_pil().convert("RGB")
    image = image.crop((0, 0, image.width, int(image.height * 0.3)))
    out = io.BytesIO()
    image.save(out, format=fmt, dpi=(200, 200))
    return out.getvalue()


def build(target: Path = OFFICE_FORMATS) -> None:
    """Write the LibreOffice-made inputs (:data:`MADE_HERE`) into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="golden-inputs-") as scratch:
        root = Path(scratch)
        sources = {"report.docx": report_docx(), "sheet.xlsx": sheet_xlsx(),
                   "deck.pptx": deck_pptx()}
        for name, data in sources.items():
            (root / name).write_bytes(data)
        profile = root / "profile"
        for kind in MADE_HERE:
            name = OFFICE_FILES[kind]
            stem = name.split(".")[0]
            source = next(root / s for s in sources if s.startswith(stem + "."))
            soffice_convert([source], kind, root, profile)
            shutil.copyfile(root / name, target / name)
            print(f"{target / name}: {(target / name).stat().st_size} bytes")


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m tests.golden_inputs build")
    build()
