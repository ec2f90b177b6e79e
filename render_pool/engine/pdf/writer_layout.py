"""HTML pieces the PDF writer prints: the page document, the table of contents, the cover page and
Chromium's header/footer templates. Pure string building; no browser here.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from render_pool.engine.common.data_uri import encode_data_uri
from render_pool.engine.model import Resource

# Page content may only use inline styles and data: URLs (the browser also blocks the network).
_CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
        "media-src data:")
_HEADING = re.compile(r"<h([1-6])(\s[^>]*)?>(.*?)</h\1\s*>", re.S | re.I)
_ID = re.compile(r"\bid\s*=\s*(\"[^\"]*\"|'[^']*')", re.I)
_TAG = re.compile(r"<[^>]+>")

# Font stack of the header/footer templates (they do not see the page's CSS).
_TEMPLATE_FONT = ("'Noto Sans', 'DejaVu Sans', 'WenQuanYi Micro Hei', 'Noto Sans CJK SC', "
                  "sans-serif")


@dataclass
class HeadingRef:
    """A heading of the body: level, visible text and the id a TOC link points to."""

    level: int
    text: str
    anchor: str


def normalise(text: str) -> str:
    """Whitespace-collapsed text, for matching headings with PDF outline titles."""
    return " ".join(text.split())


def collect_headings(body: str) -> tuple[str, list[HeadingRef]]:
    """Headings of a body fragment in order; headings without an id get one (``pdf-h-N``)."""
    refs: list[HeadingRef] = []
    counter = 0

    def repl(match: re.Match[str]) -> str:
        nonlocal counter
        counter += 1
        level, attrs, inner = int(match.group(1)), match.group(2) or "", match.group(3)
        id_match = _ID.search(attrs)
        if id_match:
            anchor = html.unescape(id_match.group(1)[1:-1])
        else:
            anchor = f"pdf-h-{counter}"
            attrs += f' id="{anchor}"'
        text = normalise(html.unescape(_TAG.sub(" ", inner)))
        if text:
            refs.append(HeadingRef(level, text, anchor))
        return f"<h{level}{attrs}>{inner}</h{level}>"

    return _HEADING.sub(repl, body), refs


def page_document(body: str, css: str, *, title: str = "", lang: str = "") -> str:
    """A complete HTML document around a body fragment, with its stylesheet and a strict CSP."""
    lang_attr = f' lang="{html.escape(lang)}"' if lang else ""
    return (
        f"<!DOCTYPE html><html{lang_attr}><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
        f"<title>{html.escape(title)}</title><style>{css}</style></head>"
        f"<body>{body}</body></html>"
    )


def toc_html(entries: list[HeadingRef], pages: dict[str, int], title: str) -> str:
    """Table of contents: one linked line per heading with its page number (when known)."""
    items = []
    for ref in entries:
        page = pages.get(ref.anchor)
        number = str(page) if page is not None else ""
        items.append(
            f'<li class="toc-l{ref.level}"><a href="#{html.escape(ref.anchor)}">'
            f'<span class="toc-text">{html.escape(ref.text)}</span>'
            f'<span class="toc-dots"></span><span class="toc-page">{number}</span></a></li>'
        )
    return (f'<nav class="toc" aria-label="{html.escape(title)}">'
            f'<div class="toc-title">{html.escape(title)}</div><ol>{"".join(items)}</ol></nav>')


def _data_uri(res: Resource) -> str:
    return encode_data_uri(res.data, res.mime)


def cover_body(cover: object) -> str:
    """Body of the cover page from a ``render_pool.engine.common.cover.CoverPage``
    (fields read by name)."""
    def text(name: str) -> str:
        return html.escape(str(getattr(cover, name, "") or "").strip())

    logo, image = getattr(cover, "logo", None), getattr(cover, "cover_image", None)
    parts = ['<div class="cover"><div class="cover-top">']
    if logo is not None:
        parts.append(f'<img class="cover-logo" alt="logo" src="{_data_uri(logo)}">')
    parts.append("</div>")
    if image is not None:
        parts.append(f'<div class="cover-image"><img alt="cover" src="{_data_uri(image)}"></div>')
    else:
        parts.append('<div class="cover-spacer"></div>')
    parts.append('<div class="cover-titles">')
    if text("product_name") or text("product_version"):
        version = text("product_version")
        version_html = f'<span class="cover-version">{version}</span>' if version else ""
        parts.append(f'<div class="cover-product">{text("product_name")}{version_html}</div>')
    if text("document_name"):
        parts.append(f'<div class="cover-document">{text("document_name")}</div>')
    if text("document_version"):
        parts.append(f'<div class="cover-docversion">{text("document_version")}</div>')
    parts.append("</div>")
    if text("copyright_text"):
        parts.append(f'<div class="cover-bottom">{text("copyright_text")}</div>')
    parts.append("</div>")
    return "".join(parts)


def header_template(text: str) -> str:
    """Chromium header template: the header text on the left, a hairline under it."""
    if not text.strip():
        return "<div></div>"  # an explicit empty template (Chromium's default prints date+title)
    return (
        f'<div style="width:100%;margin:0 18mm;padding:7mm 0 1.5mm;font-family:{_TEMPLATE_FONT};'
        'font-size:8pt;color:#6b7280;border-bottom:0.5pt solid #d1d5db;'
        f'-webkit-print-color-adjust:exact;">{html.escape(text)}</div>'
    )


def footer_template(text: str, page_number_format: str = "Page {page} of {pages}") -> str:
    """Chromium footer template: footer text left, the page numbers right (``{page}`` and
    ``{pages}`` of ``page_number_format`` become the spans Chromium fills; "" for none)."""
    numbers = html.escape(page_number_format).replace(
        "{page}", '<span class="pageNumber"></span>').replace(
        "{pages}", '<span class="totalPages"></span>')
    return (
        f'<div style="width:100%;margin:0 18mm;padding:0 0 7mm;font-family:{_TEMPLATE_FONT};'
        'font-size:8pt;color:#6b7280;display:flex;justify-content:space-between;'
        f'-webkit-print-color-adjust:exact;"><span>{html.escape(text)}</span>'
        f"<span>{numbers}</span></div>"
    )
