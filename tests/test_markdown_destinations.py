"""Character references in link and image destinations of the Markdown writer (issue 20):
a target holding ``jav&#x61;script:`` must never read back as a live ``javascript:`` link,
and an ``&`` in an ordinary URL must read back as itself. Checked by reading the writer's
output with three CommonMark readers: markdown-it (the reference behaviour), marko (what the
service itself reads) and pandoc."""

from __future__ import annotations

import re
import shutil
import subprocess

import marko
import pytest
from markdown_it import MarkdownIt

from render_pool.engine.markdown.writer import write_markdown
from render_pool.engine.model import Document, Image, Link, Paragraph, Text
from render_pool.engine.url_safety import is_safe_image_src, is_safe_link

HOSTILE = ["jav&#x61;script:alert(7)", "jav&#97;script:alert(7)", "&#106;avascript:alert(7)",
           "jav&#x61script:alert(7)", "javascript&colon;alert(7)", "data&colon;text/html,x",
           "vbscript&#58;msgbox(1)"]
ORDINARY = ["https://e.test/?a=1&b=2", "https://e.test/?x=1&lt;2&#x41;&amp;", "page.html#a&b",
            "https://e.test/a(1&#x41;.png"]


def _hrefs_markdown_it(text: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    out: list[str] = []
    for block in tokens:
        for tok in block.children or []:
            if tok.type == "link_open":
                out.append(str(tok.attrs["href"]))
            elif tok.type == "image":
                out.append(str(tok.attrs["src"]))
    return out


def _hrefs_html(html_text: str) -> list[str]:
    import html

    return [html.unescape(m) for m in re.findall(r'(?:href|src)="([^"]*)"', html_text)]


def _pandoc(text: str) -> str:
    if shutil.which("pandoc") is None:
        pytest.skip("pandoc not installed")
    return subprocess.run(["pandoc", "-f", "commonmark", "-t", "html"], input=text,
                          capture_output=True, text=True, check=True, timeout=30).stdout


def _doc(url: str) -> Document:
    return Document([Paragraph([Link([Text("x")], url)]),
                     Paragraph([Image(url, alt="pic")])])


def _no_script_target(out: str, hrefs: list[str]) -> None:
    assert not any(re.match(r"\s*(javascript|vbscript|data)\s*:", h, re.I) for h in hrefs), \
        (out, hrefs)


@pytest.mark.parametrize("url", HOSTILE)
def test_character_references_cannot_spell_a_script_link(url: str) -> None:
    assert not is_safe_link(url) and not is_safe_image_src(url)
    out = write_markdown(_doc(url))
    for hrefs in [_hrefs_markdown_it(out), _hrefs_html(marko.convert(out))]:
        _no_script_target(out, hrefs)


@pytest.mark.slow  # pandoc is a process
@pytest.mark.parametrize("url", HOSTILE)
def test_pandoc_reads_no_script_link_either(url: str) -> None:
    out = write_markdown(_doc(url))
    _no_script_target(out, _hrefs_html(_pandoc(out)))


@pytest.mark.parametrize("url", ORDINARY)
def test_an_ampersand_in_a_destination_reads_back_as_itself(url: str) -> None:
    out = write_markdown(_doc(url))
    assert _hrefs_markdown_it(out) == [url, url], out


@pytest.mark.slow  # pandoc is a process
@pytest.mark.parametrize("url", ORDINARY)
def test_pandoc_reads_the_ampersand_back_as_itself(url: str) -> None:
    out = write_markdown(_doc(url))
    assert _hrefs_html(_pandoc(out)) == [url, url], out


def test_the_issue_input_reads_back_as_a_relative_link() -> None:
    """The exact text of the issue, ``[x](<jav&#x61;script:alert(7)>)``: written from a model
    whose link target holds a literal ``&#x61;`` it can no longer come out (the target is not
    a safe link), and an escaped ``&`` keeps a harmless relative target literal."""
    out = write_markdown(_doc("jav&#x61;script:alert(7)"))
    assert "](" not in out  # the link and image are dropped to their text
    escaped = write_markdown(_doc("docs/jav&#x61;.html"))
    assert "&amp;#x61;" in escaped
    assert _hrefs_markdown_it(escaped) == ["docs/jav&#x61;.html"] * 2
