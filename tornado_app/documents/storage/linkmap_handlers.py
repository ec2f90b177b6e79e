"""The company's link map (``/config/linkmap``: original link -> URL, applied when
documents are converted), read and replaced as plain JSON."""

from __future__ import annotations

from typing import Any

from render_pool.engine.url_safety import is_safe_link
from tornado_app import storage_audit
from tornado_app.documents.plain import PlainError, PlainHandler
from tornado_app.documents.storage.storage_service import storage_of
from tornado_app.http import JsonTooDeep, load_json

MAX_LINKMAP_ENTRIES = 10_000


def _storable(text: str) -> bool:
    """MongoDB stores UTF-8 text without NUL in keys; refuse what it cannot store."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def parse_linkmap(raw: Any) -> dict[str, str]:
    """A link map from JSON (the object itself, or ``{"map": {...}}``): at most
    :data:`MAX_LINKMAP_ENTRIES` entries, each a storable key mapped to an allowed link."""
    if isinstance(raw, dict) and isinstance(raw.get("map"), dict):
        raw = raw["map"]
    if not isinstance(raw, dict):
        raise PlainError(400, "link map must be a JSON object of original -> URL")
    if len(raw) > MAX_LINKMAP_ENTRIES:
        raise PlainError(413, f"link map has more than {MAX_LINKMAP_ENTRIES} entries")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(value, str) or not key or len(key) > 2048 or len(value) > 4096:
            raise PlainError(400, "every link map entry maps a non-empty string to a URL string")
        if not (_storable(key) and _storable(value)):
            raise PlainError(400, "link map entries may not hold NUL or unpaired surrogates")
        if not is_safe_link(value):
            raise PlainError(400, f"link map value of {key[:100]!r} is not an allowed link",
                             "use an http, https or mailto URL, or a relative reference")
        out[key] = value
    return out


class LinkMapHandler(PlainHandler):
    admin_methods = frozenset({"GET", "POST"})

    async def get(self) -> None:
        mapping = await storage_of(self.services).linkmap.get(self.company_id)
        self.reply({"ok": True, "count": len(mapping), "map": mapping})

    async def post(self) -> None:
        """A JSON body, or the form field ``linkmap`` (or ``map``) holding JSON."""
        if self.request.headers.get("Content-Type", "").startswith("application/json"):
            try:
                raw = load_json(b"".join(self._chunks) or b"null")
            except JsonTooDeep as exc:
                raise PlainError(400, str(exc)) from exc
            except ValueError as exc:
                raise PlainError(400, "body is not valid JSON") from exc
            if self._over:
                raise PlainError(413, "link map is too large")
        else:
            fields, _ = await self.form()
            text = fields.get("linkmap") or fields.get("map") or ""
            try:
                raw = load_json(text)
            except JsonTooDeep as exc:
                raise PlainError(400, str(exc)) from exc
            except ValueError as exc:
                raise PlainError(400, "linkmap field is not valid JSON") from exc
        mapping = parse_linkmap(raw)
        linkmap = storage_of(self.services).linkmap
        before = len(await linkmap.get(self.company_id))
        await linkmap.replace(self.company_id, mapping)
        storage_audit.record(self.services, self.caller, "storage.linkmap",
                             {"change": "replaced", "before": str(before),
                              "entries": str(len(mapping))}, self.request.remote_ip or "")
        self.reply({"ok": True, "count": len(mapping)})
