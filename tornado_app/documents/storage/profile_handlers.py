"""Saved storage profiles: ``GET /config/profiles``, ``POST /config/save_profile`` and
``/config/load_profile`` (plain JSON)."""

from __future__ import annotations

from tornado_app.documents.plain import PlainError, PlainHandler
from tornado_app.documents.storage import storage_service
from tornado_app.guards import STATE_CHANGING_GET_REFUSED, state_changing_get_refused


def profile_name(raw: str | None) -> str:
    """A profile name from a form: 1-64 letters, digits, ``-``, ``_`` or ``.``."""
    name = (raw or "").strip()
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise PlainError(400, "profile name must be 1-64 letters, digits, '-', '_' or '.'")
    return name


class ProfilesHandler(PlainHandler):
    admin_methods = frozenset({"GET"})

    async def get(self) -> None:
        self.reply(await storage_service.list_profiles(
            self.services, self.caller, self.company_id))


class SaveProfileHandler(PlainHandler):
    admin_methods = frozenset({"POST"})

    async def post(self) -> None:
        fields, _ = await self.form()
        name = profile_name(fields.get("name"))
        self.reply(await storage_service.save_profile(
            self.services, self.caller, self.company_id, name, fields,
            self.request.remote_ip or ""))


class LoadProfileHandler(PlainHandler):
    """Makes a saved profile active: ``POST`` (form or query ``name``), or the older ``GET``
    (query ``name``), which changes state and so is refused without an ``Authorization``
    header or ``Sec-Fetch-Site: same-origin`` (a cross-site page can make a browser send a
    GET, and under ``DOCS_AUTH=none`` no credential would stop it)."""

    admin_methods = frozenset({"GET", "POST"})

    async def prepare(self) -> None:
        await super().prepare()  # the caller first: without one, 401 as everywhere
        if state_changing_get_refused(self.request):
            raise PlainError(403, STATE_CHANGING_GET_REFUSED,
                             "POST /config/load_profile from a script sending its credential")

    async def get(self) -> None:
        await self._load(self.get_query_argument("name", ""))

    async def post(self) -> None:
        fields, _ = await self.form()
        await self._load(fields.get("name", ""))

    async def _load(self, raw_name: str) -> None:
        self.reply(await storage_service.load_profile(
            self.services, self.caller, self.company_id, profile_name(raw_name),
            self.request.remote_ip or ""))
