"""The audit trail as the auth service uses it: record an action (never waiting, never
failing) and list a company's records for its ADMINs (``GET /api/audit``)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from store import audit as audit_store
from store.audit import Who

if TYPE_CHECKING:
    from tornado_app.services import Services

log = logging.getLogger("tornado_app.audit")
# outcomes an attacker can repeat at no cost (refused before any password work): recorded
# once per account, address and throttling window, with a count (``detail.count``)
REPEATED_OUTCOMES = frozenset({"throttled"})


def record(svc: Services, *, company_id: int | None, action: str, outcome: str,
           actor: Who | None, target: Who | None = None, address: str = "",
           detail: dict[str, str] | None = None) -> None:
    """Queue an audit record. Any problem here is logged and swallowed: the request the
    record describes answers exactly as it would without the audit trail."""
    log_ = getattr(svc, "audit", None)
    if log_ is None:
        return
    try:
        if outcome in REPEATED_OUTCOMES:  # a flood: one record per account, address, window
            log_.record_repeated(
                company_id=company_id, action=action, outcome=outcome, actor=actor,
                target=target, address=address,
                window_seconds=svc.settings.account_failure_window_seconds)
            return
        log_.record(company_id=company_id, action=action, outcome=outcome, actor=actor,
                    target=target, address=address, detail=detail)
    except Exception:  # the audit trail never changes an answer
        log.warning("audit record failed", exc_info=True)


def _item(doc: dict[str, Any]) -> dict[str, Any]:
    def who(w: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if w is None else {"id": w.get("id"), "username": w.get("username", "")}

    t = doc["time"]
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return {
        "id": str(doc["_id"]),
        "time": t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "companyId": doc.get("companyId"), "action": doc["action"],
        "outcome": doc["outcome"], "actor": who(doc.get("actor")),
        "target": who(doc.get("target")), "address": doc.get("address", ""),
        "detail": {k: str(v) for k, v in (doc.get("detail") or {}).items()},
    }


async def list_records(svc: Services, company_id: int, *, page: int, page_size: int,
                       action: str | None, actor: str | None, target: str | None,
                       since: datetime | None, until: datetime | None) -> dict[str, Any]:
    page_size = min(page_size, 100)
    docs, total = await audit_store.query(
        svc.db, company_id, page=page, page_size=page_size, action=action, actor=actor,
        target=target, since=since, until=until)
    return {"items": [_item(d) for d in docs], "total": total, "page": page,
            "pageSize": page_size}
