"""The generated corpus of ``python -m bench generated`` (issue 32): its sources are made the
same way on every run, are many and varied, and carry every structure the bench scores; one
source written by one writer goes through the engine and is scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.fidelity import elements
from bench.generated.markdown import to_markdown
from bench.generated.model import Code, Heading, ListBlock, Quote, Table
from bench.generated.scoring import HELD_OUT, part_of
from bench.generated.sources import TABLE_STYLES, sources


def test_sources_are_deterministic() -> None:
    first, second = sources(), sources()
    assert [to_markdown(s) for s in first] == [to_markdown(s) for s in second]


def test_sources_are_many_varied_and_carry_every_structure() -> None:
    made = sources()
    assert len(made) >= 30
    assert len({s.subject for s in made}) >= 10
    assert len({s.name for s in made}) == len(made)
    assert {s.table_style for s in made} == set(TABLE_STYLES)
    assert {s.columns for s in made} == {1, 2, 3}
    held = sum(part_of(s.name) == HELD_OUT for s in made)
    assert len(made) // 5 <= held <= len(made) // 2
    blocks = [b for s in made for b in s.blocks]
    assert {b.level for b in blocks if isinstance(b, Heading)} == {1, 2, 3}
    tables = [b for b in blocks if isinstance(b, Table)]
    assert any(t.merged for t in tables) and any(not t.merged for t in tables)
    assert any(len(cell) > 40 for t in tables for row in t.body for cell in row)  # wraps
    assert any(isinstance(b, ListBlock) and b.ordered for b in blocks)
    assert any(isinstance(b, ListBlock) and any(i.children for i in b.items) for b in blocks)
    assert any(isinstance(b, Code) for b in blocks)
    assert any(isinstance(b, Quote) for b in blocks)
    for source in made:  # the truth holds every category the bench scores on each source
        found = elements(to_markdown(source))
        for category in ("headings", "paragraphs", "list items", "table cells", "links",
                         "emphasis", "footnotes"):
            assert found[category], (source.name, category)
    every = elements("\n\n".join(to_markdown(s) for s in made))
    assert every["code blocks"] and every["block quotes"] and every["tables"]
    assert any(span[0] == "code" for s in made for b in s.blocks
               for span in getattr(b, "inlines", []))


@pytest.mark.slow
def test_one_source_through_one_writer_is_scored(tmp_path: Path) -> None:
    from bench.generated.bench import measure
    from bench.generated.writers import build, path_of

    source = sources()[0]
    root = build([source], ("docx",), root=tmp_path, log=lambda _: None)
    assert path_of(root, "docx", source).stat().st_size > 0
    results = measure([source], root, ("docx",), peers=())
    assert results.failures["ours", "docx"] == 0
    score = results.scores["ours", "docx", "all"]
    assert score.documents == 1
    assert score.tallies["headings"].f1 == pytest.approx(1.0)
    macro = results.macro("ours", "docx", "all")
    assert macro is not None and macro > 0.8
