"""HTML to Markdown with markdownify, for HTML files of a batch (``render_pool.batch``).

Images stay everywhere (in links and table cells), fenced code keeps its language, and link
and image destinations pass the allow-list of ``render_pool.url_safety`` (a refused link keeps
its text only).
"""

from __future__ import annotations

import re

from render_pool.errors import CorruptDocument
from render_pool.links import AUTOLINK, markdown_destination
from render_pool.url_safety import is_safe_image_src, is_safe_link


def _markdown_url(url: str) -> str:
    return markdown_destination(url, angle=False)


def _converter():  # imported lazily: markdownify pulls in BeautifulSoup
    from markdownify import MarkdownConverter, chomp

    class Converter(MarkdownConverter):
        """markdownify with safe destinations and images kept everywhere (links, cells)."""

        def convert_head(self, el, text, parent_tags):
            return ""

        def convert_title(self, el, text, parent_tags):
            return ""

        def convert_img(self, el, text, parent_tags):
            alt = (el.attrs.get("alt") or "").replace("[", r"\[").replace("]", r"\]")
            src = el.attrs.get("src") or ""
            if "_noformat" in parent_tags or not src or not is_safe_image_src(src):
                return alt
            title = el.attrs.get("title") or ""
            title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
            return f"![{alt}]({_markdown_url(src)}{title_part})"

        def convert_a(self, el, text, parent_tags):
            if "_noformat" in parent_tags:
                return text
            prefix, suffix, text = chomp(text)
            href = el.get("href")
            if not text:
                return ""
            if not href or not is_safe_link(href):
                return text
            title = el.get("title")
            if text.replace(r"\_", "_") == href and not title and AUTOLINK.fullmatch(
                    f"<{href}>"):
                return f"{prefix}<{href}>{suffix}"
            title_part = ' "{}"'.format(title.replace('"', r"\"")) if title else ""
            return f"{prefix}[{text}]({_markdown_url(href)}{title_part}){suffix}"

    return Converter


# elements inside each other; the converter recurses once per level, so this guards the
# recursion limit (not a setting: raising it would crash the worker instead)
MAX_HTML_DEPTH = 200


def _check_depth(soup) -> None:
    """Raise :class:`CorruptDocument` (40003) for HTML nested deeper than the converter can
    recurse (it ended in a RecursionError); measured without recursion, in linear time."""
    stack = [(soup, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_HTML_DEPTH:
            raise CorruptDocument(f"the HTML nests elements deeper than {MAX_HTML_DEPTH} "
                                  f"levels; the limit is {MAX_HTML_DEPTH}")
        stack.extend((child, depth + 1) for child in getattr(node, "contents", ()))


def html_to_markdown(html: str) -> str:
    """Convert HTML to Markdown with markdownify (ATX headings, ``-`` bullets, fenced code
    with the language from ``class="language-x"``); ``<head>``, scripts and styles dropped."""

    def language(el) -> str:
        for node in (el, *el.find_all("code", limit=1)):
            for cls in node.get("class") or []:
                if cls.startswith(("language-", "lang-")):
                    return cls.split("-", 1)[1]
        return ""

    from bs4 import BeautifulSoup

    converter = _converter()(heading_style="ATX", bullets="-", code_language_callback=language,
                             escape_underscores=False, escape_misc=False)
    # lxml (libxml2) parses in linear time; Python's html.parser rescans the rest of the
    # text for every unclosed tag ("<a " * 4000 took 2 s, * 32000 minutes)
    soup = BeautifulSoup(html, "lxml")
    _check_depth(soup)
    text = converter.convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
