"""Golden outputs: our own output for a dozen DOCX and PDF corpus documents in every text
export, kept in tests/golden/ so that any change to a reader or a writer shows up as a
reviewable diff. The other reader formats have theirs in tests/golden/formats/
(tests/test_golden_formats.py) and the files of /md/convert in tests/golden/targets/
(tests/test_golden_targets.py); :func:`render` and :func:`check_golden` serve all three.

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


def render(source: Path | bytes, export: str, kind: str | None = None) -> str:
    """``source`` (a file or its bytes) converted to ``export`` as the service writes it,
    links made stable; ``kind`` names a format that has no signature (Markdown)."""
    data = source if isinstance(source, bytes) else source.read_bytes()
    converted = convert_document(data, export, for_upload=True, kind=kind)
    links = {image.token: f"images/{image.name}" for image in converted.images}
    text = fill_image_links(converted, links)
    if converted.warnings:
        text += "\n\n--- warnings ---\n" + "\n".join(converted.warnings)
    return text if text.endswith("\n") else text + "\n"


def golden_path(document: str, export: str) -> Path:
    return GOLDEN / f"{document.replace('/', '__')}.{WRITERS[export].extension}"


def check_golden(path: Path, actual: str, request: pytest.FixtureRequest) -> None:
    """``actual`` equals the golden file ``path``; with ``--update-golden`` it becomes it."""
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.is_file(), f"no golden file {path.name}: run pytest --update-golden"
    expected = path.read_text(encoding="utf-8")
    test_file = Path(request.node.path).relative_to(GOLDEN.parent.parent)
    assert actual == expected, (
        f"the output differs from {path.relative_to(GOLDEN.parent.parent)}; if the change is "
        f"intended, run `pytest {test_file} --update-golden` and review the diff")


def stray_files(folder: Path, expected: set[str]) -> set[str]:
    """Files in ``folder`` (not its subfolders) that no case writes: left behind by a removed
    document or export."""
    return {p.name for p in folder.iterdir() if p.is_file()} - expected


@pytest.mark.parametrize("export", sorted(EXPORTS))  # the text exports
@pytest.mark.parametrize("document", DOCUMENTS)
def test_output_matches_the_golden_file(document: str, export: str,
                                        request: pytest.FixtureRequest) -> None:
    check_golden(golden_path(document, export), render(DATA / document, export), request)


def test_every_golden_file_belongs_to_a_case() -> None:
    """A golden file left behind by a removed document or export fails here."""
    expected = {golden_path(d, e).name for d in DOCUMENTS for e in EXPORTS}
    assert stray_files(GOLDEN, expected) == set()
