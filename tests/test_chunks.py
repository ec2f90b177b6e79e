"""``export=chunks`` (issue 33): the rules of the chunks writer, as properties over generated
documents (hypothesis) and on real files, and the option checks over HTTP.

Generated documents use a unique word per occurrence (``w17``), so "every word in exactly one
chunk" is a count; table header words (``h3``) are the one thing repeated (in every part).
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from render_pool.engine.chunks.tokens import count_chars, count_words
from render_pool.engine.chunks.writer import chunk_document
from render_pool.engine.jobs import ConvertOptions, convert_document
from render_pool.engine.model import (
    Block,
    CodeBlock,
    Document,
    Heading,
    ListBlock,
    ListItem,
    PageBox,
    Paragraph,
    Table,
    TableCell,
    TableRow,
    Text,
)
from render_pool.engine.options import WriterOptions
from render_pool.errors import InvalidOption
from tests.conftest import post_form
from tests.test_jobs import _wait_ended, consumer, job_services  # noqa: F401 (fixtures)
from tornado_app.app import make_app

DATA = Path(__file__).parent / "data"
WORD = re.compile(r"\bw\d+\b")


# ----------------------------------------------------------------- generated documents
class _Words:
    def __init__(self) -> None:
        self.n = itertools.count()

    def sentence(self, size: int) -> str:
        return " ".join(f"w{next(self.n)}" for _ in range(size)) + "."


@st.composite
def documents(draw: st.DrawFn) -> tuple[Document, list[str]]:
    """A document of sections (headings at levels 1-3, paragraphs, lists, tables, code),
    and its sentences."""
    words = _Words()
    sentences: list[str] = []
    heads = itertools.count()

    def para(max_sentences: int = 6, max_words: int = 30) -> Paragraph:
        got = [words.sentence(draw(st.integers(1, max_words)))
               for _ in range(draw(st.integers(1, max_sentences)))]
        sentences.extend(got)
        return Paragraph([Text(" ".join(got))])

    blocks: list[Block] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["heading", "para", "para", "list", "table", "code"]))
        if kind == "heading":
            blocks.append(Heading(draw(st.integers(1, 3)), [Text(
                " ".join(f"w{next(words.n)}" for _ in range(draw(st.integers(1, 4)))))]))
        elif kind == "para":
            blocks.append(para())
        elif kind == "list":
            blocks.append(ListBlock(draw(st.booleans()), [
                ListItem([para(3, 20)]) for _ in range(draw(st.integers(1, 8)))]))
        elif kind == "table":
            cols = draw(st.integers(2, 4))
            header = TableRow([TableCell([Paragraph([Text(f"h{next(heads)}")])], header=True)
                               for _ in range(cols)])
            rows = [TableRow([TableCell([Paragraph([Text(f"w{next(words.n)}")])])
                              for _ in range(cols)]) for _ in range(draw(st.integers(1, 25)))]
            blocks.append(Table([header, *rows], header_rows=1))
        else:
            lines = [" ".join(f"w{next(words.n)}" for _ in range(draw(st.integers(1, 8))))
                     for _ in range(draw(st.integers(1, 30)))]
            blocks.append(CodeBlock("\n".join(lines)))
    return Document(blocks), sentences


def _chunks(doc: Document, **options) -> list[dict]:
    return chunk_document(doc, options=WriterOptions(**options))


def _doc_words(doc: Document) -> Counter[str]:
    return Counter(WORD.findall(convert_document_text(doc)))


def convert_document_text(doc: Document) -> str:
    from render_pool.engine.markdown.writer import write_markdown

    return write_markdown(doc)


PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(documents(), st.integers(40, 400), st.booleans())
def test_every_word_in_exactly_one_chunk_and_every_chunk_within_budget(generated, budget,
                                                                       merge):
    doc, sentences = generated
    chunks = _chunks(doc, chunk_tokens=budget, chunk_merge=merge)
    found = Counter(w for c in chunks for w in WORD.findall(c["text"]))
    assert found == _doc_words(doc)  # nothing lost, nothing doubled
    over = [c for c in chunks if c["tokens"] > budget]
    for c in over:  # only a table row that alone (with its header) is over the budget
        lines = c["text"].split("\n")
        assert [ln for ln in lines if ln.startswith("| w")] and len(
            [ln for ln in lines if ln.startswith("|")]) == 3, c["text"]
    if over:
        assert any(f"{len(over)} chunk(s) are over the budget" in w for w in doc.warnings)
    for c in chunks:
        assert c["tokens"] == count_words(c["text"])
        lines = [ln for ln in c["text"].split("\n") if ln.strip()]
        if lines[-1].startswith("#"):  # no chunk ends with its heading, but an empty section
            assert all(ln.startswith("#") for ln in lines), c["text"]
    # a sentence is not cut unless it alone is over the budget
    for sentence in sentences:
        if count_words(sentence) <= budget // 2:
            assert sum(sentence in c["text"] for c in chunks) == 1, sentence


@PROPERTY
@given(documents(), st.integers(60, 300))
def test_tables_split_between_rows_with_their_header(generated, budget):
    doc, _ = generated
    chunks = _chunks(doc, chunk_tokens=budget)
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    for t in tables:
        head = t.rows[0].cells[0].blocks[0]
        assert isinstance(head, Paragraph)
        header = head.children[0].text  # type: ignore[union-attr]
        body = {r.cells[0].blocks[0].children[0].text for r in t.rows[1:]}  # type: ignore
        holding = [c for c in chunks if any(f"| {w} |" in c["text"] for w in body)]
        assert holding
        for c in holding:  # every part starts with the header row
            assert f"| {header} |" in c["text"]
            lines = c["text"].split("\n")
            at = next(i for i, ln in enumerate(lines) if f"| {header} |" in ln)
            assert lines[at + 1].startswith("|---")


@PROPERTY
@given(documents(), st.integers(80, 300), st.integers(1, 30))
def test_overlap_opens_a_chunk_with_the_end_of_the_one_before(generated, budget, overlap):
    doc, _ = generated
    overlap = min(overlap, budget // 2 - 1)
    chunks = _chunks(doc, chunk_tokens=budget, chunk_overlap=overlap)
    plain = _chunks(doc, chunk_tokens=budget - overlap)
    words = Counter(w for c in chunks for w in WORD.findall(c["text"]))
    assert set(words) == set(_doc_words(doc))  # nothing lost
    doubled = sum(words.values()) - sum(_doc_words(doc).values())
    assert doubled <= overlap * max(0, len(chunks) - 1)
    assert [c["blocks"] for c in chunks] == [c["blocks"] for c in plain]
    for prev, c in itertools.pairwise(chunks):
        opening = c["text"].split("\n\n", 1)[0]
        if c["tokens"] <= budget and opening in prev["text"] and opening != c["text"]:
            assert count_words(opening) <= overlap or opening.startswith(("#", "|", "```"))


# ----------------------------------------------------------------- rules on examples
def _para(text: str, page: int = 1) -> Paragraph:
    return Paragraph([Text(text)], prov=[PageBox(page, (10, 10, 100, 20))])


def test_headings_path_pages_blocks_and_prov():
    doc = Document([Heading(1, [Text("Report")]), _para("Intro words here.", 1),
                    Heading(2, [Text("Costs")]), _para("Costs went up.", 2),
                    Heading(2, [Text("Staff")]), _para("Staff went down.", 3)])
    chunks = _chunks(doc, chunk_merge=False)
    assert [c["headings"] for c in chunks] == [["Report"], ["Report", "Costs"],
                                               ["Report", "Staff"]]
    assert [c["pages"] for c in chunks] == [[1], [2], [3]]
    assert [c["blocks"] for c in chunks] == [[0, 1], [2, 3], [4, 5]]
    assert chunks[1]["prov"] == [{"page": 2, "bbox": [10, 10, 100, 20]}]
    assert chunks[1]["text"] == "## Costs\n\nCosts went up."
    merged = _chunks(doc)  # small sections under one heading share a chunk
    assert len(merged) == 1 and merged[0]["headings"] == ["Report"]
    assert merged[0]["pages"] == [1, 2, 3]


def test_a_caption_stays_with_its_table():
    rows = [TableRow([TableCell([Paragraph([Text(f"cell {i} " + "x " * 5)])])])
            for i in range(12)]
    doc = Document([_para("Some text before the table. " * 6),
                    _para("Table 3: Costs by region"), Table(rows, header_rows=1)])
    for budget in (40, 60, 90):
        chunks = _chunks(doc, chunk_tokens=budget)
        with_caption = next(c for c in chunks if "Table 3: Costs" in c["text"])
        assert "| cell 1 " in with_caption["text"], with_caption["text"]


def test_a_long_sentence_alone_is_cut_at_words():
    doc = Document([_para(" ".join(f"word{i}" for i in range(300)) + ".")])
    chunks = _chunks(doc, chunk_tokens=64)
    assert all(c["tokens"] <= 64 for c in chunks) and len(chunks) >= 5
    assert " ".join(c["text"] for c in chunks).split() == doc_words(doc)


def doc_words(doc: Document) -> list[str]:
    return convert_document_text(doc).split()


def test_a_long_code_block_is_cut_between_lines_and_fenced_again():
    code = "\n".join(f"print({i}, 'value {i}')" for i in range(200))
    chunks = _chunks(Document([CodeBlock(code, "python")]), chunk_tokens=100)
    assert len(chunks) > 3
    for c in chunks:
        assert c["text"].startswith("```python\n") and c["text"].endswith("\n```")
        assert c["tokens"] <= 100
    lines = [ln for c in chunks for ln in c["text"].split("\n")[1:-1]]
    assert lines == code.split("\n")


def test_footnotes_follow_the_block_citing_them():
    text = convert_document((DATA / "docx" / "mammoth" / "footnotes.docx").read_bytes(),
                            "chunks").content
    chunks = json.loads(text)
    assert "[^1]: A tachyon walks into a bar." in chunks[0]["text"]


def test_options_are_checked():
    doc = Document([_para("x.")])
    for options, words in [({"chunk_tokens": 8}, "between"),
                           ({"chunk_tokens": 100, "chunk_overlap": 50}, "half"),
                           ({"chunk_tokenizer": "gpt9"}, "unknown chunk_tokenizer")]:
        with pytest.raises(InvalidOption, match=words):
            _chunks(doc, **options)


def test_tokenizers():
    assert count_words("Hello, world! It costs 3.5 units.") == 11
    assert count_words("| a | b |\n|---|---|") == 10
    assert count_words("中文字") == 3 and count_words("x" * 25) == 3
    assert count_chars("abcde") == 2
    chunks = _chunks(Document([_para("abc " * 100)]), chunk_tokens=50, chunk_tokenizer="chars")
    assert all(c["tokens"] == count_chars(c["text"]) <= 50 for c in chunks)


def test_chunks_of_a_pdf_carry_pages_and_boxes():
    chunks = json.loads(convert_document((DATA / "pdf" / "multi_page.pdf").read_bytes(),
                                         "chunks",
                                         options=ConvertOptions(write=WriterOptions(chunk_tokens=200))).content)
    assert {p for c in chunks for p in c["pages"]} == {1, 2, 3, 4, 5}
    assert all(c["prov"] and c["tokens"] <= 200 for c in chunks)
    assert all(set(c) == {"text", "headings", "pages", "tokens", "blocks", "prov"}
               for c in chunks)


# ----------------------------------------------------------------- over HTTP
@pytest.fixture
def app(docs_services):
    return make_app(docs_services)


async def test_chunks_over_http(api):
    pdf = {"file": ("multi.pdf", (DATA / "pdf" / "multi_page.pdf").read_bytes())}
    reply = await post_form(api, "/api/convert", {"export": "chunks", "chunk_tokens": "150",
                                                  "chunk_overlap": "10", "pages": "2-3"}, pdf)
    assert reply.body["code"] == 0, reply.body
    data = reply.body["data"]
    assert data["media_type"] == "application/json"
    chunks = json.loads(data["content"])
    assert chunks and all(c["tokens"] <= 150 for c in chunks)
    assert {p for c in chunks for p in c["pages"]} == {2, 3}
    for fields in ({"export": "chunks", "chunk_tokens": "ten"},
                   {"export": "chunks", "chunk_overlap": "300"},
                   {"export": "chunks", "chunk_merge": "maybe"}):
        reply = await post_form(api, "/api/convert", fields, pdf)
        assert reply.body["code"] == 40001, (fields, reply.body)


async def test_chunks_as_an_async_job(api, consumer):  # noqa: F811 (the fixture)
    r = await post_form(api, "/api/convert", {"async": "true", "export": "chunks",
                                              "chunk_tokens": "100"},
                        {"file": ("multi.pdf", (DATA / "pdf" / "multi_page.pdf").read_bytes())})
    job = await _wait_ended(api, r.body["data"]["job_id"])
    assert job["state"] == "done", job
    assert job["result"]["storage_url"].endswith("/multi.chunks.json")
    with urllib.request.urlopen(job["result"]["storage_presigned_url"], timeout=10) as f:
        chunks = json.loads(f.read())
    assert chunks and all(c["tokens"] <= 100 for c in chunks)


def _cell(text: str, **span: int) -> TableCell:
    return TableCell([Paragraph([Text(text)])], **span)


def test_a_header_spanning_rows_is_repeated_whole_and_rows_keep_their_columns():
    """A header cell spanning down past the header rows (a two-line header with merged cells,
    as in poi__bug65649.docx) made the header of every later part cover the part's first row,
    so that row's cells moved right under the wrong columns and its merged cells lost their
    repeats: the header is the rows its cells span, and every row reads as in the table."""
    header = TableRow([_cell("Name", rowspan=2), _cell("Price", colspan=2),
                       _cell("Note", rowspan=2)])
    sub = TableRow([_cell("net"), _cell("gross")])
    body = [TableRow([_cell(f"w{4 * i}"), _cell(f"w{4 * i + 1}", colspan=2),
                      _cell(f"w{4 * i + 2} w{4 * i + 3}")]) for i in range(30)]
    doc = Document([Table([header, sub, *body], header_rows=1)])
    whole = convert_document_text(doc).split("\n")
    for budget in (24, 64, 120):  # 24: the header is over half the budget, not repeated
        chunks = _chunks(doc, chunk_tokens=budget)
        assert len(chunks) > 1
        found = Counter(w for c in chunks for w in WORD.findall(c["text"]))
        assert found == _doc_words(doc)  # nothing lost, nothing doubled
        for c in chunks:
            lines = c["text"].split("\n")
            if budget > 24:  # both header lines open every part
                assert lines[0] == whole[0] and lines[2] == whole[2], c["text"]
            assert all(ln in whole for ln in lines[2:]), c["text"]  # rows as in the table


def test_parts_of_an_html_table_are_written_as_html_so_merged_cells_are_not_doubled():
    """A table written as HTML (a list in a cell) had its parts written as pipe tables when
    their cells were plain, and a pipe table repeats a merged cell in every column it spans:
    words once in the document were twice in the chunks."""
    rows = [TableRow([_cell(f"w{3 * i}", colspan=2), _cell(f"w{3 * i + 1} w{3 * i + 2}")])
            for i in range(30)]
    listed = TableRow([_cell("w90"), _cell("w91"), TableCell([ListBlock(False, [
        ListItem([_para("w92")]), ListItem([_para("w93")])])])])
    head = TableRow([_cell("h1", header=True), _cell("h2", header=True),
                     _cell("h3", header=True)])
    doc = Document([Table([head, *rows, listed], header_rows=1)])
    assert "<table>" in convert_document_text(doc)
    for budget in (48, 96):
        chunks = _chunks(doc, chunk_tokens=budget)
        assert len(chunks) > 2
        found = Counter(w for c in chunks for w in WORD.findall(c["text"]))
        assert found == _doc_words(doc)  # nothing lost, nothing doubled
        assert all(c["text"].startswith("<table>") for c in chunks), chunks


def test_a_run_over_the_budget_is_cut_between_words_not_inside_one():
    """A whitespace-free run larger than the budget (a long link with a query string) is cut
    at characters, but between a word and a mark: a cut inside ``oid`` left ``oi`` in one
    chunk and ``d`` in the next, a word in no chunk and two that are not words."""
    run = "https://example.com/a?" + "&".join(f"key{i}=%E8%AF%B7value{i}" for i in range(150))
    doc = Document([_para(f"Before the link {run} after it.")])
    for budget in (32, 64, 200):
        chunks = _chunks(doc, chunk_tokens=budget)
        assert len(chunks) > 1 and all(c["tokens"] <= budget for c in chunks)
        assert [w for c in chunks for w in re.findall(r"\w+", c["text"])] == \
            re.findall(r"\w+", convert_document_text(doc))


def _starts(chunks: list[dict]) -> list[str]:
    """The first line of every chunk."""
    return [c["text"].split("\n", 1)[0] for c in chunks]


@pytest.mark.parametrize("second", ["Gateway", "Network"])
def test_a_heading_after_an_empty_sibling_starts_a_chunk_whatever_its_title(second):
    """An empty section followed by a sibling of the same title (a heading written twice, as
    slides and Word files often have) once swallowed the sibling's heading: paths compare
    titles, so the sibling looked like a subsection. A sibling starts its own chunk at
    ``chunk_merge=false`` whether or not its title repeats the empty one's."""
    doc = Document([Heading(2, [Text("Gateway")]), Heading(2, [Text(second)]),
                    _para("The gateway routes requests.")])
    chunks = _chunks(doc, chunk_merge=False)
    assert _starts(chunks) == ["## Gateway", f"## {second}"]
    assert chunks[1]["headings"] == [second]


def test_merging_never_joins_a_subsection_tail_to_the_next_section_of_its_parent():
    """Merged subsections 1.1.1 and 1.1.2 share the path of 1.1, but 1.1 opens in an earlier
    chunk; 1.2 joined to them crossed the 1.1 / 1.2 boundary, a heading of a higher level
    than any in the chunk. 1.2 starts a chunk; sibling subsections still merge."""
    long_text = " ".join(f"word{i}" for i in range(300)) + "."
    doc = Document([Heading(1, [Text("One")]), Heading(2, [Text("One.One")]),
                    _para(long_text), Heading(3, [Text("A")]), _para("Text of A."),
                    Heading(3, [Text("B")]), _para("Text of B."),
                    Heading(2, [Text("One.Two")]), _para("Text of One.Two.")])
    chunks = _chunks(doc)
    assert _starts(chunks) == ["# One", "### A", "## One.Two"]
    assert chunks[1]["text"] == "### A\n\nText of A.\n\n### B\n\nText of B."
    assert chunks[1]["headings"] == ["One", "One.One"]
    assert chunks[2]["headings"] == ["One", "One.Two"]


def test_a_large_section_under_an_empty_chapter_heading_is_not_merged():
    """Sections merge only when each is at most half the budget. A section right under an
    empty chapter heading (the two open one chunk) escaped that check, counted as two
    sections already joined, and took its small sibling along."""
    long_text = " ".join(f"word{i}" for i in range(300)) + "."
    doc = Document([Heading(1, [Text("One")]), Heading(2, [Text("One.One")]),
                    _para(long_text), Heading(2, [Text("One.Two")]),
                    _para("Text of One.Two.")])
    assert _starts(_chunks(doc)) == ["# One", "## One.Two"]
