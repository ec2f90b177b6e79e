"""Structure read from a scan (issue 32, item 3): bold words, code lines and a raised note
mark come out of a page image as they come out of a text layer.

The page is drawn here with DejaVu fonts (regular, bold, monospaced) at 200 dpi, turned
1.5 degrees and stored as an image-only PDF, so what it holds is known exactly. Real
Tesseract, no mock of the engine.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from render_pool.engine.common.image_links import data_uri_resolver
from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.ocr import available_languages
from render_pool.engine.pdf.reader import read_pdf

FONTS = Path("/usr/share/fonts/truetype/dejavu")
DPI = 200
pytestmark = [
    pytest.mark.slow,  # runs Tesseract
    pytest.mark.skipif(
        not (FONTS / "DejaVuSansMono.ttf").is_file() or "eng" not in available_languages(),
        reason="DejaVu fonts or Tesseract's English pack missing",
    ),
]


def _font(name: str, points: float) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONTS / name), round(points * DPI / 72))


def _scan() -> bytes:
    """One A4 page: a paragraph with two bold words and a raised note mark, a three-line
    listing in a monospaced face, another paragraph, and the note at the page foot."""
    width, height = round(8.27 * DPI), round(11.69 * DPI)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    body, bold = _font("DejaVuSans.ttf", 11), _font("DejaVuSans-Bold.ttf", 11)
    mono, small = _font("DejaVuSansMono.ttf", 10), _font("DejaVuSans.ttf", 7)
    left, y, pitch = 220, 300, round(11 * 1.5 * DPI / 72)

    def words(parts: list[tuple[str, ImageFont.FreeTypeFont]], y: int) -> int:
        x = left
        for text, font in parts:
            draw.text((x, y), text, font=font, fill=0)
            x += round(draw.textlength(text, font=font))
        return x

    end = words(
        [
            ("The survey counted birds near the river and ", body),
            ("ringed plovers", bold),
            (" nested on the gravel bank.", body),
        ],
        y,
    )
    y += pitch
    end = words([("Every count was made at dawn by two observers", body)], y)
    draw.text((end + 2, y - 6), "1", font=small, fill=0)
    draw.text((end + 14, y), " in the same week.", font=body, fill=0)
    y += 2 * pitch
    for line in (
        "counts = read_counts('river.csv')",
        "total = sum(counts.values())",
        "print(total, len(counts))",
    ):
        draw.text((left, y), line, font=mono, fill=0)
        y += round(pitch * 0.9)
    y += pitch
    words([("The totals were compared with the counts of the previous spring.", body)], y)
    draw.line((left, height - 420, left + 500, height - 420), fill=0, width=2)
    draw.text((left, height - 390), "1", font=small, fill=0)
    draw.text((left + 30, height - 395), "Observers were trained volunteers.", font=body, fill=0)
    page = page.rotate(1.5, resample=Image.Resampling.BILINEAR, fillcolor=255)
    out = io.BytesIO()
    page.save(out, format="PDF", resolution=DPI)
    return out.getvalue()


@pytest.fixture(scope="module")
def markdown() -> str:
    doc = read_pdf(_scan(), ocr_languages="eng")
    return write_markdown(doc, data_uri_resolver(doc))


def test_bold_words_of_a_scan_are_bold(markdown: str) -> None:
    assert "**ringed plovers**" in markdown
    assert "**" not in markdown.replace("**ringed plovers**", "")
    assert "*" not in markdown.replace("**ringed plovers**", "")  # nothing set italic


def test_monospaced_lines_of_a_scan_are_a_code_block(markdown: str) -> None:
    fence = markdown.index("```")
    listing = markdown[fence : markdown.index("```", fence + 3)]
    squeezed = "".join(listing.split())  # the engine may cut a word at a bracket
    assert "total=sum(counts.values())" in squeezed
    assert "read_counts" in squeezed and "print(total" in squeezed
    assert "previous spring" not in listing


def test_a_raised_note_mark_is_a_note_not_a_letter(markdown: str) -> None:
    assert "observers[^1] in the same week" in markdown
    assert "[^1]: Observers were trained volunteers." in markdown


def test_a_bar_before_a_lower_case_word_reads_as_capital_i() -> None:
    """Tesseract often reads a capital I as a vertical bar; a bar left at a line's end is
    the edge of a rule, not text."""
    from render_pool.engine.ocr.tesseract import OcrLine, OcrWord, _read_bars

    def line(*texts: str) -> OcrLine:
        words = [OcrWord(t, 100 * i, 0, 100 * i + 80, 30, 90.0) for i, t in enumerate(texts)]
        return OcrLine(words, 30.0, 30.0, 0, 100 * len(texts))

    lines = [line("|", "saw", "the", "river."), line("|t", "was", "late", "|"), line("|")]
    _read_bars(lines)
    assert [" ".join(w.text for w in ln.words) for ln in lines] == [
        "I saw the river.",
        "It was late",
    ]


def _table_scan() -> bytes:
    """A sentence, then a table without any rules whose cells wrap (a header on two lines,
    two place names on two lines: the common report table), then a closing sentence."""
    width, height = round(8.27 * DPI), round(11.69 * DPI)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    body, bold = _font("DejaVuSans.ttf", 11), _font("DejaVuSans-Bold.ttf", 11)
    left, y = 220, 300
    line, row_gap = round(11 * 1.25 * DPI / 72), round(11 * 0.9 * DPI / 72)
    draw.text((left, y), "The counts of each station are listed below.", font=body, fill=0)
    y += 3 * line
    columns = (left, left + 600, left + 1000)
    rows = [(("Station",), ("Birds", "counted"), ("Share",)),
            (("Northern", "Marsh"), ("1204",), ("41%",)),
            (("Gravel Bank",), ("822",), ("28%",)),
            (("Willow Creek", "East"), ("517",), ("18%",)),
            (("Old Harbour",), ("381",), ("13%",))]
    for number, row in enumerate(rows):
        for x, lines in zip(columns, row, strict=True):
            for k, text in enumerate(lines):
                draw.text((x, y + k * line), text, font=bold if number == 0 else body, fill=0)
        y += max(len(lines) for lines in row) * line + row_gap
    y += 2 * line
    draw.text((left, y), "Every station was counted twice in the same week.", font=body, fill=0)
    out = io.BytesIO()
    page.save(out, format="PDF", resolution=DPI)
    return out.getvalue()


def test_a_table_of_wrapped_cells_in_a_scan_has_one_row_per_entry() -> None:
    doc = read_pdf(_table_scan(), ocr_languages="eng")
    markdown = write_markdown(doc, data_uri_resolver(doc))
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len(rows) == 6, markdown  # header, separator and four rows
    cells = [[cell.strip().strip("*") for cell in row.strip("|").split("|")] for row in rows]
    assert cells[0] == ["Station", "Birds counted", "Share"], markdown
    assert cells[2] == ["Northern Marsh", "1204", "41%"], markdown
    assert cells[4] == ["Willow Creek East", "517", "18%"], markdown
    assert "listed below." in markdown and "counted twice" in markdown


def _glued_note_scan() -> bytes:
    """A paragraph with a raised note mark, and at the page foot the note whose raised
    number touches its first word, as a word processor sets a footnote ("²Observers")."""
    width, height = round(8.27 * DPI), round(11.69 * DPI)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    body, small = _font("DejaVuSans.ttf", 11), _font("DejaVuSans.ttf", 7)
    left, y = 220, 300
    text = "Every count was made at dawn by two observers"
    draw.text((left, y), text, font=body, fill=0)
    end = left + round(draw.textlength(text, font=body))
    draw.text((end + 2, y - 6), "2", font=small, fill=0)
    draw.text((end + 14, y), " in the same week.", font=body, fill=0)
    foot = height - 395
    draw.line((left, foot - 25, left + 500, foot - 25), fill=0, width=2)
    rise = round(11 * DPI / 72 / 3)  # a third of an em above the baseline
    draw.text((left, foot + body.getmetrics()[0] - rise - small.getmetrics()[0]), "2",
              font=small, fill=0)
    mark = round(draw.textlength("2", font=small))
    draw.text((left + mark + 2, foot), "Observers were trained volunteers.", font=body, fill=0)
    out = io.BytesIO()
    page.save(out, format="PDF", resolution=DPI)
    return out.getvalue()


def test_a_note_whose_raised_number_touches_its_text_is_a_note() -> None:
    doc = read_pdf(_glued_note_scan(), ocr_languages="eng")
    markdown = write_markdown(doc, data_uri_resolver(doc))
    assert "observers[^1] in the same week" in markdown
    assert "[^1]: Observers were trained volunteers." in markdown
