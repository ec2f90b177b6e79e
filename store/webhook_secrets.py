"""Per-company webhook signing secrets, in MongoDB (collection ``webhook_secrets``, one
document per company: ``_id`` the company id as the jobs carry it, ``secret``,
``createdAt``).

A secret is made (or replaced: rotation) by an ADMIN and shown to them once; the service
reads it back only to sign deliveries (``X-Signature``), and no API answers it again -
:func:`created_at` says only whether one exists and since when. It is kept in clear because
HMAC needs the key itself; a rotation applies to every later attempt, including retries of
deliveries that were pending.
"""

from __future__ import annotations

import datetime as dt
import secrets

from motor.motor_asyncio import AsyncIOMotorDatabase

from store.clock import aware_utc

WHSEC_PREFIX = "whsec_"


async def rotate(db: AsyncIOMotorDatabase, company_id: str
                 ) -> tuple[str, dt.datetime, bool]:
    """Make a new secret for ``company_id`` (replacing any earlier one); returns it (to be
    shown once), when it was made, and whether it replaced one."""
    assert isinstance(company_id, str) and company_id
    secret = WHSEC_PREFIX + secrets.token_urlsafe(32)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    result = await db.webhook_secrets.replace_one(
        {"_id": company_id}, {"secret": secret, "createdAt": now}, upsert=True)
    return secret, now, result.matched_count == 1


async def created_at(db: AsyncIOMotorDatabase, company_id: str) -> dt.datetime | None:
    """When the company's secret was made; None while it has none."""
    doc = await db.webhook_secrets.find_one({"_id": company_id}, {"createdAt": 1})
    return None if doc is None else aware_utc(doc.get("createdAt"))


async def signing_key(db: AsyncIOMotorDatabase, company_id: str) -> str:
    """The company's secret, for signing a delivery only ('' while it has none)."""
    doc = await db.webhook_secrets.find_one({"_id": company_id}, {"secret": 1})
    return str(doc["secret"]) if doc else ""
