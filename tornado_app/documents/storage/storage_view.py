"""What a caller sees of a storage configuration (``GET /config``, the profile endpoints).

The operator's storage (the service-wide configuration, the embedded SeaweedFS, a
service-wide profile a company loaded) belongs to the operator: a tenant only learns that it
is in use, ``{"source": "operator"}``, never its endpoint, bucket, access key or any part of
its secret. A company's own configuration keeps the masked view (``StorageConfig.masked``:
secret as ``****`` plus its last two characters) with ``"source": "company"``. The operator
token and the ``DOCS_AUTH=none`` local user are the operator: they get the masked view with
``"source": "operator"``.
"""

from __future__ import annotations

from typing import Any

from store.storage_config import StorageConfig
from store.storage_settings import SERVICE, StorageSettings
from tornado_app.callers import Caller

OPERATOR_KINDS = frozenset({"operator", "local"})


async def operator_configs(configs: StorageSettings) -> list[StorageConfig]:
    """The service-wide configuration and every service-wide profile."""
    found = [await configs.active_config(SERVICE)]
    for profile in await configs.profiles(SERVICE):
        found.append(await configs.load_profile(SERVICE, profile["name"]))
    return [c for c in found if c is not None]


async def is_operators(configs: StorageSettings, company_id: str, config: StorageConfig,
                       *, active: bool) -> bool:
    """True when ``config`` is the operator's: it has the endpoint, access key and bucket of
    an operator configuration (a loaded or saved copy of one: a company's stored secret is
    only ever kept for the same three, ``StorageConfig.keep_secret_from``), or, when it is the one
    ``company_id`` stores into (``active``), the company has none of its own or chose the
    embedded storage."""
    if active and (not await configs.has_own_config(company_id)
                   or await configs.active_is_embedded(company_id)):
        return True
    same = (config.endpoint, config.access, config.bucket)
    return any((c.endpoint, c.access, c.bucket) == same for c in await operator_configs(configs))


async def storage_view(configs: StorageSettings, caller: Caller, company_id: str,
                       config: StorageConfig | None, *, active: bool = True
                       ) -> dict[str, Any] | None:
    """``config`` as ``caller`` may see it: ``company_id``'s active one (``active``), or one
    it saved or loaded as a profile. None stays None."""
    if config is None:
        return None
    if caller.kind in OPERATOR_KINDS:
        return {**config.masked(), "source": "operator"}
    if await is_operators(configs, company_id, config, active=active):
        return {"source": "operator"}
    return {**config.masked(), "source": "company"}


async def profile_views(configs: StorageSettings, caller: Caller, company_id: str
                        ) -> list[dict[str, Any]]:
    """The profiles ``company_id`` may load, as ``caller`` may see them: a profile of the
    operator's storage (a service-wide one, or a company's copy of the operator's: same
    endpoint and bucket) shows only its name and ``"source": "operator"``."""
    profiles = await configs.profiles(company_id)
    if caller.kind in OPERATOR_KINDS:
        return [{**p, "source": "operator"} for p in profiles]
    operators = {(c.endpoint, c.bucket) for c in await operator_configs(configs)}
    return [{"name": p["name"], "source": "operator"}
            if (p["endpoint"], p["bucket"]) in operators else {**p, "source": "company"}
            for p in profiles]
