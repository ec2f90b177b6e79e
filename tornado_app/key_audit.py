"""The audit trail of company API keys: made (``key.create``), revoked (``key.revoke``), and
used when something about the key changed (action ``key.use``):

- outcome ``role_capped``: the key was used with a role lower than its own, because its maker
  was demoted since (the key acts with the lower of the two; ``detail``: ``key``, ``keyRole``,
  ``makerRole``, ``role``);
- outcome ``owner_disabled``: the key was refused because its maker is disabled or gone;
- outcome ``revoked``: a request presented the key after it was revoked (recorded against the
  key's company, by the key's id, name and shown prefix, never the key itself;
  ``store.revoked_keys``).

Actor is the key (``api-key:<id>``, as for everything a key does), target its maker. Each is
recorded at most once a minute per key across all replicas (``store.api_keys.claim_notice``,
``store.revoked_keys.claim_notice``; like ``lastUsedAt``), so a script that keeps calling
writes one record a minute, not one per request. Recording never changes the answer of the
request it describes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from store import api_keys, revoked_keys, users
from store.audit import Who
from tornado_app.auth import activity

if TYPE_CHECKING:
    from tornado_app.services import Services

log = logging.getLogger("tornado_app.key_audit")
ACTION = "key.use"


async def notice(svc: Services, key: api_keys.ApiKey, outcome: str, *, address: str = "",
                 detail: dict[str, str] | None = None) -> None:
    """Record ``outcome`` for ``key`` unless it was recorded in the last minute."""
    try:
        if key.created_by is None or not await api_keys.claim_notice(svc.db, key, outcome):
            return
        maker = await users.get_user(svc.db, key.company_id, key.created_by)
        activity.record(
            svc, company_id=key.company_id, action=ACTION, outcome=outcome,
            actor=Who(None, f"api-key:{key.id}"),
            target=Who(key.created_by, maker.username if maker else ""), address=address,
            detail={"key": key.name, "keyRole": key.role, **(detail or {})})
    except Exception:  # the audit trail never changes an answer
        log.warning("API key audit record failed", exc_info=True)


def _key_detail(name: str, prefix: str, role: str) -> dict[str, str]:
    return {"key": name, "prefix": prefix, "keyRole": role}


def created(svc: Services, key: api_keys.ApiKey, actor: Who, address: str) -> None:
    """Record that ``actor`` made ``key`` (its name, shown prefix, role and expiry)."""
    detail = _key_detail(key.name, key.prefix, key.role)
    if key.expires_at is not None:
        detail["expires"] = key.expires_at.date().isoformat()
    activity.record(svc, company_id=key.company_id, action="key.create", outcome="success",
                    actor=actor, target=Who(None, f"api-key:{key.id}"), address=address,
                    detail=detail)


def revoked(svc: Services, key: revoked_keys.RevokedKey, actor: Who, address: str) -> None:
    """Record that ``actor`` revoked ``key``."""
    activity.record(svc, company_id=key.company_id, action="key.revoke", outcome="success",
                    actor=actor, target=Who(None, f"api-key:{key.id}"), address=address,
                    detail=_key_detail(key.name, key.prefix, key.role))


async def revoked_use(svc: Services, secret: str, address: str = "") -> None:
    """A request presented ``secret``, which no live key has: when it is a revoked key of a
    company, record its use there (once a minute per key). Never raises."""
    try:
        key = await revoked_keys.find_by_secret(svc.db, secret)
        if key is None or not await revoked_keys.claim_notice(svc.db, key):
            return
        activity.record(
            svc, company_id=key.company_id, action=ACTION, outcome="revoked",
            actor=Who(None, f"api-key:{key.id}"), address=address,
            detail=_key_detail(key.name, key.prefix, key.role))
    except Exception:  # the audit trail never changes an answer
        log.warning("revoked API key audit record failed", exc_info=True)
