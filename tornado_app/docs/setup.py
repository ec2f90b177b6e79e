"""Open the conversion service's own resources (process pool, storage) at start-up."""

from __future__ import annotations

from typing import Any


async def open_docs_services(svc: Any, embedded: Any) -> None:
    """Attach the render pool and storage to ``svc`` (filled in as the engines land)."""
    return None
