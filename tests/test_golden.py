"""Golden outputs: our own output for a dozen corpus documents in every export, kept in
tests/golden/ so that any change to a reader or a writer shows up as a reviewable diff.

After an intended change, regenerate with ``pytest tests/test_golden.py --update-golden`` and
review ``git diff tests/golden``. Images are written as they are for upload, each linked as
``images/<name>`` (the service's real links are presigned URLs, which change every time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from render_pool.engine.jobs import convert_document, fill_image_links
from render_pool.engine.registry import EXPORTS, WRITERS

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"

# Chosen across features: tables, lists, math, notes, inline formatting, numbered headings,
# code, images, links, comments; born-digital, tagged and scanned-layout PDFs.
DOCUMENTS = (
    "docx/docling/word_tables.docx",
    "docx/docling/docx_lists.docx",
    "docx/docling/equations.docx",
    "docx/mammoth/footnotes.docx",
    "docx/docling/unit_test_formatting.docx",
    "docx/docling/unit_test_headers_numbered.docx",
    "docx/docling/docx_code_blocks.docx",
    "docx/mammoth/tiny-picture.docx",
    "docx/markitdown/rlink.docx",
    "pdf/multi_page.pdf",
    "pdf/code_and_formula.pdf",
    "pdf/generated/lists_tables.pdf",
    "pdf/office/report.tagged.pdf",
)


def render(source: Path, export: str) -> str:
    """``source`` converted to ``export`` as the service writes it, links made stable."""
    converted = convert_document(source.read_bytes(), export, for_upload=True)
    links = {image.token: f"images/{image.name}" for image in converted.images}
    text = fill_image_links(converted, links)
    if converted.warnings:
        text += "\n\n--- warnings ---\n" + "\n".join(converted.warnings)
    return text if text.endswith("\n") else text + "\n"


def golden_path(document: str, export: str) -> Path:
    return GOLDEN / f"{document.replace('/', '__')}.{WRITERS[export].extension}"


@pytest.mark.parametrize("export", sorted(EXPORTS))  # the text exports
@pytest.mark.parametrize("document", DOCUMENTS)
def test_output_matches_the_golden_file(document, export, request):
    actual = render(DATA / document, export)
    path = golden_path(document, export)
    if request.config.getoption("--update-golden"):
        path.write_text(actual, encoding="utf-8")
        return
    assert path.is_file(), f"no golden file {path.name}: run pytest --update-golden"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{document} as {export} differs from {path.relative_to(GOLDEN.parent.parent)}; if the "
        "change is intended, run `pytest tests/test_golden.py --update-golden` and review the diff")


def test_every_golden_file_belongs_to_a_case():
    """A golden file left behind by a removed document or export fails here."""
    expected = {golden_path(d, e).name for d in DOCUMENTS for e in EXPORTS}
    assert {p.name for p in GOLDEN.iterdir()} - expected == set()
