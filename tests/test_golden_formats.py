"""Golden outputs of every reader besides DOCX and PDF (those are tests/test_golden.py's): a
small input of each format (PPTX, XLSX, CSV, HTML, EPUB, Markdown, the scans read by OCR and
the LibreOffice-read ODT, ODS, ODP, DOC, XLS, PPT and RTF) in every text export, kept in
tests/golden/formats/ so that a change to a reader or a writer shows up as a reviewable diff.

Inputs come from tests/golden_inputs.py (built at test time, or committed under
tests/data/office_formats/). Regenerate after an intended change with ``pytest
tests/test_golden_formats.py --update-golden`` and review ``git diff tests/golden``. Each
input is read once per session and every export writes a copy of that reading (the service
reads once per request; reading LibreOffice and OCR inputs five times would take minutes)."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from render_pool.engine import registry
from render_pool.engine.model import Document
from render_pool.engine.registry import EXPORTS, WRITERS
from render_pool.errors import ConversionFailed
from tests import golden_inputs
from tests.test_golden import GOLDEN, check_golden, render, stray_files

FORMATS = GOLDEN / "formats"

# input name -> how its bytes are made; the name says the format
NATIVE: dict[str, Callable[[], bytes]] = {
    "deck.pptx": golden_inputs.deck_pptx,
    "sheet.xlsx": golden_inputs.sheet_xlsx,
    "people.csv": lambda: golden_inputs.CSV_TEXT.encode("utf-8"),
    "harbour.html": golden_inputs.html_bytes,
    "river.epub": golden_inputs.epub_bytes,
}
SCANS = {f"report-top.{ext}": fmt for ext, fmt in
         (("png", "PNG"), ("jpeg", "JPEG"), ("tiff", "TIFF"), ("webp", "WEBP"))}
OFFICE = {name: kind for kind, name in golden_inputs.OFFICE_FILES.items()}
MARKDOWN = "field-notes.md"


def golden_file(name: str, export: str) -> Path:
    return FORMATS / f"{name}.{WRITERS[export].extension}"


@pytest.fixture(scope="module", autouse=True)
def read_once() -> Iterator[None]:
    """Each input read once: ``registry.read`` answers a copy of the first reading of the same
    bytes (the writers add warnings to the document, so each export gets its own copy)."""
    real = registry.read
    readings: dict[tuple[Any, ...], Document] = {}

    def cached(data: bytes, engine: str = registry.DEFAULT_ENGINE, options: Any = None, *,
               kind: str | None = None) -> Document:
        key = (data, engine, repr(options), kind)
        if key not in readings:
            readings[key] = real(data, engine, options, kind=kind)
        return copy.deepcopy(readings[key])

    registry.read = cached
    yield
    registry.read = real


def need_libreoffice() -> None:
    """Skip, saying why, when LibreOffice cannot run here (not installed, or its bubblewrap
    sandbox does not start)."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    from render_pool.engine.office import sandbox

    try:
        sandbox.check()
    except ConversionFailed as exc:
        pytest.skip(f"LibreOffice cannot run here: {exc}")


def need_tesseract() -> None:
    """Skip, saying why, when Tesseract (or any language pack) is missing."""
    from render_pool.engine.ocr.tesseract import available_languages

    if not available_languages():
        pytest.skip("Tesseract or its language packs are not installed: images are read by OCR")


@pytest.mark.parametrize("export", sorted(EXPORTS))
@pytest.mark.parametrize("name", sorted(NATIVE))
def test_native_format_matches_the_golden_file(name: str, export: str, request: pytest.FixtureRequest) -> None:
    check_golden(golden_file(name, export), render(NATIVE[name](), export), request)


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_markdown_as_read_by_the_markdown_reader_matches_the_golden_file(
        export: str, request: pytest.FixtureRequest) -> None:
    """Markdown has no signature, so it is read only when named (``/md/convert`` reads it
    with the same reader into the same model): here written to each text export."""
    source = golden_inputs.MARKDOWN.encode("utf-8")
    check_golden(golden_file(MARKDOWN, export), render(source, export, kind="markdown"),
                 request)


@pytest.mark.slow  # Tesseract
@pytest.mark.parametrize("export", sorted(EXPORTS))
@pytest.mark.parametrize("name", sorted(SCANS))
def test_scan_read_by_ocr_matches_the_golden_file(name: str, export: str, request: pytest.FixtureRequest) -> None:
    need_tesseract()
    check_golden(golden_file(name, export), render(golden_inputs.scan(SCANS[name]), export),
                 request)


@pytest.mark.slow  # LibreOffice
@pytest.mark.parametrize("export", sorted(EXPORTS))
@pytest.mark.parametrize("name", sorted(OFFICE))
def test_libreoffice_format_matches_the_golden_file(name: str, export: str,
                                                    request: pytest.FixtureRequest) -> None:
    need_libreoffice()
    source = golden_inputs.OFFICE_FORMATS / name
    assert registry.sniff_kind(source.read_bytes()) == OFFICE[name]
    check_golden(golden_file(name, export), render(source, export), request)


def test_every_format_has_a_golden_input() -> None:
    """Every kind a reader is registered for has an input here or in tests/test_golden.py."""
    here = {name.rsplit(".", 1)[1] for name in [*NATIVE, *SCANS, MARKDOWN]} | set(OFFICE.values())
    named = {"md": "markdown"}
    covered = {named.get(ext, ext) for ext in here} | {"docx", "pdf"}
    assert {kind for entry in registry.READERS for kind in entry.kinds} - covered == set()


def test_every_golden_file_belongs_to_a_case() -> None:
    """A golden file left behind by a removed input or export fails here."""
    names = [*NATIVE, *SCANS, *OFFICE, MARKDOWN]
    assert stray_files(FORMATS, {golden_file(n, e).name for n in names for e in EXPORTS}) == set()
