"""The inputs of ``just bench scale`` grow linearly with their factor: 4x holds four times
the paragraphs, slides, rows, pages and chapters of 1x (so a ratio of costs is a ratio
against size), and every reader reads them."""

from __future__ import annotations

import io
import zipfile

import pytest

from bench import scale_inputs


def _units(reader: str, data: bytes) -> int:
    """What the factor multiplies, counted in the generated file itself."""
    if reader == "DOCX":
        body = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
        return body.count(b"<w:p>") + body.count(b"<w:p ")
    if reader == "PPTX":
        return sum(1 for n in zipfile.ZipFile(io.BytesIO(data)).namelist()
                   if n.startswith("ppt/slides/slide") and n.endswith(".xml"))
    if reader == "XLSX":
        return zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml").count(b"<row")
    if reader == "PDF":
        return data.count(b"/Type /Page ")
    if reader == "EPUB":
        return sum(1 for n in zipfile.ZipFile(io.BytesIO(data)).namelist()
                   if n.startswith("OEBPS/c") and n.endswith(".xhtml"))
    if reader == "CSV":
        return data.count(b"\n")
    return len(data)  # HTML, Markdown: text


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
@pytest.mark.parametrize("reader", sorted(scale_inputs.GENERATORS))
def test_inputs_grow_linearly(reader: str) -> None:
    generate, _ = scale_inputs.GENERATORS[reader]
    one, four = _units(reader, generate(1)), _units(reader, generate(4))
    assert 3.8 <= four / one <= 4.2, (reader, one, four)


@pytest.mark.slow  # seconds of CPU on a large input (see tests/conftest.py)
@pytest.mark.parametrize("reader", sorted(scale_inputs.GENERATORS))
def test_readers_read_the_inputs(reader: str) -> None:
    from render_pool.engine import registry

    generate, kind = scale_inputs.GENERATORS[reader]
    one = registry.read(generate(1), kind=kind)
    two = registry.read(generate(2), kind=kind)
    assert one.blocks and not one.warnings
    assert len(two.blocks) >= 2 * len(one.blocks) - 2 or reader in ("XLSX", "CSV")
