"""The storage configuration endpoints: ``POST /config/storage``,
``POST /config/storage/test``, ``/system/time/check`` and ``GET /config`` (plain JSON)."""

from __future__ import annotations

from tornado_app.callers import require_admin
from tornado_app.documents.plain import PlainHandler
from tornado_app.documents.storage import storage_service


class StorageConfigHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = await self.form()
        self.reply(await storage_service.configure_storage(
            self.services, self.caller, self.company_id, fields, self.request.remote_ip or ""))


class StorageTestHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = await self.form()
        self.reply(await storage_service.test_storage(
            self.services, self.caller, self.company_id, fields))


class TimeCheckHandler(PlainHandler):
    async def get(self) -> None:
        endpoint = self.get_query_argument("endpoint", "") or self.get_query_argument("public", "")
        secure_raw = self.get_query_argument("secure", None)
        if endpoint:
            require_admin(self.caller)  # a custom endpoint probes the network: ADMIN only
        self.reply(await storage_service.check_time(
            self.services, self.company_id, endpoint, secure_raw))


class ConfigSnapshotHandler(PlainHandler):
    admin_methods = frozenset({"GET"})

    async def get(self) -> None:
        self.reply(await storage_service.config_snapshot(
            self.services, self.caller, self.company_id))
