"""One path into the model for HTML: a page in a batch and the same page uploaded give the
same document, and the batch stores the Markdown ``/convert`` answers for that upload."""

from __future__ import annotations

from pathlib import Path

from render_pool.batch import jobs as batch_jobs
from render_pool.engine.html.reader import read_html_file
from render_pool.engine.jobs import convert_document
from render_pool.engine.model import Link, Table, TableCell, plain_text, to_dict
from render_pool.engine.registry import read

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Plan</title>
<style>p { color: red }</style></head><body>
<h1>Quarterly plan</h1>
<p>See <a href="https://example.test/a" title="A">the report</a> and
<a href="javascript:alert(1)">this trap</a>, <em>not</em> <strong>that</strong>.</p>
<table>
  <tr><th rowspan="2">Region</th><th colspan="2">Sales</th></tr>
  <tr><th>Q1</th><th>Q2</th></tr>
  <tr><td>North</td><td>10</td><td>12</td></tr>
  <tr><td colspan="2">Total so far</td><td>22</td></tr>
</table>
<ul><li>one <img src="chart.png" alt="chart"></li><li>two<ul><li>nested</li></ul></li></ul>
<pre><code class="language-python">print("x")</code></pre>
</body></html>"""


def _cells(doc) -> list[TableCell]:
    table = next(b for b in doc.blocks if isinstance(b, Table))
    return [c for row in table.rows for c in row.cells]


def test_batch_html_and_uploaded_html_give_the_same_model():
    uploaded = read(PAGE.encode("utf-8"))  # /convert: the registry's reader of the sniffed kind
    in_batch = read_html_file(PAGE.encode("utf-8"))  # batch_jobs.html_to_markdown's reader
    assert to_dict(in_batch.blocks) == to_dict(uploaded.blocks)
    assert in_batch.meta == uploaded.meta
    # spans survive, and the allow-list holds on this one path: the trap keeps its text only
    spans = [(plain_text(c.blocks), c.rowspan, c.colspan) for c in _cells(uploaded)
             if (c.rowspan, c.colspan) != (1, 1)]
    assert spans == [("Region", 2, 1), ("Sales", 1, 2), ("Total so far", 1, 2)]
    para = uploaded.blocks[1]
    assert [n.target for n in para.children if isinstance(n, Link)] == [
        "https://example.test/a"]
    assert "this trap" in plain_text([para])


def test_a_batch_page_is_stored_as_the_markdown_of_its_upload(tmp_path: Path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text(PAGE, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    tree = batch_jobs.plan_tree(str(tmp_path), {})
    (plan,) = tree.documents
    result = batch_jobs.finish_document(str(tmp_path), plan, batch_jobs.Lookups(), {},
                                        tree.files, str(out))
    stored = Path(result.path).read_text(encoding="utf-8")
    assert stored == convert_document(PAGE.encode("utf-8"), "markdown").content
    assert "javascript" not in stored and "this trap" in stored
    assert "| Total so far | Total so far | 22 |" in stored  # a span fills its columns
