"""Finding and rewriting asset references in Markdown and HTML, and batch planning."""

from __future__ import annotations

import base64

import lxml.html
import marko
import marko.inline
import pytest

from render_pool.batch.jobs import html_to_markdown
from render_pool.batch.links import (
    data_uri_images,
    html_references,
    is_local,
    markdown_references,
    rewrite_html,
    rewrite_markdown,
)
from render_pool.batch.plan import (
    MISSING,
    OK,
    OUTSIDE,
    decode_text,
    document_kind,
    mappings_entries,
    plan_batch,
    plan_document,
    resolve,
)
from render_pool.engine.common.data_uri import decode_data_uri
from tests.tree_walk import marko_nodes

# --------------------------------------------------------------------------- helpers


def md_destinations(text: str) -> list[str]:
    """Link and image destinations as a CommonMark parser (marko) sees them."""
    doc = marko.Markdown().parse(text)
    return [node.dest for node in marko_nodes(doc)
            if isinstance(node, marko.inline.Link | marko.inline.Image)]


def html_attrs(html: str, tag: str, attr: str) -> list[str]:
    return [el.get(attr) for el in lxml.html.fromstring(html).iter(tag) if el.get(attr)]


SAMPLE = """# Guide

![Logo](./img/logo%20v2.png "The logo") and ![chart](<img/my chart.png> 'Chart')
See [the other doc](../other/doc.md#install) or [same page](#top).
Visit [site](https://example.com/a.png), [mail](mailto:a@b.c), //cdn.example.com/x.js,
[proto](//cdn.example.com/lib.js), ![inline data](data:image/png;base64,iVBORw0KGgo=).
[![badge](badges/build.svg)](reports/build.html?tab=log)
![paren](images/a(1).png) [query](files/report.pdf?download=1#page=2)

Use `![not](code.png)` in text, ``[not](double.md)`` too, and \\[escaped](no.md).

```markdown
![not](fenced.png)
```

~~~
[not](tilde.md)
~~~

    ![not](indented.png)

<img src="html/pic.jpg" alt="pic"> <a href='html/doc.pdf'>pdf</a>
<https://autolink.example.com/x> <!-- ![not](comment.png) -->

[ref]: assets/ref.png "Ref title"
[other]: <assets/with space.png>
[^note]: a footnote, not a link definition

- item with ![listed](list/item.png)

      ![not](list-code.png)
"""

LOCAL = [
    "./img/logo%20v2.png", "img/my chart.png", "../other/doc.md#install", "badges/build.svg",
    "reports/build.html?tab=log", "images/a(1).png", "files/report.pdf?download=1#page=2",
    "html/pic.jpg", "html/doc.pdf", "assets/ref.png", "assets/with space.png",
    "list/item.png",
]


# --------------------------------------------------------------------------- Markdown


def test_markdown_local_references_found_in_order() -> None:
    refs = markdown_references(SAMPLE)
    assert [r.target for r in refs] == LOCAL
    for r in refs:  # spans point at the raw target in the source
        assert SAMPLE[r.start:r.end] == r.target


def test_markdown_reference_details() -> None:
    refs = {r.target: r for r in markdown_references(SAMPLE)}
    logo = refs["./img/logo%20v2.png"]
    assert (logo.kind, logo.image, logo.path) == ("image", True, "./img/logo v2.png")
    doc = refs["../other/doc.md#install"]
    assert (doc.kind, doc.path, doc.fragment, doc.query) == ("link", "../other/doc.md",
                                                             "#install", "")
    pdf = refs["files/report.pdf?download=1#page=2"]
    assert (pdf.path, pdf.query, pdf.fragment) == ("files/report.pdf", "?download=1", "#page=2")
    assert refs["assets/ref.png"].kind == "definition"
    assert refs["html/pic.jpg"].kind == "html" and refs["html/pic.jpg"].image
    assert refs["img/my chart.png"].path == "img/my chart.png"


def test_markdown_remote_and_anchors_excluded() -> None:
    every = {r.target for r in markdown_references(SAMPLE, include_remote=True)}
    remote = every - set(LOCAL)
    assert {"https://example.com/a.png", "mailto:a@b.c", "//cdn.example.com/lib.js",
            "data:image/png;base64,iVBORw0KGgo=", "https://autolink.example.com/x",
            "#top"} <= remote
    for target in remote:
        assert not is_local(target)


def test_code_comments_and_escapes_never_referenced() -> None:
    found = {r.target for r in markdown_references(SAMPLE, include_remote=True)}
    for never in ("code.png", "double.md", "no.md", "fenced.png", "tilde.md", "indented.png",
                  "comment.png", "list-code.png", "a footnote,"):
        assert never not in found


def test_rewrite_markdown_changes_only_targets() -> None:
    mapping = {t: f"https://s3.test/b/{i}.bin" for i, t in enumerate(LOCAL)}
    out = rewrite_markdown(SAMPLE, mapping)
    # every code sample, remote link and anchor is untouched
    for keep in ("`![not](code.png)`", "![not](fenced.png)", "[not](tilde.md)",
                 "    ![not](indented.png)", "[same page](#top)", "(https://example.com/a.png)",
                 "<!-- ![not](comment.png) -->", '"The logo"', "'Chart'", '"Ref title"',
                 "[^note]: a footnote", "      ![not](list-code.png)"):
        assert keep in out
    assert markdown_references(out) == []  # nothing local left
    dests = md_destinations(out)
    for i in range(len(LOCAL)):
        if LOCAL[i] not in ("html/pic.jpg", "html/doc.pdf", "assets/ref.png",
                            "assets/with space.png"):
            assert f"https://s3.test/b/{i}.bin" in dests
    line = next(ln for ln in out.splitlines() if ln.startswith("<img"))
    assert html_attrs(line, "img", "src") == [mapping["html/pic.jpg"]]
    assert html_attrs(line, "a", "href") == [mapping["html/doc.pdf"]]
    assert f'[ref]: {mapping["assets/ref.png"]} "Ref title"' in out
    assert f'[other]: <{mapping["assets/with space.png"]}>' in out


def test_rewrite_keeps_query_and_fragment_when_mapped_by_path() -> None:
    text = "[a](doc.md#part) ![b](img.png?v=3) [c](file.pdf?x=1#p2)"
    out = rewrite_markdown(text, {
        "doc.md": "https://s/doc.md",                      # fragment appended
        "img.png": "https://s/img.png",                    # query kept (new URL has none)
        "file.pdf": "https://s/file.pdf?X-Amz-Signature=1",  # presigned: query dropped
    })
    assert md_destinations(out) == ["https://s/doc.md#part", "https://s/img.png?v=3",
                                    "https://s/file.pdf?X-Amz-Signature=1#p2"]


def test_rewrite_exact_target_is_verbatim_and_decoded_path_works() -> None:
    text = "![x](my%20pic.png#frag) ![y](other%20pic.png)"
    out = rewrite_markdown(text, {"my%20pic.png#frag": "https://s/exact",
                                  "other pic.png": "https://s/decoded"})
    assert md_destinations(out) == ["https://s/exact", "https://s/decoded"]


def test_rewrite_wraps_awkward_urls_and_escapes_html() -> None:
    text = '![a](a.png) <img src=b.png> <a href="c.pdf">c</a> [d](<d e.md>)'
    out = rewrite_markdown(text, {"a.png": "https://s/a b.png", "b.png": "https://s/b?x=1&y=2",
                                  "c.pdf": 'https://s/c"q', "d e.md": "https://s/d%20e.md"})
    assert "![a](<https://s/a b.png>)" in out
    assert '<img src="https://s/b?x=1&amp;y=2">' in out
    assert 'href="https://s/c&quot;q"' in out
    assert "[d](<https://s/d%20e.md>)" in out
    assert md_destinations(out)[0] == "https://s/a b.png"


def test_rewrite_with_empty_mapping_is_identity() -> None:
    assert rewrite_markdown(SAMPLE, {}) == SAMPLE
    assert rewrite_markdown(SAMPLE, {"nothing.png": "x"}) == SAMPLE


def test_nested_brackets_and_multiline_destination() -> None:
    text = "[see [this] one](a/b.md)\n[multi](\n  c.png\n  \"title\"\n)\n"
    assert [r.target for r in markdown_references(text)] == ["a/b.md", "c.png"]


# --------------------------------------------------------------------------- HTML


HTML = """<!doctype html><html><head>
<link rel="stylesheet" href="css/site.css"><script src="js/app.js"></script>
<script>var s = '<img src="not-in-script.png">';</script>
<style>.x { background: url(img/embedded-css.png) } /* url(not-in-css-comment.png) */</style></head>
<body>
<img src="img/a.png" srcset="img/a-1x.png 1x, img/a-2x.png 2x" alt="A">
<a href="docs/guide.html#intro">guide</a> <a href="#top">top</a>
<a href="https://example.com/x">ext</a> <a href="mailto:x@y.z">mail</a>
<picture><source srcset="img/b.webp" type="image/webp"><source src="img/b.avif"></picture>
<video src="media/v.mp4" poster="media/poster.jpg"></video><audio src="media/a.ogg"></audio>
<div style="background-image: url('img/bg.png'); border-image: url(img/border.png)"></div>
<img src=img/unquoted.png> <img src="img/a&amp;b.png">
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==">
<!-- <img src="img/commented.png"> -->
</body></html>"""

HTML_LOCAL = ["css/site.css", "img/embedded-css.png", "img/a.png", "img/a-1x.png", "img/a-2x.png",
              "docs/guide.html#intro", "img/b.webp", "img/b.avif", "media/v.mp4",
              "media/poster.jpg", "media/a.ogg", "img/bg.png", "img/border.png",
              "img/unquoted.png", "img/a&b.png"]


def test_html_references() -> None:
    assert html_references(HTML) == HTML_LOCAL
    every = html_references(HTML, include_remote=True)
    assert "https://example.com/x" in every and "#top" in every
    for never in ("not-in-script.png", "not-in-css-comment.png", "img/commented.png"):
        assert never not in every


def test_rewrite_html() -> None:
    mapping = {t: f"https://s3.test/k/{i}?X-Amz-Signature=abc&X-Amz-Date=1"
               for i, t in enumerate(HTML_LOCAL)}
    out = rewrite_html(HTML, mapping)
    assert html_references(out) == []
    doc = lxml.html.fromstring(out)
    imgs = [el.get("src") for el in doc.iter("img")]
    assert imgs[0] == mapping["img/a.png"]  # entity-decoded value is the exact new URL
    assert mapping["img/unquoted.png"] in imgs and mapping["img/a&b.png"] in imgs
    srcset = doc.find(".//img").get("srcset")
    assert srcset == f"{mapping['img/a-1x.png']} 1x, {mapping['img/a-2x.png']} 2x"
    style = doc.find(".//div").get("style")
    assert f"url('{mapping['img/bg.png']}')" in style and mapping["img/border.png"] in style
    assert doc.find(".//a").get("href") == mapping["docs/guide.html#intro"]
    # untouched parts stay byte for byte
    for keep in ('<a href="#top">top</a>', "<!-- <img src=\"img/commented.png\"> -->",
                 "var s = '<img src=\"not-in-script.png\">';", "url(not-in-css-comment.png)"):
        assert keep in out


def test_data_uri_images_upload_and_replace() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
    uri = "data:image/png;base64," + base64.b64encode(png).decode()
    svg_uri = "data:image/svg+xml,%3Csvg%20xmlns%3D%22x%22%2F%3E"
    html = f'<p><img src="{uri}"><img src="{uri}"><img src="{svg_uri}"><img src="a.png"></p>'
    found = data_uri_images(html)
    assert [(u, d, m) for u, d, m in found] == [(uri, png, "image/png"),
                                                (svg_uri, b'<svg xmlns="x"/>', "image/svg+xml")]
    out = rewrite_html(html, {uri: "https://s/img1.png", svg_uri: "https://s/img2.svg"})
    assert html_attrs(out, "img", "src") == ["https://s/img1.png", "https://s/img1.png",
                                             "https://s/img2.svg", "a.png"]
    assert decode_data_uri("data:image/png;base64,!!!") is None


def test_html_to_markdown_two_phase() -> None:
    html = ("<html><head><title>Title here</title></head><body><h1>Report</h1>"
            '<p>Intro <img src="img/a b.png" alt="A"> and <a href="doc.html">doc</a></p>'
            '<pre><code class="language-python">print("x")</code></pre>'
            '<table><tr><th>h</th></tr><tr><td><img src="img/c.png"></td></tr></table>'
            "<script>alert(1)</script></body></html>")
    # phase 1: upload HTML assets and rewrite the HTML
    phase1 = {"img/a b.png": "https://s/a%20b.png?X-Amz-Signature=1&X-Amz-Date=2",
              "img/c.png": "https://s/c.png"}
    md = html_to_markdown(rewrite_html(html, phase1))
    assert md.startswith("# Report")
    assert "Title here" not in md and "alert" not in md
    assert "```python\nprint(\"x\")\n```" in md
    assert md_destinations(md) == [phase1["img/a b.png"], "doc.html", "https://s/c.png"]
    # phase 2: what is still local in the Markdown is rewritten again
    assert [r.target for r in markdown_references(md)] == ["doc.html"]
    md2 = rewrite_markdown(md, {"doc.html": "https://s/doc.md"})
    assert md_destinations(md2)[1] == "https://s/doc.md"


def test_html_to_markdown_wraps_spaces() -> None:
    md = html_to_markdown('<p><img src="a b.png" alt="x"><a href="c (1).html">c</a></p>')
    assert md_destinations(md) == ["a b.png", "c (1).html"]


# --------------------------------------------------------------------------- batch planning


FILES = ["docs/a.md", "docs/img/x.png", "img/y.png", "img/Z.PNG", "site/index.html",
         "site/style.css", "README.markdown", "__MACOSX/docs/._a.md", "docs/._a.md", "data.bin"]


def test_document_kind() -> None:
    assert [f for f in FILES if document_kind(f)] == ["docs/a.md", "site/index.html",
                                                      "README.markdown"]


def test_resolve() -> None:
    assert resolve("docs/a.md", "img/x.png", FILES) == ("docs/img/x.png", OK)
    assert resolve("docs/a.md", "./img/../img/x.png", FILES) == ("docs/img/x.png", OK)
    assert resolve("docs/a.md", "../img/y.png", FILES) == ("img/y.png", OK)
    assert resolve("docs/a.md", "/img/y.png", FILES) == ("img/y.png", OK)  # root-relative
    assert resolve("docs/a.md", "..\\img\\y.png", FILES) == ("img/y.png", OK)
    assert resolve("docs/a.md", "../img/z.png", FILES) == ("img/Z.PNG", OK)  # case-insensitive
    assert resolve("docs/a.md", "../../etc/passwd", FILES) == (None, OUTSIDE)
    assert resolve("docs/a.md", "../../../img/y.png", FILES) == (None, OUTSIDE)
    assert resolve("docs/a.md", "C:/Windows/win.ini", FILES) == (None, OUTSIDE)
    assert resolve("docs/a.md", "img/none.png", FILES) == (None, MISSING)
    assert resolve("docs/a.md", "img/", FILES) == (None, MISSING)


def test_plan_batch() -> None:
    texts = {
        "docs/a.md": "![x](img/x.png) ![y](../img/y.png) ![y again](../img/y.png)\n"
                     "[home](../site/index.html#top) ![gone](img/missing.png)\n"
                     "![escape](../../../../etc/passwd) [web](https://e.com/x.png)\n",
        "site/index.html": '<link href="style.css"><img src="../img/y.png"><img src="/img/Z.PNG">'
                           '<a href="../docs/a.md">a</a><img src="../outside/../../x.png">',
        "README.markdown": "No references here. `![code](img/y.png)`",
    }
    plan = plan_batch("/tmp/root", FILES, texts)
    assert plan.count == 3
    assert [d.source for d in plan.documents] == ["README.markdown", "docs/a.md",
                                                  "site/index.html"]
    readme, a, index = plan.documents
    assert readme.refs == []
    assert [r.target for r in a.refs] == ["img/x.png", "../img/y.png",
                                          "../site/index.html#top", "img/missing.png",
                                          "../../../../etc/passwd"]
    assert [(r.file, r.status) for r in a.failed] == [(None, MISSING), (None, OUTSIDE)]
    assert a.asset_files == ["docs/img/x.png", "img/y.png"]
    link = next(r for r in a.refs if r.target.startswith("../site"))
    assert link.document and link.file == "site/index.html" and not link.image
    assert index.kind == "html"
    assert index.asset_files == ["site/style.css", "img/y.png", "img/Z.PNG"]
    assert [r.status for r in index.failed] == [OUTSIDE]
    assert plan.assets == ["docs/img/x.png", "img/Z.PNG", "img/y.png", "site/style.css"]
    assert "data.bin" in plan.other_files and "docs/a.md" not in plan.other_files


def test_plan_document_counts_distinct_targets() -> None:
    plan = plan_document("a.md", "![1](p.png) ![2](p.png) ![3](./p.png)", ["p.png"])
    assert [r.target for r in plan.resolved] == ["p.png", "./p.png"]
    assert plan.asset_files == ["p.png"]


def test_mappings_entries() -> None:
    assert mappings_entries({"a.png": "https://s/a.png"}) == [
        {"from": "a.png", "to": "https://s/a.png"}]


@pytest.mark.parametrize("data, text", [
    ("# 标题".encode("utf-8-sig"), "# 标题"),
    ("# 标题".encode("utf-16"), "# 标题"),
    ("# 标题".encode("gb18030"), "# 标题"),
    (b"caf\xe9 \xff\xfe\xfa", "café ÿþú"),
])
def test_decode_text(data: bytes, text: str) -> None:
    assert decode_text(data) == text


# --------------------------------------------------------------------------- oracle: marko


@pytest.mark.parametrize("text", [
    "[a](b.md)", "[a](<b c.md>)", "[a]( b.md  'title' )", '[a](b.md\n"t")', "[a](b(c).md)",
    "[a] (b.md)", '[a](b.md "t" x)', "`[a](b.md)`", "``x`` [a](b.md)", "\\[a](b.md)",
    "[a\\](b.md)", "![a](b.png)![c](d.png)", "# h\n    [a](code.md)", "para\n    [a](lazy.md)",
    "- item\n\n      [a](code-in-list.md)", "- item\n\n    [a](para-in-list.md)",
    "1. one\n   ```\n   [a](fenced.md)\n   ```\n", "> quote [a](q.md)",
    "| t | [a](cell.md) |\n|---|---|\n| [b](c2.md) | x |", "[a](b.md?x=1&y=2#f)",
    "*[a](em.md)*", "[a](b.md 'ti\"tle')", "[a](b.md (paren title))",
    "~~~\n[a](t.md)\n~~~\n[b](after.md)", "````\n```\n[a](nested.md)\n```\n````\n[c](out.md)",
    "text `code` [a](x.md) `more [b](y.md)`",
])
def test_inline_links_agree_with_commonmark_parser(text: str) -> None:
    ours = sorted(r.target for r in markdown_references(text, include_remote=True)
                  if r.kind in ("link", "image"))
    assert ours == sorted(md_destinations(text))


def test_pathological_inputs_stay_fast() -> None:
    import time

    for text in ("](" * 20000, "".join("`" * k + " x " for k in range(1, 1000)),
                 "<a" + " b" * 20000, "[" * 20000 + "](x.md)"):
        t0 = time.monotonic()
        markdown_references(text)
        html_references(text)
        assert time.monotonic() - t0 < 2


def test_html_to_markdown_keeps_only_allowed_link_targets() -> None:
    md = html_to_markdown('<p><a href="java\tscript:alert(1)">bad</a> '
                          '<a href="VBScript:x">worse</a> <a href="https://ok.test/">good</a> '
                          '<img src="javascript:alert(2)" alt="pic"></p>')
    assert "script" not in md.lower() and "bad" in md and "worse" in md
    assert "[good](https://ok.test/)" in md
