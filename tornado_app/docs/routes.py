"""Route table of the document conversion service."""

from __future__ import annotations

from typing import Any


def docs_routes() -> list[Any]:
    """Handlers of the conversion service (filled in as the engines land)."""
    return []
