"""The link map of each company (original reference -> URL used instead when documents are
processed), kept in MongoDB so every replica sees the same.

Values pass the writers' link allow-list (``render_pool.engine.url_safety``) twice: ``POST
/config/linkmap`` refuses a map holding any other, and :meth:`LinkMap.get` drops any that is
stored anyway (written before the check existed, or straight into the database), so a
``javascript:`` value never reaches a document."""

from __future__ import annotations

from typing import Any

from render_pool.engine.url_safety import is_safe_link
from store.storage_settings import SETTINGS


class LinkMap:
    """Reads and replaces a company's link map."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def get(self, company_id: str) -> dict[str, str]:
        """The company's map as it is used (empty when never set): entries whose value is
        not an allowed link are left out."""
        doc = await self.db[SETTINGS].find_one({"_id": f"linkmap:{company_id}"})
        if not doc:
            return {}
        return {k: v for k, v in dict(doc["map"]).items()
                if isinstance(v, str) and is_safe_link(v)}

    async def replace(self, company_id: str, mapping: dict[str, str]) -> None:
        """Replace the company's whole map."""
        await self.db[SETTINGS].replace_one({"_id": f"linkmap:{company_id}"}, {"map": mapping},
                                            upsert=True)
