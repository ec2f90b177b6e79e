"""Route table of the document conversion service."""

from __future__ import annotations

from typing import Any

from tornado_app.docs.convert import ConvertHandler
from tornado_app.docs.markdown import MarkdownConvertHandler, ThemesHandler


def docs_routes() -> list[Any]:
    """Handlers of the conversion service."""
    return [
        (r"/api/convert", ConvertHandler),
        (r"/md/convert", MarkdownConvertHandler),
        (r"/md/themes", ThemesHandler),
    ]
