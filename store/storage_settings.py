"""Object storage configurations and saved profiles, per company, kept in MongoDB so every
replica sees the same.

The service-wide configuration (the embedded storage, or the one ``S3_*`` names) is used by
every company that has not configured its own; each company's objects still live under its
own key prefix (``store.object_keys.tenant_prefix``). Service-wide profiles (the ``embedded`` one)
are offered to every company; a company's own profile of the same name comes first."""

from __future__ import annotations

from typing import Any

from store.storage_config import StorageConfig

SETTINGS = "settings"
PROFILES = "storage_profiles"
EMBEDDED_PROFILE = "embedded"
SERVICE = "_service"  # the owner of service-wide configuration and profiles


def _config_id(company_id: str) -> str:
    return "storage" if company_id == SERVICE else f"storage:{company_id}"


class StorageSettings:
    """Reads and writes each company's storage configuration and profiles."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def active_config(self, company_id: str) -> StorageConfig | None:
        """The configuration ``company_id`` stores into: its own, else the service-wide one,
        else None."""
        doc = await self._active(company_id)
        return StorageConfig.from_dict(doc["config"]) if doc else None

    async def _active(self, company_id: str) -> dict[str, Any] | None:
        doc: dict[str, Any] | None = await self.db[SETTINGS].find_one(
            {"_id": _config_id(company_id)})
        if doc is None and company_id != SERVICE:
            doc = await self.db[SETTINGS].find_one({"_id": _config_id(SERVICE)})
        return doc

    async def has_own_config(self, company_id: str) -> bool:
        """True once ``company_id`` configured its own storage."""
        return await self.db[SETTINGS].find_one({"_id": _config_id(company_id)}) is not None

    async def set_active(self, company_id: str, config: StorageConfig, *,
                         embedded: bool = False) -> None:
        """Make ``config`` the configuration of ``company_id`` (``SERVICE``: the default of
        every company without one); ``embedded`` marks the embedded storage."""
        await self.db[SETTINGS].replace_one(
            {"_id": _config_id(company_id)},
            {"config": config.to_dict(), "embedded": embedded}, upsert=True)

    async def active_is_embedded(self, company_id: str) -> bool:
        """True while ``company_id`` stores into the embedded storage."""
        doc = await self._active(company_id)
        return bool(doc and doc.get("embedded"))

    async def save_profile(self, company_id: str, name: str, config: StorageConfig) -> None:
        """Save ``config`` as the profile ``name`` of ``company_id`` (replacing it)."""
        await self.db[PROFILES].replace_one(
            {"_id": f"{company_id}/{name}"},
            {"company": company_id, "name": name, "config": config.to_dict()}, upsert=True)

    async def has_own_profile(self, company_id: str, name: str) -> bool:
        """True when ``company_id`` saved a profile ``name`` itself."""
        return await self.db[PROFILES].find_one({"_id": f"{company_id}/{name}"}) is not None

    async def load_profile(self, company_id: str, name: str) -> StorageConfig | None:
        """The company's profile ``name``, else the service-wide one, else None."""
        for owner in (company_id, SERVICE):
            doc = await self.db[PROFILES].find_one({"_id": f"{owner}/{name}"})
            if doc is not None:
                return StorageConfig.from_dict(doc["config"])
        return None

    async def profiles(self, company_id: str) -> list[dict[str, Any]]:
        """Name, endpoint, bucket and public host (no keys) of every profile the company may
        load, sorted by name."""
        found: dict[str, dict[str, Any]] = {}
        async for doc in self.db[PROFILES].find({"company": {"$in": [SERVICE, company_id]}}):
            if doc["name"] in found and doc["company"] == SERVICE:
                continue  # the company's own profile of that name wins
            cfg = StorageConfig.from_dict(doc["config"])
            found[doc["name"]] = {"name": doc["name"], "endpoint": cfg.endpoint,
                                  "bucket": cfg.bucket, "public": cfg.public or cfg.endpoint}
        return [found[name] for name in sorted(found)]
