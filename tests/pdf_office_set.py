"""A regenerable PDF test set: DOCX documents written with python-docx, exported to PDF by
LibreOffice twice (untagged, and tagged with ``UseTaggedPDF``).

The DOCX reader's model of each DOCX is the expectation for the PDF reader's model of the
two PDFs (bench/convert.py scores them per category). The DOCX and both PDFs are committed
in ``tests/data/pdf/office/`` so tests and CI need neither python-docx's output to be
rebuilt nor LibreOffice. Rebuild (needs ``soffice``, e.g. apt's libreoffice-writer-nogui):

    .venv/bin/python tests/pdf_office_set.py build [name ...]
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

OFFICE = Path(__file__).resolve().parent / "data" / "pdf" / "office"
TAGGED_FILTER = 'pdf:writer_pdf_Export:{"UseTaggedPDF":{"type":"boolean","value":"true"}}'
MONO = "Liberation Mono"
SERIF = "DejaVu Serif"  # has fi/fl ligatures, which LibreOffice applies

_WORDS = ("the quarterly review covers finances fleet health office supplies staffing and "
          "the outlook for the coming year with figures checked twice by the team while "
          "regional offices reported their own numbers in a fixed format that keeps every "
          "table comparable across the whole organisation").split()


def _png(width: int = 64, height: int = 40) -> bytes:
    """A small two-colour RGB PNG, built without any imaging library."""
    rows = bytearray()
    for y in range(height):
        rows += b"\x00"
        for x in range(width):
            rows += bytes((30, 120, 200) if (x // 8 + y // 8) % 2 else (230, 160, 20))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (len(data).to_bytes(4, "big") + kind + data
                + zlib.crc32(kind + data).to_bytes(4, "big"))

    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(bytes(rows))) + chunk(b"IEND", b""))


def _sentence(seed: int, words: int) -> str:
    out = [_WORDS[(seed * 7 + i * 3) % len(_WORDS)] for i in range(words)]
    return " ".join(out).capitalize() + "."


def _hyperlink(paragraph, text: str, url: str) -> None:
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    r_id = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run = OxmlElement("w:r")
    props = OxmlElement("w:rPr")
    style = OxmlElement("w:rStyle")
    style.set(qn("w:val"), "Hyperlink")
    props.append(style)
    run.append(props)
    t = OxmlElement("w:t")
    t.text = text
    t.set(qn("xml:space"), "preserve")
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


_FOOTNOTES_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
    '</w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
    '<w:continuationSeparator/></w:r></w:p></w:footnote>{notes}</w:footnotes>')


def _footnotes(doc, paragraph, texts: list[str]) -> None:
    """Footnotes (python-docx has no API for them): a footnotes part and one reference run
    per note at the end of ``paragraph``."""
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    notes = "".join(
        f'<w:footnote w:id="{i}"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr>'
        f'<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteRef/></w:r>'
        f'<w:r><w:t xml:space="preserve"> {t}</w:t></w:r></w:p></w:footnote>'
        for i, t in enumerate(texts, start=1))
    part = Part(PackURI("/word/footnotes.xml"),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
                _FOOTNOTES_XML.format(notes=notes).encode(), doc.part.package)
    doc.part.relate_to(part, RT.FOOTNOTES)
    for i in range(1, len(texts) + 1):
        run = OxmlElement("w:r")
        props = OxmlElement("w:rPr")
        valign = OxmlElement("w:vertAlign")
        valign.set(qn("w:val"), "superscript")
        props.append(valign)
        run.append(props)
        ref = OxmlElement("w:footnoteReference")
        ref.set(qn("w:id"), str(i))
        run.append(ref)
        paragraph._p.append(run)


def _new_document():
    import docx
    from docx.shared import Pt

    doc = docx.Document()
    normal = doc.styles["Normal"]
    normal.font.name = SERIF
    normal.font.size = Pt(11)
    return doc


def _code(doc, lines: list[str]) -> None:
    from docx.shared import Pt

    for line in lines:
        p = doc.add_paragraph()
        p.paragraph_format.space_after = Pt(0)
        run = p.add_run(line.replace(" ", "\u00a0"))
        run.font.name = MONO
        run.font.size = Pt(10)


def report_docx() -> bytes:
    """Headings, styled paragraphs, nested and numbered lists, a borderless table, code,
    links, an image with alt text and ligature words."""
    from docx.shared import Inches

    doc = _new_document()
    doc.add_heading("Quarterly Operations Review", level=1)
    p = doc.add_paragraph("This review summarises the finances, fleet health and the third "
                          "quarter of the year. Some words are ")
    p.add_run("strongly emphasised").bold = True
    p.add_run(" and others are ")
    p.add_run("set in italics").italic = True
    p.add_run(" so that inline styles can be checked.")
    doc.add_heading("Fleet and Offices", level=2)
    doc.add_paragraph("The fleet grew this quarter; the offices reported the figures below.")
    doc.add_paragraph("Trucks serviced on schedule", style="List Bullet")
    doc.add_paragraph("Vans replaced after inspection", style="List Bullet")
    doc.add_paragraph("Electric vans in the northern depot", style="List Bullet 2")
    doc.add_paragraph("Diesel vans in the southern depot", style="List Bullet 2")
    doc.add_paragraph("Offices moved to the new building", style="List Bullet")
    doc.add_paragraph("The steps of the inspection come in order.")
    doc.add_paragraph("Check the tyres and the brakes.", style="List Number")
    doc.add_paragraph("Record the mileage in the log.", style="List Number")
    doc.add_paragraph("Sign the inspection sheet.", style="List Number")
    doc.add_heading("Regional Figures", level=2)
    doc.add_paragraph("The table below has no ruling lines at all.")
    table = doc.add_table(rows=5, cols=4)
    data = [("Region", "Revenue", "Costs", "Notes"),
            ("North", "1,240", "980", "Strong growth in the new depot"),
            ("South", "860", "790", "Flat"),
            ("East", "1,010", "1,105", "One-off costs for the office move and new vans"),
            ("West", "720", "640", "Stable")]
    for r, row in enumerate(data):
        for c, text in enumerate(row):
            cell = table.cell(r, c)
            cell.text = ""
            run = cell.paragraphs[0].add_run(text)
            run.bold = r == 0
    p = doc.add_paragraph("Totals are rounded to the nearest thousand.")
    _footnotes(doc, p, ["Figures are in thousands of euros, before tax."])
    doc.add_heading("Tooling", level=2)
    p = doc.add_paragraph("The export script is run with ")
    run = p.add_run("make report")
    run.font.name = MONO
    p.add_run(" every Friday; it reads the following configuration.")
    _code(doc, ["def load(path):", "    with open(path) as fh:",
                "        return parse(fh.read())", "", "print(load('fleet.toml'))"])
    p = doc.add_paragraph("The full method is described on the ")
    _hyperlink(p, "project website", "https://example.com/fleet/method")
    p.add_run(" and in the handbook at ")
    _hyperlink(p, "https://example.org/handbook", "https://example.org/handbook")
    p.add_run(" for everyone.")
    doc.add_heading("Appendix", level=3)
    doc.add_paragraph("The logo of the fleet department follows.")
    doc.add_picture(io.BytesIO(_png()), width=Inches(1.5))
    shape = doc.inline_shapes[-1]
    shape._inline.docPr.set("descr", "Fleet department logo")
    doc.add_paragraph("Affluent offices find efficient workflows; the final figures "
                      "differ little from the first estimate.")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def long_docx(pages: int = 34) -> bytes:
    """About 28 pages (``pages`` sections) of headings, paragraphs and a list per section (throughput)."""
    doc = _new_document()
    doc.add_heading("Annual Operations Handbook", level=1)
    for section in range(pages):
        doc.add_heading(f"Section {section + 1}: Regional Review", level=2)
        for k in range(4):
            doc.add_paragraph(" ".join(_sentence(section * 11 + k * 5 + j, 14)
                                       for j in range(5)))
        for k in range(3):
            doc.add_paragraph(_sentence(section + k, 8), style="List Bullet")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def quotes_docx() -> bytes:
    """Block quotes set only by indentation (Quote and Intense Quote indented on both sides,
    Block Text on the left only), beside what must stay paragraphs and lists: first-line
    indents, a hanging indent, a single indented line, an indented bulleted list and a
    numbered list whose items wrap."""
    from docx.enum.style import WD_STYLE_TYPE
    from docx.shared import Inches

    doc = _new_document()
    quote = doc.styles["Quote"].paragraph_format
    quote.left_indent = quote.right_indent = Inches(0.6)
    block_text = doc.styles.add_style("Block Text", WD_STYLE_TYPE.PARAGRAPH)
    block_text.base_style = doc.styles["Normal"]
    block_text.paragraph_format.left_indent = Inches(0.75)
    doc.add_heading("Voices from the Field", level=1)
    doc.add_paragraph(" ".join(_sentence(k, 13) for k in range(3)))
    doc.add_paragraph("The regional manager wrote in her report:")
    doc.add_paragraph(" ".join(_sentence(k + 20, 12) for k in range(3)), style="Quote")
    doc.add_paragraph(" ".join(_sentence(k + 30, 11) for k in range(2)), style="Quote")
    doc.add_paragraph(" ".join(_sentence(k + 40, 13) for k in range(2)))
    doc.add_paragraph(" ".join(_sentence(k + 50, 12) for k in range(3)),
                      style="Intense Quote")
    doc.add_heading("Indented Paragraphs", level=2)
    for k in range(3):
        p = doc.add_paragraph(" ".join(_sentence(k * 3 + 60 + j, 12) for j in range(3)))
        p.paragraph_format.first_line_indent = Inches(0.5)
    doc.add_paragraph(" ".join(_sentence(k + 70, 13) for k in range(4)), style="Block Text")
    p = doc.add_paragraph("A single indented line stays a paragraph.")
    p.paragraph_format.left_indent = Inches(0.5)
    p = doc.add_paragraph(" ".join(_sentence(k + 80, 12) for k in range(3)))
    p.paragraph_format.left_indent = Inches(0.5)
    p.paragraph_format.first_line_indent = Inches(-0.5)
    doc.add_heading("Indented Lists", level=2)
    for k in range(3):
        p = doc.add_paragraph(" ".join(_sentence(k + 90 + j, 10) for j in range(2)),
                              style="List Bullet")
        p.paragraph_format.left_indent = Inches(1.0)
    for k in range(3):
        doc.add_paragraph(" ".join(_sentence(k + 95 + j, 10) for j in range(2)),
                          style="List Number")
    doc.add_paragraph(" ".join(_sentence(k + 99, 12) for k in range(2)))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


DOCUMENTS = {"report": report_docx, "long": long_docx, "quotes": quotes_docx}


def build(names: list[str] | None = None) -> None:
    """Write every DOCX (or the named ones) and export it with LibreOffice, untagged and
    tagged."""
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        raise SystemExit("soffice not found: apt-get install -y libreoffice-writer-nogui")
    OFFICE.mkdir(parents=True, exist_ok=True)
    for name, make in DOCUMENTS.items():
        if names and name not in names:
            continue
        source = OFFICE / f"{name}.docx"
        source.write_bytes(make())
        for suffix, flt in ((".pdf", "pdf"), (".tagged.pdf", TAGGED_FILTER)):
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run(
                    [soffice, f"-env:UserInstallation=file://{tmp}/profile", "--headless",
                     "--convert-to", flt, "--outdir", tmp, str(source)],
                    check=True, capture_output=True, timeout=300)
                out = Path(tmp) / f"{name}.pdf"
                (OFFICE / f"{name}{suffix}").write_bytes(out.read_bytes())
                print("built", f"{name}{suffix}", out.stat().st_size, "bytes")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "build":
        build(sys.argv[2:])
    else:
        print(__doc__)
