"""Markdown -> PDF work done once instead of per request (issue 34): the image-source scan that
skips the parse when no image can be there, and the style sheet, code formatter and lexers the
PDF writer keeps per process. Each must give exactly what the per-request work gave."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from render_pool.engine.markdown import reader
from render_pool.engine.markdown.reader import markdown_image_sources
from render_pool.engine.pdf import themes, writer_style
from render_pool.engine.pdf.writer_style import highlight_code, page_css
from render_pool.errors import CorruptDocument

DATA = Path(__file__).parent / "data"

SAMPLES = [
    "# Title\n\nplain text, no picture\n",
    "![alt](a.png) and ![ref][r]\n\n[r]: b.png\n",
    "text <IMG SRC='c.png'> and <img\nsrc=\"d.png\">\n",
    "> quoted ![x](q.png)\n\n- item ![y](l.png)\n",
    "| a | b |\n|---|---|\n| ![t](t.png) | x |\n",
    "note[^1]\n\n[^1]: see ![f](f.png)\n",
    "```\n![not an image](code.png)\n```\n",
    "`![code span](s.png)` and \\![escaped](e.png)\n",
    "!\n[split](nope.png) and ! [spaced](nope2.png)\n",
    "<imgx src='x.png'> <img data-src='y.png'>\n",
    "![](data:image/png;base64,AAAA) ![remote](http://example.com/r.png)\n",
    "---\ntitle: front ![matter](fm.png)\n---\nbody\n",
]


def _parsed_sources(text: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources a full parse finds (the scan's shortcut turned off)."""
    with monkeypatch.context() as patch:
        patch.setattr(reader, "_may_have_images", lambda _text: True, raising=False)
        return markdown_image_sources(text)


@pytest.mark.parametrize("text", SAMPLES)
def test_image_sources_same_with_and_without_the_shortcut(text, monkeypatch):
    assert markdown_image_sources(text) == _parsed_sources(text, monkeypatch)


def test_image_sources_same_on_every_markdown_sample(monkeypatch):
    files = sorted(DATA.rglob("*.md"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert markdown_image_sources(text) == _parsed_sources(text, monkeypatch), path


def test_markdown_without_images_is_not_parsed_for_its_sources(monkeypatch):
    def no_parse() -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(reader, "_parser", no_parse)
    text = (DATA / "office_formats" / "SOURCES.md").read_text(encoding="utf-8")
    assert markdown_image_sources("# Report\n\n" + text.replace("![", "[")) == []
    with pytest.raises(AssertionError, match="parsed"):
        markdown_image_sources("see ![it](it.png)")


def test_hostile_nesting_still_refused_without_a_parse():
    with pytest.raises(CorruptDocument):
        markdown_image_sources("> " * 200 + "deep, no image\n")


# ------------------------------------------------------------------ writer: kept per process
def _old_page_css(theme: str, css_text: str) -> str:
    """The style sheet as it was built for every document."""
    formatter = HtmlFormatter(style=themes.pygments_style(theme))
    code_css = "\n".join(formatter.get_token_style_defs(".highlight"))
    parts = [themes.base_css(), themes.theme_css(theme) or "", code_css, css_text]
    return writer_style.safe_style_text("\n".join(parts))


@pytest.mark.parametrize("css_text", ["", "p { color: red }", "a{}</style><b>x</STYLE",
                                      "x</", "<\n/style>"])
def test_page_css_same_as_built_per_document(css_text):
    for theme in themes.list_themes():
        assert page_css(theme, css_text) == _old_page_css(theme, css_text)


def test_page_css_builds_a_theme_sheet_once(monkeypatch):
    built = []
    real = writer_style.HtmlFormatter

    def counting(**kw: object) -> HtmlFormatter:
        built.append(kw)
        return real(**kw)

    writer_style._theme_sheet.cache_clear()
    monkeypatch.setattr(writer_style, "HtmlFormatter", counting)
    for _ in range(3):
        page_css("default", "p { margin: 0 }")
    assert len(built) == 1


def test_highlight_code_same_as_a_fresh_formatter_per_document():
    body = ('<pre><code class="language-python">def f(x):\n    return x &lt; 1\n</code></pre>'
            '<p>between</p><pre id="a"><code class="language-nosuchlang">keep &amp; as is</code>'
            '</pre><pre><code class="language-JSON">{"a": [1, 2]}</code></pre>'
            '<pre><code class="language-python">print("again")</code></pre>')
    for _ in range(2):  # the second pass meets the kept formatter and lexers
        got = highlight_code(body)
        assert got.count('class="highlight"') == 3 and "keep &amp; as is" in got
        fresh = HtmlFormatter(nowrap=True)
        lexer = get_lexer_by_name("python", stripnl=False, ensurenl=False)
        assert highlight('print("again")', lexer, fresh) in got
    assert highlight_code("<p>no code</p>") == "<p>no code</p>"


def test_second_parse_compiles_no_line_pattern_again(monkeypatch):
    text = (DATA / "office_formats" / "SOURCES.md").read_text(encoding="utf-8")
    reader.read_markdown(text)
    compiled = []
    real = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    doc = reader.read_markdown(text)
    assert doc.blocks and len(compiled) < 50  # marko compiled its line patterns per line
