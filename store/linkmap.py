"""The link map of each company (original reference -> URL used instead when documents are
processed), kept in MongoDB so every replica sees the same."""

from __future__ import annotations

from typing import Any

from store.storage_settings import SETTINGS


class LinkMap:
    """Reads and replaces a company's link map."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def get(self, company_id: str) -> dict[str, str]:
        """The company's whole map (empty when never set)."""
        doc = await self.db[SETTINGS].find_one({"_id": f"linkmap:{company_id}"})
        return dict(doc["map"]) if doc else {}

    async def replace(self, company_id: str, mapping: dict[str, str]) -> None:
        """Replace the company's whole map."""
        await self.db[SETTINGS].replace_one({"_id": f"linkmap:{company_id}"}, {"map": mapping},
                                            upsert=True)
