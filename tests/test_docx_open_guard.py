"""A fault while a DOCX package is opened (styles, numbering, notes) reaches the caller as the
reader's own failure, as a fault while its body is read does: never a raw library error."""

from __future__ import annotations

import io

import docx
import pytest

from render_pool.engine.docx import part_cache, reader
from render_pool.engine.model import document_blocks, plain_text
from render_pool.errors import ConversionFailed


def _one_paragraph() -> bytes:
    document = docx.Document()
    document.add_paragraph("One paragraph.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_fault_while_opening_the_package_is_the_readers_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> object:
        raise KeyError("w:styleId")

    monkeypatch.setattr(part_cache, "styles_for", broken)
    with pytest.raises(ConversionFailed, match="DOCX reader failed"):
        reader.read_docx(_one_paragraph())


def test_the_same_document_reads_when_nothing_is_broken() -> None:
    document = reader.read_docx(_one_paragraph())
    assert "One paragraph." in plain_text(document_blocks(document)[0])
