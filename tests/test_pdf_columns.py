"""Issue 22: PDF reading of documents written by others — reading order on multi-column
pages, running text never read as a table, monospaced prose, CJK spacing and the ``images``
option.

Most documents are made here (hand-written PDFs, see :mod:`tests.pdf_fixtures`); the
corpus checks read ``../shared/corpus/realworld`` and skip without it.
"""

from __future__ import annotations

import copy
import difflib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from render_pool.engine import registry
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import CodeBlock, Paragraph, Table
from render_pool.engine.pdf.chars import Char, segments_of
from render_pool.engine.pdf.inlines import join_lines, plain
from render_pool.engine.pdf.layout import Line
from render_pool.engine.pdf.reader import read_pdf
from tests.pdf_fixtures import _pdf, _stream
from tests.test_reader_pdf import plain_text

REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "realworld" / "pdf"
LEFT = ["apple", "anchor", "amber", "arrow", "atlas", "acorn", "alder"]
RIGHT = ["berry", "bridge", "basil", "beacon", "bolt", "birch", "bison"]


def _page_pdf(ops: bytes, font: bytes = b"Helvetica") -> bytes:
    """A one-page US Letter PDF whose content is ``ops`` (F1 = ``font``, F2 = Helvetica-Bold)."""
    return _pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>",
        _stream(b"", ops),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /" + font + b" >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ])


def _text(x: float, y: float, text: str, size: int = 10, font: str = "F1") -> bytes:
    return b"BT /%s %d Tf %.1f %.1f Td (%s) Tj ET\n" % (font.encode(), size, x, y, text.encode())


def _column_lines(words: list[str], count: int) -> list[str]:
    """``count`` lines of seven words each; every fifth line ends a sentence (short)."""
    lines = []
    for i in range(count):
        picked = [words[(i + k) % len(words)] for k in range(7 if i % 5 != 4 else 3)]
        line = " ".join(picked)
        lines.append(line.capitalize() if i % 5 == 0 else line + ("." if i % 5 == 4 else ""))
    return lines


def two_column_pdf() -> bytes:
    """A paper-like page: a bold title over both columns, author names and a date centred
    over the gutter, two columns of text, a centred page number."""
    ops = bytearray()
    ops += _text(150, 740, "A Study of Reading Order in Columns", 18, "F2")
    ops += _text(230, 715, "Ann Author, Bob Writer")
    ops += _text(255, 703, "January 3, 2024")
    for i, line in enumerate(("University of Somewhere", "Department of Reading",
                              "{ann,bob}@example.org")):
        ops += _text(245, 691 - 12 * i, line, 9)
    for col, (x, words) in enumerate(((54, LEFT), (318, RIGHT))):
        for i, line in enumerate(_column_lines(words, 38)):
            ops += _text(x, 640 - 13 * i, line)
        del col
    ops += _text(300, 60, "1")
    return _page_pdf(bytes(ops))


def _order_ok(text: str) -> None:
    words = re.findall(r"[a-z]+", text.lower())
    a = [i for i, w in enumerate(words) if w in LEFT]
    b = [i for i, w in enumerate(words) if w in RIGHT]
    assert a and b and max(a) < min(b), "the right column's words came before the left's end"


def test_two_columns_read_left_then_right_without_tables() -> None:
    doc = read_pdf(two_column_pdf())
    assert not any(isinstance(b, Table) for b in doc.blocks)
    _order_ok(plain_text(doc.blocks))
    for block in doc.blocks:  # never a line joined across the gutter
        text = plain_text([block]).lower()
        assert not (any(w in text.split() for w in LEFT) and any(w in text.split()
                                                                 for w in RIGHT)), text
    assert plain_text(doc.blocks).startswith("A Study of Reading Order in Columns")


def test_prose_in_a_ruled_grid_stays_text() -> None:
    """Boxes drawn around paragraphs (a figure frame over running text) are not a table."""
    ops = bytearray(b"0.5 w 50 300 m 562 300 l S 50 700 m 562 700 l S 50 500 m 562 500 l S "
                    b"50 300 m 50 700 l S 306 300 m 306 700 l S 562 300 m 562 700 l S\n")
    for i, line in enumerate(_column_lines(LEFT, 14)):
        ops += _text(56, 685 - 13 * i, line)
    for i, line in enumerate(_column_lines(RIGHT, 14)):
        ops += _text(312, 685 - 13 * i, line)
    doc = read_pdf(_page_pdf(bytes(ops)))
    assert not any(isinstance(b, Table) for b in doc.blocks)
    _order_ok(plain_text(doc.blocks))


def test_courier_transcript_is_prose_and_code_is_code() -> None:
    transcript = ["The above-entitled matter came on for oral",
                  "argument before the Supreme Court of the United States",
                  "at 1:01 p.m. on the thirteenth of January.",
                  "APPEARANCES: Steven Mercer, Esq., Deputy Attorney",
                  "General, Los Angeles, Cal.; on behalf of the Petitioner."]
    ops = b"".join(_text(72, 700 - 14 * i, ln) for i, ln in enumerate(transcript))
    doc = read_pdf(_page_pdf(ops, b"Courier"))
    assert not any(isinstance(b, CodeBlock) for b in doc.blocks)
    assert "Supreme Court of the United States" in plain_text(doc.blocks)
    code = ["for (i = 0; i < n; i++) {", "    total += x[i] * w[i];", "}",
            "return (total > 0) ? total : -1;"]
    ops = b"".join(_text(72, 700 - 14 * i, ln) for i, ln in enumerate(code))
    doc = read_pdf(_page_pdf(ops, b"Courier"))
    assert any(isinstance(b, CodeBlock) for b in doc.blocks)


def _char(text: str, x0: float, size: float = 10.0) -> Char:
    return Char(text, x0, x0 + (size if text.strip() else size / 3), 0, size, size * 0.8,
                size, False, False)


def test_no_space_between_chinese_characters_but_korean_words_keep_theirs() -> None:
    # a producer that sets a space after every Han character (pdfjs XiaoBiaoSong)
    han = [_char("关", 0), _char(" ", 10), _char("于", 11), _char(" ", 21), _char("红", 22)]
    assert [s.text for s in segments_of(han)] == ["关于红"]
    # Korean: a word space (a third of an em) is kept
    ko = [_char("국", 0), _char("회", 10), _char(" ", 20), _char("입", 23.5), _char("법", 33.5)]
    assert [s.text for s in segments_of(ko)] == ["국회 입법"]
    # a Chinese sentence wrapped over two lines runs on without a space
    first, second = segments_of(han[:3]), segments_of([_char("红", 0), _char("军", 10)])
    joined = plain(join_lines([Line(first).chars, Line(second).chars]))
    assert joined == "关于红军"


# ------------------------------------------------------------------ corpus (../shared)
def _words(text: str) -> list[str]:
    text = re.sub(r"!\[[^\]\n]*\]\([^)\s]*\)|\]\([^)\s]*\)", " ", text)
    return re.findall(r"\w+", text.lower())


def _similarity(path: Path, markdown: str) -> tuple[float, float]:
    ref = _words(subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"],
                                capture_output=True, check=True).stdout.decode("utf-8"))
    ours = _words(markdown)
    m = difflib.SequenceMatcher(None, ours[: 3 * len(ref)], ref, autojunk=False)
    same = sum(b.size for b in m.get_matching_blocks())
    return 2 * same / (min(len(ours), 3 * len(ref)) + len(ref)), len(ours) / len(ref)


@pytest.mark.slow  # the reference text comes from pdftotext, a process
@pytest.mark.parametrize("name,floor", [
    ("pdfjs__tracemonkey.pdf", 0.88), ("pypdf__multicolumn.pdf", 0.88),
    ("unstructured__multi-column-2p.pdf", 0.88)])
def test_corpus_two_column_papers_read_in_order(name: str, floor: float) -> None:
    path = REALWORLD / name
    if not path.is_file() or shutil.which("pdftotext") is None:
        pytest.skip(f"needs ../shared/corpus/realworld/pdf/{name} and pdftotext")
    markdown = convert_document(path.read_bytes(), "markdown").content
    similarity, ratio = _similarity(path, markdown)
    assert similarity >= floor and ratio <= 1.2, (similarity, ratio)


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
def test_corpus_pictures_are_placeholders_in_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    path = REALWORLD / "unstructured__chevron-page.pdf"
    if not path.is_file():
        pytest.skip("needs ../shared/corpus/realworld/pdf/unstructured__chevron-page.pdf")
    data = path.read_bytes()
    # read once (the page's picture takes seconds to extract); each conversion gets a copy
    doc = registry.read(data)
    assert any(isinstance(b, Paragraph) for b in doc.blocks)
    monkeypatch.setattr(registry, "read", lambda *_args, **_kw: copy.deepcopy(doc))
    markdown = convert_document(data, "markdown").content
    assert len(markdown) < 3 * len(data) and "data:image" not in markdown
    assert "](page1-img1.png)" in markdown
    omitted = convert_document(data, "markdown", options=ConvertOptions(images="omit")).content
    assert "![" not in omitted


def test_letter_spaced_word_is_joined() -> None:
    # pdfium infers spaces inside a letter-spaced title; the real word space is wider
    chars = [_char("V", 0), _char(" ", 10), _char("i", 13), _char(" ", 23), _char("n", 26),
             _char("s", 39), _char(" ", 49), _char("a", 55), _char("u", 65)]
    for i in (1, 3):
        chars[i].generated = True
    assert [s.text for s in segments_of(chars)] == ["Vins au"]


def test_price_list_in_bold_is_a_table_not_a_heading() -> None:
    """A menu set in bold: group labels alone on their line, then name and price rows."""
    rows = [("Les Blancs", "12.5CL"), ("A.O.P Cotes du Rhone", ""),
            ("Domaine de la Guicharde 2016", "8 EUR"), ("A.O.P Vacqueyras", ""),
            ("Domaine de Montvac 2016", "10 EUR"), ("A.O.P Languedoc", ""),
            ("Villa Tempora 2014", "9 EUR"), ("Chateau Grand Boise 2017", "9 EUR")]
    ops = bytearray(_text(72, 740, "Vins au Verre", 16, "F2"))
    for i, (name, price) in enumerate(rows):
        ops += _text(72, 700 - 16 * i, name, 12, "F2")
        if price:
            ops += _text(480, 700 - 16 * i, price, 12, "F2")
    doc = read_pdf(_page_pdf(bytes(ops)))
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    assert len(tables) == 1 and all(len(r.cells) == 2 for r in tables[0].rows)
    cells = [plain_text(c.blocks) for r in tables[0].rows for c in r.cells]
    assert "Domaine de Montvac 2016" in cells and "10 EUR" in cells
    assert "A.O.P Vacqueyras" in cells


def test_accented_letters_stay_inside_a_monospaced_word() -> None:
    """`Cómo` in a fixed-pitch font is one code span, not `C`ó`mo`."""
    from render_pool.engine.model import Code
    from render_pool.engine.pdf.inlines import to_inlines

    chars = [_char(ch, 10 * i) for i, ch in enumerate("say ")]
    mono = [_char(ch, 40 + 10 * i) for i, ch in enumerate("Cómo")]
    for c in mono:
        c.mono = True
    inl = to_inlines(join_lines([chars + mono + [_char(" ", 80), _char("x", 90)]]))
    assert [n.text for n in inl if isinstance(n, Code)] == ["Cómo"]


def test_corpus_overprinted_title_is_read_once() -> None:
    """pdfplumber's issue-842 example prints its titles twice, slightly offset."""
    path = REALWORLD / "pdfplumber__issue-842-example.pdf"
    if not path.is_file():
        pytest.skip("needs ../shared/corpus/realworld/pdf/pdfplumber__issue-842-example.pdf")
    text = plain_text(read_pdf(path.read_bytes()).blocks)
    assert text.count("ANHUI ANLI ARTIFICIAL LEATHER CO.,LTD.") == 1
    assert text.count("300218") == 1
