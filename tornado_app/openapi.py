"""``GET /openapi.json``: the OpenAPI 3.1 description of both APIs.

The description is the repository's ``openapi.json``, beside ``tornado_app/`` (the Docker
image keeps that layout in /app). It is read and checked once, then every request answers the
same bytes.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from tornado_app.http import BaseHandler

DESCRIPTION = Path(__file__).resolve().parents[1] / "openapi.json"


def description_path() -> Path:
    """Where the description lives; FileNotFoundError names the place looked at."""
    if not DESCRIPTION.is_file():
        raise FileNotFoundError(f"openapi.json not found at {DESCRIPTION}")
    return DESCRIPTION


@functools.cache
def description_bytes() -> bytes:
    """The description as served: compact UTF-8 JSON, loaded (and parsed, so a broken file
    fails at the first request's start rather than reaching a client) once per process."""
    document = json.loads(description_path().read_text(encoding="utf-8"))
    if not str(document.get("openapi", "")).startswith("3.1"):
        raise ValueError("openapi.json is not an OpenAPI 3.1 document")
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class OpenApiHandler(BaseHandler):
    """Serves the description (no auth: it holds no secret)."""

    def get(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.finish(description_bytes())


def openapi_routes() -> list[tuple[str, Any]]:
    """The route of the description, for ``make_app``'s route table."""
    return [(r"/openapi.json", OpenApiHandler)]
