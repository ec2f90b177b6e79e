"""The active object storage configuration and the saved profiles, kept in MongoDB so every
replica sees the same."""

from __future__ import annotations

from typing import Any

from store.storage_config import StorageConfig

SETTINGS = "settings"
PROFILES = "storage_profiles"
EMBEDDED_PROFILE = "embedded"


class StorageSettings:
    """Reads and writes the active storage configuration and the named profiles."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def active_config(self) -> StorageConfig | None:
        """The configuration conversions store into, or None when none is set."""
        doc = await self.db[SETTINGS].find_one({"_id": "storage"})
        return StorageConfig.from_dict(doc["config"]) if doc else None

    async def set_active(self, config: StorageConfig, *, embedded: bool = False) -> None:
        """Make ``config`` the active one; ``embedded`` marks the embedded storage."""
        await self.db[SETTINGS].replace_one(
            {"_id": "storage"}, {"config": config.to_dict(), "embedded": embedded}, upsert=True)

    async def active_is_embedded(self) -> bool:
        """True while the embedded storage is the active one."""
        doc = await self.db[SETTINGS].find_one({"_id": "storage"})
        return bool(doc and doc.get("embedded"))

    async def save_profile(self, name: str, config: StorageConfig) -> None:
        """Save ``config`` under ``name`` (replacing a profile of that name)."""
        await self.db[PROFILES].replace_one({"_id": name}, {"config": config.to_dict()},
                                            upsert=True)

    async def load_profile(self, name: str) -> StorageConfig | None:
        """The profile ``name``, or None."""
        doc = await self.db[PROFILES].find_one({"_id": name})
        return StorageConfig.from_dict(doc["config"]) if doc else None

    async def profiles(self) -> list[dict[str, Any]]:
        """Every profile's name, endpoint, bucket and public host (no keys), sorted by name."""
        out = []
        async for doc in self.db[PROFILES].find({}).sort("_id", 1):
            cfg = StorageConfig.from_dict(doc["config"])
            out.append({"name": doc["_id"], "endpoint": cfg.endpoint, "bucket": cfg.bucket,
                        "public": cfg.public or cfg.endpoint})
        return out
