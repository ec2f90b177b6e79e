"""A regenerable office test set made from structured Markdown sources.

pandoc writes PPTX, DOCX, EPUB and HTML from the Markdown; LibreOffice turns the DOCX into
ODT/DOC/RTF, the PPTX into ODP and the XLSX into ODS; openpyxl writes the XLSX (merged
cells, numbers, dates, percentages, a hidden sheet). Each file comes with the Markdown it
should read as (the source), so a reader is scored for structure against it
(``bench.fidelity``). Nothing here is committed: :func:`build_office_set` writes into a
temporary directory once per test session.
"""

from __future__ import annotations

import datetime as dt
import io
import shutil
import subprocess
import zipfile
from pathlib import Path

from tests.pdf_office_set import _png

DECK_MD = """\
# Finances

## Revenue overview

- Revenue grew **strongly** in the north
- Costs stayed flat
    - Travel fell
    - Rent rose
- See [the report](https://example.com/report)

::: notes
Mention the audit before the numbers.
:::

## Figures

| Region | Q1 | Q2 |
|--------|----|----|
| North  | 10 | 12 |
| South  | 7  | 9  |

# Outlook

## Plans

1. Hire two engineers
2. Open the Lisbon office

## Picture

![A red and blue chart](chart.png)
"""

DOC_MD = """\
# Annual report

The year in short, with **bold** words and a [link](https://example.com/annual).

## Results

- Revenue up
- Costs down
    - Travel fell
    - Rent rose
- Staff stable

| Team | Head count | Budget |
|------|------------|--------|
| Sales | 12 | 1.5 M |
| Support | 8 | 0.9 M |

## Next steps

1. Open a new office
2. Hire engineers

### Risks

Some *italic* caution at the end.
"""

BOOK_MD = """\
# Chapter One

Opening words with **bold** and a [link](https://example.com/book).

![A small square](chart.png)

- alpha
- beta
    - beta one

# Chapter Two

## Section A

| a | b |
|---|---|
| 1 | 2 |

See [chapter one](#chapter-one).
"""

SHEET_MD = """\
# Sales

| Quarterly sales | | | | |
|---|---|---|---|---|
| Region | Q1 | Q2 | Share | Closed |
| North | 1,234.50 | 1500 | 25.0% | 2024-03-15 |
| South | 800.00 | 950.75 | 12.5% | 2024-06-30 |

# Staff

| Name | Role |
|---|---|
| Ann | Lead |
| Bob | Engineer |

# Secret (hidden)

| hidden salary data |
|---|
"""

CSV_TEXT = "Name;City;Age\nAnna;Roma;30\nLuca;Milano;25\nJosé;Málaga;41\n"
CSV_MD = """\
| Name | City | Age |
|---|---|---|
| Anna | Roma | 30 |
| Luca | Milano | 25 |
| José | Málaga | 41 |
"""


def build_xlsx() -> bytes:
    """A workbook with a merged title row, formatted numbers, dates, percentages, a second
    sheet, a hidden sheet and empty margins (data starts at B2)."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws["B2"] = "Quarterly sales"
    ws.merge_cells("B2:F2")
    ws.append([])
    for r, row in enumerate([["Region", "Q1", "Q2", "Share", "Closed"],
                             ["North", 1234.5, 1500, 0.25, dt.date(2024, 3, 15)],
                             ["South", 800, 950.75, 0.125, dt.date(2024, 6, 30)]], start=3):
        for c, value in enumerate(row, start=2):
            cell = ws.cell(r, c, value)
            if c == 3 and r > 3:
                cell.number_format = "#,##0.00"
            if c == 5 and r > 3:
                cell.number_format = "0.0%"
            if c == 6 and r > 3:
                cell.number_format = "yyyy-mm-dd"
    staff = wb.create_sheet("Staff")
    for row in (["Name", "Role"], ["Ann", "Lead"], ["Bob", "Engineer"]):
        staff.append(row)
    secret = wb.create_sheet("Secret")
    secret["A1"] = "hidden salary data"
    secret.sheet_state = "hidden"
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def big_xlsx(rows: int = 100_000) -> bytes:
    """One sheet of ``rows`` rows (streamed by openpyxl's write-only mode)."""
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Big")
    for i in range(rows):
        ws.append([i, f"row {i}", i * 0.5])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def big_deck(slides: int = 1000) -> bytes:
    """A deck of ``slides`` slides, each with a title and two bullets."""
    from pptx import Presentation

    prs = Presentation()
    layout = prs.slide_layouts[1]
    for i in range(slides):
        slide = prs.slides.add_slide(layout)
        slide.shapes.title.text = f"Slide title {i + 1}"
        body = slide.placeholders[1].text_frame
        body.text = f"First point {i + 1}"
        body.add_paragraph().text = f"Second point {i + 1}"
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def pandoc(source: Path, target: Path, *args: str) -> Path:
    subprocess.run(["pandoc", str(source), "-o", str(target), *args], check=True,
                   cwd=source.parent, timeout=120)
    return target


def soffice_convert(sources: list[Path], fmt: str, outdir: Path, profile: Path) -> None:
    """Convert ``sources`` to ``fmt`` with one LibreOffice start."""
    subprocess.run(["soffice", "--headless", "--norestore", "--nolockcheck",
                    f"-env:UserInstallation={profile.as_uri()}", "--convert-to", fmt,
                    "--outdir", str(outdir), *map(str, sources)],
                   check=True, capture_output=True, timeout=300)


def build_office_set(root: Path, with_libreoffice: bool) -> dict[str, tuple[bytes, str]]:
    """{name: (file bytes, expected Markdown)} for every format (LibreOffice-made ones only
    ``with_libreoffice``)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "chart.png").write_bytes(_png())
    for name, text in (("deck.md", DECK_MD), ("doc.md", DOC_MD), ("book.md", BOOK_MD)):
        (root / name).write_text(text, encoding="utf-8")
    pandoc(root / "deck.md", root / "deck.pptx")
    pandoc(root / "doc.md", root / "doc.docx")
    pandoc(root / "doc.md", root / "doc.html", "-s", "--metadata", "title=Annual report")
    pandoc(root / "book.md", root / "book.epub", "--metadata", "title=A Small Book")
    (root / "sheet.xlsx").write_bytes(build_xlsx())
    out = {
        "pptx": ((root / "deck.pptx").read_bytes(), DECK_MD),
        "docx": ((root / "doc.docx").read_bytes(), DOC_MD),
        "html": ((root / "doc.html").read_bytes(), DOC_MD),
        "epub": ((root / "book.epub").read_bytes(), "# A Small Book\n\n" + BOOK_MD),
        "xlsx": ((root / "sheet.xlsx").read_bytes(), SHEET_MD),
        "csv": (CSV_TEXT.encode("cp1252"), CSV_MD),
    }
    if with_libreoffice:
        profile = root / "lo-profile"
        for fmt in ("odt", "doc", "rtf"):
            soffice_convert([root / "doc.docx"], fmt, root, profile)
            out[fmt] = ((root / f"doc.{fmt}").read_bytes(), DOC_MD)
        soffice_convert([root / "deck.pptx"], "odp", root, profile)
        out["odp"] = ((root / "deck.odp").read_bytes(), DECK_MD)
        soffice_convert([root / "sheet.xlsx"], "ods", root, profile)
        out["ods"] = ((root / "sheet.ods").read_bytes(), SHEET_MD)
    return out


def has_libreoffice() -> bool:
    return shutil.which("soffice") is not None


def zip_bytes(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return out.getvalue()


def xlsx_bomb() -> bytes:
    """An XLSX whose sheet unpacks to 300 MB of zeros (a zip bomb in XLSX clothing)."""
    return zip_bytes({"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<workbook/>",
                      "xl/worksheets/sheet1.xml": b"<" + b"0" * (300 << 20)})


def pptx_entity_bomb() -> bytes:
    """A PPTX whose slide declares nested entities (billion laughs)."""
    lol = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
           b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
           b"<p:sld>&lol2;</p:sld>")
    return zip_bytes({"[Content_Types].xml": b"<Types/>", "ppt/presentation.xml": b"<x/>",
                      "ppt/slides/slide1.xml": lol})


def encrypted_odt() -> bytes:
    """An ODT whose manifest says its content is encrypted (as LibreOffice writes it)."""
    manifest = (b'<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
                b'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                b'<manifest:file-entry manifest:full-path="content.xml" '
                b'manifest:media-type="text/xml"><manifest:encryption-data '
                b'manifest:checksum-type="SHA1/1K" manifest:checksum="x"/>'
                b"</manifest:file-entry></manifest:manifest>")
    return zip_bytes({"mimetype": b"application/vnd.oasis.opendocument.text",
                      "META-INF/manifest.xml": manifest, "content.xml": b"\x00encrypted"})


def ole_file(streams: list[str], size: int = 4096) -> bytes:
    """Bytes that carry the OLE magic and the directory names of ``streams`` (what the
    sniffer looks at), like an encrypted OOXML package or a legacy Office file."""
    names = b"".join(s.encode("utf-16-le") + b"\x00\x00" for s in streams)
    head = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    return head + b"\x00" * 504 + names + b"\x00" * max(0, size - 512 - len(names))
