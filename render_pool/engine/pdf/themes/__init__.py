"""Built-in print themes for the Markdown-to-PDF writer (``css_name`` of ``/md/convert``).

Each theme is a CSS file in this folder, printed after ``base.css`` (the rules every theme needs:
font stacks with CJK fallbacks, tables that break across pages with repeated headers, images that
fit the page, the table of contents, the cover page). The first comment of a theme file names the
Pygments style used to colour its code blocks: ``/* pygments: friendly */``.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_HIDDEN = {"base", "cover"}
_PYGMENTS = re.compile(r"pygments:\s*([\w-]+)")


def list_themes() -> list[str]:
    """Names accepted as ``css_name``, sorted (``default`` is always one of them)."""
    names = {
        entry.name[: -len(".css")]
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".css")
    }
    return sorted(names - _HIDDEN)


@cache
def _read(name: str) -> str:
    return resources.files(__name__).joinpath(f"{name}.css").read_text(encoding="utf-8")


def base_css() -> str:
    """Structural rules shared by every theme."""
    return _read("base")


def theme_css(name: str) -> str | None:
    """CSS text of a theme, or None when no theme has that name (names are checked, not paths)."""
    return _read(name) if name in list_themes() else None


def pygments_style(name: str) -> str:
    """Pygments style a theme asks for in its header comment (``default`` when it names none)."""
    css = theme_css(name) or ""
    match = _PYGMENTS.search(css[:400])
    return match.group(1) if match else "default"


def cover_css() -> str:
    """Layout of the cover page (printed after the theme, before the caller's css_text)."""
    return _read("cover")
