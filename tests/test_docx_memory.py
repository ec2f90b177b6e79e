"""A DOCX conversion frees what it read as soon as it ends (issue 34, item 1).

Why it matters: the parsed parts of a document (the lxml trees of ``document.xml`` and the
notes, a few MB for a long report) used to be tied to the reader by a reference cycle, so a
pool worker kept them until the collector's next pass over older objects, which with the
worker's thresholds comes after many more documents.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from render_pool.engine.jobs import convert_document
from tests.docx_fixtures import build_feature_docx


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_conversion_to_markdown_leaves_nothing_for_the_collector(collector_off: None) -> None:
    data = build_feature_docx()
    convert_document(data, "markdown")  # imports and per-worker caches settle on the first
    gc.collect()
    converted = convert_document(data, "markdown")
    assert converted.content
    assert gc.collect() == 0  # everything the reading made was freed when it ended
