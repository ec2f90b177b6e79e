"""docs/architecture.md's "Adding a format" stays true: its Python block, run as written,
registers a reader that the registry and the pool job then convert a sample with."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from render_pool.engine import registry
from render_pool.engine.formats import ReadRequest
from render_pool.engine.jobs import convert_document
from render_pool.engine.page_ranges import parse_pages
from render_pool.errors import InvalidOption, UnsupportedFormat

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def guide_code() -> str:
    """The one ``python`` code block of the guide's "Adding a format" section."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("\n## Adding a format\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(blocks) == 1, "the guide shows one complete example"
    return blocks[0]


@pytest.fixture
def guide() -> Iterator[dict[str, Any]]:
    """The guide's block run in a namespace of its own; its registration taken back after."""
    before = list(registry.READERS)
    namespace: dict[str, Any] = {"__name__": "adding_a_format_guide"}
    try:
        code = compile(guide_code(), str(GUIDE), "exec", dont_inherit=True)
        exec(code, namespace)  # noqa: S102 (the guide of this repository)
        yield namespace
    finally:
        registry.READERS[:] = before


SAMPLE = b"A first paragraph\nover two lines.\n\nA second one.\n"


def test_the_guides_reader_converts_through_the_pool_job(guide):
    added = [r for r in registry.READERS if "text" in r.kinds]
    assert [type(r).__name__ for r in added] == ["PlainTextReader"]
    converted = convert_document(SAMPLE, "markdown", kind="text")
    assert converted.content == "A first paragraph over two lines.\n\nA second one.\n"
    assert converted.media_type == "text/markdown; charset=utf-8"
    as_json = convert_document(SAMPLE, "json", kind="text").content
    assert '"A second one."' in as_json


def test_the_guides_reader_refuses_pages_and_its_kind_is_not_sniffed(guide):
    with pytest.raises(InvalidOption, match="pages applies to PDF and image input only, "
                                            "not TEXT"):
        registry.read(SAMPLE, options=ReadRequest(pages=parse_pages("1")), kind="text")
    with pytest.raises(UnsupportedFormat, match=r"only .*CSV"):  # text: no sniffed kind
        registry.sniff_kind(SAMPLE)


def test_the_registration_is_taken_back():
    assert not any("text" in r.kinds for r in registry.READERS)
