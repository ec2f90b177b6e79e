"""The DOCX reader's per-worker caches of style sheets and numbering (issue 34, item 1).

A worker keeps what it resolved from ``styles.xml`` and ``numbering.xml`` by a hash of the
parts' bytes. What must hold: a document converts the same whether or not a document with
the same parts came before (list counters start afresh), a changed part is read anew, and
the same part is not resolved again.
"""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from lxml import etree

from render_pool.engine.docx import styles as styles_module
from render_pool.engine.jobs import convert_document
from tests.docx_fixtures import build_feature_docx, replace_part


def _markdown(data: bytes) -> str:
    return convert_document(data, "markdown").content


def _heading_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Results", 1)
    document.add_paragraph("Revenue grew in every region.")
    numbered = document.add_paragraph("First step", style="List Number")
    numbered.add_run(" (numbered)")
    document.add_paragraph("Second step", style="List Number")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_list_numbers_start_afresh_in_each_document_with_the_same_parts() -> None:
    data = build_feature_docx()
    first = _markdown(data)
    assert _markdown(data) == first  # numbering counters of the first run do not carry over
    assert _markdown(_heading_docx()) == _markdown(_heading_docx())
    assert "1. First step (numbered)\n2. Second step" in _markdown(_heading_docx())


def test_a_changed_style_sheet_is_read_anew() -> None:
    data = _heading_docx()
    assert _markdown(data).startswith("# Results")
    styles = zipfile.ZipFile(io.BytesIO(data)).read("word/styles.xml")
    renamed = styles.replace(b'w:styleId="Heading1"', b'w:styleId="Renamed1"')
    assert renamed != styles
    # the paragraph names style Heading1, which this style sheet no longer has
    assert _markdown(replace_part(data, "word/styles.xml", renamed)).startswith("Results")
    assert _markdown(data).startswith("# Results")


def test_the_same_style_sheet_is_resolved_once_per_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    original = styles_module.Styles.__init__

    def counting(self: styles_module.Styles, root: etree._Element | None) -> None:
        made.append(1)
        original(self, root)

    data = _heading_docx()
    _markdown(data)
    monkeypatch.setattr(styles_module.Styles, "__init__", counting)
    first = _markdown(data)
    assert _markdown(data) == first
    assert made == []  # both conversions used the style sheet resolved before
