"""Styles for the PDF writer: theme + code colours + the caller's CSS, with the spec's checks.

The spec says an unsupported style value such as ``word-break: break-word`` must only log a
warning and never stop generation; :func:`check_css` reports such values (and CSS that cannot
work here, such as external ``@import``/``url()`` which the locked-down browser never loads)
without changing the CSS.
"""

from __future__ import annotations

import html
import logging
import re
from functools import cache, lru_cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from render_pool.engine.pdf import themes
from render_pool.errors import UnsupportedFormat

log = logging.getLogger(__name__)

# Values Chromium accepts only as legacy aliases, or that CSS does not define.
_UNSUPPORTED_VALUES = [
    (re.compile(r"word-break\s*:\s*break-word", re.I),
     "CSS value 'word-break: break-word' is not supported (deprecated); "
     "use 'overflow-wrap: anywhere'. Generation continued."),
]
_EXTERNAL = re.compile(r"@import|url\(\s*['\"]?(?!data:)", re.I)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CODE_BLOCK = re.compile(
    r"<pre(?P<pre>[^>]*)>\s*<code(?P<attrs>[^>]*\bclass=\"(?:[^\"]*\s)?language-(?P<lang>[^\"\s]+)"
    r"[^\"]*\"[^>]*)>(?P<code>.*?)</code>\s*</pre>",
    re.S,
)


def resolve_theme(css_name: str) -> str:
    """Theme name for ``css_name`` (blank means ``default``); unknown names raise 40002."""
    name = (css_name or "default").strip().lower()
    if themes.theme_css(name) is None:
        raise UnsupportedFormat(
            f"unknown css_name '{css_name}'; available: {', '.join(themes.list_themes())}"
        )
    return name


def check_css(css_text: str) -> list[str]:
    """Warnings for values that do not work as written; each is also logged. Never raises."""
    warnings: list[str] = []
    text = _COMMENT.sub("", css_text)
    for pattern, message in _UNSUPPORTED_VALUES:
        if pattern.search(text):
            warnings.append(message)
    if _EXTERNAL.search(text):
        warnings.append("css_text refers to external resources (@import or url()); "
                        "they are not loaded, only data: URLs are.")
    if text.count("{") != text.count("}"):
        warnings.append("css_text has unbalanced braces; some rules may be ignored.")
    for message in warnings:
        log.warning("md->pdf: %s", message)
    return warnings


def safe_style_text(css: str) -> str:
    """CSS that cannot close its ``<style>`` element (a caller's ``</style>`` is neutralised)."""
    return re.sub(r"</(style)", r"<\\/\1", css, flags=re.I)


@cache
def _theme_sheet(theme: str) -> str:
    """Base rules, theme and code colours of a theme, made safe: built once per theme and
    process (a Pygments style sheet alone took about 1 ms per document)."""
    formatter = HtmlFormatter(style=themes.pygments_style(theme))
    code_css = "\n".join(formatter.get_token_style_defs(".highlight"))
    return safe_style_text("\n".join([themes.base_css(), themes.theme_css(theme) or "", code_css]))


def page_css(theme: str, css_text: str) -> str:
    """Full stylesheet for body pages: base rules, theme, code colours, then the caller's CSS.

    The caller's CSS is made safe on its own: a ``</style`` cannot span the line end that
    joins it to the theme's part, so this equals making the joined text safe."""
    return _theme_sheet(theme) + "\n" + safe_style_text(css_text)


def cover_page_css(theme: str, css_text: str, width_in: float, height_in: float) -> str:
    """Stylesheet for the cover: base + theme variables, cover layout, then the caller's CSS."""
    size = (f"@page {{ size: {width_in:.4f}in {height_in:.4f}in; }}\n"
            f":root {{ --page-width: {width_in:.4f}in; --page-height: {height_in - 0.02:.4f}in; }}")
    parts = [themes.base_css(), themes.theme_css(theme) or "", themes.cover_css(), size, css_text]
    return safe_style_text("\n".join(parts))


def highlight_code(body: str) -> str:
    """Colour ``<pre><code class="language-x">`` blocks with Pygments (unknown languages: plain).

    The code is unescaped, highlighted to ``<span class="k">``-style tokens and wrapped as
    ``<pre class="highlight">``; the token colours come from the theme's Pygments style sheet.
    """
    if "language-" not in body:
        return body  # no code block to colour: skip the whole-body search
    formatter = _code_formatter()

    def repl(match: re.Match[str]) -> str:
        lexer = _lexer(match.group("lang").lower())
        if lexer is None:
            return match.group(0)
        code = html.unescape(re.sub(r"<[^>]+>", "", match.group("code")))
        coloured = highlight(code, lexer, formatter)
        pre_attrs = match.group("pre")
        if "class=" in pre_attrs:
            pre_attrs = re.sub(r'class="', 'class="highlight ', pre_attrs, count=1)
        else:
            pre_attrs += ' class="highlight"'
        return f"<pre{pre_attrs}><code{match.group('attrs')}>{coloured}</code></pre>"

    return _CODE_BLOCK.sub(repl, body)


@cache
def _code_formatter() -> HtmlFormatter:
    """The token formatter of code blocks, built once per process: building one cost about
    0.7 ms, and formatting keeps no state from one block to the next."""
    return HtmlFormatter(nowrap=True)


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer | None:
    """The Pygments lexer of a language name (None when Pygments has none), kept for the
    recent names (bounded: the names come from the caller): lexers keep no state between
    ``highlight`` calls."""
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
