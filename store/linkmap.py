"""The link map (original reference -> URL used instead when documents are processed),
kept in MongoDB so every replica sees the same."""

from __future__ import annotations

from typing import Any

from store.storage_settings import SETTINGS


class LinkMap:
    """Reads and replaces the link map."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def get(self) -> dict[str, str]:
        """The whole map (empty when never set)."""
        doc = await self.db[SETTINGS].find_one({"_id": "linkmap"})
        return dict(doc["map"]) if doc else {}

    async def replace(self, mapping: dict[str, str]) -> None:
        """Replace the whole map."""
        await self.db[SETTINGS].replace_one({"_id": "linkmap"}, {"map": mapping}, upsert=True)
