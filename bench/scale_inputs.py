"""The inputs of ``just bench scale``: one ordinary document per reader, made in code, at any
multiple of its size (``factor``), so the cost of reading it can be set against its size.

A factor of ``n`` repeats the document's body ``n`` times: concatenated paragraphs, headings,
lists and tables (DOCX, HTML, Markdown), repeated slides (PPTX), more rows (XLSX, CSV), more
pages (PDF), more chapters (EPUB). Everything is deterministic and made without Chromium or
LibreOffice: python-docx, python-pptx and openpyxl for the Office formats, a PDF written
here with the standard Helvetica font, the EPUB zipped here.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from xml.sax.saxutils import escape

_WORDS = ("the quarterly review lists every open item with its owner the date it was raised "
          "and what is still needed before the team can close it so nobody has to ask twice "
          "where a figure came from or which version of a table was the final one").split()


def sentence(seed: int, words: int = 14) -> str:
    picked = [_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(words)]
    return " ".join(picked).capitalize() + "."


def paragraph(seed: int, sentences: int = 4) -> str:
    return " ".join(sentence(seed + i, 10 + (seed + i) % 7) for i in range(sentences))


def _png() -> bytes:
    """A small PNG (a 48x32 gradient) to show once per body repetition."""
    from PIL import Image

    image = Image.new("RGB", (48, 32))
    image.putdata([(x * 5, y * 7, 120) for y in range(32) for x in range(48)])
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


# ---------------------------------------------------------------- DOCX
def docx(factor: int) -> bytes:
    """A report: per repetition 3 sections of heading, paragraphs (bold and italic runs), a
    bulleted list, a 6x4 table and a picture; about 40 paragraphs."""
    import docx as python_docx
    from docx.shared import Inches

    document = python_docx.Document()
    picture = _png()
    for rep in range(factor):
        for s in range(3):
            seed = rep * 10 + s
            document.add_heading(f"Section {rep + 1}.{s + 1}: {sentence(seed, 4)[:-1]}", 1)
            for p in range(6):
                para = document.add_paragraph(paragraph(seed * 6 + p, 3))
                para.add_run(" Important: ").bold = True
                para.add_run(sentence(seed + p, 8)).italic = True
            for i in range(4):
                document.add_paragraph(sentence(seed + i, 9), style="List Bullet")
        table = document.add_table(rows=6, cols=4)
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                cell.text = f"row {r} col {c}" if r else f"Heading {c}"
        document.add_picture(io.BytesIO(picture), width=Inches(1.0))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


# ---------------------------------------------------------------- PPTX
def pptx(factor: int) -> bytes:
    """A deck: per repetition 8 slides (title and bullets, one with a 5x3 table, one with
    speaker notes)."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for rep in range(factor):
        for s in range(8):
            seed = rep * 8 + s
            if s == 5:
                slide = deck.slides.add_slide(deck.slide_layouts[5])
                slide.shapes.title.text = f"Figures {rep + 1}.{s + 1}"
                shape = slide.shapes.add_table(5, 3, Inches(1), Inches(1.5), Inches(6),
                                               Inches(3))
                for r in range(5):
                    for c in range(3):
                        shape.table.cell(r, c).text = f"r{r} c{c} {seed}"
                continue
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = f"Slide {rep + 1}.{s + 1}: {sentence(seed, 3)[:-1]}"
            body = slide.placeholders[1].text_frame
            body.text = sentence(seed, 9)
            for i in range(4):
                body.add_paragraph().text = sentence(seed + i + 1, 8)
            if s == 2:
                slide.notes_slide.notes_text_frame.text = paragraph(seed, 2)
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


# ---------------------------------------------------------------- XLSX / CSV
def _row(r: int) -> list[object]:
    return [r, f"item {r}", sentence(r, 4), r * 17 % 1000, round(r * 1.37, 2),
            f"2026-{1 + r % 12:02d}-{1 + r % 28:02d}", "open" if r % 3 else "closed",
            r % 7 == 0]


HEADER = ["id", "name", "note", "count", "amount", "date", "state", "flag"]


def xlsx(factor: int) -> bytes:
    """One sheet of 300 rows x 8 columns per repetition (numbers, text, dates as text,
    booleans), with a header row."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Items"
    sheet.append(HEADER)
    for r in range(1, 300 * factor + 1):
        sheet.append(_row(r))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def csv(factor: int) -> bytes:
    """500 rows x 8 columns per repetition, comma-separated, with a header row."""
    import csv as csv_module

    out = io.StringIO()
    writer = csv_module.writer(out)
    writer.writerow(HEADER)
    for r in range(1, 500 * factor + 1):
        writer.writerow(_row(r))
    return out.getvalue().encode("utf-8")


# ---------------------------------------------------------------- HTML / Markdown
def _html_body(rep: int) -> str:
    parts = []
    for s in range(3):
        seed = rep * 10 + s
        parts.append(f"<h2>Section {rep + 1}.{s + 1}: {escape(sentence(seed, 4)[:-1])}</h2>")
        parts += [f"<p>{escape(paragraph(seed * 6 + p, 3))} <b>Important:</b> "
                  f"<a href=\"https://example.com/{seed}/{p}\">{escape(sentence(p, 3))}</a></p>"
                  for p in range(6)]
        parts.append("<ul>" + "".join(f"<li>{escape(sentence(seed + i, 9))}</li>"
                                      for i in range(4)) + "</ul>")
    rows = "".join("<tr>" + "".join(f"<td>row {r} col {c}</td>" for c in range(4)) + "</tr>"
                   for r in range(1, 6))
    parts.append("<table><thead><tr><th>A</th><th>B</th><th>C</th><th>D</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
    return "\n".join(parts)


def html(factor: int) -> bytes:
    """An HTML page: per repetition 3 sections of heading, paragraphs with links, a list and
    a 6x4 table."""
    body = "\n".join(_html_body(rep) for rep in range(factor))
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Report</title></head>"
            f"<body><h1>Report</h1>\n{body}\n</body></html>").encode()


def markdown(factor: int) -> bytes:
    """A Markdown report: per repetition 3 sections of heading, paragraphs with emphasis and
    links, a nested list, a table and a code block."""
    out = ["# Report", ""]
    for rep in range(factor):
        for s in range(3):
            seed = rep * 10 + s
            out += [f"## Section {rep + 1}.{s + 1}: {sentence(seed, 4)[:-1]}", ""]
            for p in range(6):
                out += [f"{paragraph(seed * 6 + p, 3)} **Important:** "
                        f"[{sentence(p, 3)}](https://example.com/{seed}/{p})", ""]
            out += [f"- {sentence(seed + i, 9)}" for i in range(4)]
            out += ["  1. nested step with `inline code`", ""]
        out += ["| A | B | C | D |", "|---|---:|---|---|"]
        out += [f"| row {r} | {r * 17} | {sentence(r, 3)} | x |" for r in range(1, 6)]
        out += ["", "```python", "def total(items):", "    return sum(items)", "```", ""]
    return "\n".join(out).encode()


# ---------------------------------------------------------------- PDF
def _pdf_page_text(page: int) -> str:
    lines = []
    y = 780
    lines.append(f"BT /F1 16 Tf 56 {y} Td (Page {page + 1}: {sentence(page, 4)[:-1]}) Tj ET")
    y -= 30
    for p in range(5):
        for line in range(6):
            text = sentence(page * 40 + p * 6 + line, 12)
            lines.append(f"BT /F1 10 Tf 56 {y} Td ({text}) Tj ET")
            y -= 13
        y -= 12
    return "\n".join(lines)


def pdf(factor: int) -> bytes:
    """4 pages of text per repetition (a heading line and five paragraphs of six lines each,
    Helvetica), written here as a plain PDF 1.4 file."""
    pages = 4 * factor
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                   b"/Encoding /WinAnsiEncoding >>")
    for i in range(pages):
        stream = _pdf_page_text(i).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
                       f"/Resources << /Font << /F1 3 0 R >> >> "
                       f"/Contents {5 + 2 * i} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n%b\nendstream" % (len(stream), stream))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%b\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, xref))
    return out.getvalue()


# ---------------------------------------------------------------- EPUB
_CONTAINER = ('<?xml version="1.0" encoding="UTF-8"?><container version="1.0" '
              'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
              '<rootfile full-path="OEBPS/content.opf" '
              'media-type="application/oebps-package+xml"/></rootfiles></container>')


def epub(factor: int) -> bytes:
    """An EPUB 3 book of 4 chapters per repetition (each the HTML body's three sections)."""
    chapters = 4 * factor
    manifest = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                       for i in range(chapters))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(chapters))
    opf = ('<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" '
           'version="3.0" unique-identifier="id"><metadata '
           'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">bench-scale'
           '</dc:identifier><dc:title>Scale</dc:title><dc:language>en</dc:language>'
           f'</metadata><manifest>{manifest}<item id="nav" href="nav.xhtml" '
           'media-type="application/xhtml+xml" properties="nav"/></manifest>'
           f'<spine>{spine}</spine></package>')
    nav_items = "".join(f'<li><a href="c{i}.xhtml">Chapter {i + 1}</a></li>'
                        for i in range(chapters))
    nav = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
           'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head>'
           f'<body><nav epub:type="toc"><ol>{nav_items}</ol></nav></body></html>')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        book.writestr("META-INF/container.xml", _CONTAINER, zipfile.ZIP_DEFLATED)
        book.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        book.writestr("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)
        for i in range(chapters):
            body = _html_body(i).replace("<br>", "<br/>")
            chapter = ('<?xml version="1.0" encoding="UTF-8"?><html '
                       'xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter</title>'
                       f'</head><body><h1>Chapter {i + 1}</h1>{body}</body></html>')
            book.writestr(f"OEBPS/c{i}.xhtml", chapter, zipfile.ZIP_DEFLATED)
    return out.getvalue()


# reader -> (generator, the kind handed to registry.read: None sniffs it from the bytes)
GENERATORS: dict[str, tuple[Callable[[int], bytes], str | None]] = {
    "DOCX": (docx, None), "PPTX": (pptx, None), "XLSX": (xlsx, None), "PDF": (pdf, None),
    "HTML": (html, None), "EPUB": (epub, None), "CSV": (csv, None),
    "Markdown": (markdown, "markdown"),
}
