"""Route table of the document conversion service."""

from __future__ import annotations

from typing import Any

from tornado_app.docs.convert import ConvertHandler


def docs_routes() -> list[Any]:
    """Handlers of the conversion service."""
    return [
        (r"/api/convert", ConvertHandler),
    ]
