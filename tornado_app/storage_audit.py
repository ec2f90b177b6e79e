"""Changes of a company's storage settings in its audit trail (Activity):

- ``storage.config``: the storage in use was set from the form (``POST /config/storage``) or
  by loading a profile (``/config/load_profile``); ``detail``: ``change`` (``configured`` or
  ``profile loaded``), ``profile`` when one was loaded, and the endpoint and bucket when the
  caller typed them;
- ``storage.profile``: a profile was saved (``POST /config/save_profile``); ``detail``:
  ``profile``, ``change`` (``created`` or ``updated``) and the endpoint and bucket;
- ``storage.linkmap``: the link map was replaced (``POST /config/linkmap``); ``detail``:
  ``entries`` before and after (not the links themselves: a map may hold ten thousand).

Never a secret: no access key, no secret key, only where the storage is. Callers outside a
company (the operator token, ``DOCS_AUTH=none``) have no Activity and are not recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.audit import Who
from store.storage_config import StorageConfig
from tornado_app.auth import activity
from tornado_app.callers import Caller

if TYPE_CHECKING:
    from tornado_app.services import Services


def actor_of(caller: Caller) -> Who:
    """The caller as the audit trail names it (an API key by its id, as everywhere)."""
    if caller.key_id:
        return Who(None, f"api-key:{caller.key_id}")
    return Who(int(caller.user_id) if caller.user_id else None, caller.username)


def where(config: StorageConfig) -> dict[str, str]:
    """Where a storage is, as Activity shows it (no keys)."""
    return {"endpoint": config.endpoint, "bucket": config.bucket}


def record(svc: Services, caller: Caller, action: str, detail: dict[str, str],
           address: str = "") -> None:
    """Record a storage change of the caller's company (a company of the auth face only)."""
    if caller.kind not in ("session", "api_key") or not caller.company_id.isdigit():
        return
    activity.record(svc, company_id=int(caller.company_id), action=action, outcome="success",
                    actor=actor_of(caller), address=address, detail=detail)
