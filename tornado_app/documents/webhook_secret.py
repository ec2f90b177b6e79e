"""``/api/webhook-secret`` (ADMIN, v2 envelope): the company's webhook signing secret.

- ``GET``: ``{"exists": bool, "createdAt": ISO time or null}``, never the secret;
- ``POST``: makes a new secret (the first one, or a rotation that replaces the old one at
  once, also for pending retries) and answers it once: ``{"secret", "createdAt",
  "rotated"}``.

Deliveries of the company's jobs are signed with it (:mod:`tornado_app.documents.webhooks`).
"""

from __future__ import annotations

import logging

from store import webhook_secrets
from store.clock import iso_utc
from tornado_app.documents.base import DocsHandler

log = logging.getLogger(__name__)


class WebhookSecretHandler(DocsHandler):
    admin_methods = frozenset({"GET", "POST"})

    async def get(self) -> None:
        made = await webhook_secrets.created_at(self.services.db, self.company_id)
        self.success({"exists": made is not None, "createdAt": iso_utc(made)})

    async def post(self) -> None:
        db = self.services.db
        secret, made, rotated = await webhook_secrets.rotate(db, self.company_id)
        log.info("webhook secret %s", "rotated" if rotated else "created",
                 extra={"company": self.company_id, "caller": self.caller.kind})
        self.set_header("Cache-Control", "no-store")
        self.success({"secret": secret, "createdAt": iso_utc(made), "rotated": rotated})
