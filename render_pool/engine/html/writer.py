"""HTML writer: one self-contained semantic HTML5 page of a document.

The body comes from ``writers/html_render.py`` (shared with the PDF and Markdown writers);
this module adds the page around it: doctype, charset, title, metadata and the stylesheet.
"""

from __future__ import annotations

import html as _html
import re

from render_pool.engine.common.image_links import ImageResolver
from render_pool.engine.html.render import document_title, html_attribute, html_body
from render_pool.engine.model import Document
from render_pool.engine.options import WriterOptions

__all__ = ["DEFAULT_CSS", "write_html"]

DEFAULT_CSS = """\
:root { color-scheme: light; }
body { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans",
  "WenQuanYi Micro Hei", sans-serif; color: #1f2328; max-width: 50rem; margin: 0 auto;
  padding: 2rem 1rem; overflow-wrap: break-word; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.5em 0 .5em; }
h1 { font-size: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
p, ul, ol, table, pre, blockquote { margin: 0 0 1em; }
a { color: #0969da; }
img { max-width: 100%; height: auto; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Consolas, monospace; font-size: .9em; }
code { background: #f6f8fa; padding: .1em .3em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 1em; overflow: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
blockquote { border-left: .25em solid #d0d7de; color: #59636e; padding: 0 1em; margin-left: 0; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d0d7de; padding: .35em .75em; vertical-align: top; }
th { background: #f6f8fa; }
caption { caption-side: top; font-style: italic; padding-bottom: .3em; }
hr { border: 0; border-top: 1px solid #d0d7de; margin: 1.5em 0; }
li.task-list-item { list-style: none; }
li.task-list-item input { margin: 0 .4em 0 -1.4em; }
.math.display { overflow-x: auto; text-align: center; margin: 1em 0; }
.placeholder { background: #fff8c5; border: 1px dashed #d4a72c; padding: 0 .3em; }
section.footnotes { border-top: 1px solid #d0d7de; margin-top: 2em; font-size: .9em; }
aside.furniture { border-top: 1px dashed #d0d7de; margin-top: 2em; color: #59636e; }
"""


def write_html(
    doc: Document,
    resolve_image: ImageResolver | None = None,
    options: WriterOptions | None = None,
) -> str:
    """One self-contained HTML page: doctype, charset, title, inline stylesheet and the body.

    Of the writers' options it reads ``title`` (default: the document's title),
    ``css_text``, appended after the default stylesheet so it can override any rule, and
    ``page_markers`` (``<!-- page N -->`` before the first block of each PDF page).
    """
    page_title = options.title if options and options.title else document_title(doc)
    css = options.css_text if options else ""
    lang = doc.meta.get("language", "").strip()
    lang_ok = re.fullmatch(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*", lang)
    lang_attr = f' lang="{html_attribute(lang)}"' if lang_ok else ""
    style = DEFAULT_CSS + ("\n" + css if css else "")
    style = re.sub(r"</(style)", r"<\\/\1", style, flags=re.IGNORECASE)
    metas = ['<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="generator" content="docservice">']
    for key in ("author", "description", "keywords"):
        value = doc.meta.get(key, "").strip()
        if value:
            metas.append(f'<meta name="{key}" content="{html_attribute(value)}">')
    head = "\n".join(metas)
    return (
        f"<!DOCTYPE html>\n<html{lang_attr}>\n<head>\n{head}\n"
        f"<title>{_html.escape(page_title, quote=False)}</title>\n"
        f"<style>\n{style}</style>\n</head>\n<body>\n"
        f"{html_body(doc, resolve_image, bool(options and options.page_markers))}</body>\n"
        "</html>\n"
    )
