"""``POST /md/preview``: a JSON ``{"markdown": "..."}`` answered with ``{"html", "warnings"}``
in the v2 envelope: the HTML fragment the service's HTML writer makes from its Markdown
reader's model, made in the process pool (:mod:`render_pool.engine.markdown.preview`).

Why: the browser app's editor previews with the service's own reader and writer, so the
preview and the files of ``/md/convert`` never disagree about what the Markdown means. The
Markdown is held to ``MAX_MARKDOWN_BYTES`` like ``/md/convert`` (41301 past it) and to the
same parsing-cost limits (40003); the preview loads nothing from the network.
"""

from __future__ import annotations

import asyncio
from typing import Any

from render_pool.engine.markdown.preview import MarkdownPreview, preview_markdown
from tornado_app.documents.base import DocsError, UploadHandler
from tornado_app.documents.conversion import pool_of
from tornado_app.documents.markdown import markdown_limits
from tornado_app.http import JsonTooDeep, load_json

PREVIEW_FIELDS = frozenset({"markdown"})
# JSON escapes a character in at most 6 bytes (\uXXXX); the envelope adds a little
_JSON_OVERHEAD = 6
_ON_LOOP_BYTES = 64 * 1024  # a body below this is parsed on the event loop


def markdown_of(raw: Any, limit: int) -> str:
    """The Markdown of a preview request body: a JSON object with the one string field
    ``markdown`` (40001 otherwise) of at most ``limit`` UTF-8 bytes (41301 past it)."""
    if not isinstance(raw, dict):
        raise DocsError(40001, 'send a JSON object {"markdown": "..."}')
    unknown = sorted(set(raw) - PREVIEW_FIELDS)
    if unknown:
        raise DocsError(40001, f"unknown field(s) {', '.join(unknown)[:200]}; /md/preview "
                               "reads markdown")
    text = raw.get("markdown")
    if not isinstance(text, str):
        raise DocsError(40001, "markdown is required and must be a string")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate escaped in the JSON text
        raise DocsError(40001, "markdown is not valid Unicode text") from exc
    if size > limit:
        raise DocsError(41301, f"Markdown is larger than {limit} bytes")
    return text


def _parse_body(body: bytes) -> Any:
    try:
        return load_json(body)
    except JsonTooDeep as exc:
        raise DocsError(40001, str(exc)) from exc
    except ValueError as exc:
        raise DocsError(40001, "the body is not valid JSON") from exc


class MarkdownPreviewHandler(UploadHandler):
    """Thin: read and check the JSON body, one pool job, answer the fragment."""

    def upload_limit(self) -> int:
        """The body may hold the largest Markdown input, each character JSON-escaped."""
        return self.services.settings.max_markdown_bytes * _JSON_OVERHEAD + 4096

    async def post(self) -> None:
        if self._over:
            raise DocsError(41301, "the request body is larger than "
                                   f"{self.upload_limit()} bytes")
        content_type = self.request.headers.get("Content-Type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            raise DocsError(40001, "send a JSON body (Content-Type: application/json)")
        body = b"".join(self._chunks)
        self._chunks = []
        raw = (_parse_body(body) if len(body) < _ON_LOOP_BYTES
               else await asyncio.to_thread(_parse_body, body))
        settings = self.services.settings
        text = markdown_of(raw, settings.max_markdown_bytes)
        preview: MarkdownPreview = await pool_of(self.services).run(
            preview_markdown, text, markdown_limits(settings), tenant=self.company_id)
        self.success({"html": preview.html, "warnings": preview.warnings})
